package mcppeers

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/wopinterop/wopinterop/internal/golden"
)

// TestLegacyWire: a legacy server's answers to a 2026-07-28 client's
// first request and to a header at another revision (golden).
func TestLegacyWire(t *testing.T) {
	for _, rev := range []string{Legacy20250618, Legacy20251125} {
		s := StartLegacy(t, rev)
		res, body := post(t, s.URL, Current, "server/discover", "", discoverBody(1))
		golden.Check(t, "legacy/discover-"+rev+".txt", exchange(s, res, body))
		res, body = post(t, s.URL, Current, "tools/list", "", `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":`+meta2026(`{}`)+`}}`)
		golden.Check(t, "legacy/header-"+rev+".txt", exchange(s, res, body))
		if n := len(s.Requests()); n != 2 {
			t.Fatalf("%s: recorded %d requests, want 2", rev, n)
		}
	}
}

// TestLegacyStockClient documents what go-sdk v1.8.0's client does with
// a legacy server: discover's 404 makes it fall back to initialize at
// 2025-11-25, which the server answers at its own revision; the client
// accepts that, keeps the session id, and MRTR tools are served by
// elicitation/create requests to the client's ElicitationHandler.
func TestLegacyStockClient(t *testing.T) {
	for _, rev := range []string{Legacy20250618, Legacy20251125} {
		t.Run(rev, func(t *testing.T) {
			s := StartLegacy(t, rev)
			opts := clientOptions()
			opts.ElicitationHandler = func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
			}
			cs, err := connect(t, s.URL, opts, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := cs.InitializeResult().ProtocolVersion; got != rev {
				t.Fatalf("negotiated %q", got)
			}
			res := mustCall(t, cs, &mcp.CallToolParams{Name: NeedsInput})
			if res.NeedsInput() || text(t, res) != "hello Ada" {
				t.Fatalf("needs_input over elicitation/create: %+v", res)
			}
			var seen []string
			for _, q := range s.Requests() {
				m := q.Method
				if m == "" {
					m = "(response)"
				}
				m += "@" + q.ProtocolVersion
				if q.SessionID != "" {
					m += "+session"
				}
				seen = append(seen, m)
			}
			want := []string{"server/discover@2026-07-28", "initialize@", "notifications/initialized@" + rev + "+session",
				"tools/call@" + rev + "+session", "(response)@" + rev + "+session"}
			if diff := cmp.Diff(want, seen); diff != "" {
				t.Fatalf("wire (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLegacySessionsEnd: a session a client leaves open is closed with
// the test, so the server's goroutines do not outlive it.
func TestLegacySessionsEnd(t *testing.T) {
	before := goleak.IgnoreCurrent()
	var cs *mcp.ClientSession
	t.Run("inner", func(t *testing.T) {
		s := StartLegacy(t, Legacy20251125)
		var err error
		if cs, err = dial(t, context.Background(), s.URL); err != nil {
			t.Fatal(err)
		}
		mustCall(t, cs, &mcp.CallToolParams{Name: Echo})
	})
	_ = cs.Close() // the server is gone; only the client's side is left
	goleak.VerifyNone(t, before)
}
