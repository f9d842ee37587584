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
		Facet:   facets.MCP{RefreshedAt: refreshed},
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
	if params == nil {
		params = map[string]any{}
	}
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    mcp.Revision,
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
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
		{"MCP.Server", func(c *wopinterop.MCPConfig) { c.Server.MaxRounds = 3 }},
		{"MCP.Server.MaxRounds", func(c *wopinterop.MCPConfig) {
			c.Facet.MRTR = &facets.MRTR{MaxRounds: 4}
			c.Server.MaxRounds = 5
		}},
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
	// A stale refreshedAt is a facet error naming the field.
	cfg := mcpConfig(validConfig(newStore(t)))
	cfg.MCP.Facet.RefreshedAt = "2025-01-01"
	if _, err := wopinterop.New(cfg); !errors.Is(err, facets.ErrInvalidFacet) || !strings.Contains(err.Error(), "mcp.refreshedAt") {
		t.Fatalf("err = %v", err)
	}
}

// TestMCPMaxRoundsFromFacet: the mount enforces the advertised
// mrtr.maxRounds; Server.MaxRounds may repeat it.
func TestMCPMaxRoundsFromFacet(t *testing.T) {
	for _, server := range []int{0, 4} {
		cfg := mcpConfig(validConfig(newStore(t)))
		cfg.MCP.Facet.MRTR = &facets.MRTR{MaxRounds: 4}
		cfg.MCP.Server.MaxRounds = server
		h := newHost(t, cfg)
		if !strings.Contains(string(h.Records()["mcp"]), `"maxRounds":4`) {
			t.Errorf("Server.MaxRounds %d: record %s", server, h.Records()["mcp"])
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
