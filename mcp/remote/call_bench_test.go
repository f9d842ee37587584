package remote

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkCallOneInputRound: one tools/call with one input round (ask,
// answer, complete) against a go-sdk stateless server over loopback HTTP —
// through Session.Call, and through a bare go-sdk CallTool loop doing the
// same exchange with none of the checks, records or projection.
func BenchmarkCallOneInputRound(b *testing.B) {
	ts := newTestServer(b)
	b.Run("Session.Call", func(b *testing.B) {
		s, _ := realSession(b, ts)
		req := CallRequest{Tool: "greet", Elicitation: formOnly, Decide: acceptAll}
		b.ReportAllocs()
		for b.Loop() {
			out, err := s.Call(b.Context(), req)
			if err != nil || out.Rounds != 1 {
				b.Fatalf("Call = %+v, %v", out, err)
			}
		}
	})
	b.Run("bare go-sdk", func(b *testing.B) {
		cs := connect(b, ts.url)
		b.ReportAllocs()
		for b.Loop() {
			p := &mcp.CallToolParams{Name: "greet", Arguments: map[string]any{}}
			res, err := cs.CallTool(b.Context(), p)
			if err != nil || !res.NeedsInput() {
				b.Fatalf("CallTool = %+v, %v", res, err)
			}
			responses := mcp.InputResponseMap{}
			for id := range res.InputRequests {
				responses[id] = &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}
			}
			p = &mcp.CallToolParams{Name: "greet", Arguments: map[string]any{}, InputResponses: responses, RequestState: res.RequestState}
			if res, err = cs.CallTool(b.Context(), p); err != nil || res.NeedsInput() {
				b.Fatalf("retry = %+v, %v", res, err)
			}
		}
	})
}
