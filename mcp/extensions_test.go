package mcp

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
)

// TestExtensionGoldens pins every wire shape the host extension points
// add (ids, requestStates and timestamps normalised).
func TestExtensionGoldens(t *testing.T) {
	sampling := `{"sampling":{},"elicitation":{},"roots":{}}`
	cases := []struct {
		name  string
		tasks bool
		req   rpc
	}{
		{"ext_discover", false, rpc{method: "server/discover"}},
		{"ext_tools_list", true, rpc{method: "tools/list"}},
		{"ext_call_echo", false, rpc{method: "tools/call", params: map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi <&>"}}}},
		{"ext_call_media", false, rpc{method: "tools/call", params: map[string]any{"name": "media"}}},
		{"ext_call_tool_error", false, rpc{method: "tools/call", params: map[string]any{"name": "fails", "arguments": map[string]any{"kind": "tool-error"}}}},
		{"ext_call_input_required", false, rpc{method: "tools/call", caps: sampling, params: map[string]any{"name": "ask-all", "arguments": map[string]any{"ask": "form,sampling,roots"}}}},
		{"ext_call_missing_caps", false, rpc{method: "tools/call", caps: `{"elicitation":{"url":{}}}`, params: map[string]any{"name": "ask-all", "arguments": map[string]any{"ask": "form,url,sampling,roots"}}}},
		{"ext_call_host_input_error", false, rpc{method: "tools/call", params: map[string]any{"name": "fails", "arguments": map[string]any{"kind": "input"}}}},
		{"ext_call_progress", false, rpc{method: "tools/call", meta: `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":"p-1"}`, params: map[string]any{"name": "progress"}}},
		{"ext_prompts_list", false, rpc{method: "prompts/list"}},
		{"ext_prompts_get", false, rpc{method: "prompts/get", params: map[string]any{"name": "greeting", "arguments": map[string]any{"name": "Ada"}}}},
		{"ext_prompts_get_input_required", false, rpc{method: "prompts/get", caps: `{"elicitation":{}}`, params: map[string]any{"name": "ask-context"}}},
		{"ext_prompts_get_missing_argument", false, rpc{method: "prompts/get", params: map[string]any{"name": "greeting"}}},
		{"ext_resources_list", false, rpc{method: "resources/list"}},
		{"ext_resource_templates_list", false, rpc{method: "resources/templates/list"}},
		{"ext_resources_read_text", false, rpc{method: "resources/read", params: map[string]any{"uri": "test://doc"}}},
		{"ext_resources_read_blob", false, rpc{method: "resources/read", params: map[string]any{"uri": "test://img"}}},
		{"ext_resources_read_not_found", false, rpc{method: "resources/read", params: map[string]any{"uri": "test://missing"}}},
		{"ext_resources_read_not_allowed", false, rpc{method: "resources/read", params: map[string]any{"uri": "file:///etc/passwd"}}},
		{"ext_complete", false, rpc{method: "completion/complete", params: map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "greeting"}, "argument": map[string]any{"name": "name", "value": "a"}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := []func(*testConfig){withHost(newTestHost())}
			if tc.tasks {
				opts = append(opts, withTasks)
			}
			e := newEnv(t, opts...)
			rec := e.do(tc.req)
			checkGolden(t, tc.name, append([]byte(fmt.Sprintf("HTTP %d %s\n", rec.Code, rec.Header().Get("Content-Type"))), rec.Body.Bytes()...))
		})
	}
}

// TestExtensionsOffByDefault: without an extension point its methods are
// -32601 and discovery does not advertise it (OpenWOP interop map, mcp.methods).
func TestExtensionsOffByDefault(t *testing.T) {
	e := newEnv(t)
	for _, m := range []string{"prompts/list", "prompts/get", "resources/list", "resources/templates/list", "resources/read", "completion/complete"} {
		wantError(t, e.do(rpc{method: m, params: map[string]any{"name": "x", "uri": "test://x"}}), http.StatusNotFound, codeMethodNotFound)
	}
	caps := result(t, e.do(rpc{method: "server/discover"}))["capabilities"].(map[string]any)
	for _, c := range []string{"prompts", "resources", "completions"} {
		if _, ok := caps[c]; ok {
			t.Errorf("discover advertises %s without the extension point", c)
		}
	}
	// Each point alone advertises only itself.
	h := newTestHost()
	e = newEnv(t, func(c *testConfig) { c.Prompts = h })
	caps = result(t, e.do(rpc{method: "server/discover"}))["capabilities"].(map[string]any)
	if _, ok := caps["prompts"]; !ok || caps["resources"] != nil || caps["completions"] != nil {
		t.Errorf("capabilities with Prompts only = %v", caps)
	}
}

// TestExtensionHeaders: prompts/get and resources/read carry Mcp-Name =
// name or uri (OpenWOP interop map, mcp.headers; MCP 2026-07-28 streamable HTTP §Server Validation).
func TestExtensionHeaders(t *testing.T) {
	e := newEnv(t, withHost(newTestHost()))
	for _, q := range []rpc{
		{method: "prompts/get", params: map[string]any{"name": "greeting", "arguments": map[string]any{"name": "x"}}, hdr: map[string]string{"Mcp-Name": "other"}},
		{method: "prompts/get", params: map[string]any{"name": "greeting", "arguments": map[string]any{"name": "x"}}, hdr: map[string]string{"Mcp-Name": ""}},
		{method: "resources/read", params: map[string]any{"uri": "test://doc"}, hdr: map[string]string{"Mcp-Name": "test://img"}},
		{method: "resources/read", params: map[string]any{"uri": "test://doc"}, hdr: map[string]string{"Mcp-Name": ""}},
	} {
		wantError(t, e.do(q), http.StatusBadRequest, codeHeaderMismatch)
	}
	result(t, e.do(rpc{method: "resources/read", params: map[string]any{"uri": "test://doc"}, hdr: map[string]string{"Mcp-Name": "=?base64?dGVzdDovL2RvYw==?="}}))
}

func TestParseCaps(t *testing.T) {
	cases := map[string]ClientCapabilities{
		`{}`:                                     {},
		`{"elicitation":{}}`:                     {Elicitation: true, ElicitationForm: true},
		`{"elicitation":{"url":{}}}`:             {Elicitation: true, ElicitationURL: true},
		`{"elicitation":{"form":{},"url":{}}}`:   {Elicitation: true, ElicitationForm: true, ElicitationURL: true},
		`{"elicitation":true}`:                   {},
		`{"sampling":{}}`:                        {Sampling: true},
		`{"sampling":{"tools":{},"context":{}}}`: {Sampling: true, SamplingTools: true, SamplingContext: true},
		`{"sampling":{"tools":true}}`:            {Sampling: true},
		`{"roots":{"listChanged":true}}`:         {Roots: true},
		`{"roots":[]}`:                           {},
		`{"extensions":{"io.modelcontextprotocol/tasks":{}}}`:   {Tasks: true},
		`{"extensions":{"io.modelcontextprotocol/tasks":null}}`: {},
	}
	for raw, want := range cases {
		var got ClientCapabilities
		if !parseCaps(json.RawMessage(raw), &got) || got != want {
			t.Errorf("parseCaps(%s) = %+v, want %+v", raw, got, want)
		}
	}
	for _, bad := range []string{``, `[]`, `null`, `"x"`} {
		if parseCaps(json.RawMessage(bad), &ClientCapabilities{}) {
			t.Errorf("parseCaps(%q) accepted", bad)
		}
	}
}

// TestCapabilityChecks: each input request needs exactly its capability
// (OpenWOP interop map, mcp.meta).
func TestCapabilityChecks(t *testing.T) {
	form := ElicitForm("m", json.RawMessage(nameForm))
	url := ElicitURL("m", "https://x.example")
	sample := CreateMessage(SamplingRequest{MaxTokens: 1})
	tools := InputRequest{Method: MethodCreateMessage, Params: map[string]any{"tools": []any{map[string]any{}}}}
	context := InputRequest{Method: MethodCreateMessage, Params: map[string]any{"includeContext": "thisServer"}}
	noContext := InputRequest{Method: MethodCreateMessage, Params: map[string]any{"includeContext": "none"}}
	roots := ListRoots()
	cases := []struct {
		caps    ClientCapabilities
		req     InputRequest
		missing string
	}{
		{ClientCapabilities{}, form, `"elicitation":{}`},
		{ClientCapabilities{Elicitation: true, ElicitationURL: true}, form, `"elicitation":{"form":{}}`},
		{ClientCapabilities{Elicitation: true, ElicitationForm: true}, form, ``},
		{ClientCapabilities{Elicitation: true, ElicitationForm: true}, url, `"elicitation":{"url":{}}`},
		{ClientCapabilities{Elicitation: true, ElicitationURL: true}, url, ``},
		{ClientCapabilities{}, sample, `"sampling":{}`},
		{ClientCapabilities{Sampling: true}, sample, ``},
		{ClientCapabilities{Sampling: true}, tools, `"sampling":{"tools":{}}`},
		{ClientCapabilities{Sampling: true, SamplingTools: true}, tools, ``},
		{ClientCapabilities{Sampling: true}, context, `"sampling":{"context":{}}`},
		{ClientCapabilities{Sampling: true}, noContext, ``},
		{ClientCapabilities{Sampling: true, SamplingContext: true}, context, ``},
		{ClientCapabilities{}, roots, `"roots":{}`},
		{ClientCapabilities{Roots: true}, roots, ``},
	}
	for i, tc := range cases {
		params, err := marshalParams(tc.req.Params)
		if err != nil {
			t.Fatal(err)
		}
		if got := tc.caps.missing(tc.req.Method, params); got != tc.missing {
			t.Errorf("case %d: missing = %q, want %q", i, got, tc.missing)
		}
		if tc.caps.Supports(tc.req) != (tc.missing == "") {
			t.Errorf("case %d: Supports disagrees with missing", i)
		}
	}
	if got := mergeRequired([]string{`"elicitation":{"form":{}}`, `"roots":{}`, `"elicitation":{"url":{}}`}); got != `{"elicitation":{"form":{},"url":{}},"roots":{}}` {
		t.Errorf("mergeRequired = %s", got)
	}
}

// TestNativeToolList: native tools join the workflows, sorted by name; a
// workflow's name, an unusable schema and a nameless tool are left out; a
// native tool's unset task support is forbidden; the list is cached like
// the workflows.
func TestNativeToolList(t *testing.T) {
	h := newTestHost()
	e := newEnv(t, withHost(h), withTasks)
	res := result(t, e.do(rpc{method: "tools/list"}))
	var names []string
	support := map[string]string{}
	for _, raw := range res["tools"].([]any) {
		tool := raw.(map[string]any)
		name := tool["name"].(string)
		names = append(names, name)
		support[name] = tool["execution"].(map[string]any)["taskSupport"].(string)
	}
	if !slices.IsSorted(names) {
		t.Errorf("tools not sorted: %v", names)
	}
	for _, want := range []string{"echo", "media", "ask", "conformance-noop", "native-waits"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list lacks %s: %v", want, names)
		}
	}
	if slices.Contains(names, "bad-schema") || slices.Contains(names, "") {
		t.Errorf("unusable native tools listed: %v", names)
	}
	if support["echo"] != interop.TaskForbidden || support["ask"] != interop.TaskOptional || support["conformance-noop"] != interop.TaskOptional {
		t.Errorf("task support = %v", support)
	}
	// The workflow wins the name: calling it starts a run.
	result(t, e.do(rpc{method: "tools/call", params: map[string]any{"name": "conformance-noop"}}))
	if e.onlyRun(alice).WorkflowID != "conformance-noop" || h.callCount() != 0 {
		t.Error("the shadowed native tool was called")
	}
	// Cached per authorization context; InvalidateTools drops it.
	e.do(rpc{method: "tools/list"})
	if h.listings != 1 {
		t.Errorf("ListTools called %d times, want 1 (cached)", h.listings)
	}
	e.srv.InvalidateTools(tenantA)
	e.do(rpc{method: "tools/list"})
	if h.listings != 2 {
		t.Errorf("ListTools called %d times after InvalidateTools, want 2", h.listings)
	}
}

// TestNativeCall: arguments are validated before the host runs; the host
// sees the call it should; refusals and faults map to the right answers.
func TestNativeCall(t *testing.T) {
	h := newTestHost()
	e := newEnv(t, withHost(h))
	wantError(t, e.do(rpc{method: "tools/call", params: map[string]any{"name": "echo", "arguments": map[string]any{"text": 1}}}), http.StatusBadRequest, codeInvalidParams)
	wantError(t, e.do(rpc{method: "tools/call", params: map[string]any{"name": "echo"}}), http.StatusBadRequest, codeInvalidParams)
	if h.callCount() != 0 {
		t.Fatal("the host ran a call whose arguments did not match the schema")
	}
	res := result(t, e.do(rpc{method: "tools/call", caps: `{"roots":{}}`, params: map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi"}}}))
	if text, isError := toolResult(t, res); text != "hi" || isError {
		t.Fatalf("echo = %q isError %v", text, isError)
	}
	call := h.lastCall()
	if call.Name != "echo" || string(call.Arguments) != `{"text":"hi"}` || !call.Capabilities.Roots || call.State != nil || call.Round != 0 {
		t.Fatalf("host saw %+v", call)
	}
	cases := []struct {
		kind   string
		status int
		code   int
	}{
		{"input", http.StatusBadRequest, codeInvalidParams},
		{"invalid", http.StatusBadRequest, codeInvalidParams},
		{"notfound", http.StatusBadRequest, codeInvalidParams},
		{"fault", http.StatusInternalServerError, codeInternalError},
		{"two", http.StatusInternalServerError, codeInternalError},
		{"bad-structured", http.StatusInternalServerError, codeInternalError},
		{"bad-content", http.StatusInternalServerError, codeInternalError},
		{"empty-input", http.StatusInternalServerError, codeInternalError},
	}
	for _, tc := range cases {
		t.Run(tc.kind, func(t *testing.T) {
			rec := e.do(rpc{method: "tools/call", params: map[string]any{"name": "fails", "arguments": map[string]any{"kind": tc.kind}}})
			r := wantError(t, rec, tc.status, tc.code)
			if strings.Contains(rec.Body.String(), "hunter2") {
				t.Fatal("a host fault leaked its text")
			}
			if tc.kind == "notfound" && r.Error.Message != "Invalid params: unknown tool" {
				t.Fatalf("not found answered %q", r.Error.Message)
			}
		})
	}
	for _, asks := range []string{"ping", "array-params"} {
		wantError(t, e.do(rpc{method: "tools/call", caps: `{"roots":{}}`, params: map[string]any{"name": "ask-all", "arguments": map[string]any{"ask": asks}}}), http.StatusInternalServerError, codeInternalError)
	}
}

// TestNativeMRTR: a native tool's input round seals the host's state and
// the keys asked; the retry gets exactly those back; every refusal of the
// state is the one -32602 (OpenWOP interop map, mcp.mrtr; interop.md §The MCP round ceiling).
func TestNativeMRTR(t *testing.T) {
	h := newTestHost()
	e := newEnv(t, withHost(h), func(c *testConfig) { c.MaxRounds = 2 })
	q := rpc{method: "tools/call", caps: `{"elicitation":{}}`, params: map[string]any{"name": "ask"}}
	ir := e.ask(t, q)
	if ir.key(t) != "name" || ir.InputRequests["name"].Method != MethodElicit || ir.InputRequests["name"].Params.Mode != "form" {
		t.Fatalf("input required = %+v", ir)
	}
	answers := map[string]any{"name": map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}, "other": map[string]any{"action": "accept"}}
	res := result(t, e.do(retryWith(q, ir.RequestState, answers)))
	if text, _ := toolResult(t, res); text != `Hello, Ada (state "asked-1", round 1)` {
		t.Fatalf("retry = %q", text)
	}
	if got := h.lastCall().Responses; len(got) != 1 || got["name"] == nil {
		t.Fatalf("host saw responses %v, want only the asked key", got)
	}
	// Refusals, each leaving the host untouched.
	fresh := func() string { return e.ask(t, q).RequestState }
	calls := h.callCount()
	for name, req := range map[string]rpc{
		"replayed":       retryWith(q, ir.RequestState, answers),
		"tampered":       retryWith(q, fresh()+"-TAMPERED", answers),
		"other caller":   func() rpc { r := retryWith(q, fresh(), answers); r.as = "acme:bob"; return r }(),
		"other tool":     retryWith(rpc{method: "tools/call", caps: q.caps, params: map[string]any{"name": "ask-all"}}, fresh(), answers),
		"other argument": retryWith(rpc{method: "tools/call", caps: q.caps, params: map[string]any{"name": "ask", "arguments": map[string]any{"x": 1}}}, fresh(), answers),
	} {
		t.Run(name, func(t *testing.T) {
			r := wantError(t, e.do(req), http.StatusBadRequest, codeInvalidParams)
			if r.Error.Message != errInvalidState.Message {
				t.Fatalf("message %q", r.Error.Message)
			}
		})
	}
	if h.callCount() != calls+4 { // the four fresh() first calls only
		t.Fatalf("host called %d times during refusals, want %d", h.callCount()-calls, 4)
	}
	// Rounds: the retry of round 2 is allowed, round 3 is over MaxRounds 2.
	state := fresh()
	for round := 1; ; round++ {
		rec := e.do(retryWith(q, state, map[string]any{"nope": map[string]any{"action": "decline"}}))
		if round == 3 { // the answer of round 3 is past MaxRounds 2
			r := wantError(t, rec, http.StatusBadRequest, codeInvalidParams)
			if !strings.Contains(string(r.Error.Data), `"reason":"mcp_mrtr_rounds_exceeded"`) {
				t.Fatalf("rounds refusal data %s", r.Error.Data)
			}
			break
		}
		state = asInputRequired(t, rec.Body.Bytes()).RequestState
		if h.lastCall().Round != round || string(h.lastCall().State) != fmt.Sprintf("asked-%d", round) {
			t.Fatalf("round %d: host saw round %d state %q", round, h.lastCall().Round, h.lastCall().State)
		}
	}
	// Without requestState the host sees every response the client sent:
	// it may answer from them (SEP-2322), with no more authority than
	// arguments.
	res = result(t, e.do(rpc{method: "tools/call", caps: q.caps, params: map[string]any{"name": "ask", "inputResponses": answers}}))
	if text, _ := toolResult(t, res); !strings.HasPrefix(text, "Hello, Ada") || len(h.lastCall().Responses) != 2 {
		t.Fatalf("stateless retry = %q, host saw %v", text, h.lastCall().Responses)
	}
	// Malformed responses never reach the host.
	calls = h.callCount()
	for _, bad := range []any{12345, map[string]any{"name": 1}, []any{}} {
		wantError(t, e.do(rpc{method: "tools/call", caps: q.caps, params: map[string]any{"name": "ask", "inputResponses": bad}}), http.StatusBadRequest, codeInvalidParams)
	}
	if h.callCount() != calls {
		t.Fatal("malformed inputResponses reached the host")
	}
}

// TestNativeMissingCapabilities: one -32021 naming everything missing,
// merged into one ClientCapabilities object.
func TestNativeMissingCapabilities(t *testing.T) {
	e := newEnv(t, withHost(newTestHost()))
	r := wantError(t, e.do(rpc{method: "tools/call", caps: `{"sampling":{}}`, params: map[string]any{"name": "ask-all", "arguments": map[string]any{"ask": "form,url,sampling-tools,roots"}}}), http.StatusBadRequest, codeMissingCapability)
	want := `{"requiredCapabilities":{"elicitation":{},"roots":{},"sampling":{"tools":{}}}}`
	if string(r.Error.Data) != want {
		t.Fatalf("data %s, want %s", r.Error.Data, want)
	}
}

// sseMessages reads the JSON messages of an SSE body.
func sseMessages(t testing.TB, body string) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(data), &m); err != nil {
			t.Fatalf("SSE data is not JSON: %s", data)
		}
		out = append(out, m)
	}
	return out
}

// TestNativeProgress: a progressToken (string or integer) turns the answer
// into an SSE stream of notifications/progress, then the result; without
// a valid token progress is dropped and the answer is JSON.
func TestNativeProgress(t *testing.T) {
	e := newEnv(t, withHost(newTestHost()))
	meta := func(token string) string {
		return `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":` + token + `}`
	}
	rec := e.do(rpc{method: "tools/call", id: "9", meta: meta("42"), params: map[string]any{"name": "progress"}})
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "text/event-stream" {
		t.Fatalf("got %d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
	msgs := sseMessages(t, rec.Body.String())
	if len(msgs) != 5 {
		t.Fatalf("want 4 notifications and the result, got %v", msgs)
	}
	for i, m := range msgs[:4] {
		params := m["params"].(map[string]any)
		if m["method"] != "notifications/progress" || params["progressToken"] != float64(42) || m["id"] != nil {
			t.Fatalf("message %d = %v", i, m)
		}
	}
	if _, ok := msgs[3]["params"].(map[string]any)["total"]; ok {
		t.Error("an unknown total was sent")
	}
	if msgs[4]["id"] != float64(9) || msgs[4]["result"] == nil {
		t.Fatalf("last message = %v", msgs[4])
	}
	for _, token := range []string{"1.5", `{"a":1}`, "null"} {
		rec := e.do(rpc{method: "tools/call", meta: meta(token), params: map[string]any{"name": "progress"}})
		if rec.Header().Get("Content-Type") != "application/json" {
			t.Errorf("token %s: content type %s", token, rec.Header().Get("Content-Type"))
		}
		result(t, rec)
	}
	// No progress reported: JSON even with a token.
	rec = e.do(rpc{method: "tools/call", meta: meta(`"t"`), params: map[string]any{"name": "media"}})
	if rec.Header().Get("Content-Type") != "application/json" {
		t.Errorf("no progress: content type %s", rec.Header().Get("Content-Type"))
	}
}

// TestNativeCancelled: notifications/cancelled stops a native call of the
// same Subject, which ends with a cancelled tool error.
func TestNativeCancelled(t *testing.T) {
	h := newTestHost()
	e := newEnv(t, withHost(h))
	recs := make(chan *httptest.ResponseRecorder, 1)
	go func() {
		recs <- e.do(rpc{method: "tools/call", id: `"n-1"`, params: map[string]any{"name": "native-waits"}})
	}()
	select {
	case <-h.entered:
	case <-time.After(5 * time.Second):
		t.Fatal("the native call never started")
	}
	note := func(as string) int {
		return e.do(rpc{method: "notifications/cancelled", as: as, body: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"n-1"}}`}).Code
	}
	if note("acme:bob") != http.StatusAccepted {
		t.Fatal("notification refused")
	}
	select {
	case rec := <-recs:
		t.Fatalf("another principal's notification ended the call: %s", rec.Body)
	case <-time.After(20 * time.Millisecond):
	}
	note("acme:alice")
	select {
	case rec := <-recs:
		text, isError := toolResult(t, result(t, rec))
		if !isError || text != "The tool call was cancelled." {
			t.Fatalf("cancelled call = %q isError %v", text, isError)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("notifications/cancelled did not stop the native call")
	}
}

// TestHandoff: a native tool continues as a run, answered like that
// workflow's call with the tool's task support: a task when declared,
// else the awaited run, its input rounds resumed through the tool's name.
func TestHandoff(t *testing.T) {
	h := newTestHost()
	e := newEnv(t, withHost(h), withTasks)
	// Blocking: the run's result.
	res := result(t, e.do(rpc{method: "tools/call", params: map[string]any{"name": "handoff", "arguments": map[string]any{"workflow": "conformance-noop"}}}))
	if text, _ := toolResult(t, res); text != `{"ok":true}` {
		t.Fatalf("handed-off result = %v", res)
	}
	if run := e.onlyRun(alice); run.Transport != interop.TransportMCP || run.WorkflowID != "conformance-noop" {
		t.Fatalf("run %+v", run)
	}
	// With the extension: input round first, then a task.
	q := rpc{method: "tools/call", caps: tasksCaps, params: map[string]any{"name": "handoff-required", "arguments": map[string]any{"workflow": "waits", "ask": "yes"}}}
	ir := e.ask(t, q)
	res = result(t, e.do(retryWith(q, ir.RequestState, map[string]any{"go": map[string]any{"action": "accept"}})))
	if res["resultType"] != "task" || res["requestState"] != nil || res["inputRequests"] != nil {
		t.Fatalf("round 2 = %v", res)
	}
	// TaskRequired without the extension: -32021 before the host runs.
	calls := h.callCount()
	wantError(t, e.do(rpc{method: "tools/call", params: map[string]any{"name": "handoff-required", "arguments": map[string]any{"workflow": "waits"}}}), http.StatusBadRequest, codeMissingCapability)
	if h.callCount() != calls {
		t.Fatal("the host ran a task-required call without the extension")
	}
	// The run asks for input: a run grant bound to the tool; the retry
	// resumes the run.
	q = rpc{method: "tools/call", caps: `{"elicitation":{}}`, params: map[string]any{"name": "handoff", "arguments": map[string]any{"workflow": wfAskName}}}
	ir = e.ask(t, q)
	key := ir.key(t)
	if !strings.HasPrefix(key, tenantA+"/") {
		t.Fatalf("run input key %q is not an interrupt id", key)
	}
	calls = h.callCount()
	res = result(t, e.do(retryWith(q, ir.RequestState, map[string]any{key: map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}})))
	if text, _ := toolResult(t, res); text != `{"name":"Ada"}` || h.callCount() != calls {
		t.Fatalf("resumed run = %v (host calls %d)", res, h.callCount()-calls)
	}
	// A hand-off to a workflow the caller cannot run is the host's fault.
	wantError(t, e.do(rpc{method: "tools/call", params: map[string]any{"name": "handoff", "arguments": map[string]any{"workflow": "no-such"}}}), http.StatusInternalServerError, codeInternalError)
}

// TestRunFault: a run that failed in the host (Run.Fault) answers a
// tools/call with CallToolResult isError true and a fixed safe text,
// never a JSON-RPC error — on the first call and on an MRTR retry (MCP
// tools §Error Handling) — while tasks/get reports its task as status
// failed with an error object and no result (SEP-2663), unlike an
// ordinary failed run.
func TestRunFault(t *testing.T) {
	e := newEnv(t, withTasks)
	defs := []memstore.WorkflowDef{
		{Workflow: interop.Workflow{ID: wfFault, Name: "Host fault"}, Run: func(context.Context, *memstore.RunContext) (json.RawMessage, error) {
			return nil, memstore.Fault("the backend is down")
		}},
		{Workflow: interop.Workflow{ID: "ask-then-fault", Name: "Asks, then the host fails"}, Run: func(ctx context.Context, rc *memstore.RunContext) (json.RawMessage, error) {
			if _, err := rc.Interrupt(ctx, interop.Interrupt{Kind: interop.InterruptClarification, Key: "name", NodeID: "name", Message: "Name?", ResumeSchema: json.RawMessage(nameSchema)}); err != nil {
				return nil, err
			}
			return nil, memstore.Fault("the backend is down")
		}},
	}
	for _, def := range defs {
		if err := e.store.Register(tenantA, def); err != nil {
			t.Fatal(err)
		}
	}
	wantFaultResult := func(rec *httptest.ResponseRecorder) {
		t.Helper()
		want := `{"jsonrpc":"2.0","id":<id>,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"test-host","version":"1.0.0"}},"resultType":"complete","content":[{"type":"text","text":"The tool failed in the host."}],"isError":true}}`
		var id struct{ ID json.RawMessage }
		_ = json.Unmarshal(rec.Body.Bytes(), &id)
		if got := strings.Replace(rec.Body.String(), `"id":`+string(id.ID)+`,`, `"id":<id>,`, 1); rec.Code != http.StatusOK || got != want {
			t.Errorf("got %d %s\nwant 200 %s", rec.Code, rec.Body, want)
		}
	}
	wantFaultResult(e.do(rpc{method: "tools/call", params: map[string]any{"name": wfFault}}))

	q := rpc{method: "tools/call", caps: `{"elicitation":{}}`, params: map[string]any{"name": "ask-then-fault"}}
	ir := e.ask(t, q)
	wantFaultResult(e.do(retryWith(q, ir.RequestState, map[string]any{ir.key(t): map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}})))

	taskID, run := e.startTask(wfFault)
	e.waitStatus(alice, run.ID, interop.StatusFailed)
	rec := e.do(taskReq("tasks/get", taskID, nil))
	got := result(t, rec)
	if got["status"] != "failed" || got["result"] != nil || got["error"] == nil {
		t.Fatalf("faulted task = %v", got)
	}
	checkGolden(t, "tasks_get_fault", rec.Body.Bytes())
}

// TestPrompts: prompts/get checks the listed prompt and its required
// arguments, keeps arguments plain strings, and its input rounds bind to
// the prompt (sealed.OperationDigest).
func TestPrompts(t *testing.T) {
	h := newTestHost()
	e := newEnv(t, withHost(h))
	get := func(params map[string]any) rpc {
		return rpc{method: "prompts/get", caps: `{"elicitation":{}}`, params: params}
	}
	cases := []struct {
		name   string
		params map[string]any
		status int
		code   int
	}{
		{"unknown", map[string]any{"name": "nope"}, http.StatusBadRequest, codeInvalidParams},
		{"listed but not found", map[string]any{"name": "hidden"}, http.StatusBadRequest, codeInvalidParams},
		{"missing required", map[string]any{"name": "greeting", "arguments": map[string]any{"tone": "warm"}}, http.StatusBadRequest, codeInvalidParams},
		{"number argument", map[string]any{"name": "greeting", "arguments": map[string]any{"name": 1}}, http.StatusBadRequest, codeInvalidParams},
		{"arguments not an object", map[string]any{"name": "greeting", "arguments": []any{"x"}}, http.StatusBadRequest, codeInvalidParams},
		{"name not a string", map[string]any{"name": 5}, http.StatusBadRequest, codeHeaderMismatch},
		{"host fault", map[string]any{"name": "broken"}, http.StatusInternalServerError, codeInternalError},
		{"messages and input", map[string]any{"name": "both"}, http.StatusInternalServerError, codeInternalError},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := e.do(get(tc.params))
			wantError(t, rec, tc.status, tc.code)
			if strings.Contains(rec.Body.String(), "exploded") {
				t.Fatal("a host fault leaked its text")
			}
		})
	}
	res := result(t, e.do(get(map[string]any{"name": "greeting", "arguments": map[string]any{"name": "Ada", "extra": "kept"}})))
	if res["resultType"] != "complete" || len(res["messages"].([]any)) != 2 {
		t.Fatalf("greeting = %v", res)
	}
	if got := h.prompts[len(h.prompts)-1].Arguments; !cmp.Equal(got, map[string]string{"name": "Ada", "extra": "kept"}) {
		t.Fatalf("host saw arguments %v", got)
	}
	// Input round: the state binds to prompts/get of this prompt.
	q := get(map[string]any{"name": "ask-context"})
	ir := e.ask(t, q)
	res = result(t, e.do(retryWith(q, ir.RequestState, map[string]any{"ctx": map[string]any{"action": "accept", "content": map[string]any{"context": "q3"}}})))
	if msg := res["messages"].([]any)[0].(map[string]any)["content"].(map[string]any)["text"]; msg != "Context: q3" {
		t.Fatalf("prompt after input = %v", res)
	}
	// The same state presented to a tool of another name, or a tool's
	// state presented to the prompt, does not open.
	wantError(t, e.do(retryWith(get(map[string]any{"name": "greeting", "arguments": map[string]any{"name": "x"}}), e.ask(t, q).RequestState, nil)), http.StatusBadRequest, codeInvalidParams)
	toolState := e.ask(t, rpc{method: "tools/call", caps: `{"elicitation":{}}`, params: map[string]any{"name": "ask"}}).RequestState
	r := wantError(t, e.do(retryWith(q, toolState, nil)), http.StatusBadRequest, codeInvalidParams)
	if r.Error.Message != errInvalidState.Message {
		t.Fatalf("tool state on a prompt: %s", r.Error.Message)
	}
	wantError(t, e.do(rpc{method: "prompts/list", params: map[string]any{"cursor": "abc"}}), http.StatusBadRequest, codeInvalidParams)
}

// TestResourceURIs: resources/read normalizes the URI before the host sees
// it and refuses traversal, other schemes and malformed URIs (OpenWOP interop map, mcp.methods).
func TestResourceURIs(t *testing.T) {
	h := newTestHost()
	e := newEnv(t, withHost(h))
	// want "" means refused.
	cases := map[string]string{
		"test://doc":                  "test://doc",
		"TEST://DOC":                  "test://doc",
		"test://items/%7e%41":         "test://items/~A",
		"test://items/a%2fb%3F":       "", // encoded separator: refused
		"test://items/%c3%a9":         "test://items/%C3%A9",
		"test://items/x?q=%2a&r=1":    "test://items/x?q=%2A&r=1",
		"https://Example.COM/a/b":     "https://example.com/a/b",
		"test:opaque":                 "test:opaque",
		"test://items/..":             "",
		"test://items/%2E%2e/secret":  "",
		"test://items/./x":            "",
		"test://items/a\\b":           "",
		"test://user@items/x":         "",
		"test://items/x#frag":         "",
		"test://items/%zz":            "",
		"test://items/%4":             "",
		"file:///etc/passwd":          "",
		"items/x":                     "",
		"":                            "",
		"test://items/a b":            "",
		"test://items/" + "\x00":      "",
		"1test://x":                   "",
		"test://items/" + longPath():  "",
		"test://items/%e2%80%ae-rtl":  "test://items/%E2%80%AE-rtl",
		"test://items/caf\u00e9":      "test://items/caf\u00e9",
		"HTTPS://example.com/%2e%2E/": "",
		"test://../x":                 "",
		"test://%2E%2e/x":             "",
		"test://Host:8080/x":          "test://host:8080/x",
		"TEST://%41%c3":               "test://a%C3",
	}
	for in, want := range cases {
		got, allowed := e.srv.normalizeURI(in)
		if allowed != (want != "") || got != want {
			t.Errorf("normalizeURI(%q) = %q, %v; want %q", in, got, allowed, want)
		}
	}
	// The host sees the normalized form; the error echoes what was asked.
	res := result(t, e.do(rpc{method: "resources/read", params: map[string]any{"uri": "TEST://items/%7e"}}))
	if h.lastRead().URI != "test://items/~" || res["contents"] == nil {
		t.Fatalf("host read %q", h.lastRead().URI)
	}
	for _, uri := range []string{"test://items/../../etc", "ftp://x/y"} {
		r := wantError(t, e.do(rpc{method: "resources/read", params: map[string]any{"uri": uri}}), http.StatusBadRequest, codeInvalidParams)
		if string(r.Error.Data) != `{"uri":`+quote(uri)+`}` {
			t.Errorf("refusal data %s", r.Error.Data)
		}
	}
	// Empty contents are never sent: not found (SEP-2164).
	r := wantError(t, e.do(rpc{method: "resources/read", params: map[string]any{"uri": "test://empty"}}), http.StatusBadRequest, codeInvalidParams)
	if r.Error.Message != "Resource not found" {
		t.Fatalf("empty contents answered %q", r.Error.Message)
	}
	// A read may ask for input too.
	q := rpc{method: "resources/read", caps: `{"roots":{}}`, params: map[string]any{"uri": "test://ask"}}
	ir := e.ask(t, q)
	res = result(t, e.do(retryWith(q, ir.RequestState, map[string]any{"roots": map[string]any{"roots": []any{}}})))
	if res["contents"].([]any)[0].(map[string]any)["text"] != "rooted" {
		t.Fatalf("read after input = %v", res)
	}
}

func longPath() string { return strings.Repeat("a", maxResourceURI) }

// TestResourceConfig: Resources needs a scheme allowlist of valid schemes.
func TestResourceConfig(t *testing.T) {
	srv := newEnv(t).srv
	base := testConfig{Deps: srv.deps, Options: srv.opts}
	for name, mod := range map[string]func(*testConfig){
		"no schemes":     func(c *testConfig) { c.Resources = newTestHost() },
		"invalid scheme": func(c *testConfig) { c.Resources = newTestHost(); c.ResourceSchemes = []string{"te st"} },
		"empty scheme":   func(c *testConfig) { c.ResourceSchemes = []string{""} },
	} {
		cfg := base
		cfg.Logger = nil
		mod(&cfg)
		if _, err := New(cfg.Deps, cfg.Options); err == nil {
			t.Errorf("%s: New accepted the config", name)
		}
	}
}

// TestCompletion: at most 100 values with hasMore; malformed requests and
// unknown references are -32602.
func TestCompletion(t *testing.T) {
	e := newEnv(t, withHost(newTestHost()))
	res := result(t, e.do(rpc{method: "completion/complete", params: map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "greeting"}, "argument": map[string]any{"name": "name", "value": "x"}}}))
	c := res["completion"].(map[string]any)
	if len(c["values"].([]any)) != 100 || c["hasMore"] != true || c["total"] != float64(150) {
		t.Fatalf("completion = %v", c)
	}
	res = result(t, e.do(rpc{method: "completion/complete", params: map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "greeting"}, "argument": map[string]any{"name": "name", "value": ""}, "context": map[string]any{"arguments": map[string]any{"tone": "none"}}}}))
	if c := res["completion"].(map[string]any); len(c["values"].([]any)) != 0 || c["hasMore"] != nil {
		t.Fatalf("empty completion = %v", c)
	}
	for _, params := range []map[string]any{
		{"ref": map[string]any{"type": "ref/prompt", "name": "other"}, "argument": map[string]any{"name": "a", "value": ""}},
		{"ref": map[string]any{"type": "ref/tool", "name": "greeting"}, "argument": map[string]any{"name": "a", "value": ""}},
		{"ref": map[string]any{"type": "ref/prompt"}, "argument": map[string]any{"name": "a", "value": ""}},
		{"ref": map[string]any{"type": "ref/resource", "uri": "test://items/{id}"}, "argument": map[string]any{"name": "a"}},
		{"ref": "greeting", "argument": map[string]any{"name": "a", "value": ""}},
		{"ref": map[string]any{"type": "ref/prompt", "name": "greeting"}, "argument": map[string]any{"name": "a", "value": ""}, "context": map[string]any{"arguments": map[string]any{"k": 1}}},
	} {
		wantError(t, e.do(rpc{method: "completion/complete", params: params}), http.StatusBadRequest, codeInvalidParams)
	}
}

// TestOwnLoopbackOrigin: AllowOwnLoopbackOrigin lets the page a loopback
// listener serves itself call it — the Origin names the socket the
// connection arrived on (scheme, loopback IP or localhost, port) — and
// nothing else: not another port or loopback address, not a foreign page,
// not a listener that is not loopback, not a Host header that merely
// agrees with the Origin.
func TestOwnLoopbackOrigin(t *testing.T) {
	v4 := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}
	v4other := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2), Port: 8080}
	v4http := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80}
	v6 := &net.TCPAddr{IP: net.IPv6loopback, Port: 8080}
	mapped := &net.TCPAddr{IP: net.ParseIP("::ffff:127.0.0.1"), Port: 8080}
	public := &net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 8080}
	cases := []struct {
		name    string
		off     bool
		local   net.Addr
		tls     bool
		host    string
		origin  string
		allowed bool
	}{
		{"IPv4 listener, its own origin", false, v4, false, "127.0.0.1:8080", "http://127.0.0.1:8080", true},
		{"IPv4 listener reached as localhost", false, v4, false, "localhost:8080", "http://localhost:8080", true},
		{"IPv4 listener, localhost page calling the IP", false, v4, false, "127.0.0.1:8080", "http://localhost:8080", true},
		{"IPv6 listener, its own origin", false, v6, false, "[::1]:8080", "http://[::1]:8080", true},
		{"IPv6 listener reached as localhost", false, v6, false, "localhost:8080", "http://localhost:8080", true},
		{"IPv4-mapped listener address", false, mapped, false, "127.0.0.1:8080", "http://127.0.0.1:8080", true},
		{"default port omitted", false, v4http, false, "127.0.0.1", "http://127.0.0.1", true},
		{"TLS listener, https origin", false, v4, true, "localhost:8080", "https://localhost:8080", true},
		{"option off", true, v4, false, "127.0.0.1:8080", "http://127.0.0.1:8080", false},
		{"loopback page on another port", false, v4, false, "localhost:8080", "http://localhost:3000", false},
		{"Host and Origin agree on another port", false, v4, false, "localhost:3000", "http://localhost:3000", false},
		{"default port against a listener on 8080", false, v4, false, "localhost:8080", "http://localhost", false},
		{"another loopback address", false, v4, false, "127.0.0.1:8080", "http://127.0.0.2:8080", false},
		{"IPv6 origin on an IPv4 listener", false, v4, false, "127.0.0.1:8080", "http://[::1]:8080", false},
		{"localhost on 127.0.0.2", false, v4other, false, "127.0.0.2:8080", "http://localhost:8080", false},
		{"https origin on a plain listener", false, v4, false, "localhost:8080", "https://localhost:8080", false},
		{"http origin on a TLS listener", false, v4, true, "localhost:8080", "http://localhost:8080", false},
		{"foreign origin", false, v4, false, "localhost:8080", "http://evil.example.com", false},
		{"foreign origin on the listener's port", false, v4, false, "localhost:8080", "http://evil.example.com:8080", false},
		{"rebinding: foreign Host", false, v4, false, "evil.example.com:8080", "http://127.0.0.1:8080", false},
		{"rebinding: foreign Host and Origin", false, v4, false, "evil.example.com", "http://evil.example.com", false},
		{"not a loopback listener", false, public, false, "localhost:8080", "http://localhost:8080", false},
		{"path in the origin", false, v4, false, "localhost:8080", "http://localhost:8080/mcp", false},
		{"userinfo in the origin", false, v4, false, "localhost:8080", "http://u@localhost:8080", false},
		{"opaque origin", false, v4, false, "localhost:8080", "null", false},
		{"file origin", false, v4, false, "localhost:8080", "file://", false},
		{"trailing-dot localhost", false, v4, false, "localhost:8080", "http://localhost.:8080", false},
		{"zone in the origin", false, v6, false, "[::1]:8080", "http://[::1%25lo]:8080", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, func(c *testConfig) { c.AllowOwnLoopbackOrigin = !tc.off })
			r := rpc{method: "tools/list", hdr: map[string]string{"Origin": tc.origin}}.request()
			r.Host = tc.host
			if tc.tls {
				r.TLS = &tls.ConnectionState{}
			}
			r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, tc.local))
			rec := httptest.NewRecorder()
			e.h.ServeHTTP(rec, r)
			if tc.allowed {
				result(t, rec)
				return
			}
			const refusal = `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Forbidden: origin not allowed"}}`
			if rec.Code != http.StatusForbidden || rec.Body.String() != refusal {
				t.Fatalf("got %d %.120s, want 403 %s", rec.Code, rec.Body, refusal)
			}
		})
	}
}

// TestOwnLoopbackOriginOverTCP: the same decision on a real loopback
// socket, whose port the test does not choose: the listener's own origin
// passes, the same origin one port off does not. An allowlist wildcard
// does not lift the loopback Host check.
func TestOwnLoopbackOriginOverTCP(t *testing.T) {
	e := newEnv(t, func(c *testConfig) { c.AllowOwnLoopbackOrigin = true })
	ts := e.serve()
	addr := ts.Listener.Addr().(*net.TCPAddr)
	post := func(host, origin string) *http.Response {
		t.Helper()
		req := clientRequest(t, testCtx(t), ts.URL, rpc{method: "tools/list", hdr: map[string]string{"Origin": origin}})
		req.Host = host
		res, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	own := "http://" + addr.String()
	if res := post(addr.String(), own); res.StatusCode != http.StatusOK {
		t.Fatalf("own origin %s: %d", own, res.StatusCode)
	}
	if res := post("localhost:"+strconv.Itoa(addr.Port), "http://localhost:"+strconv.Itoa(addr.Port)); res.StatusCode != http.StatusOK {
		t.Fatalf("own origin as localhost: %d", res.StatusCode)
	}
	other := "http://127.0.0.1:" + strconv.Itoa(addr.Port+1)
	if res := post("127.0.0.1:"+strconv.Itoa(addr.Port+1), other); res.StatusCode != http.StatusForbidden {
		t.Fatalf("origin %s on %s: %d", other, addr, res.StatusCode)
	}
	wild := newEnv(t, func(c *testConfig) { c.AllowedOrigins = []string{"*"} })
	ts = wild.serve()
	if res := post("evil.example.com", "http://evil.example.com"); res.StatusCode != http.StatusForbidden {
		t.Fatalf("a wildcard allowlist let a rebinding Host through: %d", res.StatusCode)
	}
}
