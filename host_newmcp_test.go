package wopinterop_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/wopinterop/wopinterop"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/mcp"
)

// fixturesPath is where these tests mount a second MCP server.
const fixturesPath = "/mcp-fixtures"

// anonymousGlobex resolves every caller of the second server as an
// anonymous Subject of globex, the way examples/host serves the MCP
// conformance suite in a tenant of its own.
func anonymousGlobex() interop.SubjectResolver {
	return interop.SubjectResolverFunc(func(*http.Request) (interop.Subject, error) {
		return interop.Subject{Tenant: "globex", Principal: "fixtures-client"}, nil
	})
}

// fixturesOptions are the second server's options.
func fixturesOptions() mcp.Options {
	return mcp.Options{ServerInfo: mcp.Implementation{Name: "fixtures", Version: "1"}, AllowAnonymous: true}
}

// recordingSink remembers the tenant and type of every host event before
// handing it on.
type recordingSink struct {
	interop.EventSink
	mu     sync.Mutex
	events []string
}

func (s *recordingSink) PublishHostEvent(ctx context.Context, tenant string, ev interop.HostEvent) error {
	s.mu.Lock()
	s.events = append(s.events, tenant+" "+string(ev.Type))
	s.mu.Unlock()
	return s.EventSink.PublishHostEvent(ctx, tenant, ev)
}

func (s *recordingSink) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.events...)
}

// serveWith mounts h's routes and more on a fresh mux and serves it.
func serveWith(t *testing.T, h *wopinterop.Host, more ...wopinterop.Route) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	h.Mount(mux)
	for _, rt := range more {
		mux.Handle(rt.Pattern, rt.Handler)
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// TestNewMCP: one call mounts a second MCP server for its own callers,
// with the host's version policy, and its negotiation.decided records
// reach Config.Events as host events of its caller's tenant (OpenWOP
// interop.md §The audit event; RFC 0242 §B).
func TestNewMCP(t *testing.T) {
	store := newStore(t)
	sink := &recordingSink{EventSink: store}
	cfg := mcpConfig(validConfig(store))
	cfg.Events = sink
	h, err := wopinterop.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	route, err := h.NewMCP(fixturesPath+"/", anonymousGlobex(), fixturesOptions())
	if err != nil {
		t.Fatal(err)
	}
	if route.Pattern != fixturesPath || route.Handler == nil {
		t.Fatalf("route %+v, want the cleaned path %s", route, fixturesPath)
	}
	srv := serveWith(t, h, route)

	status, discover := mcpPost(t, srv.URL+fixturesPath, "", "server/discover", nil)
	result, _ := discover["result"].(map[string]any)
	if status != 200 || !strings.Contains(mustJSON(result["supportedVersions"]), `["`+mcp.Revision+`"]`) {
		t.Fatalf("discover: %d %v", status, discover)
	}
	if info := mustJSON(result["_meta"]); !strings.Contains(info, `"name":"fixtures"`) {
		t.Errorf("serverInfo %s, want the second server's", info)
	}
	// The caller is globex's anonymous Subject: globex's tools, with no
	// credential at all.
	status, list := mcpPost(t, srv.URL+fixturesPath, "", "tools/list", nil)
	if status != 200 || !strings.Contains(mustJSON(list), `"name":"conformance-noop"`) {
		t.Fatalf("tools/list: %d %v", status, list)
	}
	// Config.MCP's server still answers only its own callers.
	if status, _ := mcpPost(t, srv.URL+"/mcp", "", "tools/list", nil); status != http.StatusUnauthorized {
		t.Errorf("/mcp without a key: %d", status)
	}

	if err := h.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := sink.seen()
	// Two records of the second server's callers, in their tenant, and
	// the tenantless one of the refused /mcp call.
	if want := []string{"globex negotiation.decided", "globex negotiation.decided", " negotiation.decided"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("host events %v, want %v", got, want)
	}
	for _, ev := range store.DurableHostEvents("globex") {
		var p struct {
			Protocol, Outcome, Version string
		}
		if err := json.Unmarshal(ev.Payload, &p); err != nil || p.Protocol != "mcp" || p.Outcome != "accepted" || p.Version != mcp.Revision {
			t.Errorf("record %s", ev.Payload)
		}
	}
}

// TestNewMCPSharesTheSealKey: a requestState sealed by Config.MCP's server
// opens on the second one for the same caller, and only once across both
// (one key, one ledger; OpenWOP interop map, mcp.mrtr).
func TestNewMCPSharesTheSealKey(t *testing.T) {
	h := newHost(t, mcpConfig(validConfig(newStore(t))))
	route, err := h.NewMCP(fixturesPath, subjects(), mcp.Options{ServerInfo: mcp.Implementation{Name: "fixtures", Version: "1"}})
	if err != nil {
		t.Fatal(err)
	}
	srv := serveWith(t, h, route)
	caps := map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}
	call := func(path string, params map[string]any) (int, map[string]any) {
		t.Helper()
		params["name"], params["arguments"] = memstore.FixtureApproval, map[string]any{}
		return mcpPostCaps(t, srv.URL+path, acmeKey, "tools/call", params, caps)
	}
	_, first := call("/mcp", map[string]any{})
	result, _ := first["result"].(map[string]any)
	state, _ := result["requestState"].(string)
	requests, _ := result["inputRequests"].(map[string]any)
	if result["resultType"] != "input_required" || state == "" || len(requests) != 1 {
		t.Fatalf("first round: %v", first)
	}
	responses := map[string]any{}
	for id := range requests {
		responses[id] = map[string]any{"action": "accept", "content": map[string]any{"action": "accept"}}
	}
	status, done := call(fixturesPath, map[string]any{"requestState": state, "inputResponses": responses})
	if r, _ := done["result"].(map[string]any); status != 200 || r["resultType"] != "complete" || r["isError"] != false {
		t.Fatalf("retry on the second server: %d %v", status, done)
	}
	status, replay := call("/mcp", map[string]any{"requestState": state, "inputResponses": responses})
	if e, _ := replay["error"].(map[string]any); status != http.StatusBadRequest || e["code"] != float64(-32602) {
		t.Fatalf("replay on the first server: %d %v", status, replay)
	}
}

// TestNewMCPFollowsTheHost: Drain, InvalidateWorkflows and Close reach the
// second server, and one built after Drain starts drained.
func TestNewMCPFollowsTheHost(t *testing.T) {
	store := newStore(t)
	h := newHost(t, mcpConfig(validConfig(store)))
	// Authenticated callers: an anonymous one's tool list is never cached.
	route, err := h.NewMCP(fixturesPath, subjects(), fixturesOptions())
	if err != nil {
		t.Fatal(err)
	}
	srv := serveWith(t, h, route)
	count := func() int {
		_, body := mcpPost(t, srv.URL+fixturesPath, globexKey, "tools/list", nil)
		tools, _ := body["result"].(map[string]any)["tools"].([]any)
		return len(tools)
	}
	before := count()
	def := memstore.ConformanceFixtures()[0]
	def.Workflow.ID = "added-later"
	if err := store.Register("globex", def); err != nil {
		t.Fatal(err)
	}
	if got := count(); got != before {
		t.Fatalf("tools/list changed to %d before the invalidation", got)
	}
	h.InvalidateWorkflows("globex")
	if got := count(); got != before+1 {
		t.Fatalf("after InvalidateWorkflows: %d tools, want %d", got, before+1)
	}

	const shuttingDown = `{"error":{"code":-32603,"message":"Server shutting down"},"jsonrpc":"2.0"}`
	h.Drain()
	if status, body := mcpPost(t, srv.URL+fixturesPath, globexKey, "tools/list", nil); status != http.StatusServiceUnavailable || mustJSON(body) != shuttingDown {
		t.Errorf("after Drain: %d %v", status, body)
	}
	late, err := h.NewMCP("/mcp-late", anonymousGlobex(), fixturesOptions())
	if err != nil {
		t.Fatal(err)
	}
	lateSrv := httptest.NewServer(late.Handler)
	t.Cleanup(lateSrv.Close)
	if status, body := mcpPost(t, lateSrv.URL, "", "tools/list", nil); status != http.StatusServiceUnavailable || mustJSON(body) != shuttingDown {
		t.Errorf("built after Drain: %d %v", status, body)
	}

	if err := h.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := h.NewMCP("/mcp-closed", anonymousGlobex(), fixturesOptions()); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("NewMCP after Close: %v", err)
	}
}

// TestNewMCPRefusals: NewMCP needs the MCP section, a mount path clear of
// every other route, and options the server accepts; a refusal mounts
// nothing.
func TestNewMCPRefusals(t *testing.T) {
	withoutMCP := newHost(t, validConfig(newStore(t)))
	if _, err := withoutMCP.NewMCP(fixturesPath, subjects(), fixturesOptions()); !errors.Is(err, wopinterop.ErrInvalidConfig) || !strings.Contains(err.Error(), "Config.MCP") {
		t.Errorf("without Config.MCP: %v", err)
	}

	h := newHost(t, mcpConfig(validConfig(newStore(t))))
	if _, err := h.NewMCP(fixturesPath, anonymousGlobex(), fixturesOptions()); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"", "/", "mcp-x", "/mcp-x/{id}", "/mcp", "/mcp/more", "/a2a", "/a2a/rest/x", "/", wopinterop.DefaultCardPath, fixturesPath, fixturesPath + "/sub"} {
		if _, err := h.NewMCP(path, anonymousGlobex(), fixturesOptions()); !errors.Is(err, wopinterop.ErrInvalidConfig) || !strings.Contains(err.Error(), "path") {
			t.Errorf("path %q: %v", path, err)
		}
	}
	if _, err := h.NewMCP("/mcp-y", anonymousGlobex(), mcp.Options{}); err == nil || !strings.Contains(err.Error(), "ServerInfo") {
		t.Errorf("no ServerInfo: %v", err)
	}
	if _, err := h.NewMCP("/mcp-y", nil, fixturesOptions()); err == nil || !strings.Contains(err.Error(), "Subjects is required") {
		t.Errorf("no resolver: %v", err)
	}
	// The refused paths stayed free: /mcp-y mounts now.
	if _, err := h.NewMCP("/mcp-y", anonymousGlobex(), fixturesOptions()); err != nil {
		t.Errorf("/mcp-y after refusals: %v", err)
	}
}
