package mcppeers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopinterop/wopinterop/internal/golden"
)

// TestNodeWire: the TypeScript SDK server's exact answers, golden
// (testdata/node/<name>.txt), beside go-sdk's (testdata/wire): discover,
// the default tool list, each MRTR tool's first round, the -32021
// refusals, the refusals of a retry, a failure, an unknown tool, invalid
// arguments and the annotated result with its progress events.
func TestNodeWire(t *testing.T) {
	s := StartNode(t, Script{ListCache: PrivateList()})
	form, url := `{"elicitation":{}}`, `{"elicitation":{"url":{}}}`
	callBody := func(name, caps string, extra ...string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + name + `","_meta":` + meta2026(caps, extra...) + `}}`
	}
	retry := func(name, state, responses string) string {
		return `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"` + name + `","requestState":` + state +
			`,"inputResponses":` + responses + `,"_meta":` + meta2026(form) + `}}`
	}
	accepted := `{"needs_input/name":{"action":"accept","content":{"name":"Ada"}}}`
	cases := []struct{ name, method, tool, body string }{
		{"discover", "server/discover", "", discoverBody(1)},
		{"tools-list", "tools/list", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":` + meta2026(`{}`) + `}}`},
		{"needs_input", "tools/call", NeedsInput, callBody(NeedsInput, form)},
		{"needs_input-no-elicitation", "tools/call", NeedsInput, callBody(NeedsInput, `{}`)},
		{"needs_input-retry", "tools/call", NeedsInput, retry(NeedsInput, string(mustJSON(NeedsInputState)), accepted)},
		{"needs_input-foreign-state", "tools/call", NeedsInput, retry(NeedsInput, `"loop:1"`, accepted)},
		{"needs_input-no-state", "tools/call", NeedsInput,
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"needs_input","inputResponses":` + accepted + `,"_meta":` + meta2026(form) + `}}`},
		{"needs_input_loop", "tools/call", NeedsInputLoop, callBody(NeedsInputLoop, form)},
		{"url_input", "tools/call", URLInput, callBody(URLInput, url)},
		{"url_input-form-only", "tools/call", URLInput, callBody(URLInput, form)},
		{"fails", "tools/call", Fails, callBody(Fails, `{}`)},
		{"unknown-tool", "tools/call", "nope", callBody("nope", `{}`)},
		{"slow-invalid-arguments", "tools/call", Slow,
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{"ms":"soon"},"_meta":` + meta2026(`{}`) + `}}`},
		{"annotated", "tools/call", Annotated, callBody(Annotated, `{}`, `"progressToken":7`)},
		{"echo", "tools/call", Echo, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"z":[1, "two"],"a":null},"_meta":` + meta2026(`{}`) + `}}`},
	}
	for _, tc := range cases {
		res, body := post(t, s.URL, Current, tc.method, tc.tool, tc.body)
		golden.Check(t, "node/"+tc.name+".txt", exchange(s, res, body))
	}
}

// TestNodeConnect: a stock go-sdk client connects by server/discover alone
// (no initialize, no session), at 2026-07-28; the SDK's discover reports
// 2026-07-28 and tools with listChanged, and its cache hints default to
// ttlMs 0, cacheScope "private" (go-sdk: "public"). Every request is
// recorded with its headers and _meta.
func TestNodeConnect(t *testing.T) {
	s := StartNode(t, Script{})
	cs := mustConnect(t, s.URL)
	init := cs.InitializeResult()
	if init.ProtocolVersion != Current || init.Capabilities.Tools == nil || !init.Capabilities.Tools.ListChanged {
		t.Fatalf("discover: %+v %+v", init, init.Capabilities)
	}
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Cacheable != (mcp.Cacheable{TTLMs: 0, CacheScope: "private"}) || res.NextCursor != "" {
		t.Fatalf("tools/list cache %+v, cursor %q", res.Cacheable, res.NextCursor)
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

// TestNodeEcho: echo answers the arguments as sent (re-encoded by
// JavaScript: member order kept, whitespace not), as text and as
// structuredContent; the recorder keeps Mcp-Name, the trace headers and
// the _meta members the client sent.
func TestNodeEcho(t *testing.T) {
	s := StartNode(t, Script{})
	tp := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	cs, err := connect(t, s.URL, nil, traceHeaders{tp: tp, ts: "vendor=1", next: &http.Transport{}})
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

// TestNodeNeedsInput: round 1 asks for {name} by form elicitation under
// NeedsInputKey with NeedsInputState, byte-exact through a stock client;
// the retry echoing it completes with the greeting; each round is its own
// request with its own id.
func TestNodeNeedsInput(t *testing.T) {
	s := StartNode(t, Script{})
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
	if diff := cmp.Diff(map[string]any{"greeting": "hello Ada"}, done.StructuredContent); diff != "" {
		t.Fatalf("structuredContent (-want +got):\n%s", diff)
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

// invalidRequestState is the one answer the TypeScript SDK gives a retry
// its requestState.verify seam refuses (the message and data are the
// SDK's, whatever the reason).
func invalidRequestState(t *testing.T, err error) {
	t.Helper()
	je := wireError(t, err)
	if je.Code != jsonrpc.CodeInvalidParams || je.Message != "Invalid or expired requestState" ||
		string(je.Data) != `{"reason":"invalid_request_state"}` {
		t.Fatalf("got %d %q %s, want -32602 \"Invalid or expired requestState\" {\"reason\":\"invalid_request_state\"}", je.Code, je.Message, je.Data)
	}
}

// TestNodeNeedsInputRefusals: a state that differs by one byte, another
// tool's state, a missing answer, an unknown action and an accept without
// a name are -32602 from the SDK's requestState.verify seam; a retry
// without requestState never reaches that seam, and McpServer turns the
// handler's refusal into an isError result; decline and cancel complete
// with isError; a client without the elicitation capability gets -32021
// naming it, from the SDK.
func TestNodeNeedsInputRefusals(t *testing.T) {
	s := StartNode(t, Script{})
	cs := mustConnect(t, s.URL)
	for _, tc := range []struct {
		name string
		p    *mcp.CallToolParams
	}{
		{"tampered", accept("Ada", NeedsInputKey, NeedsInputState+"x")},
		{"first byte dropped", accept("Ada", NeedsInputKey, NeedsInputState[1:])},
		{"another tool's state", accept("Ada", NeedsInputKey, "loop:1")},
		{"wrong key", accept("Ada", "other", NeedsInputState)},
		{"no name", accept("", NeedsInputKey, NeedsInputState)},
		{"unknown action", &mcp.CallToolParams{Name: NeedsInput, RequestState: NeedsInputState,
			InputResponses: mcp.InputResponseMap{NeedsInputKey: &mcp.ElicitResult{Action: "maybe"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := call(t, cs, tc.p)
			invalidRequestState(t, err)
		})
	}
	if res := mustCall(t, cs, accept("Ada", NeedsInputKey, "")); !res.IsError || text(t, res) != `requestState "" is not the one this server issued` {
		t.Fatalf("no state: %+v", res)
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
	// The SDK checks capabilities only against what a tool asks for: a
	// retry that asks nothing completes (go-sdk's peer refuses it -32021).
	if res := mustCall(t, bare, accept("Ada", NeedsInputKey, NeedsInputState)); res.IsError || text(t, res) != "hello Ada" {
		t.Fatalf("retry without elicitation: %+v", res)
	}
}

// TestNodeNeedsInputLoop: every round is input_required; round n carries
// requestState "loop:<n>", and a state the server did not issue is -32602.
func TestNodeNeedsInputLoop(t *testing.T) {
	s := StartNode(t, Script{})
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
	for _, state := range []string{"loop:0", "loop:x", "1", "loop:-2", "loop:01", NeedsInputState} {
		p.RequestState = state
		_, err := call(t, cs, p)
		invalidRequestState(t, err)
	}
}

// TestNodeURLInput: url_input asks by URL-mode elicitation with the url
// under the server's base but no elicitationId (the SDK's 2026-07-28
// builder has none); an accepted retry completes, a declined one fails,
// a foreign state is -32602.
func TestNodeURLInput(t *testing.T) {
	s := StartNode(t, Script{})
	cs := mustConnect(t, s.URL)
	res := mustCall(t, cs, &mcp.CallToolParams{Name: URLInput})
	ask, ok := res.InputRequests[URLInputKey].(*mcp.ElicitParams)
	if !ok || !res.NeedsInput() || res.RequestState != URLInputState || ask.Mode != "url" || ask.Message != URLInputMessage ||
		ask.URL != s.Base+AuthorizePath+URLElicitationID || ask.ElicitationID != "" || ask.RequestedSchema != nil {
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
	invalidRequestState(t, err)
}

// TestNodeFails: fails completes with isError and FailureText, never a
// JSON-RPC error.
func TestNodeFails(t *testing.T) {
	s := StartNode(t, Script{})
	res := mustCall(t, mustConnect(t, s.URL), &mcp.CallToolParams{Name: Fails})
	if !res.IsError || text(t, res) != FailureText {
		t.Fatalf("%+v", res)
	}
}

// TestNodeSlow: a slow call ends when its ms pass; a call whose context a
// stock go-sdk client cancels ends on the server as cancelled (the POST
// aborted, which aborts the SDK's request signal), and the client's
// notifications/cancelled is recorded and answered 202.
func TestNodeSlow(t *testing.T) {
	s := StartNode(t, Script{})
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
	if c.Outcome != SlowCancelled || string(c.ID) != string(s.Calls("tools/call")[1].ID) {
		t.Fatalf("slow 1: %+v", c)
	}
	if !waitFor(func() bool { return s.SlowCalls()[1].CancelNotified }) {
		t.Fatalf("go-sdk's client sent no notifications/cancelled: %+v", s.Calls("notifications/cancelled"))
	}
	n := s.Calls("notifications/cancelled")[0]
	if !n.IsNotification() || n.MCPMethod != "notifications/cancelled" || n.ProtocolVersion != Current {
		t.Fatalf("notification recorded as %+v", n)
	}
	res, body := post(t, s.URL, Current, "notifications/cancelled", "",
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99,"_meta":`+meta2026(`{}`)+`}}`)
	if res.StatusCode != http.StatusAccepted || body != "" {
		t.Fatalf("a notification: %d %q", res.StatusCode, body)
	}
}

// TestNodeSlowStopped: a slow call still waiting when the test ends is
// ended before the cleanup (SlowStopped), so nothing outlives the test.
func TestNodeSlowStopped(t *testing.T) {
	nodeServer(t) // skips here, not in the inner test, without Node.js
	var s *Server
	var wg sync.WaitGroup
	t.Run("inner", func(t *testing.T) {
		s = StartNode(t, Script{})
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

// TestNodeAnnotated: every content kind with its annotations and _meta, a
// structuredContent and a result _meta reach a stock client; with a
// progressToken two progress notifications come first (the SDK's "auto"
// response becomes an SSE stream); under JSONResponse they are dropped.
func TestNodeAnnotated(t *testing.T) {
	nodeServer(t)
	for _, jsonResponse := range []bool{false, true} {
		t.Run(fmt.Sprintf("JSONResponse=%v", jsonResponse), func(t *testing.T) {
			s := StartNode(t, Script{JSONResponse: jsonResponse})
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
			if img := res.Content[1].(*mcp.ImageContent); string(img.Data) != "\x89PNG\r\n\x1a\n" || img.MIMEType != "image/png" {
				t.Fatalf("image %+v", img)
			}
			if res.Meta["mcppeers/result"] != "annotated" || res.Content[0].(*mcp.TextContent).Annotations.Audience[0] != "user" {
				t.Fatalf("result %+v", res)
			}
			want := []string{"p-1 1/2 step 1 of 2", "p-1 2/2 step 2 of 2"}
			if jsonResponse {
				want = nil
			} else {
				// go-sdk hands notifications to the handler asynchronously.
				waitFor(func() bool { mu.Lock(); defer mu.Unlock(); return len(progress) >= 2 })
			}
			mu.Lock()
			defer mu.Unlock()
			if diff := cmp.Diff(want, progress); diff != "" {
				t.Fatalf("progress (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNodePrivateList: Script.ListCache becomes the SDK's tools/list cache
// hint; the stock client surfaces ttlMs and cacheScope.
func TestNodePrivateList(t *testing.T) {
	for _, tc := range []struct {
		cache mcp.Cacheable
		want  mcp.Cacheable
	}{
		{mcp.Cacheable{}, mcp.Cacheable{TTLMs: 0, CacheScope: "private"}},
		{PrivateList(), mcp.Cacheable{TTLMs: 60_000, CacheScope: "private"}},
		{mcp.Cacheable{TTLMs: 5_000, CacheScope: "public"}, mcp.Cacheable{TTLMs: 5_000, CacheScope: "public"}},
	} {
		s := StartNode(t, Script{ListCache: tc.cache})
		res, err := mustConnect(t, s.URL).ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Cacheable != tc.want {
			t.Fatalf("ListCache %+v: got %+v, want %+v", tc.cache, res.Cacheable, tc.want)
		}
	}
}

// TestNodeSetTools: the tools are listed in the Script's order (go-sdk
// sorts them by name); a schema changed between two lists shows in the
// second; a tool dropped from the list is refused -32602; a tool under a
// new name echoes.
func TestNodeSetTools(t *testing.T) {
	s := StartNode(t, Script{})
	cs := mustConnect(t, s.URL)
	list := func() map[string]any {
		t.Helper()
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		schemas := map[string]any{}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
			schemas[tool.Name] = tool.InputSchema
		}
		schemas[""] = names
		return schemas
	}
	var order []string
	for _, tool := range DefaultTools() {
		order = append(order, tool.Name)
	}
	if diff := cmp.Diff(order, list()[""]); diff != "" {
		t.Fatalf("tool order (-want +got):\n%s", diff)
	}
	changed := json.RawMessage(`{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"]}`)
	s.SetTools([]*mcp.Tool{{Name: Echo, InputSchema: changed}, {Name: "extra", InputSchema: json.RawMessage(`{"type":"object"}`)}})
	after := list()
	if diff := cmp.Diff(map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"type": "integer"}},
		"required": []any{"x"}}, after[Echo]); diff != "" {
		t.Fatalf("echo's schema after SetTools (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{Echo, "extra"}, after[""]); diff != "" {
		t.Fatalf("tools after SetTools (-want +got):\n%s", diff)
	}
	if res := mustCall(t, cs, &mcp.CallToolParams{Name: "extra", Arguments: map[string]int{"x": 1}}); text(t, res) != `{"x":1}` {
		t.Fatalf("extra: %+v", res)
	}
	_, err := call(t, cs, &mcp.CallToolParams{Name: Fails})
	if je := wireError(t, err); je.Code != jsonrpc.CodeInvalidParams || je.Message != "Tool fails not found" {
		t.Fatalf("dropped tool: %d %q", je.Code, je.Message)
	}
}

// TestNodeListChanged: a stock client that asks for list changes opens
// subscriptions/listen on Connect, and SetTools reaches it as
// notifications/tools/list_changed through the SDK's listen router.
func TestNodeListChanged(t *testing.T) {
	s := StartNode(t, Script{})
	changed := make(chan struct{}, 4)
	opts := clientOptions()
	opts.ToolListChangedHandler = func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }
	if _, err := connect(t, s.URL, opts, nil); err != nil {
		t.Fatal(err)
	}
	if !waitFor(func() bool { return len(s.Calls("subscriptions/listen")) == 1 }) {
		t.Fatalf("no subscriptions/listen: %+v", s.Requests())
	}
	// The listen is recorded before the SDK registers it: change the list
	// until a change reaches the client.
	added := append(DefaultTools(), &mcp.Tool{Name: "added", InputSchema: json.RawMessage(`{"type":"object"}`)})
	deadline := time.After(10 * time.Second)
	for i := 0; ; i++ {
		if i%2 == 0 {
			s.SetTools(added)
		} else {
			s.SetTools(DefaultTools())
		}
		select {
		case <-changed:
			return
		case <-time.After(100 * time.Millisecond):
		case <-deadline:
			t.Fatal("no notifications/tools/list_changed")
		}
	}
}

// TestNodeBearer: without the token every request is 401 from the SDK's
// requireBearerAuth: an OAuth error body and an RFC 6750 §3 challenge
// naming the RFC 9728 metadata, which is served; with it the client
// connects.
func TestNodeBearer(t *testing.T) {
	s := StartNode(t, Script{BearerToken: "s3cret"})
	for _, tc := range []struct{ name, authz string }{{"none", ""}, {"wrong", "Bearer wrong"}, {"basic", "Basic czNjcmV0"}} {
		res, body := post(t, s.URL, Current, "server/discover", "", discoverBody(1), "Authorization", tc.authz)
		golden.Check(t, "node/bearer-"+tc.name+".txt", exchange(s, res, body))
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

// TestNodeCallerTools: each caller's own tools are listed (after the
// shared ones) and callable for that caller only; the list is private
// when ListCache says so.
func TestNodeCallerTools(t *testing.T) {
	s := StartNode(t, Script{ListCache: PrivateList(), CallerTools: map[string][]*mcp.Tool{
		"token-a": {{Name: "a_only", InputSchema: json.RawMessage(`{"type":"object"}`)}},
		"token-b": {},
	}})
	session := func(token string) *mcp.ClientSession {
		cs, err := connect(t, s.URL, nil, bearer{token: token, next: &http.Transport{}})
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	a, b := session("token-a"), session("token-b")
	names := func(cs *mcp.ClientSession) []string {
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Cacheable != PrivateList() {
			t.Fatalf("list cache hints %+v", res.Cacheable)
		}
		var out []string
		for _, tool := range res.Tools {
			out = append(out, tool.Name)
		}
		return out
	}
	shared := []string{Echo, NeedsInput, NeedsInputLoop, URLInput, Slow, Fails, Annotated}
	if diff := cmp.Diff(append(shared, "a_only"), names(a)); diff != "" {
		t.Fatalf("caller a's list (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(shared, names(b)); diff != "" {
		t.Fatalf("caller b's list (-want +got):\n%s", diff)
	}
	if res := mustCall(t, a, &mcp.CallToolParams{Name: "a_only", Arguments: map[string]int{"n": 1}}); text(t, res) != `{"n":1}` {
		t.Fatalf("a_only for a: %+v", res)
	}
	_, err := call(t, b, &mcp.CallToolParams{Name: "a_only"})
	if je := wireError(t, err); je.Code != jsonrpc.CodeInvalidParams || je.Message != "Tool a_only not found" {
		t.Fatalf("a_only for b: %d %q", je.Code, je.Message)
	}
	if _, err := connect(t, s.URL, nil, bearer{token: "token-c", next: &http.Transport{}}); err == nil {
		t.Fatal("an unknown token connected")
	}
}

// TestNodeRevisions: discover reports 2026-07-28 alone whatever the
// Script lists (the SDK negotiates earlier revisions by initialize only);
// with Revisions [2026-07-28] a legacy header, a future one and an
// initialize are refused by the SDK (golden); with a legacy revision
// listed, a stock client pinned to it gets served by the SDK's stateless
// legacy fallback (initialize answered, no Mcp-Session-Id).
func TestNodeRevisions(t *testing.T) {
	s := StartNode(t, Script{})
	cases := []struct{ name, version, method, body string }{
		{"legacy-header", "2025-06-18", "tools/list", `{"jsonrpc":"2.0","id":"r-1","method":"tools/list","params":{}}`},
		{"future-header", "2099-01-01", "tools/call", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo"}}`},
		{"future-envelope", "2099-01-01", "tools/call", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo","_meta":` +
			strings.Replace(meta2026(`{}`), Current, "2099-01-01", 1) + `}}`},
		{"initialize", "", "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`},
	}
	for _, tc := range cases {
		res, body := post(t, s.URL, tc.version, tc.method, "", tc.body)
		golden.Check(t, "node/revisions-"+tc.name+".txt", exchange(s, res, body))
	}

	s = StartNode(t, Script{Revisions: []string{Current, "2025-11-25"}})
	_, body := post(t, s.URL, Current, "server/discover", "", discoverBody(1))
	if !strings.Contains(body, `"supportedVersions":["2026-07-28"]`) {
		t.Fatalf("discover %s", body)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "pinned", Version: "1"}, clientOptions())
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: s.URL, HTTPClient: &http.Client{Transport: tr},
		DisableStandaloneSSE: true, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if got := cs.InitializeResult().ProtocolVersion; got != "2025-11-25" {
		t.Fatalf("negotiated %q", got)
	}
	if res := mustCall(t, cs, &mcp.CallToolParams{Name: Echo, Arguments: map[string]int{"n": 1}}); text(t, res) != `{"n":1}` {
		t.Fatalf("echo at 2025-11-25: %+v", res)
	}
	var seen []string
	for _, q := range s.Requests()[1:] {
		seen = append(seen, q.Method+"@"+q.ProtocolVersion+" session="+q.SessionID)
	}
	if diff := cmp.Diff([]string{"initialize@ session=", "notifications/initialized@2025-11-25 session=", "tools/call@2025-11-25 session="}, seen); diff != "" {
		t.Fatalf("wire (-want +got):\n%s", diff)
	}
}

// fatalRecorder is a testing.TB whose Fatalf records the message and ends
// the goroutine, for asserting that a helper refuses a Script.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (f *fatalRecorder) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// TestNodeScriptRefused: StartNode fails the test, naming the reason, for
// a Script the TypeScript SDK cannot serve: Revisions without 2026-07-28,
// a revision the SDK does not know, a PageSize.
func TestNodeScriptRefused(t *testing.T) {
	nodeServer(t)
	for _, tc := range []struct {
		s    Script
		want string
	}{
		{Script{Revisions: []string{"2025-11-25"}}, "Script.Revisions [2025-11-25] lacks 2026-07-28"},
		{Script{Revisions: []string{Current, "2025-01-01"}}, `the SDK does not know revisions ["2025-01-01"]`},
		{Script{PageSize: 2}, "does not paginate tools/list"},
	} {
		f := &fatalRecorder{TB: t}
		done := make(chan struct{})
		go func() {
			defer close(done)
			StartNode(f, tc.s)
		}()
		<-done
		if !strings.Contains(f.msg, tc.want) {
			t.Errorf("Script %+v: Fatalf %q, want it to contain %q", tc.s, f.msg, tc.want)
		}
	}
}
