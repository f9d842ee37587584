package mcppeers

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopinterop/wopinterop/internal/golden"
)

// exchange renders one raw exchange for a golden file: status, the
// content type, WWW-Authenticate when set, and the body, with the
// server's address replaced.
func exchange(s *Server, res *http.Response, body string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "%d\nContent-Type: %s\n", res.StatusCode, res.Header.Get("Content-Type"))
	if v := res.Header.Get("WWW-Authenticate"); v != "" {
		fmt.Fprintf(&b, "WWW-Authenticate: %s\n", strings.ReplaceAll(v, s.Base, "http://peer"))
	}
	fmt.Fprintf(&b, "\n%s\n", strings.ReplaceAll(body, s.Base, "http://peer"))
	return []byte(b.String())
}

func discoverBody(id int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"server/discover","params":{"_meta":%s}}`, id, meta2026(`{}`))
}

// TestRevisionsDiscover: server/discover reports Script.Revisions in the
// Script's order (go-sdk alone lists newest first).
func TestRevisionsDiscover(t *testing.T) {
	for _, revs := range [][]string{nil, {Current, "2025-11-25"}, {"2025-06-18", Current}} {
		s := StartGo(t, Script{Revisions: revs})
		cs := mustConnect(t, s.URL)
		want := revs
		if want == nil {
			want = []string{Current}
		}
		_, body := post(t, s.URL, Current, "server/discover", "", discoverBody(1))
		if !strings.Contains(body, `"supportedVersions":["`+strings.Join(want, `","`)+`"]`) {
			t.Fatalf("Revisions %v: discover %s", revs, body)
		}
		if got := cs.InitializeResult().ProtocolVersion; got != Current {
			t.Fatalf("Revisions %v: negotiated %q", revs, got)
		}
	}
}

// TestRevisionsRefused: a header outside Revisions, and an initialize when
// Revisions lists no legacy revision, are 400 -32022 with data.supported
// and data.requested (golden); nothing reaches a tool.
func TestRevisionsRefused(t *testing.T) {
	s := StartGo(t, Script{})
	cases := []struct {
		name, version, method, body string
	}{
		{"legacy-header", "2025-06-18", "tools/list", `{"jsonrpc":"2.0","id":"r-1","method":"tools/list","params":{}}`},
		{"future-header", "2099-01-01", "tools/call", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo"}}`},
		{"initialize", "", "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`},
	}
	for _, tc := range cases {
		res, body := post(t, s.URL, tc.version, tc.method, "", tc.body)
		golden.Check(t, "revisions/"+tc.name+".txt", exchange(s, res, body))
	}
	if n := len(s.Requests()); n != len(cases) || len(s.SlowCalls()) != 0 {
		t.Fatalf("recorded %d requests", n)
	}
}

// TestRevisionsStockClient documents what go-sdk v1.8.0's client does
// when the server's revisions and its own meet differently:
//   - Revisions [2025-11-25]: discover is refused -32022 with supported
//     [2025-11-25]; the client does not retry discover below 2026-07-28,
//     falls back to initialize at 2025-11-25, and gets a session there;
//   - Revisions [2026-07-28], the client pinned to 2025-11-25: it sends
//     initialize only, which is refused -32022, and Connect fails.
func TestRevisionsStockClient(t *testing.T) {
	s := StartGo(t, Script{Revisions: []string{"2025-11-25"}})
	cs := mustConnect(t, s.URL)
	if got := cs.InitializeResult().ProtocolVersion; got != "2025-11-25" {
		t.Fatalf("negotiated %q", got)
	}
	var seen []string
	for _, q := range s.Requests() {
		seen = append(seen, q.Method+"@"+q.ProtocolVersion)
	}
	if diff := cmp.Diff([]string{"server/discover@2026-07-28", "initialize@", "notifications/initialized@2025-11-25"}, seen); diff != "" {
		t.Fatalf("wire (-want +got):\n%s", diff)
	}

	s = StartGo(t, Script{})
	c := mcp.NewClient(&mcp.Implementation{Name: "pinned", Version: "1"}, clientOptions())
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	_, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: s.URL, HTTPClient: &http.Client{Transport: tr},
		DisableStandaloneSSE: true, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if je := wireError(t, err); je.Code != mcp.CodeUnsupportedProtocolVersion {
		t.Fatalf("pinned 2025-11-25: %v", err)
	}
	if reqs := s.Requests(); len(reqs) != 1 || reqs[0].Method != "initialize" {
		t.Fatalf("pinned 2025-11-25 sent %+v", reqs)
	}
}
