package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
)

// TestGoldens pins the exact bytes of every result shape the mount
// encodes (ids, requestStates and timestamps normalised).
func TestGoldens(t *testing.T) {
	elicit := `{"elicitation":{}}`
	tasks := `{"extensions":{"io.modelcontextprotocol/tasks":{}}}`
	cases := []struct {
		name string
		opts []func(*testConfig)
		req  rpc
	}{
		{"discover", nil, rpc{method: "server/discover"}},
		{"discover_tasks", []func(*testConfig){withTasks}, rpc{method: "server/discover"}},
		{"tools_list", nil, rpc{method: "tools/list"}},
		{"tools_list_tasks", []func(*testConfig){withTasks}, rpc{method: "tools/list", id: `"list-1"`}},
		{"tools_list_globex", nil, rpc{method: "tools/list", as: "globex:bob"}},
		{"call_noop", nil, rpc{method: "tools/call", params: map[string]any{"name": "conformance-noop", "arguments": map[string]any{"message": "hi <&>"}}}},
		{"call_failure", nil, rpc{method: "tools/call", params: map[string]any{"name": "conformance-failure"}}},
		{"call_input_required", nil, rpc{method: "tools/call", caps: elicit, params: map[string]any{"name": "conformance-approval"}}},
		{"call_input_required_form", nil, rpc{method: "tools/call", caps: elicit, params: map[string]any{"name": wfAskName}}},
		{"call_credential_url", nil, rpc{method: "tools/call", caps: `{"elicitation":{"url":{}}}`, params: map[string]any{"name": wfCredential}}},
		{"call_credential_out_of_band", nil, rpc{method: "tools/call", caps: elicit, params: map[string]any{"name": wfCredential}}},
		{"call_secret_out_of_band", nil, rpc{method: "tools/call", caps: `{"elicitation":{"form":{},"url":{}}}`, params: map[string]any{"name": wfAskSecret}}},
		{"call_missing_elicitation", nil, rpc{method: "tools/call", params: map[string]any{"name": "conformance-approval"}}},
		{"call_missing_form", nil, rpc{method: "tools/call", caps: `{"elicitation":{"url":{}}}`, params: map[string]any{"name": wfAskName}}},
		{"call_task", []func(*testConfig){withTasks, func(c *testConfig) { c.TaskTTL = time.Hour; c.PollInterval = 2 * time.Second }}, rpc{method: "tools/call", caps: tasks, params: map[string]any{"name": "waits"}}},
		{"call_task_null_ttl", []func(*testConfig){withTasks}, rpc{method: "tools/call", caps: tasks, params: map[string]any{"name": "waits"}}},
		{"call_bad_arguments", nil, rpc{method: "tools/call", params: map[string]any{"name": "conformance-delay", "arguments": map[string]any{"delayMs": "soon"}}}},
		{"call_unknown_tool", nil, rpc{method: "tools/call", params: map[string]any{"name": "no-such-tool"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.opts...)
			rec := e.do(tc.req)
			checkGolden(t, tc.name, append([]byte(fmt.Sprintf("HTTP %d\n", rec.Code)), rec.Body.Bytes()...))
		})
	}
}

// TestSchemaRefusalCreatesNoRun: arguments are checked before any run
// exists (OpenWOP interop map, mcp.methods).
func TestSchemaRefusalCreatesNoRun(t *testing.T) {
	e := newEnv(t)
	for _, args := range []any{
		map[string]any{"delayMs": "soon"},
		map[string]any{"delayMs": -1},
		map[string]any{"delayMs": 1, "extra": true},
		[]int{1},
		"text",
	} {
		rec := e.do(rpc{method: "tools/call", params: map[string]any{"name": "conformance-delay", "arguments": args}})
		wantError(t, rec, 400, codeInvalidParams)
	}
	if n := e.runsOf(alice).Total; n != 0 {
		t.Fatalf("refused calls created %d runs", n)
	}
	// The same tool with valid arguments does create one.
	res := result(t, e.do(rpc{method: "tools/call", params: map[string]any{"name": "conformance-delay", "arguments": map[string]any{"delayMs": 0}}}))
	if res["isError"] != false {
		t.Fatalf("valid call: %v", res)
	}
	run := e.onlyRun(alice)
	if run.Transport != interop.TransportMCP {
		t.Errorf("transport = %q", run.Transport)
	}
}

// TestCallCreatesUntrustedMCPRun: one call is one run, started through
// mcp with the untrusted boundary and the request's trace context.
func TestCallCreatesRunWithTrace(t *testing.T) {
	var got interop.CreateRunRequest
	e := newEnv(t, func(c *testConfig) {
		c.Store = &spyStore{RunStore: c.Store, create: func(r interop.CreateRunRequest) { got = r }}
	})
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	q := rpc{method: "tools/call", params: map[string]any{"name": "conformance-noop"},
		meta: `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"traceparent":"` + tp + `","tracestate":"v=1"}`,
		hdr:  map[string]string{"traceparent": "00-11111111111111111111111111111111-2222222222222222-01"}}
	result(t, e.do(q))
	result(t, e.do(q))
	if n := e.runsOf(alice).Total; n != 2 {
		t.Fatalf("two calls made %d runs", n)
	}
	if got.Transport != interop.TransportMCP || got.TrustBoundary != interop.TrustUntrusted || got.IdempotencyKey != "" {
		t.Errorf("CreateRun request = %+v", got)
	}
	if got.Trace != (interop.TraceContext{TraceParent: tp, TraceState: "v=1"}) {
		t.Errorf("trace = %+v, want the _meta carrier", got.Trace)
	}
	// A malformed _meta value falls back to the header; a malformed header
	// is ignored.
	q.meta = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"traceparent":"nope"}`
	result(t, e.do(q))
	if got.Trace.TraceParent != "00-11111111111111111111111111111111-2222222222222222-01" {
		t.Errorf("trace = %+v, want the header carrier", got.Trace)
	}
	q.hdr = map[string]string{"traceparent": "00-00000000000000000000000000000000-2222222222222222-01"}
	result(t, e.do(q))
	if got.Trace != (interop.TraceContext{}) {
		t.Errorf("trace = %+v, want none", got.Trace)
	}
}

// spyStore observes or counts calls of a RunStore.
type spyStore struct {
	interop.RunStore
	create func(interop.CreateRunRequest)
	lists  atomic.Int64
}

func (s *spyStore) CreateRun(ctx context.Context, sub interop.Subject, req interop.CreateRunRequest) (interop.Run, bool, error) {
	if s.create != nil {
		s.create(req)
	}
	return s.RunStore.CreateRun(ctx, sub, req)
}

func (s *spyStore) ListWorkflows(ctx context.Context, sub interop.Subject) ([]interop.Workflow, error) {
	s.lists.Add(1)
	return s.RunStore.ListWorkflows(ctx, sub)
}

// TestToolsListCache: the list is cached per authorization context for
// ListTTL, refreshed after it and on InvalidateTools.
func TestToolsListCache(t *testing.T) {
	spy := &spyStore{}
	clk := &clock{t: time.Date(2026, 7, 28, 0, 0, 0, 0, time.UTC)}
	e := newEnv(t, func(c *testConfig) {
		spy.RunStore = c.Store
		c.Store = spy
		c.Now = clk.now
		c.ListTTL = time.Minute
	})
	list := func(as string) string {
		return e.do(rpc{method: "tools/list", as: as}).Body.String()
	}
	first := list("acme:alice")
	if list("acme:alice") != first || spy.lists.Load() != 1 {
		t.Fatalf("a second list was not served from the cache (%d store reads)", spy.lists.Load())
	}
	result(t, e.do(rpc{method: "tools/call", params: map[string]any{"name": "conformance-noop"}}))
	if spy.lists.Load() != 1 {
		t.Fatalf("tools/call did not use the cached list")
	}
	list("acme:bob")
	if spy.lists.Load() != 2 {
		t.Fatalf("another principal shared alice's cache entry")
	}
	clk.advance(time.Minute)
	list("acme:alice")
	if spy.lists.Load() != 3 {
		t.Fatalf("an expired entry was served")
	}
	e.srv.InvalidateTools(tenantB)
	list("acme:alice")
	if spy.lists.Load() != 3 {
		t.Fatalf("invalidating another tenant dropped acme's list")
	}
	if err := e.store.Register(tenantA, memstore.WorkflowDef{Workflow: interop.Workflow{ID: "a-new-one"}, Run: func(context.Context, *memstore.RunContext) (json.RawMessage, error) { return nil, nil }}); err != nil {
		t.Fatal(err)
	}
	e.srv.InvalidateTools(tenantA)
	after := list("acme:alice")
	if spy.lists.Load() != 4 || after == first {
		t.Fatalf("InvalidateTools did not refresh the list")
	}
	if got := toolNames(t, []byte(after))[0]; got != "a-new-one" {
		t.Errorf("first tool = %q, want the new one sorted first", got)
	}
}

func toolNames(t testing.TB, body []byte) []string {
	t.Helper()
	var r struct {
		Result struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
			NextCursor string `json:"nextCursor"`
		} `json:"result"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tl := range r.Result.Tools {
		out = append(out, tl.Name)
	}
	return out
}

// TestToolsListPages: more than 100 tools are paged with an opaque cursor,
// sorted by name across pages; an unknown cursor is -32602.
func TestToolsListPages(t *testing.T) {
	e := newEnv(t)
	noop := func(context.Context, *memstore.RunContext) (json.RawMessage, error) { return nil, nil }
	want := []string{}
	for i := range 230 {
		id := fmt.Sprintf("wf-%03d", (i*37)%230)
		if err := e.store.Register("paged", memstore.WorkflowDef{Workflow: interop.Workflow{ID: id}, Run: noop}); err != nil {
			t.Fatal(err)
		}
		want = append(want, id)
	}
	sort.Strings(want)
	var got []string
	cursor := ""
	for pages := 0; ; pages++ {
		q := rpc{method: "tools/list", as: "paged:p"}
		if cursor != "" {
			q.params = map[string]any{"cursor": cursor}
		}
		res := result(t, e.do(q))
		tools := res["tools"].([]any)
		if len(tools) > toolsPageSize {
			t.Fatalf("page of %d tools", len(tools))
		}
		for _, tl := range tools {
			got = append(got, tl.(map[string]any)["name"].(string))
		}
		next, ok := res["nextCursor"].(string)
		if !ok {
			if pages != 2 {
				t.Fatalf("%d pages, want 3", pages+1)
			}
			break
		}
		cursor = next
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("paged names differ from the sorted list")
	}
	for _, bad := range []any{"not-a-cursor!", 7} {
		wantError(t, e.do(rpc{method: "tools/list", as: "paged:p", params: map[string]any{"cursor": bad}}), http.StatusBadRequest, codeInvalidParams)
	}
}

// TestUnusableSchemaLeftOut: a workflow whose schema cannot be compiled is
// not offered (it could not be validated) and cannot be called.
func TestUnusableSchemaLeftOut(t *testing.T) {
	e := newEnv(t, func(c *testConfig) {
		c.Store = &extraWorkflowStore{RunStore: c.Store, extra: []interop.Workflow{
			{ID: "bad-ref", InputSchema: json.RawMessage(`{"$ref":"https://elsewhere.example/s.json"}`)},
			{ID: "not-object", InputSchema: json.RawMessage(`[1]`)},
		}}
	})
	names := toolNames(t, e.do(rpc{method: "tools/list"}).Body.Bytes())
	for _, n := range names {
		if n == "bad-ref" || n == "not-object" {
			t.Errorf("%s is listed", n)
		}
	}
	wantError(t, e.do(rpc{method: "tools/call", params: map[string]any{"name": "bad-ref"}}), 400, codeInvalidParams)
}

type extraWorkflowStore struct {
	interop.RunStore
	extra []interop.Workflow
}

func (s *extraWorkflowStore) ListWorkflows(ctx context.Context, sub interop.Subject) ([]interop.Workflow, error) {
	wfs, err := s.RunStore.ListWorkflows(ctx, sub)
	return append(wfs, s.extra...), err
}

// TestServed: what the facet may claim follows what is wired.
func TestServed(t *testing.T) {
	plain := newEnv(t).srv.Served()
	withExt := newEnv(t, withTasks).srv.Served()
	if !plain.Mount || !plain.Discover || !plain.MRTR || !plain.CacheableLists || fmt.Sprint(plain.Revisions) != "[2026-07-28]" || len(plain.Extensions) != 0 {
		t.Errorf("plain mount: %+v", plain)
	}
	if fmt.Sprint(withExt.Extensions) != "["+TasksExtension+"]" || fmt.Sprint(withExt.Transports) != "[streamable-http]" {
		t.Errorf("tasks mount: %+v", withExt)
	}
}

// TestWriteError: host middleware answers in the mount's own shape: the
// guard's refusals for the errors it shares with it, the host's own
// *Error as given, and anything else as a -32603 whose text stays
// private.
func TestWriteError(t *testing.T) {
	rateLimited := &Error{Code: -32000, Message: "Rate limit exceeded", Status: http.StatusTooManyRequests, Data: json.RawMessage(`{"retryAfterMs":1000}`)}
	cases := []struct {
		name      string
		id        json.RawMessage
		err       error
		preset    string // WWW-Authenticate set by the middleware
		status    int
		challenge string
		allow     string
		body      string
	}{
		{"unauthenticated", json.RawMessage(`7`), fmt.Errorf("gateway: %w", interop.ErrUnauthenticated), "", 401, "Bearer", "",
			`{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"Unauthorized: authentication required"}}`},
		{"own challenge kept", nil, interop.ErrUnauthenticated, `Bearer realm="x"`, 401, `Bearer realm="x"`, "",
			`{"jsonrpc":"2.0","error":{"code":-32600,"message":"Unauthorized: authentication required"}}`},
		{"forbidden", json.RawMessage(`"a"`), interop.ErrForbidden, "", 403, "", "",
			`{"jsonrpc":"2.0","id":"a","error":{"code":-32600,"message":"Forbidden: the credential may not use this MCP server"}}`},
		{"body limit", nil, &http.MaxBytesError{Limit: 10}, "", 413, "", "",
			`{"jsonrpc":"2.0","error":{"code":-32600,"message":"Request body too large"}}`},
		{"rate limit", json.RawMessage(`1`), rateLimited, "", 429, "", "",
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"Rate limit exceeded","data":{"retryAfterMs":1000}}}`},
		{"a mount error by code", json.RawMessage(`2`), errInvalidParams("Invalid params: no"), "", 400, "", "",
			`{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Invalid params: no"}}`},
		{"method not allowed", nil, &Error{Code: codeInvalidRequest, Message: "POST only", Status: http.StatusMethodNotAllowed}, "", 405, "", "POST",
			`{"jsonrpc":"2.0","error":{"code":-32600,"message":"POST only"}}`},
		{"anything else is internal, text withheld", json.RawMessage(`3`), errors.New("db password=hunter2"), "", 500, "", "",
			`{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"Internal error"}}`},
		{"an invalid id is omitted", json.RawMessage(`{"x":1}`), interop.ErrForbidden, "", 403, "", "",
			`{"jsonrpc":"2.0","error":{"code":-32600,"message":"Forbidden: the credential may not use this MCP server"}}`},
		{"a null id is omitted", json.RawMessage(`null`), interop.ErrForbidden, "", 403, "", "",
			`{"jsonrpc":"2.0","error":{"code":-32600,"message":"Forbidden: the credential may not use this MCP server"}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			if tc.preset != "" {
				rec.Header().Set("WWW-Authenticate", tc.preset)
			}
			WriteError(rec, tc.id, tc.err)
			h := rec.Header()
			if rec.Code != tc.status || h.Get("WWW-Authenticate") != tc.challenge || h.Get("Allow") != tc.allow || rec.Body.String() != tc.body {
				t.Fatalf("HTTP %d %q %q %s\nwant HTTP %d %q %q %s", rec.Code, h.Get("WWW-Authenticate"), h.Get("Allow"), rec.Body, tc.status, tc.challenge, tc.allow, tc.body)
			}
			if h.Get("Content-Type") != "application/json" || h.Get("Content-Length") != fmt.Sprint(len(tc.body)) {
				t.Fatalf("headers %v", h)
			}
		})
	}
}

// TestWriteErrorMatchesGuard: a refusal written by host middleware is
// byte for byte the one the mount's guard gives for the same reason.
func TestWriteErrorMatchesGuard(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		as  string
		err error
	}{{"", interop.ErrUnauthenticated}, {"forbidden", interop.ErrForbidden}} {
		q := rpc{method: "tools/list", as: tc.as}
		if tc.as == "" {
			q.hdr = map[string]string{"Authorization": ""}
		}
		guard := e.do(q)
		rec := httptest.NewRecorder()
		WriteError(rec, nil, tc.err)
		if guard.Code != rec.Code || guard.Body.String() != rec.Body.String() || guard.Header().Get("WWW-Authenticate") != rec.Header().Get("WWW-Authenticate") {
			t.Errorf("%v: guard %d %s, middleware %d %s", tc.err, guard.Code, guard.Body, rec.Code, rec.Body)
		}
	}
}
