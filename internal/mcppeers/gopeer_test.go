package mcppeers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func call(t *testing.T, cs *mcp.ClientSession, p *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return cs.CallTool(ctx, p)
}

func mustCall(t *testing.T, cs *mcp.ClientSession, p *mcp.CallToolParams) *mcp.CallToolResult {
	t.Helper()
	res, err := call(t, cs, p)
	if err != nil {
		t.Fatalf("CallTool %s: %v", p.Name, err)
	}
	return res
}

func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("content %d blocks, want 1: %+v", len(res.Content), res.Content)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content is %T, want text", res.Content[0])
	}
	return tc.Text
}

// wireError is the JSON-RPC error err carries, or t fails.
func wireError(t *testing.T, err error) *jsonrpc.Error {
	t.Helper()
	var je *jsonrpc.Error
	if !errors.As(err, &je) {
		t.Fatalf("error %v (%T) carries no JSON-RPC error", err, err)
	}
	return je
}

// TestGoConnect: a stock go-sdk client connects by server/discover alone
// (no initialize, no session), at 2026-07-28, and every request it sends
// is recorded with its headers and _meta.
func TestGoConnect(t *testing.T) {
	s := StartGo(t, Script{})
	cs := mustConnect(t, s.URL)
	if got := cs.InitializeResult().ProtocolVersion; got != Current {
		t.Fatalf("negotiated %q, want %q", got, Current)
	}
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	reqs := s.Requests()
	if len(reqs) != 2 || reqs[0].Method != "server/discover" || reqs[1].Method != "tools/list" {
		t.Fatalf("requests %+v, want server/discover then tools/list", reqs)
	}
	for _, q := range reqs {
		if q.HTTPMethod != http.MethodPost || q.Path != Path || q.ProtocolVersion != Current || q.MCPMethod != q.Method ||
			q.SessionID != "" || q.ID == nil || q.MetaString("io.modelcontextprotocol/protocolVersion") != Current {
			t.Errorf("recorded %+v", q)
		}
	}
}

// TestGoEcho: echo answers the arguments exactly as sent, as text and as
// structuredContent; the recorder keeps Mcp-Name, the trace headers and
// the _meta members the client sent.
func TestGoEcho(t *testing.T) {
	s := StartGo(t, Script{})
	tp := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	rt := traceHeaders{tp: tp, ts: "vendor=1", next: &http.Transport{}}
	cs, err := connect(t, s.URL, nil, rt)
	if err != nil {
		t.Fatal(err)
	}
	res := mustCall(t, cs, &mcp.CallToolParams{Name: Echo, Arguments: map[string]any{"b": []int{1, 2}, "a": "x"},
		Meta: mcp.Meta{"traceparent": tp, "tracestate": "vendor=1"}})
	if got, want := text(t, res), `{"a":"x","b":[1,2]}`; got != want || res.IsError {
		t.Fatalf("echo text %q (isError %v), want %q", got, res.IsError, want)
	}
	if diff := cmp.Diff(map[string]any{"a": "x", "b": []any{1.0, 2.0}}, res.StructuredContent); diff != "" {
		t.Fatalf("structuredContent (-want +got):\n%s", diff)
	}
	q := s.Calls("tools/call")[0]
	if q.ToolName != Echo || q.MCPName != Echo || q.Traceparent != tp || q.Tracestate != "vendor=1" ||
		q.MetaString("traceparent") != tp || q.MetaString("tracestate") != "vendor=1" {
		t.Fatalf("recorded %+v", q)
	}
}

type traceHeaders struct {
	tp, ts string
	next   http.RoundTripper
}

func (h traceHeaders) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("traceparent", h.tp)
	r.Header.Set("tracestate", h.ts)
	return h.next.RoundTrip(r)
}

// accept is the retry answering key with an accepted form.
func accept(name string, key, state string) *mcp.CallToolParams {
	return &mcp.CallToolParams{Name: NeedsInput, RequestState: state,
		InputResponses: mcp.InputResponseMap{key: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": name}}}}
}

// TestGoNeedsInput: round 1 asks for {name} by form elicitation under
// NeedsInputKey with NeedsInputState, byte-exact through a stock client;
// the retry echoing it completes with the greeting; every retry is its
// own request with its own id.
func TestGoNeedsInput(t *testing.T) {
	s := StartGo(t, Script{})
	cs := mustConnect(t, s.URL)
	res := mustCall(t, cs, &mcp.CallToolParams{Name: NeedsInput})
	if !res.NeedsInput() || res.RequestState != NeedsInputState {
		t.Fatalf("round 1: needsInput %v, requestState %q", res.NeedsInput(), res.RequestState)
	}
	ask, ok := res.InputRequests[NeedsInputKey].(*mcp.ElicitParams)
	if !ok || len(res.InputRequests) != 1 || ask.Mode != "form" || ask.Message != NeedsInputMessage {
		t.Fatalf("round 1 inputRequests %+v", res.InputRequests)
	}
	if diff := cmp.Diff(map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string", "description": "Your name"}},
		"required": []any{"name"}}, ask.RequestedSchema); diff != "" {
		t.Fatalf("requestedSchema (-want +got):\n%s", diff)
	}
	done := mustCall(t, cs, accept("Ada", NeedsInputKey, res.RequestState))
	if done.NeedsInput() || done.IsError || text(t, done) != "hello Ada" {
		t.Fatalf("retry: %+v", done)
	}
	calls := s.Calls("tools/call")
	if len(calls) != 2 || string(calls[0].ID) == string(calls[1].ID) {
		t.Fatalf("calls %d, ids %s %s", len(calls), calls[0].ID, calls[1].ID)
	}
	var retry struct {
		RequestState string `json:"requestState"`
	}
	if err := json.Unmarshal(calls[1].Params, &retry); err != nil || retry.RequestState != NeedsInputState {
		t.Fatalf("the retry's requestState on the wire %q (%v)", retry.RequestState, err)
	}
}

// TestGoNeedsInputRefusals: a state that differs by one byte, a missing
// answer and an accept without a name are -32602; decline and cancel
// complete with isError; a client without the elicitation capability gets
// -32021 naming it.
func TestGoNeedsInputRefusals(t *testing.T) {
	s := StartGo(t, Script{})
	cs := mustConnect(t, s.URL)
	for _, tc := range []struct {
		name string
		p    *mcp.CallToolParams
		msg  string
	}{
		{"tampered", accept("Ada", NeedsInputKey, NeedsInputState+"x"), "is not the one this server issued"},
		{"first byte dropped", accept("Ada", NeedsInputKey, NeedsInputState[1:]), "is not the one this server issued"},
		{"no state", accept("Ada", NeedsInputKey, ""), "is not the one this server issued"},
		{"wrong key", accept("Ada", "other", NeedsInputState), `inputResponses lacks an elicitation result for "needs_input/name"`},
		{"no name", accept("", NeedsInputKey, NeedsInputState), "the accepted elicitation has no name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := call(t, cs, tc.p)
			if je := wireError(t, err); je.Code != jsonrpc.CodeInvalidParams || !strings.Contains(je.Message, tc.msg) {
				t.Fatalf("got %d %q, want -32602 containing %q", je.Code, je.Message, tc.msg)
			}
		})
	}
	for action, want := range map[string]string{"decline": DeclinedText, "cancel": CancelledText} {
		res := mustCall(t, cs, &mcp.CallToolParams{Name: NeedsInput, RequestState: NeedsInputState,
			InputResponses: mcp.InputResponseMap{NeedsInputKey: &mcp.ElicitResult{Action: action}}})
		if !res.IsError || text(t, res) != want {
			t.Fatalf("%s: %+v", action, res)
		}
	}
	noElicit := clientOptions()
	noElicit.Capabilities = &mcp.ClientCapabilities{}
	bare, err := connect(t, s.URL, noElicit, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{NeedsInput, NeedsInputLoop, URLInput} {
		_, err := call(t, bare, &mcp.CallToolParams{Name: tool})
		je := wireError(t, err)
		mode := map[bool]string{true: "url", false: "form"}[tool == URLInput]
		if je.Code != mcp.CodeMissingRequiredClientCapabilities || string(je.Data) != `{"requiredCapabilities":{"elicitation":{"`+mode+`":{}}}}` {
			t.Fatalf("%s without elicitation: %d %q %s", tool, je.Code, je.Message, je.Data)
		}
	}
}

// TestGoNeedsInputLoop: every round is input_required; round n carries
// requestState "loop:<n>", and a state the server did not issue is -32602.
func TestGoNeedsInputLoop(t *testing.T) {
	s := StartGo(t, Script{})
	cs := mustConnect(t, s.URL)
	p := &mcp.CallToolParams{Name: NeedsInputLoop}
	for n := 1; n <= 6; n++ {
		res := mustCall(t, cs, p)
		if _, ok := res.InputRequests[LoopKey].(*mcp.ElicitParams); !ok || !res.NeedsInput() || res.RequestState != fmt.Sprintf("loop:%d", n) {
			t.Fatalf("round %d: needsInput %v state %q requests %+v", n, res.NeedsInput(), res.RequestState, res.InputRequests)
		}
		p = &mcp.CallToolParams{Name: NeedsInputLoop, RequestState: res.RequestState,
			InputResponses: mcp.InputResponseMap{LoopKey: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}}}
	}
	if got := len(s.Calls("tools/call")); got != 6 {
		t.Fatalf("server saw %d calls, want 6", got)
	}
	for _, state := range []string{"loop:0", "loop:x", "1", "loop:-2"} {
		p.RequestState = state
		_, err := call(t, cs, p)
		if je := wireError(t, err); je.Code != jsonrpc.CodeInvalidParams {
			t.Fatalf("state %q: %v", state, err)
		}
	}
}

// TestGoURLInput: url_input asks by URL-mode elicitation (url under the
// server's base, an elicitationId); an accepted retry completes.
func TestGoURLInput(t *testing.T) {
	s := StartGo(t, Script{})
	cs := mustConnect(t, s.URL)
	res := mustCall(t, cs, &mcp.CallToolParams{Name: URLInput})
	ask, ok := res.InputRequests[URLInputKey].(*mcp.ElicitParams)
	if !ok || !res.NeedsInput() || res.RequestState != URLInputState || ask.Mode != "url" || ask.Message != URLInputMessage ||
		ask.URL != s.Base+AuthorizePath+URLElicitationID || ask.ElicitationID != URLElicitationID || ask.RequestedSchema != nil {
		t.Fatalf("round 1: %+v %+v", res, ask)
	}
	retry := func(action string) *mcp.CallToolParams {
		return &mcp.CallToolParams{Name: URLInput, RequestState: URLInputState,
			InputResponses: mcp.InputResponseMap{URLInputKey: &mcp.ElicitResult{Action: action}}}
	}
	if done := mustCall(t, cs, retry("accept")); done.IsError || text(t, done) != AuthorizedText {
		t.Fatalf("accepted: %+v", done)
	}
	if done := mustCall(t, cs, retry("decline")); !done.IsError || text(t, done) != DeclinedText {
		t.Fatalf("declined: %+v", done)
	}
	_, err := call(t, cs, &mcp.CallToolParams{Name: URLInput, RequestState: "url_input:2",
		InputResponses: mcp.InputResponseMap{URLInputKey: &mcp.ElicitResult{Action: "accept"}}})
	if je := wireError(t, err); je.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("foreign state: %v", err)
	}
}

// TestGoFails: fails completes with isError and FailureText, never a
// JSON-RPC error.
func TestGoFails(t *testing.T) {
	s := StartGo(t, Script{})
	res := mustCall(t, mustConnect(t, s.URL), &mcp.CallToolParams{Name: Fails})
	if !res.IsError || text(t, res) != FailureText {
		t.Fatalf("%+v", res)
	}
}

// TestGoSlow: a slow call ends when its ms pass; a call whose context a
// stock go-sdk client cancels ends on the server as cancelled (the POST
// aborted), and the client also posts notifications/cancelled, which
// the server records (go-sdk's stateless handler would drop it).
func TestGoSlow(t *testing.T) {
	s := StartGo(t, Script{})
	cs := mustConnect(t, s.URL)
	if res := mustCall(t, cs, &mcp.CallToolParams{Name: Slow, Arguments: map[string]any{"ms": 20}}); text(t, res) != SleptText {
		t.Fatalf("%+v", res)
	}
	if c := s.WaitSlow(t, 0, true); c.Outcome != SlowElapsed || c.CancelNotified || string(c.ID) != string(s.Calls("tools/call")[0].ID) {
		t.Fatalf("slow 0: %+v", c)
	}

	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: Slow})
		errc <- err
	}()
	s.WaitSlow(t, 1, false)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call: %v", err)
	}
	c := s.WaitSlow(t, 1, true)
	if c.Outcome != SlowCancelled {
		t.Fatalf("slow 1: %+v", c)
	}
	if !waitFor(func() bool { return s.SlowCalls()[1].CancelNotified }) {
		t.Fatalf("go-sdk's client sent no notifications/cancelled: %+v", s.Calls("notifications/cancelled"))
	}
	n := s.Calls("notifications/cancelled")[0]
	if !n.IsNotification() || n.MCPMethod != "notifications/cancelled" || n.ProtocolVersion != Current {
		t.Fatalf("notification recorded as %+v", n)
	}
}

// TestGoSlowStopped: a slow call still waiting when the test ends is
// ended by the cleanup (SlowStopped), so nothing outlives the test.
func TestGoSlowStopped(t *testing.T) {
	var s *Server
	var wg sync.WaitGroup
	t.Run("inner", func(t *testing.T) {
		s = StartGo(t, Script{})
		cs := mustConnect(t, s.URL)
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: Slow})
		}()
		s.WaitSlow(t, 0, false)
	})
	wg.Wait()
	if c := s.SlowCalls()[0]; c.Outcome != SlowStopped {
		t.Fatalf("after the test: %+v", c)
	}
}

// TestGoAnnotated: every content kind with its annotations and _meta, a
// structuredContent and a result _meta reach a stock client; with a
// progressToken two progress notifications come first.
func TestGoAnnotated(t *testing.T) {
	s := StartGo(t, Script{})
	var mu sync.Mutex
	var progress []string
	opts := clientOptions()
	opts.ProgressNotificationHandler = func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		mu.Lock()
		defer mu.Unlock()
		progress = append(progress, fmt.Sprintf("%v %v/%v %s", r.Params.ProgressToken, r.Params.Progress, r.Params.Total, r.Params.Message))
	}
	cs, err := connect(t, s.URL, opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	res := mustCall(t, cs, &mcp.CallToolParams{Name: Annotated, Meta: mcp.Meta{"progressToken": "p-1"}})
	kinds := []string{}
	for _, c := range res.Content {
		kinds = append(kinds, fmt.Sprintf("%T", c))
	}
	if diff := cmp.Diff([]string{"*mcp.TextContent", "*mcp.ImageContent", "*mcp.AudioContent", "*mcp.ResourceLink", "*mcp.EmbeddedResource"}, kinds); diff != "" {
		t.Fatalf("content kinds (-want +got):\n%s", diff)
	}
	link := res.Content[3].(*mcp.ResourceLink)
	if link.Meta["etag"] != "v1" || link.Annotations == nil || link.Annotations.Priority != 0.5 || *link.Size != 11 {
		t.Fatalf("resource link %+v", link)
	}
	if res.Meta["mcppeers/result"] != "annotated" || res.Content[0].(*mcp.TextContent).Annotations.Audience[0] != "user" {
		t.Fatalf("result %+v", res)
	}
	// go-sdk hands notifications to the handler asynchronously.
	waitFor(func() bool { mu.Lock(); defer mu.Unlock(); return len(progress) >= 2 })
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]string{"p-1 1/2 step 1 of 2", "p-1 2/2 step 2 of 2"}, progress); diff != "" {
		t.Fatalf("progress (-want +got):\n%s", diff)
	}
}

// TestGoPrivateList: Script.ListCache marks tools/list; the stock client
// surfaces ttlMs and cacheScope.
func TestGoPrivateList(t *testing.T) {
	for _, tc := range []struct {
		cache mcp.Cacheable
		want  mcp.Cacheable
	}{
		{mcp.Cacheable{}, mcp.Cacheable{TTLMs: 0, CacheScope: "public"}},
		{PrivateList(), mcp.Cacheable{TTLMs: 60_000, CacheScope: "private"}},
	} {
		s := StartGo(t, Script{ListCache: tc.cache})
		res, err := mustConnect(t, s.URL).ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Cacheable != tc.want {
			t.Fatalf("ListCache %+v: got %+v, want %+v", tc.cache, res.Cacheable, tc.want)
		}
	}
}

// TestGoSetTools: a schema changed between two lists shows in the
// second; a tool dropped from the list is refused -32602; a tool under a
// new name echoes; pagination follows PageSize.
func TestGoSetTools(t *testing.T) {
	s := StartGo(t, Script{PageSize: 2})
	cs := mustConnect(t, s.URL)
	schemaOf := func(name string) any {
		t.Helper()
		var schema any
		for tool, err := range cs.Tools(context.Background(), nil) {
			if err != nil {
				t.Fatal(err)
			}
			if tool.Name == name {
				schema = tool.InputSchema
			}
		}
		return schema
	}
	if got := schemaOf(Echo); got == nil {
		t.Fatal("echo not listed")
	}
	if pages := len(s.Calls("tools/list")); pages != 4 {
		t.Fatalf("7 tools at PageSize 2 took %d pages, want 4", pages)
	}
	changed := json.RawMessage(`{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"]}`)
	s.SetTools([]*mcp.Tool{{Name: Echo, InputSchema: changed}, {Name: "extra", InputSchema: json.RawMessage(`{"type":"object"}`)}})
	if diff := cmp.Diff(map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"type": "integer"}},
		"required": []any{"x"}}, schemaOf(Echo)); diff != "" {
		t.Fatalf("echo's schema after SetTools (-want +got):\n%s", diff)
	}
	if res := mustCall(t, cs, &mcp.CallToolParams{Name: "extra", Arguments: map[string]int{"x": 1}}); text(t, res) != `{"x":1}` {
		t.Fatalf("extra: %+v", res)
	}
	_, err := call(t, cs, &mcp.CallToolParams{Name: Fails})
	if je := wireError(t, err); je.Code != jsonrpc.CodeInvalidParams || je.Message != `unknown tool "fails"` {
		t.Fatalf("dropped tool: %d %q", je.Code, je.Message)
	}
}

// TestGoListChanged: a stock client that asks for list changes opens
// subscriptions/listen on Connect, and SetTools reaches it as
// notifications/tools/list_changed.
func TestGoListChanged(t *testing.T) {
	s := StartGo(t, Script{})
	changed := make(chan struct{}, 4)
	opts := clientOptions()
	opts.ToolListChangedHandler = func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }
	if _, err := connect(t, s.URL, opts, nil); err != nil {
		t.Fatal(err)
	}
	if !waitFor(func() bool { return len(s.Calls("subscriptions/listen")) == 1 }) {
		t.Fatalf("no subscriptions/listen: %+v", s.Requests())
	}
	time.Sleep(50 * time.Millisecond) // the listen is recorded before go-sdk registers it
	s.SetTools(append(DefaultTools(), &mcp.Tool{Name: "added", InputSchema: json.RawMessage(`{"type":"object"}`)}))
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no notifications/tools/list_changed")
	}
}

// TestGoBearer: without the token every request is 401 with the RFC 9728
// WWW-Authenticate go-sdk writes, and the metadata it names is served;
// with it the client connects.
func TestGoBearer(t *testing.T) {
	s := StartGo(t, Script{BearerToken: "s3cret"})
	for _, authz := range []string{"", "Bearer wrong", "Basic czNjcmV0"} {
		res, body := post(t, s.URL, Current, "server/discover", "",
			`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":`+meta2026(`{}`)+`}}`, "Authorization", authz)
		want := `Bearer resource_metadata="` + s.Base + `/.well-known/oauth-protected-resource/mcp"`
		if res.StatusCode != http.StatusUnauthorized || res.Header.Get("WWW-Authenticate") != want ||
			!strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain") {
			t.Fatalf("%q: %d %v %q", authz, res.StatusCode, res.Header, body)
		}
	}
	if _, err := connect(t, s.URL, nil, nil); err == nil {
		t.Fatal("connected without the token")
	}
	cs, err := connect(t, s.URL, nil, bearer{token: "s3cret", next: &http.Transport{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if q := s.Calls("tools/list")[0]; q.Authorization != "Bearer s3cret" {
		t.Fatalf("recorded %+v", q)
	}
	res, body := getBody(t, s.Base+"/.well-known/oauth-protected-resource/mcp")
	if res.StatusCode != http.StatusOK || body != `{"bearer_methods_supported":["header"],"resource":"`+s.URL+`"}` {
		t.Fatalf("metadata: %d %s", res.StatusCode, body)
	}
}
