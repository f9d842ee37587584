package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopinterop/wopinterop/outbound"
)

// FuzzServerAnswer feeds arbitrary tools/call answers, decoded by go-sdk's
// own decoder, through the whole reading side of a call: the input-round
// view, the answers, the ceiling, the projection and the records. Every
// request of the call gets the same answer, so an input_required one runs
// into the ceiling.
func FuzzServerAnswer(f *testing.F) {
	for _, seed := range []string{okResult, askForm, askAgain, askURL, askSampled, lossyAsk, lossyResult,
		`{"resultType":"task","taskId":"t"}`, `{"content":[{"type":"text","text":"x"}],"isError":true}`,
		`{"resultType":"input_required","inputRequests":{}}`, `{"content":[{"type":"video"}]}`} {
		f.Add([]byte(seed))
	}
	both := &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}
	f.Fuzz(func(t *testing.T, body []byte) {
		fake := &fakeCaller{script: func(context.Context, int, *mcp.CallToolParams) (*mcp.CallToolResult, error) {
			var r mcp.CallToolResult
			if err := json.Unmarshal(body, &r); err != nil {
				return nil, err
			}
			return &r, nil
		}}
		s, sink := testSession(fake, func(s *Session) { s.MaxRounds = 2 })
		out, err := s.Call(t.Context(), CallRequest{Tool: "ask", Elicitation: both, Decide: acceptAll})
		if out == nil {
			t.Fatalf("no outcome (err %v)", err)
		}
		if out.Calls != fake.calls() || out.Calls > s.MaxRounds+1 || out.Rounds > s.MaxRounds {
			t.Fatalf("outcome %+v, server saw %d", out, fake.calls())
		}
		if err == nil && (out.Result == nil || (out.Reconciliation != "" && out.Reconciliation != outbound.CompletedBeforeCancel)) {
			t.Fatalf("success with outcome %+v", out)
		}
		if err != nil && out.Reconciliation == "" {
			t.Fatalf("error %v without a reconciliation", err)
		}
		if out.Result != nil {
			if _, err := json.Marshal(out.Result); err != nil {
				t.Fatalf("the projection does not encode: %v", err)
			}
		}
		for _, ev := range sink.events {
			if err := stored(ev, out.AttemptID).Validate(); err != nil {
				t.Fatalf("record %s: %v", ev.Payload, err)
			}
			// Content-free: only the record's own members, numbers and
			// the library's own strings.
			dec := json.NewDecoder(bytes.NewReader(ev.Payload))
			dec.DisallowUnknownFields()
			var rec struct {
				lossRecord
				Reconciliation outbound.Reconciliation `json:"reconciliation"`
			}
			if err := dec.Decode(&rec); err != nil || rec.Protocol != "mcp" || rec.AttemptID != out.AttemptID {
				t.Fatalf("record %s: %v", ev.Payload, err)
			}
		}
	})
}
