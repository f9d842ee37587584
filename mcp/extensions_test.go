package mcp

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/mcp/internal/mount"
)

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
}

// TestExtensionRouting: each capability of the extension is advertised
// and routed exactly when it is served, so discovery never promises a
// method that answers -32601; a native tool joins tools/list.
func TestExtensionRouting(t *testing.T) {
	x := &fakeExtension{caps: mount.Capabilities{Prompts: true}, tools: []mount.Tool{{Name: "native", TaskSupport: interop.TaskOptional}}}
	e := newEnv(t, withExtension(x))
	caps := result(t, e.do(rpc{method: "server/discover"}))["capabilities"].(map[string]any)
	if _, ok := caps["prompts"]; !ok || caps["resources"] != nil || caps["completions"] != nil {
		t.Errorf("capabilities with prompts only = %v", caps)
	}
	for _, m := range []string{"prompts/list", "prompts/get"} {
		if got := result(t, e.do(rpc{method: m, params: map[string]any{"name": "x"}}))["served"]; got != m {
			t.Errorf("%s served as %v", m, got)
		}
	}
	for _, m := range []string{"resources/list", "resources/templates/list", "resources/read", "completion/complete"} {
		wantError(t, e.do(rpc{method: m, params: map[string]any{"uri": "test://x"}}), http.StatusNotFound, codeMethodNotFound)
	}
	if names := toolNames(t, e.do(rpc{method: "tools/list"}).Body.Bytes()); !slices.Contains(names, "native") {
		t.Errorf("tools/list lacks the native tool: %v", names)
	}
	x.caps = mount.Capabilities{Resources: true, Completions: true}
	e = newEnv(t, withExtension(x))
	caps = result(t, e.do(rpc{method: "server/discover"}))["capabilities"].(map[string]any)
	if caps["prompts"] != nil || caps["resources"] == nil || caps["completions"] == nil {
		t.Errorf("capabilities with resources and completions = %v", caps)
	}
	wantError(t, e.do(rpc{method: "prompts/list"}), http.StatusNotFound, codeMethodNotFound)
}

func TestParseCaps(t *testing.T) {
	cases := map[string]mount.Caps{
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
		var got mount.Caps
		if !parseCaps(json.RawMessage(raw), &got) || got != want {
			t.Errorf("parseCaps(%s) = %+v, want %+v", raw, got, want)
		}
	}
	for _, bad := range []string{``, `[]`, `null`, `"x"`} {
		if parseCaps(json.RawMessage(bad), &mount.Caps{}) {
			t.Errorf("parseCaps(%q) accepted", bad)
		}
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
