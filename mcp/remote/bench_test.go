package remote

import (
	"context"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkCallTool measures one admitted tools/call through a Session —
// the admission check (served from the list cache), the tap, the guarded
// transport — against the same call through a bare go-sdk client, on the
// same go-sdk server (JSON responses, loopback).
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
		b.ReportAllocs()
		for b.Loop() {
			tl, err := sess.admitted(ctx, "echo")
			if err != nil {
				b.Fatal(err)
			}
			if _, err := sess.call.CallTool(ctx, &mcp.CallToolParams{Name: tl.Name, Arguments: args}); err != nil {
				b.Fatal(err)
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
