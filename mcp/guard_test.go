package mcp

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/negotiate"
)

// TestGuardRefusals covers every refusal of the guard: the HTTP status,
// the exact JSON-RPC body and the headers a refusal must carry.
func TestGuardRefusals(t *testing.T) {
	callNoop := func(q rpc) rpc {
		q.method = "tools/call"
		q.params = map[string]any{"name": "conformance-noop", "arguments": map[string]any{}}
		return q
	}
	big := rpc{method: "tools/list", body: `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"pad":"` + strings.Repeat("x", 2048) + `"}}`}
	cases := []struct {
		name   string
		req    func() *http.Request
		opts   []func(*testConfig)
		status int
		body   string
		header map[string]string
	}{
		{
			name: "GET is not served",
			req: func() *http.Request {
				r := rpc{method: "tools/list"}.request()
				r.Method = http.MethodGet
				return r
			},
			status: 405,
			body:   `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request: the MCP endpoint accepts POST only"}}`,
			header: map[string]string{"Allow": "POST"},
		},
		{
			name:   "browser origin not allowed",
			req:    rpc{method: "tools/list", hdr: map[string]string{"Origin": "https://evil.example"}}.request,
			status: 403,
			body:   `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Forbidden: origin not allowed"}}`,
		},
		{
			name:   "origin outside a configured allowlist",
			opts:   []func(*testConfig){func(c *testConfig) { c.AllowedOrigins = []string{"https://app.example"} }},
			req:    rpc{method: "tools/list", hdr: map[string]string{"Origin": "https://app.example.evil"}}.request,
			status: 403,
			body:   `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Forbidden: origin not allowed"}}`,
		},
		{
			name: "loopback listener reached through a foreign Host (DNS rebinding)",
			req: func() *http.Request {
				r := rpc{method: "tools/list"}.request()
				r.Host = "attacker.example:8080"
				return r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}))
			},
			status: 403,
			body:   `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Forbidden: origin not allowed"}}`,
		},
		{
			name:   "no credential",
			req:    rpc{method: "tools/list", hdr: map[string]string{"Authorization": ""}}.request,
			status: 401,
			body:   `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Unauthorized: authentication required"}}`,
			header: map[string]string{"WWW-Authenticate": "Bearer"},
		},
		{
			name:   "anonymous caller without AllowAnonymous",
			req:    rpc{method: "tools/list", as: "anon"}.request,
			status: 401,
			body:   `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Unauthorized: authentication required"}}`,
			header: map[string]string{"WWW-Authenticate": "Bearer"},
		},
		{
			name:   "forbidden credential",
			req:    rpc{method: "tools/list", as: "forbidden"}.request,
			status: 403,
			body:   `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Forbidden: the credential may not use this MCP server"}}`,
		},
		{
			name:   "subject resolver fault",
			req:    rpc{method: "tools/list", as: "broken"}.request,
			status: 500,
			body:   `{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error"}}`,
		},
		{
			name:   "body over the limit",
			opts:   []func(*testConfig){func(c *testConfig) { c.MaxBodyBytes = 1024 }},
			req:    big.request,
			status: 413,
			body:   `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Request body too large"}}`,
		},
		{
			name:   "not JSON",
			req:    rpc{method: "tools/list", body: `{"jsonrpc":`}.request,
			status: 400,
			body:   `{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error: the body is not JSON"}}`,
		},
		{
			name:   "batch",
			req:    rpc{method: "tools/list", body: `[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`}.request,
			status: 400,
			body:   `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request: batches are not supported; send one message per POST"}}`,
		},
		{
			name:   "not an object",
			req:    rpc{method: "tools/list", body: `"tools/list"`}.request,
			status: 400,
			body:   `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request: the body must be a JSON-RPC object"}}`,
		},
		{
			name:   "wrong jsonrpc version keeps the id",
			req:    rpc{method: "tools/list", body: `{"jsonrpc":"1.0","id":"a-7","method":"tools/list","params":{}}`}.request,
			status: 400,
			body:   `{"jsonrpc":"2.0","id":"a-7","error":{"code":-32600,"message":"Invalid request: jsonrpc must be \"2.0\""}}`,
		},
		{
			name:   "member names are case-sensitive",
			req:    rpc{method: "tools/list", body: `{"jsonrpc":"2.0","id":3,"Method":"tools/list"}`}.request,
			status: 400,
			body:   `{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"Invalid request: method must be a string"}}`,
		},
		{
			name:   "null id",
			req:    rpc{method: "tools/list", body: `{"jsonrpc":"2.0","id":null,"method":"tools/list"}`}.request,
			status: 400,
			body:   `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request: id must be a string or a number"}}`,
		},
		{
			name:   "params not an object",
			req:    rpc{method: "tools/list", body: `{"jsonrpc":"2.0","id":4,"method":"tools/list","params":[1]}`}.request,
			status: 400,
			body:   `{"jsonrpc":"2.0","id":4,"error":{"code":-32600,"message":"Invalid request: params must be an object"}}`,
		},
		{
			name:   "a response sent as a request",
			req:    rpc{method: "tools/list", body: `{"jsonrpc":"2.0","id":5,"result":{}}`}.request,
			status: 400,
			body:   `{"jsonrpc":"2.0","id":5,"error":{"code":-32600,"message":"Invalid request: method must be a string"}}`,
		},
		{
			name:   "Mcp-Method missing",
			req:    rpc{method: "tools/list", id: "9", hdr: map[string]string{"Mcp-Method": ""}}.request,
			status: 400,
			body:   `{"jsonrpc":"2.0","id":9,"error":{"code":-32020,"message":"Header mismatch: Mcp-Method must equal the body's method"}}`,
		},
		{
			name:   "Mcp-Method differs in case",
			req:    rpc{method: "tools/list", id: "9", hdr: map[string]string{"Mcp-Method": "TOOLS/LIST"}}.request,
			status: 400,
			body:   `{"jsonrpc":"2.0","id":9,"error":{"code":-32020,"message":"Header mismatch: Mcp-Method must equal the body's method"}}`,
		},
		{
			name:   "Mcp-Name missing on tools/call",
			req:    callNoop(rpc{id: "10", hdr: map[string]string{"Mcp-Name": ""}}).request,
			status: 400,
			body:   `{"jsonrpc":"2.0","id":10,"error":{"code":-32020,"message":"Header mismatch: one Mcp-Name header is required"}}`,
		},
		{
			name:   "Mcp-Name differs from params.name",
			req:    callNoop(rpc{id: "10", hdr: map[string]string{"Mcp-Name": "conformance-failure"}}).request,
			status: 400,
			body:   `{"jsonrpc":"2.0","id":10,"error":{"code":-32020,"message":"Header mismatch: Mcp-Name must equal params.name"}}`,
		},
		{
			name:   "Base64 sentinel that does not decode",
			req:    callNoop(rpc{id: "10", hdr: map[string]string{"Mcp-Name": "=?base64?!!!?="}}).request,
			status: 400,
			body:   `{"jsonrpc":"2.0","id":10,"error":{"code":-32020,"message":"Header mismatch: Mcp-Name must equal params.name"}}`,
		},
		{
			name:   "Mcp-Name missing on tasks/get",
			opts:   []func(*testConfig){withTasks},
			req:    rpc{method: "tasks/get", id: "11", params: map[string]any{"taskId": "acme~2Fx"}, hdr: map[string]string{"Mcp-Name": ""}}.request,
			status: 400,
			body:   `{"jsonrpc":"2.0","id":11,"error":{"code":-32020,"message":"Header mismatch: one Mcp-Name header is required"}}`,
		},
		{
			name:   "Mcp-Name differs from params.taskId",
			opts:   []func(*testConfig){withTasks},
			req:    rpc{method: "tasks/get", id: "11", params: map[string]any{"taskId": "acme~2Fx"}, hdr: map[string]string{"Mcp-Name": "acme~2Fy"}}.request,
			status: 400,
			body:   `{"jsonrpc":"2.0","id":11,"error":{"code":-32020,"message":"Header mismatch: Mcp-Name must equal params.taskId"}}`,
		},
		{
			name:   "MCP-Protocol-Version missing",
			req:    rpc{method: "tools/list", id: "12", hdr: map[string]string{"MCP-Protocol-Version": ""}}.request,
			status: 400,
			body:   `{"jsonrpc":"2.0","id":12,"error":{"code":-32020,"message":"Header mismatch: MCP-Protocol-Version does not match _meta io.modelcontextprotocol/protocolVersion"}}`,
		},
		{
			name:   "MCP-Protocol-Version missing and none in _meta",
			req:    rpc{method: "tools/list", id: "12", meta: `{"io.modelcontextprotocol/clientCapabilities":{}}`, hdr: map[string]string{"MCP-Protocol-Version": ""}}.request,
			status: 400,
			body:   `{"jsonrpc":"2.0","id":12,"error":{"code":-32020,"message":"Header mismatch: the MCP-Protocol-Version header is required"}}`,
		},
		{
			// The mismatch is found before the unsupported header version.
			name:   "header version differs from _meta",
			req:    rpc{method: "tools/list", id: "13", hdr: map[string]string{"MCP-Protocol-Version": "2025-06-18"}}.request,
			status: 400,
			body:   `{"jsonrpc":"2.0","id":13,"error":{"code":-32020,"message":"Header mismatch: MCP-Protocol-Version does not match _meta io.modelcontextprotocol/protocolVersion"}}`,
		},
		{
			name:   "revision not offered",
			req:    rpc{method: "tools/list", id: "14", meta: `{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/clientCapabilities":{}}`, hdr: map[string]string{"MCP-Protocol-Version": "2025-11-25"}}.request,
			status: 400,
			body:   `{"jsonrpc":"2.0","id":14,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"2025-11-25"}}}`,
		},
		{
			name:   "_meta missing",
			req:    rpc{method: "tools/list", id: "15", body: `{"jsonrpc":"2.0","id":15,"method":"tools/list","params":{}}`}.request,
			status: 400,
			body:   `{"jsonrpc":"2.0","id":15,"error":{"code":-32602,"message":"Invalid params: _meta io.modelcontextprotocol/protocolVersion is required"}}`,
		},
		{
			name:   "_meta without clientCapabilities",
			req:    rpc{method: "tools/list", id: "16", meta: `{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`}.request,
			status: 400,
			body:   `{"jsonrpc":"2.0","id":16,"error":{"code":-32602,"message":"Invalid params: _meta io.modelcontextprotocol/clientCapabilities is required"}}`,
		},
		{
			name:   "clientCapabilities not an object",
			req:    rpc{method: "tools/list", id: "16", caps: `true`}.request,
			status: 400,
			body:   `{"jsonrpc":"2.0","id":16,"error":{"code":-32602,"message":"Invalid params: _meta io.modelcontextprotocol/clientCapabilities is required"}}`,
		},
		{
			name:   "tasks/get without the extension declared",
			opts:   []func(*testConfig){withTasks},
			req:    rpc{method: "tasks/get", id: "17", params: map[string]any{"taskId": "acme~2Fx"}}.request,
			status: 400,
			body:   `{"jsonrpc":"2.0","id":17,"error":{"code":-32021,"message":"Missing required client capability","data":{"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`,
		},
		{
			name:   "task-required tool without the extension declared",
			opts:   []func(*testConfig){withTasks},
			req:    rpc{method: "tools/call", id: "18", params: map[string]any{"name": wfTaskRequired}}.request,
			status: 400,
			body:   `{"jsonrpc":"2.0","id":18,"error":{"code":-32021,"message":"Missing required client capability","data":{"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.opts...)
			rec := httptest.NewRecorder()
			e.h.ServeHTTP(rec, tc.req())
			if rec.Code != tc.status {
				t.Errorf("status = %d, want %d", rec.Code, tc.status)
			}
			if got := rec.Body.String(); got != tc.body {
				t.Errorf("body =\n%s\nwant\n%s", got, tc.body)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q", ct)
			}
			for k, v := range tc.header {
				if got := rec.Header().Get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
			if n := e.runsOf(alice).Total; n != 0 {
				t.Errorf("a refused request created %d runs", n)
			}
		})
	}
}

// TestMethodNotFound: removed and unknown methods are 404 -32601 with the
// request id, before any header or version check.
func TestMethodNotFound(t *testing.T) {
	e := newEnv(t)
	for _, m := range []string{"initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe", "prompts/list", "resources/read", "tasks/result", "tasks/list", "tasks/get", "no/such"} {
		t.Run(m, func(t *testing.T) {
			rec := e.do(rpc{method: m, id: `"req-` + m + `"`, hdr: map[string]string{"MCP-Protocol-Version": "2025-11-25"}})
			want := `{"jsonrpc":"2.0","id":"req-` + m + `","error":{"code":-32601,"message":"Method not found"}}`
			if rec.Code != http.StatusNotFound || rec.Body.String() != want {
				t.Errorf("got %d %s\nwant 404 %s", rec.Code, rec.Body, want)
			}
		})
	}
}

// TestGuardPasses: what the guard must let through.
func TestGuardPasses(t *testing.T) {
	cases := []struct {
		name string
		opts []func(*testConfig)
		req  func() *http.Request
	}{
		{"allowed origin", []func(*testConfig){func(c *testConfig) { c.AllowedOrigins = []string{"https://app.example"} }},
			rpc{method: "tools/list", hdr: map[string]string{"Origin": "https://app.example"}}.request},
		{"wildcard origin", []func(*testConfig){func(c *testConfig) { c.AllowedOrigins = []string{"*"} }},
			rpc{method: "tools/list", hdr: map[string]string{"Origin": "https://any.example"}}.request},
		{"loopback listener reached as localhost", nil, func() *http.Request {
			r := rpc{method: "tools/list"}.request()
			r.Host = "localhost:8080"
			return r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}))
		}},
		{"public listener with any Host", nil, func() *http.Request {
			r := rpc{method: "tools/list"}.request()
			r.Host = "mcp.example"
			return r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 443}))
		}},
		{"anonymous caller with AllowAnonymous", []func(*testConfig){func(c *testConfig) { c.AllowAnonymous = true }},
			rpc{method: "tools/list", as: "anon"}.request},
		{"header values with surrounding whitespace", nil,
			rpc{method: "tools/list", hdr: map[string]string{"Mcp-Method": " tools/list\t", "MCP-Protocol-Version": " 2026-07-28 "}}.request},
		{"Base64 sentinel Mcp-Name", nil,
			rpc{method: "tools/call", params: map[string]any{"name": "conformance-noop"}, hdr: map[string]string{"Mcp-Name": "=?base64?Y29uZm9ybWFuY2Utbm9vcA==?="}}.request},
		{"unknown _meta keys and extensions are opaque", nil,
			rpc{method: "tools/list", meta: `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"com.example/x":{"y":1}},"experimental":{}},"com.example/trace":"z","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}}`}.request},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.opts...)
			rec := httptest.NewRecorder()
			e.h.ServeHTTP(rec, tc.req())
			result(t, rec)
		})
	}
}

// TestNotifications: a notification is 202 with no body; an unrelated one
// changes nothing.
func TestNotifications(t *testing.T) {
	e := newEnv(t)
	for _, body := range []string{
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":42,"reason":"x"}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{}}`,
	} {
		var m struct{ Method string }
		_ = json.Unmarshal([]byte(body), &m)
		rec := e.do(rpc{method: m.Method, body: body})
		if rec.Code != http.StatusAccepted || rec.Body.Len() != 0 {
			t.Errorf("%s: got %d %q, want 202 and no body", body, rec.Code, rec.Body)
		}
	}
	rec := e.do(rpc{method: "notifications/cancelled", body: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, hdr: map[string]string{"Mcp-Method": "tools/call"}})
	wantError(t, rec, 400, codeHeaderMismatch)
	rec = e.do(rpc{method: "notifications/cancelled", as: "", hdr: map[string]string{"Authorization": ""}, body: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`})
	if rec.Code != http.StatusUnauthorized {
		t.Errorf("unauthenticated notification: %d", rec.Code)
	}
}

// TestNegotiationRecorded: each request reaching version selection leaves
// one negotiation.decided host event in the caller's tenant, refusals
// included; nothing lands on a run's log.
func TestNegotiationRecorded(t *testing.T) {
	e := newEnv(t)
	result(t, e.do(rpc{method: "tools/list"}))
	wantError(t, e.do(rpc{method: "tools/list", meta: `{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/clientCapabilities":{}}`, hdr: map[string]string{"MCP-Protocol-Version": "2025-11-25"}}), 400, codeUnsupportedVer)
	events := e.store.DurableHostEvents(tenantA)
	if len(events) != 2 {
		t.Fatalf("want 2 host events, have %d", len(events))
	}
	type record struct {
		Protocol, Outcome, Version, Requested, Reason string
	}
	var got []record
	for _, ev := range events {
		if ev.Type != string(interop.EventNegotiationDecided) {
			t.Fatalf("event type %q", ev.Type)
		}
		var r record
		if err := json.Unmarshal(ev.Payload, &r); err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	want := []record{
		{Protocol: "mcp", Outcome: "accepted", Version: Revision, Requested: Revision, Reason: "ok"},
		{Protocol: "mcp", Outcome: "refused", Requested: "2025-11-25", Reason: "below-floor"},
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("record %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if n := len(e.store.DurableHostEvents(tenantB)); n != 0 {
		t.Errorf("another tenant got %d records", n)
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	_, err := New(Deps{}, Options{MaxRounds: 17})
	if err == nil {
		t.Fatal("New accepted an empty config")
	}
	for _, want := range []string{"Store is required", "Subjects is required", "Policy must be an MCP", "Auditor is required", "Sealer is required", "ServerInfo needs", "MaxRounds 17"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not name %q: %v", want, err)
		}
	}
}

// recordingSink keeps the host events an Auditor hands it, with the tenant
// they were published for; onPublish, when set, runs before each is kept.
type recordingSink struct {
	interop.EventSink
	mu        sync.Mutex
	tenants   []string
	records   []map[string]any
	onPublish func()
}

func (s *recordingSink) PublishHostEvent(ctx context.Context, tenant string, ev interop.HostEvent) error {
	if s.onPublish != nil {
		s.onPublish()
	}
	var rec map[string]any
	if err := json.Unmarshal(ev.Payload, &rec); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tenants = append(s.tenants, tenant)
	s.records = append(s.records, rec)
	return nil
}

// TestNegotiationRecordedForAuthRefusals: a request refused by the
// authentication step records exactly one negotiation.decided before the
// refusal is written — refused, reason unauthenticated, requested = the
// header's revision when it is well formed, no tenant — whether the
// credential is missing (401), forbidden (403) or cannot be resolved
// (500). An authenticated request that is accepted records ok.
func TestNegotiationRecordedForAuthRefusals(t *testing.T) {
	sink := &recordingSink{}
	e := newEnv(t, func(c *testConfig) {
		sink.EventSink = c.Store.(interop.EventSink)
		c.Auditor = negotiate.NewAuditor(sink, negotiate.AuditorOptions{Synchronous: true})
	})
	cases := []struct {
		name   string
		q      rpc
		status int
		want   map[string]any
	}{
		{"no credential", rpc{method: "tools/list", hdr: map[string]string{"Authorization": ""}}, http.StatusUnauthorized,
			map[string]any{"protocol": "mcp", "outcome": "refused", "reason": "unauthenticated", "requested": Revision}},
		{"anonymous without AllowAnonymous", rpc{method: "tools/list", as: "anon"}, http.StatusUnauthorized,
			map[string]any{"protocol": "mcp", "outcome": "refused", "reason": "unauthenticated", "requested": Revision}},
		{"no credential, revision not offered", rpc{method: "tools/list", hdr: map[string]string{"Authorization": "", "MCP-Protocol-Version": "2025-11-25"}}, http.StatusUnauthorized,
			map[string]any{"protocol": "mcp", "outcome": "refused", "reason": "unauthenticated", "requested": "2025-11-25"}},
		{"no credential, malformed revision", rpc{method: "tools/list", hdr: map[string]string{"Authorization": "", "MCP-Protocol-Version": "evil.example"}}, http.StatusUnauthorized,
			map[string]any{"protocol": "mcp", "outcome": "refused", "reason": "unauthenticated"}},
		{"no credential, no header", rpc{method: "tools/list", hdr: map[string]string{"Authorization": "", "MCP-Protocol-Version": ""}}, http.StatusUnauthorized,
			map[string]any{"protocol": "mcp", "outcome": "refused", "reason": "unauthenticated"}},
		{"forbidden credential", rpc{method: "tools/list", as: "forbidden"}, http.StatusForbidden,
			map[string]any{"protocol": "mcp", "outcome": "refused", "reason": "unauthenticated", "requested": Revision}},
		{"resolver fault", rpc{method: "tools/list", as: "broken"}, http.StatusInternalServerError,
			map[string]any{"protocol": "mcp", "outcome": "refused", "reason": "unauthenticated", "requested": Revision}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sink.mu.Lock()
			sink.tenants, sink.records = nil, nil
			sink.mu.Unlock()
			rec := httptest.NewRecorder()
			sink.onPublish = func() {
				if rec.Body.Len() != 0 || rec.Flushed {
					t.Error("the refusal was written before the exchange was recorded")
				}
			}
			e.h.ServeHTTP(rec, tc.q.request())
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, rec.Body)
			}
			sink.mu.Lock()
			defer sink.mu.Unlock()
			if len(sink.records) != 1 {
				t.Fatalf("%d records, want exactly 1", len(sink.records))
			}
			if sink.tenants[0] != "" {
				t.Errorf("record published for tenant %q, want none", sink.tenants[0])
			}
			got := sink.records[0]
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s = %v, want %v (record %v)", k, got[k], v, got)
				}
			}
			for _, k := range []string{"version", "requested"} {
				if _, set := tc.want[k]; !set && got[k] != nil {
					t.Errorf("record carries %s %v", k, got[k])
				}
			}
		})
	}
	sink.onPublish = nil
	sink.tenants, sink.records = nil, nil
	result(t, e.do(rpc{method: "tools/list"}))
	if len(sink.records) != 1 || sink.tenants[0] != tenantA || sink.records[0]["outcome"] != "accepted" || sink.records[0]["reason"] != "ok" || sink.records[0]["version"] != Revision {
		t.Fatalf("accepted request recorded %v for tenants %v", sink.records, sink.tenants)
	}
}
