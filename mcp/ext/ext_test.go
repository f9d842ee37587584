package ext

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/mcp/internal/mount"
)

// errInvalidState is the mount's one answer to a requestState that does
// not open.
const errInvalidState = "Invalid params: requestState is not valid for this request"

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
			opts := []func(*options){withHost(newTestHost())}
			if tc.tasks {
				opts = append(opts, withTasks)
			}
			e := newEnv(t, opts...)
			rec := e.do(tc.req)
			checkGolden(t, tc.name, append([]byte(fmt.Sprintf("HTTP %d %s\n", rec.Code, rec.Header().Get("Content-Type"))), rec.Body.Bytes()...))
		})
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

// TestCapabilityChecks: each input request needs exactly its capability
// (OpenWOP interop map, mcp.meta).
func TestCapabilityChecks(t *testing.T) {
	form := elicitForm("m", nameForm)
	url := &sdk.ElicitParams{Message: "m", URL: "https://x.example"}
	sample := &sdk.CreateMessageParams{MaxTokens: 1}
	tools := &sdk.CreateMessageWithToolsParams{Tools: []*sdk.Tool{{Name: "t"}}}
	context := &sdk.CreateMessageParams{IncludeContext: "thisServer"}
	noContext := &sdk.CreateMessageParams{IncludeContext: "none"}
	roots := &sdk.ListRootsParams{}
	cases := []struct {
		caps    mount.Caps
		req     sdk.InputRequest
		missing string
	}{
		{mount.Caps{}, form, `"elicitation":{}`},
		{mount.Caps{Elicitation: true, ElicitationURL: true}, form, `"elicitation":{"form":{}}`},
		{mount.Caps{Elicitation: true, ElicitationForm: true}, form, ``},
		{mount.Caps{Elicitation: true, ElicitationForm: true}, url, `"elicitation":{"url":{}}`},
		{mount.Caps{Elicitation: true, ElicitationURL: true}, url, ``},
		{mount.Caps{}, sample, `"sampling":{}`},
		{mount.Caps{Sampling: true}, sample, ``},
		{mount.Caps{Sampling: true}, tools, `"sampling":{"tools":{}}`},
		{mount.Caps{Sampling: true, SamplingTools: true}, tools, ``},
		{mount.Caps{Sampling: true}, context, `"sampling":{"context":{}}`},
		{mount.Caps{Sampling: true}, noContext, ``},
		{mount.Caps{Sampling: true, SamplingContext: true}, context, ``},
		{mount.Caps{}, roots, `"roots":{}`},
		{mount.Caps{Roots: true}, roots, ``},
	}
	for i, tc := range cases {
		got, err := missing(tc.caps, tc.req)
		if err != nil || got != tc.missing {
			t.Errorf("case %d: missing = %q, %v; want %q", i, got, err, tc.missing)
		}
		round := InputRound{caps: tc.caps}
		if round.Supports(tc.req) != (tc.missing == "") {
			t.Errorf("case %d: Supports disagrees with missing", i)
		}
	}
	for _, bad := range []sdk.InputRequest{nil, (*sdk.ElicitParams)(nil), (*sdk.ListRootsParams)(nil)} {
		if _, err := missing(mount.Caps{Elicitation: true, ElicitationForm: true, Roots: true}, bad); err == nil {
			t.Errorf("missing(%#v) accepted it", bad)
		}
		if (&InputRound{}).Supports(bad) {
			t.Errorf("Supports(%#v)", bad)
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
	if call.Name != "echo" || string(call.Arguments) != `{"text":"hi"}` || !call.caps.Roots || call.State != nil || call.Round != 0 {
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
	for _, asks := range []string{"nil"} {
		wantError(t, e.do(rpc{method: "tools/call", caps: `{"roots":{}}`, params: map[string]any{"name": "ask-all", "arguments": map[string]any{"ask": asks}}}), http.StatusInternalServerError, codeInternalError)
	}
}

// TestNativeMRTR: a native tool's input round seals the host's state and
// the keys asked; the retry gets exactly those back; every refusal of the
// state is the one -32602 (OpenWOP interop map, mcp.mrtr; interop.md §The MCP round ceiling).
func TestNativeMRTR(t *testing.T) {
	h := newTestHost()
	e := newEnv(t, withHost(h), func(o *options) { o.MaxRounds = 2 })
	q := rpc{method: "tools/call", caps: `{"elicitation":{}}`, params: map[string]any{"name": "ask"}}
	ir := e.ask(t, q)
	if ir.key(t) != "name" || ir.InputRequests["name"].Method != "elicitation/create" || ir.InputRequests["name"].Params.Mode != "form" {
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
			if r.Error.Message != errInvalidState {
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
	if r.Error.Message != errInvalidState {
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
		got, allowed := e.x.normalizeURI(in)
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
	for name, cfg := range map[string]Config{
		"no schemes":     {Resources: newTestHost()},
		"invalid scheme": {Resources: newTestHost(), ResourceSchemes: []string{"te st"}},
		"empty scheme":   {ResourceSchemes: []string{""}},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: New accepted the config", name)
		}
	}
	if _, err := New(Config{}); err != nil {
		t.Errorf("an empty Config: %v", err)
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
