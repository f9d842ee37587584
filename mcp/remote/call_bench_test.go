package remote

import (
	"context"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkCallOneInputRound: one tools/call with one input round (ask,
// answer, complete) against a go-sdk stateless server over loopback HTTP —
// through Session.Call on the connection side's session (admission check
// from the list cache, tap, guarded transport), and through a bare go-sdk
// CallTool loop doing the same exchange with none of the checks, records
// or projection.
func BenchmarkCallOneInputRound(b *testing.B) {
	s, f := callServer(b)
	b.Run("Session.Call", func(b *testing.B) {
		sess, err := f.client.Connect(context.Background(), runID, "echo")
		if err != nil {
			b.Fatal(err)
		}
		defer sess.Close()
		req := CallRequest{Tool: "greet", Elicitation: formOnly, Decide: acceptAll}
		b.ReportAllocs()
		for b.Loop() {
			out, err := sess.Call(context.Background(), req)
			if err != nil || out.Rounds != 1 {
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
			p := &mcp.CallToolParams{Name: "greet", Arguments: map[string]any{}}
			res, err := cs.CallTool(ctx, p)
			if err != nil || !res.NeedsInput() {
				b.Fatalf("CallTool = %+v, %v", res, err)
			}
			responses := mcp.InputResponseMap{}
			for id := range res.InputRequests {
				responses[id] = &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}
			}
			p = &mcp.CallToolParams{Name: "greet", Arguments: map[string]any{}, InputResponses: responses, RequestState: res.RequestState}
			if res, err = cs.CallTool(ctx, p); err != nil || res.NeedsInput() {
				b.Fatalf("retry = %+v, %v", res, err)
			}
		}
	})
}
