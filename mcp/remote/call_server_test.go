package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopinterop/wopinterop/internal/golden"
	"github.com/wopinterop/wopinterop/internal/mcppeers"
	"github.com/wopinterop/wopinterop/internal/sharedspec"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/outbound"
)

// The call path against real go-sdk v1.8.0 servers (stateless streamable
// HTTP, 2026-07-28) through the connection side's Connect: the scripted
// servers of internal/mcppeers, and, for what they do not script, a go-sdk
// server with this file's tools.

// peerSession connects to p admitting the named tools, under the run's
// trace context.
func peerSession(t *testing.T, p *mcppeers.Server, admitted []string, opts ...fixtureOpt) (*Session, *fixture, context.Context) {
	t.Helper()
	f := peerFixture(t, p, admitted, opts...)
	ctx := WithTraceContext(t.Context(), interop.TraceContext{TraceParent: traceparent})
	return f.connect(t, ctx, runID, "peer"), f, ctx
}

// runEvents are the events of type on runID's log.
func runEvents(f *fixture, typ interop.EventType) []interop.RunEvent {
	var out []interop.RunEvent
	for _, ev := range f.sink.events(runID) {
		if ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}

func TestPeerInputRound(t *testing.T) {
	p := mcppeers.StartGo(t, mcppeers.Script{ListCache: mcppeers.PrivateList()})
	sess, f, ctx := peerSession(t, p, []string{mcppeers.NeedsInput})
	var rounds []InputRound
	decide := func(_ context.Context, r InputRound) (map[string]*mcp.ElicitResult, error) {
		rounds = append(rounds, r)
		return map[string]*mcp.ElicitResult{mcppeers.NeedsInputKey: {Action: "accept", Content: map[string]any{"name": "Ada"}}}, nil
	}
	out, err := sess.Call(ctx, CallRequest{Tool: mcppeers.NeedsInput, Elicitation: formOnly, Decide: decide})
	if err != nil {
		t.Fatalf("Call: %v", err)
	}
	greeting := fmt.Sprintf(mcppeers.GreetingFormat, "Ada")
	if out.Calls != 2 || out.Rounds != 1 || !out.StateEchoed || out.Reconciliation != "" ||
		len(out.Result.Content) != 1 || out.Result.Content[0].Text != greeting || string(out.Result.Structured) != `{"greeting":"hello Ada"}` {
		t.Fatalf("outcome %+v result %+v", out, out.Result)
	}
	if len(rounds) != 1 || len(rounds[0].Requests) != 1 {
		t.Fatalf("decider saw %+v", rounds)
	}
	q := rounds[0].Requests[0]
	if q.ID != mcppeers.NeedsInputKey || q.Mode != "form" || q.Message != mcppeers.NeedsInputMessage ||
		!jsonEqual(q.RequestedSchema, `{"type":"object","properties":{"name":{"type":"string","description":"Your name"}},"required":["name"]}`) {
		t.Errorf("decider saw %+v (schema %s)", q, q.RequestedSchema)
	}
	calls := p.Calls("tools/call")
	if len(calls) != 2 || bytes.Equal(calls[0].ID, calls[1].ID) {
		t.Fatalf("tools/call on the wire: %d, ids %s %s; want 2 with distinct ids", len(calls), calls[0].ID, calls[1].ID)
	}
	for i, c := range calls {
		if c.MetaString("traceparent") != traceparent || string(c.Meta[mcp.MetaKeyClientCapabilities]) != `{"elicitation":{"form":{}}}` {
			t.Errorf("call %d _meta %s", i+1, c.Params)
		}
	}
	// The state came back exactly: the server checks, and so does the wire.
	var retry struct {
		RequestState   string                     `json:"requestState"`
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
	}
	if err := json.Unmarshal(calls[1].Params, &retry); err != nil || retry.RequestState != mcppeers.NeedsInputState ||
		string(retry.InputResponses[mcppeers.NeedsInputKey]) != `{"action":"accept","content":{"name":"Ada"}}` {
		t.Fatalf("retry %s (%v)", calls[1].Params, err)
	}
	// The greeting is text, not the structured value's serialization: a
	// reader of one misses the other, recorded once.
	losses := runEvents(f, EventTranslationLoss)
	if len(losses) != 1 || string(stored(losses[0], out.AttemptID).Payload) != `{"protocol":"mcp","attemptId":"att_0","coerced":{"structuredContentMismatch":1}}` {
		t.Fatalf("loss records %+v", losses)
	}
}

// jsonEqual reports whether raw holds the same JSON value as want.
func jsonEqual(raw json.RawMessage, want string) bool {
	var a, b any
	if json.Unmarshal(raw, &a) != nil || json.Unmarshal([]byte(want), &b) != nil {
		return false
	}
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func TestPeerRoundsCeiling(t *testing.T) {
	p := mcppeers.StartGo(t, mcppeers.Script{})
	sess, f, ctx := peerSession(t, p, []string{mcppeers.NeedsInputLoop})
	decisions := 0
	decide := func(_ context.Context, r InputRound) (map[string]*mcp.ElicitResult, error) {
		decisions++
		return map[string]*mcp.ElicitResult{mcppeers.LoopKey: {Action: "accept", Content: map[string]any{"name": "Ada"}}}, nil
	}
	out, err := sess.Call(ctx, CallRequest{Tool: mcppeers.NeedsInputLoop, Elicitation: &mcp.ElicitationCapabilities{}, Decide: decide})
	if !errors.Is(err, ErrRoundsExceeded) || out.Reconciliation != outbound.FailedPossibleEffect {
		t.Fatalf("Call = %+v, %v", out, err)
	}
	e := ProjectError(runID, err)
	if e.Status != http.StatusUnprocessableEntity || e.Code != "mcp_mrtr_rounds_exceeded" || e.Details["runId"] != runID || e.Details["maxRounds"] != 4 {
		t.Errorf("envelope %+v", e)
	}
	// OpenWOP interop.md §The MCP round ceiling: at most maxRounds + 1
	// tools/call reach the server — exactly that many, as it never stops
	// asking — each retry echoing the state of the round before.
	calls := p.Calls("tools/call")
	if len(calls) != 5 || out.Calls != 5 || out.Rounds != 4 || decisions != 4 {
		t.Fatalf("server saw %d tools/call; outcome %+v; %d decisions", len(calls), out, decisions)
	}
	for i, c := range calls[1:] {
		var retry struct{ RequestState string }
		if json.Unmarshal(c.Params, &retry) != nil || retry.RequestState != mcppeers.LoopStatePrefix+strconv.Itoa(i+1) {
			t.Errorf("retry %d params %s", i+1, c.Params)
		}
	}
	if len(runEvents(f, EventReconciled)) != 1 {
		t.Errorf("run log %+v", f.sink.events(runID))
	}
}

func TestPeerURLInput(t *testing.T) {
	p := mcppeers.StartGo(t, mcppeers.Script{})
	sess, _, ctx := peerSession(t, p, []string{mcppeers.URLInput})
	var seen InputRequest
	decide := func(_ context.Context, r InputRound) (map[string]*mcp.ElicitResult, error) {
		seen = r.Requests[0]
		return map[string]*mcp.ElicitResult{seen.ID: {Action: "accept"}}, nil
	}
	urlOnly := &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}
	out, err := sess.Call(ctx, CallRequest{Tool: mcppeers.URLInput, Elicitation: urlOnly, Decide: decide})
	if err != nil || out.Result.Content[0].Text != mcppeers.AuthorizedText {
		t.Fatalf("Call = %+v, %v", out, err)
	}
	want := InputRequest{ID: mcppeers.URLInputKey, Method: "elicitation/create", Mode: "url", Message: mcppeers.URLInputMessage,
		URL: p.Base + mcppeers.AuthorizePath + mcppeers.URLElicitationID, ElicitationID: mcppeers.URLElicitationID}
	if !reflect.DeepEqual(seen, want) {
		t.Errorf("decider saw %+v", seen)
	}

	// Declaring form only, the server refuses with -32021 before asking:
	// the tool never ran.
	before := len(p.Calls("tools/call"))
	out, err = sess.Call(ctx, CallRequest{Tool: mcppeers.URLInput, Elicitation: formOnly, Decide: decide})
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != mcp.CodeMissingRequiredClientCapabilities || out.Reconciliation != outbound.FailedNoEffect {
		t.Fatalf("Call = %+v, %v", out, err)
	}
	if n := len(p.Calls("tools/call")) - before; n != 1 {
		t.Errorf("%d tools/call for a refused call, want 1", n)
	}
}

func TestPeerCancel(t *testing.T) {
	p := mcppeers.StartGo(t, mcppeers.Script{})
	sess, f, ctx := peerSession(t, p, []string{mcppeers.Slow})
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		p.WaitSlow(t, 0, false)
		cancel()
	}()
	out, err := sess.Call(ctx, CallRequest{Tool: mcppeers.Slow})
	if !errors.Is(err, context.Canceled) || out.Reconciliation != outbound.CancelRequestedRemoteUnknown || out.Calls != 1 {
		t.Fatalf("Call = %+v, %v", out, err)
	}
	waitCancelNotified(t, p)
	if n := len(p.Calls("tools/call")); n != 1 {
		t.Errorf("%d tools/call, want 1", n)
	}
	if len(runEvents(f, EventReconciled)) != 1 {
		t.Errorf("run log %+v", f.sink.events(runID))
	}
}

func TestPeerTimeout(t *testing.T) {
	p := mcppeers.StartGo(t, mcppeers.Script{})
	sess, _, ctx := peerSession(t, p, []string{mcppeers.Slow}, withAdmission(func(a *Admission) { a.Limits.Timeout = 300 * time.Millisecond }))
	out, err := sess.Call(ctx, CallRequest{Tool: mcppeers.Slow})
	if !errors.Is(err, ErrTimeout) || out.Reconciliation != outbound.FailedPossibleEffect {
		t.Fatalf("Call = %+v, %v", out, err)
	}
	waitCancelNotified(t, p)
	// A call that timed out is never sent again.
	if n := len(p.Calls("tools/call")); n != 1 {
		t.Errorf("%d tools/call, want 1", n)
	}
}

// waitCancelNotified waits for the slow call to end cancelled, with a
// notifications/cancelled naming its id on the wire (go-sdk sends it off
// the caller's path).
func waitCancelNotified(t *testing.T, p *mcppeers.Server) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		c := p.WaitSlow(t, 0, true)
		if c.Outcome == mcppeers.SlowCancelled && c.CancelNotified {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("slow call %+v; want it cancelled and notified", c)
		}
	}
}

func TestPeerToolError(t *testing.T) {
	p := mcppeers.StartGo(t, mcppeers.Script{})
	sess, f, ctx := peerSession(t, p, []string{mcppeers.Fails})
	out, err := sess.Call(ctx, CallRequest{Tool: mcppeers.Fails})
	if !errors.Is(err, ErrToolError) || !out.Result.IsError || out.Result.Content[0].Text != mcppeers.FailureText ||
		out.Reconciliation != outbound.FailedPossibleEffect {
		t.Fatalf("Call = %+v, %v", out, err)
	}
	if len(runEvents(f, EventReconciled)) != 1 {
		t.Errorf("run log %+v", f.sink.events(runID))
	}
}

// TestPeerTranslationLoss: everything the annotated tool returns that the
// projection leaves out, in one record on the run's log that passes the
// upstream RunEventDoc schema.
func TestPeerTranslationLoss(t *testing.T) {
	p := mcppeers.StartGo(t, mcppeers.Script{})
	sess, f, ctx := peerSession(t, p, []string{mcppeers.Annotated})
	out, err := sess.Call(ctx, CallRequest{Tool: mcppeers.Annotated})
	if err != nil || len(out.Result.Content) != 5 {
		t.Fatalf("Call = %+v, %v", out, err)
	}
	losses := runEvents(f, EventTranslationLoss)
	if len(losses) != 1 {
		t.Fatalf("run log %+v, want one loss record", f.sink.events(runID))
	}
	ev := stored(losses[0], out.AttemptID)
	ev.RunID = runID
	doc, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	if err := sharedspec.RunEventValidator(t)(doc); err != nil {
		t.Fatalf("the record against the upstream schema: %v\n%s", err, doc)
	}
	golden.Check(t, "loss_event_annotated.json", append(ev.Payload, '\n'))
}

// TestPeerToolGoneWhileListCached: the tool is admitted and in the cached
// list, but the server no longer has it: its -32602 proves nothing ran.
func TestPeerToolGoneWhileListCached(t *testing.T) {
	p := mcppeers.StartGo(t, mcppeers.Script{ListCache: mcppeers.PrivateList()})
	sess, _, ctx := peerSession(t, p, []string{mcppeers.Echo})
	if _, err := sess.Tools(ctx); err != nil {
		t.Fatal(err)
	}
	p.SetTools(nil)
	out, err := sess.Call(ctx, CallRequest{Tool: mcppeers.Echo, Arguments: json.RawMessage(`{"a":1}`)})
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams || out.Reconciliation != outbound.FailedNoEffect || out.Calls != 1 {
		t.Fatalf("Call = %+v, %v", out, err)
	}
	if e := ProjectError(runID, err); e.Status != http.StatusBadRequest || e.Code != "validation_error" {
		t.Errorf("envelope %+v", e)
	}
	if n := len(p.Calls("tools/call")); n != 1 {
		t.Errorf("%d tools/call, want 1", n)
	}
}

// Tools of this file's go-sdk server.
var (
	// askTool asks twice (a name, then a colour) and checks each retry
	// echoes its state exactly.
	askTool = tool("ask", "q")
	// loopTool asks for arguments.rounds retries, then completes: the
	// OpenWOP suite's needs_input_loop.
	loopTool = tool("loop", "rounds")
	// dropTool's request is read, then its connection closed.
	dropTool = tool("drop", "x")
	// greetTool asks once, then completes (the benchmark's exchange).
	greetTool = tool("greet", "x")
)

// Unusual requestStates the ask tool issues.
const (
	askState1 = "s1\x00\"\\/<>&\u2028\u2029😀é\t end"
	askState2 = "s2 {\"not\":\"parsed\"} QUJD+/="
)

// callServer is a go-sdk server with askTool, loopTool, dropTool and
// greetTool, and a fixture admitting them.
func callServer(t testing.TB, opts ...fixtureOpt) (*server, *fixture) {
	s := newServer(t, withJSON(), withCache(60_000, "private"))
	s.mcp.AddTool(askTool, askHandler)
	s.mcp.AddTool(loopTool, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args struct{ Rounds int }
		_ = json.Unmarshal(req.Params.Arguments, &args)
		served, _ := strconv.Atoi(strings.TrimPrefix(req.Params.RequestState, "loop-"))
		if served >= args.Rounds {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "looped " + strconv.Itoa(served)}}}, nil
		}
		return askFor("again", "Once more?", "loop-"+strconv.Itoa(served+1)), nil
	})
	s.mcp.AddTool(dropTool, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, errors.New("not reached: the connection is closed first")
	})
	s.mcp.AddTool(greetTool, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if req.Params.RequestState == "" {
			return askFor("name", "Your name?", "round-1"), nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello"}}}, nil
	})
	sdk := s.handler
	s.setHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"name":"drop"`)) {
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				conn.Close()
			}
			return
		}
		sdk.ServeHTTP(w, r)
	}))
	return s, newFixture(t, s, admission(s, askTool, loopTool, dropTool, greetTool), opts...)
}

func askFor(id, message, state string) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{id: &mcp.ElicitParams{Message: message, RequestedSchema: schema(id)}},
		RequestState:  state,
	}
}

func askHandler(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	p := req.Params
	answer := func(id string) string {
		if r, _ := p.InputResponses[id].(*mcp.ElicitResult); r != nil && r.Action == "accept" {
			s, _ := r.Content[id].(string)
			return s
		}
		return ""
	}
	switch {
	case p.RequestState == "":
		return askFor("name", "Your name?", askState1), nil
	case p.RequestState == askState1 && answer("name") == "Ada":
		return askFor("color", "Colour?", askState2), nil
	case p.RequestState == askState2 && answer("color") == "blue":
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "state-ok"}}}, nil
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("requestState %q or answers not as issued", p.RequestState)}
}

// nameAndColour answers the ask tool.
func nameAndColour(_ context.Context, r InputRound) (map[string]*mcp.ElicitResult, error) {
	out := map[string]*mcp.ElicitResult{}
	for _, q := range r.Requests {
		v := map[string]string{"name": "Ada", "color": "blue"}[q.ID]
		out[q.ID] = &mcp.ElicitResult{Action: "accept", Content: map[string]any{q.ID: v}}
	}
	return out, nil
}

// toolCalls are the tools/call requests s received: id and params.
func toolCalls(s *server) []struct{ ID, Params json.RawMessage } {
	var out []struct{ ID, Params json.RawMessage }
	for _, q := range s.requests() {
		if q.method != "tools/call" {
			continue
		}
		var m struct{ ID, Params json.RawMessage }
		_ = json.Unmarshal(q.body, &m)
		out = append(out, m)
	}
	return out
}

func TestTwoRoundsWithChangingState(t *testing.T) {
	s, f := callServer(t)
	sess := f.connect(t, t.Context(), runID, "echo")
	out, err := sess.Call(t.Context(), CallRequest{Tool: "ask", Arguments: json.RawMessage(`{"q":"x"}`), Elicitation: formOnly, Decide: nameAndColour})
	if err != nil || out.Calls != 3 || out.Rounds != 2 || out.Result.Content[0].Text != "state-ok" {
		t.Fatalf("Call = %+v, %v", out, err)
	}
	calls := toolCalls(s)
	if len(calls) != 3 {
		t.Fatalf("%d tools/call", len(calls))
	}
	ids := map[string]bool{}
	for i, c := range calls {
		if ids[string(c.ID)] {
			t.Errorf("call %d reuses id %s", i+1, c.ID)
		}
		ids[string(c.ID)] = true
		var p wireParams
		if err := json.Unmarshal(c.Params, &p); err != nil || string(p.Arguments) != `{"q":"x"}` {
			t.Errorf("call %d params %s", i+1, c.Params)
		}
		want := []string{"", askState1, askState2}[i]
		if (p.RequestState == nil) != (want == "") || (p.RequestState != nil && *p.RequestState != want) {
			t.Errorf("call %d requestState %v, want %q", i+1, p.RequestState, want)
		}
	}
}

// TestCeilingBoundary drives the OpenWOP suite's v2-mrtr-rounds-ceiling
// exchange: rounds = maxRounds completes; rounds = maxRounds + 1 is
// refused with at most maxRounds + 1 calls on the wire.
func TestCeilingBoundary(t *testing.T) {
	for _, tc := range []struct {
		rounds int
		refuse bool
	}{{4, false}, {5, true}} {
		s, f := callServer(t)
		sess := f.connect(t, t.Context(), runID, "echo")
		out, err := sess.Call(t.Context(), CallRequest{Tool: "loop", Arguments: json.RawMessage(`{"rounds":` + strconv.Itoa(tc.rounds) + `}`),
			Elicitation: &mcp.ElicitationCapabilities{}, Decide: acceptAll})
		if tc.refuse != errors.Is(err, ErrRoundsExceeded) || (!tc.refuse && (err != nil || out.Result.Content[0].Text != "looped 4")) {
			t.Fatalf("rounds %d: Call = %+v, %v", tc.rounds, out, err)
		}
		if n := len(toolCalls(s)); n != 5 {
			t.Fatalf("rounds %d: server saw %d tools/call, want 5", tc.rounds, n)
		}
	}
}

func TestConnectionLostMidCall(t *testing.T) {
	s, f := callServer(t)
	sess := f.connect(t, t.Context(), runID, "echo")
	out, err := sess.Call(t.Context(), CallRequest{Tool: "drop", Arguments: json.RawMessage(`{"x":"1"}`)})
	if !errors.Is(err, ErrDisconnected) || out.Reconciliation != outbound.DisconnectedStillActive {
		t.Fatalf("Call = %+v, %v", out, err)
	}
	if n := len(toolCalls(s)); n != 1 {
		t.Fatalf("server saw %d tools/call: a call that may have been delivered is never replayed", n)
	}
	// The session survives for the next call.
	if out, err := sess.Call(t.Context(), CallRequest{Tool: "greet", Elicitation: formOnly, Decide: acceptAll}); err != nil || out.Result.Content[0].Text != "hello" {
		t.Fatalf("next call = %+v, %v", out, err)
	}
}

// TestGoSDKServerResultsLoseNothing: a plain result of a go-sdk server
// carries only the protocol's own _meta (serverInfo), which is no loss.
func TestGoSDKServerResultsLoseNothing(t *testing.T) {
	_, f := callServer(t)
	sess := f.connect(t, t.Context(), runID, "echo")
	if _, err := sess.Call(t.Context(), CallRequest{Tool: "greet", Elicitation: formOnly, Decide: acceptAll}); err != nil {
		t.Fatal(err)
	}
	if n := len(runEvents(f, EventTranslationLoss)) + len(runEvents(f, EventReconciled)); n != 0 {
		t.Fatalf("run log %+v", f.sink.events(runID))
	}
}
