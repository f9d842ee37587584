package mcpfixtures_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/examples/host/mcpfixtures"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/mcp"
	"github.com/wopinterop/wopinterop/mcp/ext"
	"github.com/wopinterop/wopinterop/mcp/sealed"
	"github.com/wopinterop/wopinterop/negotiate"
)

// client is a minimal MCP 2026-07-28 client over HTTP for the fixture
// tests (the conformance suite is the real one).
type client struct {
	t    *testing.T
	url  string
	caps string
}

const allCaps = `{"elicitation":{},"sampling":{},"roots":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}`

// call sends method with params and returns the HTTP status and the
// decoded response.
func (c client) call(method string, params map[string]any) (int, map[string]any) {
	c.t.Helper()
	p := map[string]any{}
	for k, v := range params {
		p[k] = v
	}
	p["_meta"] = json.RawMessage(`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + c.caps + `}`)
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": p})
	if err != nil {
		c.t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("MCP-Protocol-Version", mcp.Revision)
	req.Header.Set("Mcp-Method", method)
	for _, k := range []string{"name", "uri", "taskId"} {
		if v, ok := params[k].(string); ok {
			req.Header.Set("Mcp-Name", v)
		}
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		c.t.Fatalf("%s: response is not JSON: %v", method, err)
	}
	return res.StatusCode, out
}

// result returns the result of a call that must succeed.
func (c client) result(method string, params map[string]any) map[string]any {
	c.t.Helper()
	status, out := c.call(method, params)
	res, ok := out["result"].(map[string]any)
	if status != http.StatusOK || !ok {
		c.t.Fatalf("%s %v: %d %v", method, params, status, out)
	}
	return res
}

// errorCode returns the JSON-RPC error code of a call that must fail.
func (c client) errorCode(method string, params map[string]any) float64 {
	c.t.Helper()
	_, out := c.call(method, params)
	e, ok := out["error"].(map[string]any)
	if !ok {
		c.t.Fatalf("%s %v: want an error, got %v", method, params, out)
	}
	return e["code"].(float64)
}

func text(res map[string]any) string {
	content, _ := res["content"].([]any)
	if len(content) == 0 {
		return ""
	}
	s, _ := content[0].(map[string]any)["text"].(string)
	return s
}

// waitTask polls tasks/get until the task reaches one of statuses.
func (c client) waitTask(taskID string, statuses ...string) map[string]any {
	c.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		res := c.result("tasks/get", map[string]any{"taskId": taskID})
		if slices.Contains(statuses, res["status"].(string)) {
			return res
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("task %s stuck at %v", taskID, res["status"])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func newClient(t *testing.T, caps string) client {
	ts, _ := newMount(t)
	return client{t: t, url: ts.URL + "/mcp", caps: caps}
}

// TestFixtureTools: every tool a scenario names is listed with a
// description, under a name that follows the tool-name rules.
func TestFixtureTools(t *testing.T) {
	c := newClient(t, allCaps)
	res := c.result("tools/list", nil)
	var names []string
	for _, raw := range res["tools"].([]any) {
		tool := raw.(map[string]any)
		name := tool["name"].(string)
		if d, _ := tool["description"].(string); d == "" {
			t.Errorf("tool %s has no description", name)
		}
		if strings.Trim(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") != "" {
			t.Errorf("tool name %q has characters outside [A-Za-z0-9_.-]", name)
		}
		names = append(names, name)
	}
	for _, want := range []string{
		"greet", "slow_compute", "failing_job", "protocol_error_job", "confirm_delete", "multi_input", "test_tool_with_task",
		"test_simple_text", "test_image_content", "test_audio_content", "test_embedded_resource", "test_multiple_content_types",
		"test_tool_with_progress", "test_error_handling", "test_missing_capability", "test_streaming_elicitation", "test_logging_tool",
		"json_schema_2020_12_tool", "test_input_required_result_elicitation", "test_input_required_result_sampling",
		"test_input_required_result_list_roots", "test_input_required_result_request_state", "test_input_required_result_multiple_inputs",
		"test_input_required_result_multi_round", "test_input_required_result_tampered_state", "test_input_required_result_capabilities",
	} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list lacks %s", want)
		}
	}
}

// TestFixtureTasks: the Tasks fixtures behave as the scenarios expect —
// greet never becomes a task; slow_compute settles cancelled when
// cancelled; failing_job is a tool error and needs the extension;
// protocol_error_job is a failed task with an error object.
func TestFixtureTasks(t *testing.T) {
	c := newClient(t, allCaps)
	res := c.result("tools/call", map[string]any{"name": "greet", "arguments": map[string]any{"name": "World"}})
	if res["resultType"] != "complete" || text(res) != "Hello, World!" {
		t.Fatalf("greet = %v", res)
	}
	task := c.result("tools/call", map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": 60, "label": "x"}})
	if task["resultType"] != "task" {
		t.Fatalf("slow_compute = %v", task)
	}
	c.result("tasks/cancel", map[string]any{"taskId": task["taskId"]})
	if got := c.waitTask(task["taskId"].(string), "cancelled", "completed", "failed"); got["status"] != "cancelled" {
		t.Fatalf("cancelled slow_compute = %v", got)
	}
	task = c.result("tools/call", map[string]any{"name": "failing_job"})
	got := c.waitTask(task["taskId"].(string), "completed", "failed", "cancelled")
	inner, _ := got["result"].(map[string]any)
	if got["status"] != "completed" || inner["isError"] != true || text(inner) != mcpfixtures.FailingJobMessage {
		t.Fatalf("failing_job = %v", got)
	}
	task = c.result("tools/call", map[string]any{"name": "protocol_error_job"})
	got = c.waitTask(task["taskId"].(string), "completed", "failed", "cancelled")
	if got["status"] != "failed" || got["error"] == nil || got["result"] != nil {
		t.Fatalf("protocol_error_job = %v", got)
	}
	plain := client{t: t, url: c.url, caps: `{}`}
	if code := plain.errorCode("tools/call", map[string]any{"name": "failing_job"}); code != -32021 {
		t.Fatalf("failing_job without the extension: %v", code)
	}
}

// TestFixtureTaskInput: confirm_delete and multi_input park their tasks
// in input_required; tasks/update answers them, one key at a time.
func TestFixtureTaskInput(t *testing.T) {
	c := newClient(t, allCaps)
	task := c.result("tools/call", map[string]any{"name": "multi_input"})
	id := task["taskId"].(string)
	var keys []string
	for len(keys) < 2 {
		got := c.waitTask(id, "input_required")
		keys = keys[:0]
		for k := range got["inputRequests"].(map[string]any) {
			keys = append(keys, k)
		}
	}
	answer := map[string]any{"action": "accept", "content": map[string]any{"name": "a", "confirm": true}}
	c.result("tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{keys[0]: answer}})
	got := c.waitTask(id, "input_required")
	if rest := got["inputRequests"].(map[string]any); len(rest) != 1 || rest[keys[1]] == nil {
		t.Fatalf("after a partial update: %v", rest)
	}
	c.result("tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{keys[1]: answer}})
	if got := c.waitTask(id, "completed", "failed", "cancelled"); got["status"] != "completed" {
		t.Fatalf("multi_input = %v", got)
	}

	task = c.result("tools/call", map[string]any{"name": "confirm_delete", "arguments": map[string]any{"filename": "a.txt"}})
	id = task["taskId"].(string)
	got = c.waitTask(id, "input_required")
	for k := range got["inputRequests"].(map[string]any) {
		c.result("tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{k: map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}}})
	}
	got = c.waitTask(id, "completed", "failed", "cancelled")
	if inner := got["result"].(map[string]any); text(inner) != "Deleted a.txt." {
		t.Fatalf("confirm_delete = %v", got)
	}
}

// TestFixtureMRTRThenTask: test_tool_with_task asks for a name without a
// task, then continues as a task whose result carries the name.
func TestFixtureMRTRThenTask(t *testing.T) {
	c := newClient(t, `{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}`)
	round1 := c.result("tools/call", map[string]any{"name": "test_tool_with_task"})
	if round1["resultType"] != "input_required" || round1["taskId"] != nil {
		t.Fatalf("round 1 = %v", round1)
	}
	round2 := c.result("tools/call", map[string]any{"name": "test_tool_with_task", "requestState": round1["requestState"],
		"inputResponses": map[string]any{"user_name": map[string]any{"action": "accept", "content": map[string]any{"name": "Alice"}}}})
	if round2["resultType"] != "task" || round2["requestState"] != nil {
		t.Fatalf("round 2 = %v", round2)
	}
	got := c.waitTask(round2["taskId"].(string), "completed", "failed", "cancelled")
	if inner := got["result"].(map[string]any); !strings.Contains(text(inner), "Alice") {
		t.Fatalf("task result = %v", got)
	}
	if code := (client{t: t, url: c.url, caps: `{"elicitation":{}}`}).errorCode("tools/call", map[string]any{"name": "test_tool_with_task"}); code != -32021 {
		t.Fatalf("without the extension: %v", code)
	}
}

// TestFixtureMRTRTools: the input_required fixtures ask what the
// scenarios expect and complete from the answers.
func TestFixtureMRTRTools(t *testing.T) {
	c := newClient(t, allCaps)
	// Multi round: the state moves on each round.
	r1 := c.result("tools/call", map[string]any{"name": "test_input_required_result_multi_round"})
	r2 := c.result("tools/call", map[string]any{"name": "test_input_required_result_multi_round", "requestState": r1["requestState"],
		"inputResponses": map[string]any{"step1": map[string]any{"action": "accept", "content": map[string]any{"name": "Alice"}}}})
	if r2["resultType"] != "input_required" || r2["inputRequests"].(map[string]any)["step2"] == nil || r2["requestState"] == r1["requestState"] {
		t.Fatalf("round 2 = %v", r2)
	}
	r3 := c.result("tools/call", map[string]any{"name": "test_input_required_result_multi_round", "requestState": r2["requestState"],
		"inputResponses": map[string]any{"step2": map[string]any{"action": "accept", "content": map[string]any{"color": "blue"}}}})
	if text(r3) != "Alice's favourite colour is blue." {
		t.Fatalf("round 3 = %v", r3)
	}
	// Request state: "state-ok" only with the state back; a tampered one is
	// -32602.
	r1 = c.result("tools/call", map[string]any{"name": "test_input_required_result_request_state"})
	ok := map[string]any{"confirm": map[string]any{"action": "accept", "content": map[string]any{"ok": true}}}
	if got := c.result("tools/call", map[string]any{"name": "test_input_required_result_request_state", "requestState": r1["requestState"], "inputResponses": ok}); !strings.Contains(text(got), mcpfixtures.StateOK) {
		t.Fatalf("request state = %v", got)
	}
	r1 = c.result("tools/call", map[string]any{"name": "test_input_required_result_tampered_state"})
	if code := c.errorCode("tools/call", map[string]any{"name": "test_input_required_result_tampered_state", "requestState": r1["requestState"].(string) + "-TAMPERED", "inputResponses": ok}); code != -32602 {
		t.Fatalf("tampered state: %v", code)
	}
	// Capabilities: sampling only is asked when only sampling is declared;
	// nothing declared is -32021.
	got := (client{t: t, url: c.url, caps: `{"sampling":{}}`}).result("tools/call", map[string]any{"name": "test_input_required_result_capabilities"})
	reqs := got["inputRequests"].(map[string]any)
	if len(reqs) != 1 || reqs["capital_question"].(map[string]any)["method"] != "sampling/createMessage" {
		t.Fatalf("sampling-only = %v", reqs)
	}
	if code := (client{t: t, url: c.url, caps: `{}`}).errorCode("tools/call", map[string]any{"name": "test_missing_capability"}); code != -32021 {
		t.Fatalf("test_missing_capability: %v", code)
	}
	// Multiple inputs: all three methods in one round.
	got = c.result("tools/call", map[string]any{"name": "test_input_required_result_multiple_inputs"})
	var methods []string
	for _, r := range got["inputRequests"].(map[string]any) {
		methods = append(methods, r.(map[string]any)["method"].(string))
	}
	slices.Sort(methods)
	if !slices.Equal(methods, []string{"elicitation/create", "roots/list", "sampling/createMessage"}) {
		t.Fatalf("multiple inputs = %v", methods)
	}
}

// TestFixturePromptsResources: prompts render their arguments as text;
// resources and the template read; an unknown resource is -32602.
func TestFixturePromptsResources(t *testing.T) {
	c := newClient(t, allCaps)
	res := c.result("prompts/get", map[string]any{"name": "test_prompt_with_arguments", "arguments": map[string]any{"arg1": "{{x}}", "arg2": "y"}})
	msg := res["messages"].([]any)[0].(map[string]any)["content"].(map[string]any)["text"]
	if msg != "Prompt with arguments: arg1='{{x}}', arg2='y'" {
		t.Fatalf("prompt = %v", msg)
	}
	if code := c.errorCode("prompts/get", map[string]any{"name": "test_prompt_with_embedded_resource", "arguments": map[string]any{"resourceUri": "not a uri"}}); code != -32602 {
		t.Fatalf("bad resourceUri: %v", code)
	}
	res = c.result("resources/read", map[string]any{"uri": "test://template/123/data"})
	if got := res["contents"].([]any)[0].(map[string]any)["text"]; got != `{"id":"123","templateTest":true,"data":"Data for ID: 123"}` {
		t.Fatalf("template read = %v", got)
	}
	res = c.result("resources/read", map[string]any{"uri": "test://static-binary"})
	if res["cacheScope"] != "public" || res["contents"].([]any)[0].(map[string]any)["blob"] == "" {
		t.Fatalf("binary read = %v", res)
	}
	for _, uri := range []string{"test://template//data", "test://template/a/b/data", "test://nonexistent"} {
		if code := c.errorCode("resources/read", map[string]any{"uri": uri}); code != -32602 {
			t.Fatalf("%s: %v", uri, code)
		}
	}
	res = c.result("completion/complete", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "test_prompt_with_arguments"}, "argument": map[string]any{"name": "arg1", "value": "par"}})
	if got := res["completion"].(map[string]any)["values"]; !slices.Equal(toStrings(got), []string{"paris", "park", "party"}) {
		t.Fatalf("completion = %v", got)
	}
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// newMount serves the fixtures the way examples/host does for the suite: the
// anonymous caller lands in the dedicated tenant, the Tasks extension is
// served, loopback pages may call (the DNS-rebinding scenario sends a
// loopback Origin), tasks are answered as soon as their run exists.
func newMount(t testing.TB) (*httptest.Server, *memstore.Store) {
	t.Helper()
	store := memstore.New()
	t.Cleanup(func() { _ = store.Close() })
	if err := mcpfixtures.Register(store, mcpfixtures.Tenant); err != nil {
		t.Fatal(err)
	}
	policy, err := negotiate.NewPolicy(negotiate.Config{Protocol: negotiate.MCP, Offered: []string{mcp.Revision}, Preferred: mcp.Revision, Floor: mcp.Revision})
	if err != nil {
		t.Fatal(err)
	}
	key := make([]byte, sealed.MinKeyLen)
	rand.Read(key)
	sealer, err := sealed.NewSealer(sealed.Config{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	deps := mcp.Deps{
		Store: store, Policy: policy, Sealer: sealer,
		Auditor: negotiate.NewAuditor(store, negotiate.AuditorOptions{Synchronous: true}),
		Subjects: interop.SubjectResolverFunc(func(*http.Request) (interop.Subject, error) {
			return interop.Subject{Tenant: mcpfixtures.Tenant, Principal: "conformance-client"}, nil
		}),
	}
	cfg := mcp.Options{
		AllowAnonymous:         true,
		AllowOwnLoopbackOrigin: true,
		Tasks:                  true,
		ServerInfo:             mcp.Implementation{Name: "wopinterop-mcp-fixtures", Version: "1.0.0"},
		BlockTimeout:           10 * time.Second,
	}
	if cfg.Extension, err = ext.New(mcpfixtures.New().Config()); err != nil {
		t.Fatal(err)
	}
	srv, err := mcp.New(deps, cfg)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv.Handler())
	ts := httptest.NewServer(mux) // 127.0.0.1: the DNS-rebinding scenario needs a loopback URL
	t.Cleanup(func() {
		ts.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Close(ctx); err != nil {
			t.Errorf("mcp Server.Close: %v", err)
		}
	})
	return ts, store
}
