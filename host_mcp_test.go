package wopinterop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop"
	"github.com/wopinterop/wopinterop/facets"
	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/mcp"
)

func mcpConfig(store_ wopinterop.Config) wopinterop.Config {
	store_.MCP = &wopinterop.MCPConfig{
		Record:  wopinterop.Record{RefreshedAt: refreshed},
		SealKey: []byte(secret),
		Server:  mcp.Options{ServerInfo: mcp.Implementation{Name: "test-host", Version: "9.9.9"}, Tasks: true},
	}
	store_.Now = func() time.Time { return today }
	return store_
}

// mcpPost sends one 2026-07-28 request with the headers and _meta a
// current-revision client sends.
func mcpPost(t *testing.T, url, key, method string, params map[string]any) (int, map[string]any) {
	t.Helper()
	return mcpPostCaps(t, url, key, method, params, map[string]any{})
}

// mcpPostCaps is mcpPost for a client declaring caps.
func mcpPostCaps(t *testing.T, url, key, method string, params, caps map[string]any) (int, map[string]any) {
	t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    mcp.Revision,
		"io.modelcontextprotocol/clientCapabilities": caps,
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", mcp.Revision)
	req.Header.Set("Mcp-Method", method)
	if name, ok := params["name"].(string); ok {
		req.Header.Set("Mcp-Name", name)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: %d %s", method, res.StatusCode, raw)
	}
	return res.StatusCode, out
}

func TestMCPMountedFromConfig(t *testing.T) {
	store := newStore(t)
	host, err := wopinterop.New(mcpConfig(validConfig(store)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = host.Close(context.Background()) })
	mux := http.NewServeMux()
	host.Mount(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	status, discover := mcpPost(t, srv.URL+wopinterop.DefaultMCPPath, acmeKey, "server/discover", nil)
	result, _ := discover["result"].(map[string]any)
	if status != http.StatusOK || result == nil {
		t.Fatalf("discover: %d %v", status, discover)
	}
	if got := result["supportedVersions"]; !slices.Equal(toStrings(got), []string{mcp.Revision}) {
		t.Errorf("supportedVersions %v", got)
	}
	exts, _ := result["capabilities"].(map[string]any)["extensions"].(map[string]any)
	if _, ok := exts[mcp.TasksExtension]; !ok {
		t.Errorf("discover does not list the tasks extension: %v", result["capabilities"])
	}
	status, list := mcpPost(t, srv.URL+wopinterop.DefaultMCPPath, acmeKey, "tools/list", nil)
	if status != http.StatusOK || !strings.Contains(mustJSON(list), `"name":"conformance-noop"`) {
		t.Fatalf("tools/list: %d %v", status, list)
	}

	rec := map[string]any{}
	if err := json.Unmarshal(host.Records()["mcp"], &rec); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(toStrings(rec["serverUrls"]), []string{base + wopinterop.DefaultMCPPath}) ||
		!slices.Contains(toStrings(rec["features"]), "extensions") || !slices.Contains(toStrings(rec["profiles"]), facets.ProfileMCP2026) {
		t.Errorf("mcp record %s", host.Records()["mcp"])
	}
	if !strings.Contains(string(host.Records()["hostEvents"]), `"negotiation.decided"`) {
		t.Errorf("hostEvents %s", host.Records()["hostEvents"])
	}
}

func TestMCPConfigRefusals(t *testing.T) {
	cases := []struct {
		field string
		edit  func(*wopinterop.MCPConfig)
	}{
		{"MCP.SealKey", func(c *wopinterop.MCPConfig) { c.SealKey = []byte("short") }},
		{"MCP.Path", func(c *wopinterop.MCPConfig) { c.Path = wopinterop.DefaultA2APath }},
		{"MCP.Path", func(c *wopinterop.MCPConfig) { c.Path = "/mcp/{x}" }},
		{"MCP.Path", func(c *wopinterop.MCPConfig) { c.Path = "/a2a/rest/mcp" }},
		{"MCP.Path", func(c *wopinterop.MCPConfig) { c.Path = wopinterop.DefaultCardPath }},
		{"MCP.Server is refused by the server: mcp: invalid config: ServerInfo needs Name and Version", func(c *wopinterop.MCPConfig) { c.Server.ServerInfo = mcp.Implementation{} }},
	}
	for _, tc := range cases {
		t.Run(tc.field, func(t *testing.T) {
			cfg := mcpConfig(validConfig(newStore(t)))
			tc.edit(cfg.MCP)
			_, err := wopinterop.New(cfg)
			var ce *wopinterop.ConfigError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("err = %v, want a ConfigError naming %s", err, tc.field)
			}
		})
	}
	// What the record may not say is a facet error naming the field: a
	// stale refreshedAt, a round ceiling above 16 (OpenWOP interop.md §The
	// MCP round ceiling).
	for field, edit := range map[string]func(*wopinterop.MCPConfig){
		"mcp.refreshedAt":    func(c *wopinterop.MCPConfig) { c.Record.RefreshedAt = "2025-01-01" },
		"mcp.mrtr.maxRounds": func(c *wopinterop.MCPConfig) { c.Server.MaxRounds = 17 },
	} {
		cfg := mcpConfig(validConfig(newStore(t)))
		edit(cfg.MCP)
		if _, err := wopinterop.New(cfg); !errors.Is(err, facets.ErrInvalidFacet) || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: err = %v", field, err)
		}
	}
}

// TestMCPRecordFollowsTheServer: the mcp record claims what the server's
// options serve, so it cannot promise what the server does not do:
// mrtr.maxRounds is the ceiling the server enforces (Server.MaxRounds,
// default 8), "extensions" is a feature exactly when Server.Tasks serves
// one, serverMount names the server's transport (OpenWOP interop map,
// mcp.features, mcp.mrtr).
func TestMCPRecordFollowsTheServer(t *testing.T) {
	for _, tc := range []struct {
		rounds int
		tasks  bool
		want   string
	}{
		{0, true, `"features":["server-discover","mrtr","cacheable-lists","extensions"],"serverUrls":["` + base + `/mcp"],"serverMount":{"transports":["streamable-http"]},"mrtr":{"maxRounds":8}}`},
		{4, false, `"features":["server-discover","mrtr","cacheable-lists"],"serverUrls":["` + base + `/mcp"],"serverMount":{"transports":["streamable-http"]},"mrtr":{"maxRounds":4}}`},
	} {
		cfg := mcpConfig(validConfig(newStore(t)))
		cfg.MCP.Server.MaxRounds, cfg.MCP.Server.Tasks = tc.rounds, tc.tasks
		h := newHost(t, cfg)
		if rec := string(h.Records()["mcp"]); !strings.HasSuffix(rec, tc.want) {
			t.Errorf("Server.MaxRounds %d, Tasks %v: record %s, want it to end %s", tc.rounds, tc.tasks, rec, tc.want)
		}
		srv := server(t, h)
		_, discover := mcpPost(t, srv.URL+"/mcp", acmeKey, "server/discover", nil)
		exts, _ := discover["result"].(map[string]any)["capabilities"].(map[string]any)["extensions"].(map[string]any)
		if _, listed := exts[mcp.TasksExtension]; listed != tc.tasks {
			t.Errorf("Tasks %v: server/discover lists the tasks extension: %v", tc.tasks, listed)
		}
	}
}

func toStrings(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// Host.InvalidateWorkflows drops the cached tool lists, so a workflow the
// host adds is a tool at once rather than after the list TTL.
func TestHostInvalidateWorkflows(t *testing.T) {
	store := newStore(t)
	h := newHost(t, mcpConfig(validConfig(store)))
	srv := server(t, h)
	count := func() int {
		_, body := mcpPost(t, srv.URL+"/mcp", acmeKey, "tools/list", nil)
		tools, _ := body["result"].(map[string]any)["tools"].([]any)
		return len(tools)
	}
	before := count()
	def := memstore.ConformanceFixtures()[0]
	def.Workflow.ID = "added-later"
	if err := store.Register("acme", def); err != nil {
		t.Fatal(err)
	}
	if got := count(); got != before {
		t.Fatalf("tools/list changed to %d before the invalidation; the cache is not what this test exercises", got)
	}
	h.InvalidateWorkflows("globex")
	if got := count(); got != before {
		t.Fatalf("invalidating globex changed acme's list to %d", got)
	}
	h.InvalidateWorkflows("acme")
	if got := count(); got != before+1 {
		t.Fatalf("after InvalidateWorkflows(acme): %d tools, want %d", got, before+1)
	}
}
