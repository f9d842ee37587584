package wopinterop_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop"
	"github.com/wopinterop/wopinterop/mcp"
)

// trieRouter is a router that is not http.ServeMux, as chi or gorilla/mux
// are not: exact paths in a map, prefixes matched longest first, each route
// behind its own middleware, and a 404 of its own for the rest. It follows
// Route's documented contract and nothing else.
type trieRouter struct {
	exact    map[string]http.Handler
	prefixes []wopinterop.Route
}

func (r *trieRouter) handle(rt wopinterop.Route, middleware func(http.Handler) http.Handler) {
	h := middleware(rt.Handler)
	if strings.HasSuffix(rt.Pattern, "/") {
		r.prefixes = append(r.prefixes, wopinterop.Route{Pattern: rt.Pattern, Handler: h})
		slices.SortFunc(r.prefixes, func(a, b wopinterop.Route) int { return len(b.Pattern) - len(a.Pattern) })
		return
	}
	if r.exact == nil {
		r.exact = map[string]http.Handler{}
	}
	r.exact[rt.Pattern] = h
}

func (r *trieRouter) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if h, ok := r.exact[req.URL.Path]; ok {
		h.ServeHTTP(w, req)
		return
	}
	for _, p := range r.prefixes {
		if strings.HasPrefix(req.URL.Path, p.Pattern) {
			p.Handler.ServeHTTP(w, req)
			return
		}
	}
	http.Error(w, "router: no route", http.StatusTeapot)
}

// TestRoutesOnAnotherRouter: Routes are exact paths and one prefix, as
// documented, and every surface answers through a router that is not a
// ServeMux, behind per-route middleware: a header naming the route on
// each, and a rate limit in front of the MCP route alone that answers in
// MCP's shape (mcp.WriteError).
func TestRoutesOnAnotherRouter(t *testing.T) {
	h := newHost(t, mcpConfig(validConfig(newStore(t))))
	routes := h.Routes()
	var patterns []string
	for _, rt := range routes {
		patterns = append(patterns, rt.Pattern)
	}
	if want := []string{"/.well-known/agent-card.json", "/a2a", "/a2a/rest", "/a2a/rest/", "/mcp"}; !slices.Equal(patterns, want) {
		t.Fatalf("patterns %v, want %v", patterns, want)
	}
	routes[0].Pattern = "/elsewhere"
	if h.Routes()[0].Pattern != wopinterop.DefaultCardPath {
		t.Error("Routes shares its slice")
	}

	var mu sync.Mutex
	limited := map[string]bool{}
	router := &trieRouter{}
	for _, rt := range h.Routes() {
		named := func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("X-Route", rt.Pattern)
				next.ServeHTTP(w, r)
			})
		}
		if rt.Pattern != "/mcp" {
			router.handle(rt, named)
			continue
		}
		router.handle(rt, func(next http.Handler) http.Handler {
			return named(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				seen := limited[r.Header.Get("Authorization")]
				limited[r.Header.Get("Authorization")] = true
				mu.Unlock()
				if seen {
					mcp.WriteError(w, nil, &mcp.Error{Code: -32000, Message: "Rate limit exceeded", Status: http.StatusTooManyRequests})
					return
				}
				next.ServeHTTP(w, r)
			}))
		})
	}
	srv := httptest.NewServer(router)
	t.Cleanup(srv.Close)

	card := send(t, "GET", srv.URL+wopinterop.DefaultCardPath, "", "")
	if card.status != 200 || card.header.Get("X-Route") != wopinterop.DefaultCardPath {
		t.Fatalf("card: %d %v %s", card.status, card.header, card.body)
	}
	rpc := send(t, "POST", srv.URL+"/a2a", acmeKey, strings.Replace(sendApproval, "MSG", "m-router", 1))
	var ans struct {
		Result struct {
			Task wire.Task `json:"task"`
		} `json:"result"`
	}
	if err := json.Unmarshal(rpc.body, &ans); err != nil || rpc.header.Get("X-Route") != "/a2a" || !strings.HasPrefix(string(ans.Result.Task.ID), "acme/") {
		t.Fatalf("JSON-RPC: %d %v %s", rpc.status, rpc.header, rpc.body)
	}
	task := string(ans.Result.Task.ID)
	got := send(t, "GET", srv.URL+"/a2a/rest/tasks/"+strings.Replace(task, "/", "%2F", 1), acmeKey, "")
	var rt wire.Task
	if err := json.Unmarshal(got.body, &rt); err != nil || got.status != 200 || string(rt.ID) != task || got.header.Get("X-Route") != "/a2a/rest/" {
		t.Fatalf("HTTP+JSON GetTask: %d %v %s", got.status, got.header, got.body)
	}
	// The bare prefix is the binding's, in its shape (OpenWOP RFC 0211 §C).
	bare := send(t, "GET", srv.URL+"/a2a/rest", acmeKey, "")
	if bare.status != 404 || bare.header.Get("X-Route") != "/a2a/rest" || !bytes.Contains(bare.body, []byte(`"status":"NOT_FOUND"`)) {
		t.Errorf("bare prefix: %d %v %s", bare.status, bare.header, bare.body)
	}
	// A wrong verb reaches the surface, which answers in its shape.
	if r := send(t, "GET", srv.URL+"/a2a", acmeKey, ""); r.status != 405 || !bytes.Contains(r.body, []byte(`"jsonrpc":"2.0"`)) {
		t.Errorf("GET on JSON-RPC: %d %s", r.status, r.body)
	}
	// Exact patterns are exact: the router, not a surface, answers below them.
	if r := send(t, "POST", srv.URL+"/a2a/other", acmeKey, "{}"); r.status != http.StatusTeapot || r.header.Get("X-Route") != "" {
		t.Errorf("below an exact pattern: %d %v %s", r.status, r.header, r.body)
	}

	status, list := mcpPost(t, srv.URL+"/mcp", acmeKey, "tools/list", nil)
	if status != 200 || !strings.Contains(mustJSON(list), `"name":"conformance-noop"`) {
		t.Fatalf("MCP tools/list: %d %v", status, list)
	}
	status, limit := mcpPost(t, srv.URL+"/mcp", acmeKey, "tools/list", nil)
	if status != http.StatusTooManyRequests || mustJSON(limit) != `{"error":{"code":-32000,"message":"Rate limit exceeded"},"jsonrpc":"2.0"}` {
		t.Errorf("MCP behind its rate limit: %d %v", status, limit)
	}
	// The MCP route's middleware is its own: A2A is not limited.
	if r := send(t, "GET", srv.URL+wopinterop.DefaultCardPath, acmeKey, ""); r.status != 200 {
		t.Errorf("card after the MCP limit: %d", r.status)
	}
}

// TestRoutesWithoutHTTPJSON: no HTTP+JSON binding, no route for it.
func TestRoutesWithoutHTTPJSON(t *testing.T) {
	cfg := validConfig(newStore(t))
	cfg.A2A.HTTPJSON = false
	cfg.A2A.Path, cfg.A2A.CardPath = "/interop/a2a/", "/cards/host.json"
	var patterns []string
	for _, rt := range newHost(t, cfg).Routes() {
		patterns = append(patterns, rt.Pattern)
	}
	if want := []string{"/cards/host.json", "/interop/a2a"}; !slices.Equal(patterns, want) {
		t.Errorf("patterns %v, want %v", patterns, want)
	}
}

// TestNewMCPIsNotAdvertised: a server of NewMCP is in neither Routes nor
// the mcp record, which names Config.MCP's server alone.
func TestNewMCPIsNotAdvertised(t *testing.T) {
	h := newHost(t, mcpConfig(validConfig(newStore(t))))
	before := string(h.Records()["mcp"])
	if _, err := h.NewMCP("/mcp-fixtures", subjects(), mcp.Options{ServerInfo: mcp.Implementation{Name: "fixtures", Version: "1"}}); err != nil {
		t.Fatal(err)
	}
	if after := string(h.Records()["mcp"]); after != before {
		t.Errorf("mcp record changed to %s", after)
	}
	if n := len(h.Routes()); n != 5 {
		t.Errorf("%d routes", n)
	}
}
