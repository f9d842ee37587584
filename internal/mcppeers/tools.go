package mcppeers

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The scripted tools every server runs (see the package documentation for
// what each does). A tool a Script lists under another name behaves as
// Echo.
const (
	Echo           = "echo"
	NeedsInput     = "needs_input"
	NeedsInputLoop = "needs_input_loop"
	URLInput       = "url_input"
	Slow           = "slow"
	Fails          = "fails"
	Annotated      = "annotated"
)

// What the scripted tools put on the wire, for assertions.
const (
	// NeedsInputKey is the inputRequests key of needs_input's form
	// elicitation; LoopKey is needs_input_loop's; URLInputKey is
	// url_input's (MCP 2026-07-28 SEP-2322 InputRequiredResult).
	NeedsInputKey = "needs_input/name"
	LoopKey       = "needs_input_loop/name"
	URLInputKey   = "url_input/authorize"
	// NeedsInputState is the requestState needs_input issues: opaque, with
	// bytes a client must keep exactly (a quote, a backslash, HTML
	// metacharacters, U+2028, a NUL, a non-BMP rune, a tab and a newline).
	NeedsInputState = "needs_input:v1 \"q\" \\ <&> \u2028 \x00 \U0001F600 \t\n+/= end"
	// LoopStatePrefix starts needs_input_loop's requestState: "loop:<n>"
	// in round n, counting from 1.
	LoopStatePrefix = "loop:"
	// URLInputState is url_input's requestState.
	URLInputState = "url_input:1"
	// URLElicitationID is url_input's elicitationId; its url is
	// Base + AuthorizePath + URLElicitationID.
	URLElicitationID = "url_input-elicitation-1"
	AuthorizePath    = "/authorize/"

	NeedsInputMessage = "What is your name?"
	URLInputMessage   = "Authorize the peer to continue"
	GreetingFormat    = "hello %s" // needs_input's answer, with the name given
	AuthorizedText    = "authorized"
	FailureText       = "scripted failure"
	DeclinedText      = "declined"  // an elicitation the client declined
	CancelledText     = "cancelled" // an elicitation the client cancelled
	SleptText         = "slept"     // slow's answer when its time passed
)

// formSchema is the requestedSchema needs_input and needs_input_loop ask
// for (MCP 2026-07-28 client/elicitation §Form mode: a flat object of
// primitive properties).
func formSchema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"Your name"}},"required":["name"]}`)
}

// DefaultTools is the tool list of a Script that names none: the scripted
// tools, each with its input schema.
func DefaultTools() []*mcp.Tool {
	object := func(props string, required ...string) json.RawMessage {
		s := `{"type":"object","properties":{` + props + `}`
		if len(required) > 0 {
			s += `,"required":["` + strings.Join(required, `","`) + `"]`
		}
		return json.RawMessage(s + `}`)
	}
	return []*mcp.Tool{
		{Name: Echo, Description: "Returns its arguments as text and as structuredContent.",
			InputSchema: json.RawMessage(`{"type":"object","additionalProperties":true}`)},
		{Name: NeedsInput, Description: "Asks for a name by form elicitation, then greets it.", InputSchema: object(``)},
		{Name: NeedsInputLoop, Description: "Asks for a name by form elicitation on every round, forever.", InputSchema: object(``)},
		{Name: URLInput, Description: "Asks the user to authorize at a URL (URL-mode elicitation).", InputSchema: object(``)},
		{Name: Slow, Description: "Waits ms milliseconds, or until cancelled when ms is absent.",
			InputSchema: object(`"ms":{"type":"integer","minimum":1}`)},
		{Name: Fails, Description: "Always fails (isError).", InputSchema: object(``)},
		{Name: Annotated, Description: "Returns annotated content of every kind, and progress when asked.",
			InputSchema: object(``),
			Title:       "Annotated content",
			Annotations: &mcp.ToolAnnotations{Title: "Annotated", ReadOnlyHint: true, IdempotentHint: true},
			Meta:        mcp.Meta{"mcppeers/tool": "annotated"},
			OutputSchema: json.RawMessage(`{"type":"object","properties":{"kinds":{"type":"array","items":{"type":"string"}}},` +
				`"required":["kinds"]}`)},
	}
}

// SlowOutcome is how a slow call ended.
type SlowOutcome string

const (
	SlowRunning   SlowOutcome = "running"
	SlowElapsed   SlowOutcome = "elapsed"   // its ms passed; answered SleptText
	SlowCancelled SlowOutcome = "cancelled" // the request's context ended (the client went away)
	SlowStopped   SlowOutcome = "stopped"   // the test ended first
)

// SlowCall is one call of the slow tool.
type SlowCall struct {
	// ID is the JSON-RPC id of the call.
	ID      json.RawMessage
	Outcome SlowOutcome
	// CancelNotified reports whether a notifications/cancelled naming ID
	// reached the server (its HTTP front: go-sdk's stateless handler drops
	// client notifications, so it never acts on one).
	CancelNotified bool
}

// toolRunner runs the scripted tools of a server: go-sdk's (toolbox) or
// the Node server's (nodeTools).
type toolRunner interface {
	// set makes tools the server's tool list (Server.SetTools).
	set(tools []*mcp.Tool)
	// slowCalls is every slow call so far (Server.SlowCalls).
	slowCalls() []SlowCall
}

// slowLog keeps every slow call of one server, in arrival order.
type slowLog struct {
	mu    sync.Mutex
	calls []*SlowCall
}

func (l *slowLog) add(c *SlowCall) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, c)
}

func (l *slowLog) end(c *SlowCall, o SlowOutcome) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c.Outcome = o
}

// snapshot is every slow call so far, CancelNotified filled from the
// notifications/cancelled rec saw.
func (l *slowLog) snapshot(rec *recorder) []SlowCall {
	cancelled := map[string]bool{}
	for _, q := range rec.all("notifications/cancelled") {
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(q.Params, &p) == nil {
			cancelled[canonicalID(p.RequestID)] = true
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]SlowCall, len(l.calls))
	for i, c := range l.calls {
		out[i] = *c
		out[i].CancelNotified = c.ID != nil && cancelled[canonicalID(c.ID)]
	}
	return out
}

// toolbox runs the scripted tools on one go-sdk server.
type toolbox struct {
	base string
	sdk  *mcp.Server
	rec  *recorder
	slow slowLog

	// stop is the test's context's Done: it closes before any cleanup
	// runs, so a call still waiting ends before a client's cleanup waits
	// for it (go-sdk's ClientSession.Close waits for calls in flight).
	stop <-chan struct{}

	mu    sync.Mutex
	names []string // the tools registered now
}

func newToolbox(t testing.TB, base string, sdk *mcp.Server) *toolbox {
	return &toolbox{base: base, sdk: sdk, stop: t.Context().Done()}
}

// set makes tools the server's tool list: each runs the scripted
// behaviour its name names, any other name runs Echo.
func (b *toolbox) set(tools []*mcp.Tool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var keep []string
	for _, t := range tools {
		keep = append(keep, t.Name)
	}
	var gone []string
	for _, n := range b.names {
		if !slices.Contains(keep, n) {
			gone = append(gone, n)
		}
	}
	if len(gone) > 0 {
		b.sdk.RemoveTools(gone...)
	}
	for _, t := range tools {
		b.sdk.AddTool(t, b.handler(t.Name))
	}
	b.names = keep
}

func (b *toolbox) handler(name string) mcp.ToolHandler {
	switch name {
	case NeedsInput:
		return needsInput
	case NeedsInputLoop:
		return needsInputLoop
	case URLInput:
		return b.urlInput
	case Slow:
		return b.slowTool
	case Fails:
		return func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return failed(FailureText), nil
		}
	case Annotated:
		return annotated
	default:
		return echo
	}
}

// echo returns the arguments exactly as received, as text, and as
// structuredContent.
func echo(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	args := req.Params.Arguments
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: string(args)}},
		StructuredContent: args,
	}, nil
}

func failed(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: true}
}

// invalidParams is the JSON-RPC -32602 a tool answers a retry it cannot
// accept with (MCP 2026-07-28 SEP-2322: a requestState the server did not
// issue is invalid params).
func invalidParams(format string, args ...any) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// missingCapability is MissingRequiredClientCapabilityError -32021 naming
// the elicitation mode the tool needs (MCP 2026-07-28 schema.ts; the
// server never assumes a capability the request did not declare).
func missingCapability(mode string) error {
	// Encoded by hand: go-sdk's ClientCapabilities always writes a
	// deprecated "roots":{}, which would name a capability not required.
	data := json.RawMessage(`{"requiredCapabilities":{"elicitation":{"` + mode + `":{}}}}`)
	return &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities,
		Message: "missing required client capability: elicitation." + mode, Data: data}
}

// declares reports whether caps declare the elicitation mode ("form" or
// "url"); an empty elicitation object means form only (MCP 2026-07-28
// client/elicitation §Capabilities).
func declares(caps *mcp.ClientCapabilities, mode string) bool {
	if caps == nil || caps.Elicitation == nil {
		return false
	}
	e := caps.Elicitation
	if mode == "url" {
		return e.URL != nil
	}
	return e.Form != nil || e.URL == nil
}

// askName is the input-required answer asking for a name under key.
func askName(key, state string) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{key: &mcp.ElicitParams{
			Mode: "form", Message: NeedsInputMessage, RequestedSchema: formSchema(),
		}},
		RequestState: state,
	}
}

// elicitResult is the retry's answer under key, or a -32602.
func elicitResult(p *mcp.CallToolParamsRaw, key string) (*mcp.ElicitResult, error) {
	r, ok := p.InputResponses[key].(*mcp.ElicitResult)
	if !ok {
		return nil, invalidParams("inputResponses lacks an elicitation result for %q", key)
	}
	return r, nil
}

// needsInput asks for {name} in round 1; a retry echoing NeedsInputState
// exactly with an accepted name completes with the greeting.
func needsInput(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if !declares(req.ClientCapabilities(), "form") {
		return nil, missingCapability("form")
	}
	p := req.Params
	if p.RequestState == "" && len(p.InputResponses) == 0 {
		return askName(NeedsInputKey, NeedsInputState), nil
	}
	if p.RequestState != NeedsInputState {
		return nil, invalidParams("requestState %q is not the one this server issued", p.RequestState)
	}
	r, err := elicitResult(p, NeedsInputKey)
	if err != nil {
		return nil, err
	}
	switch r.Action {
	case "accept":
		name, _ := r.Content["name"].(string)
		if name == "" {
			return nil, invalidParams("the accepted elicitation has no name")
		}
		greeting := fmt.Sprintf(GreetingFormat, name)
		return &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: greeting}},
			StructuredContent: map[string]string{"greeting": greeting},
		}, nil
	case "decline":
		return failed(DeclinedText), nil
	case "cancel":
		return failed(CancelledText), nil
	}
	return nil, invalidParams("unknown elicitation action %q", r.Action)
}

// needsInputLoop never completes: round n (the first call is round 1, a
// retry echoing "loop:<n>" is round n+1) answers input_required with
// requestState "loop:<n>".
func needsInputLoop(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if !declares(req.ClientCapabilities(), "form") {
		return nil, missingCapability("form")
	}
	p := req.Params
	round := 1
	if p.RequestState != "" || len(p.InputResponses) > 0 {
		n, err := strconv.Atoi(strings.TrimPrefix(p.RequestState, LoopStatePrefix))
		if !strings.HasPrefix(p.RequestState, LoopStatePrefix) || err != nil || n < 1 {
			return nil, invalidParams("requestState %q is not the one this server issued", p.RequestState)
		}
		if _, err := elicitResult(p, LoopKey); err != nil {
			return nil, err
		}
		round = n + 1
	}
	return askName(LoopKey, LoopStatePrefix+strconv.Itoa(round)), nil
}

// urlInput asks the user to authorize at a URL; a retry echoing
// URLInputState completes with AuthorizedText once accepted.
func (b *toolbox) urlInput(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if !declares(req.ClientCapabilities(), "url") {
		return nil, missingCapability("url")
	}
	p := req.Params
	if p.RequestState == "" && len(p.InputResponses) == 0 {
		return &mcp.CallToolResult{
			InputRequests: mcp.InputRequestMap{URLInputKey: &mcp.ElicitParams{
				Mode: "url", Message: URLInputMessage, URL: b.base + AuthorizePath + URLElicitationID, ElicitationID: URLElicitationID,
			}},
			RequestState: URLInputState,
		}, nil
	}
	if p.RequestState != URLInputState {
		return nil, invalidParams("requestState %q is not the one this server issued", p.RequestState)
	}
	r, err := elicitResult(p, URLInputKey)
	if err != nil {
		return nil, err
	}
	switch r.Action {
	case "accept":
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: AuthorizedText}}}, nil
	case "decline":
		return failed(DeclinedText), nil
	case "cancel":
		return failed(CancelledText), nil
	}
	return nil, invalidParams("unknown elicitation action %q", r.Action)
}

// slowTool waits for its ms, the end of the request (a disconnect), or
// the end of the test, and records which came first.
func (b *toolbox) slowTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct {
		MS int64 `json:"ms"`
	}
	if len(req.Params.Arguments) > 0 {
		if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
			return nil, invalidParams("slow: arguments: %v", err)
		}
	}
	call := &SlowCall{Outcome: SlowRunning}
	// The HTTP request's context ends on a disconnect whatever the
	// revision; go-sdk cancels ctx itself only on 2026-07-28 requests. In
	// a legacy session the context values are the session's first
	// request's, so they count only when they name this call.
	httpDone := (<-chan struct{})(nil)
	if f := inFlightFrom(ctx); f != nil && f.method == "tools/call" && f.toolName == req.Params.Name {
		call.ID, httpDone = f.id, f.http.Done()
	}
	b.slow.add(call)
	var elapsed <-chan time.Time
	if args.MS > 0 {
		timer := time.NewTimer(time.Duration(args.MS) * time.Millisecond)
		defer timer.Stop()
		elapsed = timer.C
	}
	end := func(o SlowOutcome) { b.slow.end(call, o) }
	select {
	case <-elapsed:
		end(SlowElapsed)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: SleptText}}}, nil
	case <-ctx.Done():
		end(SlowCancelled)
		return nil, ctx.Err()
	case <-httpDone:
		end(SlowCancelled)
		return nil, context.Canceled
	case <-b.stop:
		end(SlowStopped)
		return nil, fmt.Errorf("mcppeers: server stopped")
	}
}

func (b *toolbox) slowCalls() []SlowCall { return b.slow.snapshot(b.rec) }

// canonicalID is a JSON-RPC id in one spelling: 1, 1.0 and "1" stay
// distinct (JSON-RPC 2.0 §4: an id is a string or a number), but
// whitespace does not count.
func canonicalID(id json.RawMessage) string {
	var v any
	if json.Unmarshal(id, &v) != nil {
		return string(id)
	}
	if f, ok := v.(float64); ok {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return string(mustJSON(v))
}

// SlowCalls returns every call of the slow tool so far.
func (s *Server) SlowCalls() []SlowCall {
	if s.tools == nil {
		return nil
	}
	return s.tools.slowCalls()
}

// WaitSlow waits up to ten seconds for the i-th slow call (from 0) to
// have started, or to have ended when ended is true, and returns it; t
// fails when it does not.
func (s *Server) WaitSlow(t testing.TB, i int, ended bool) SlowCall {
	t.Helper()
	var got SlowCall
	ok := waitFor(func() bool {
		calls := s.SlowCalls()
		if len(calls) <= i {
			return false
		}
		got = calls[i]
		return !ended || got.Outcome != SlowRunning
	})
	if !ok {
		t.Fatalf("mcppeers: slow call %d did not %s in 10 s (calls: %+v)", i, map[bool]string{false: "start", true: "end"}[ended], s.SlowCalls())
	}
	return got
}

// SetTools replaces the server's tool list: the next tools/list shows
// tools, and a call to a tool no longer listed is refused (-32602,
// unknown tool). Each tool runs the scripted behaviour its name names;
// any other name behaves as Echo. InputSchema must be a JSON object
// schema (go-sdk's Server.AddTool panics otherwise).
func (s *Server) SetTools(tools []*mcp.Tool) {
	if s.tools == nil {
		panic("mcppeers: SetTools on a server that runs no tools")
	}
	s.tools.set(tools)
}

// annotated returns one content block of each kind with annotations and
// _meta, a structuredContent, and a result _meta; when the call carries a
// progressToken it first sends two progress notifications on the
// response stream (SSE only: go-sdk drops them under JSONResponse).
func annotated(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if tok := req.Params.GetProgressToken(); tok != nil {
		for i := 1; i <= 2; i++ {
			if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: tok, Progress: float64(i), Total: 2, Message: fmt.Sprintf("step %d of 2", i),
			}); err != nil {
				return nil, err
			}
		}
	}
	size := int64(11)
	ann := func(aud mcp.Role, prio float64) *mcp.Annotations {
		return &mcp.Annotations{Audience: []mcp.Role{aud}, Priority: prio, LastModified: "2026-07-28T00:00:00Z"}
	}
	return &mcp.CallToolResult{
		Meta: mcp.Meta{"mcppeers/result": "annotated"},
		Content: []mcp.Content{
			&mcp.TextContent{Text: "annotated text", Annotations: ann("user", 0.9), Meta: mcp.Meta{"mcppeers/block": "text"}},
			&mcp.ImageContent{MIMEType: "image/png", Data: []byte("\x89PNG\r\n\x1a\n"), Annotations: ann("assistant", 0.1)},
			&mcp.AudioContent{MIMEType: "audio/wav", Data: []byte("RIFF"), Meta: mcp.Meta{"mcppeers/block": "audio"}},
			&mcp.ResourceLink{URI: "https://example.invalid/report.txt", Name: "report", Title: "Report", MIMEType: "text/plain",
				Size: &size, Annotations: ann("user", 0.5), Meta: mcp.Meta{"mcppeers/block": "resource_link", "etag": "v1"}},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://notes", MIMEType: "text/plain", Text: "embedded notes"},
				Annotations: ann("assistant", 0.2)},
		},
		StructuredContent: map[string]any{"kinds": []string{"text", "image", "audio", "resource_link", "resource"}},
	}, nil
}
