package remote

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkCallTool measures one admitted tools/call through
// Session.Call on a Connected session — the admission check (served from
// the list cache), the argument checks, the tap, the guarded transport,
// the projection of the result and the outcome — against the same call
// through a bare go-sdk ClientSession.CallTool, on the same go-sdk server
// (JSON responses, loopback).
func BenchmarkCallTool(b *testing.B) {
	s := newServer(b, withJSON(), withCache(60_000, "private"))
	s.addTool(tool("echo", "text"))
	args := map[string]any{"text": "hi"}
	b.Run("remote", func(b *testing.B) {
		f := newFixture(b, s, admission(s, tool("echo", "text")))
		sess, err := f.client.Connect(context.Background(), runID, "echo")
		if err != nil {
			b.Fatal(err)
		}
		defer sess.Close()
		ctx := context.Background()
		req := CallRequest{Tool: "echo", Arguments: json.RawMessage(`{"text":"hi"}`)}
		b.ReportAllocs()
		for b.Loop() {
			out, err := sess.Call(ctx, req)
			if err != nil || out.Calls != 1 || len(out.Result.Content) != 1 {
				b.Fatalf("Call = %+v, %v", out, err)
			}
		}
	})
	b.Run("bare go-sdk", func(b *testing.B) {
		c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, &mcp.ClientOptions{
			Capabilities: &mcp.ClientCapabilities{}, MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		})
		cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: s.endpoint(), HTTPClient: &http.Client{}, DisableStandaloneSSE: true}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
