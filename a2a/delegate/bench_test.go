package delegate

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/wopinterop/wopinterop/egress"
)

// BenchmarkSendMessage compares one SendMessage through a Conn (our
// transport: guard check, credential, strict decode) with a2a-go's own
// JSON-RPC transport, against one loopback agent answering a completed
// task with an artifact.
func BenchmarkSendMessage(b *testing.B) {
	result := `{"task":{"id":"task-1","contextId":"ctx-1","status":{"state":"TASK_STATE_COMPLETED"},` +
		`"artifacts":[{"artifactId":"a1","parts":[{"text":"echo: hello"},{"data":{"n":1,"ok":true}}]}],` +
		`"history":[{"messageId":"msg-1","role":"ROLE_USER","parts":[{"text":"hello"}]}]}}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/card.json" {
			card := &wire.AgentCard{Name: "Bench", Skills: []wire.AgentSkill{},
				SupportedInterfaces: []*wire.AgentInterface{{URL: "http://" + r.Host + "/rpc", ProtocolBinding: wire.TransportProtocolJSONRPC, ProtocolVersion: "1.0"}}}
			_ = json.NewEncoder(w).Encode(card)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(body, &req)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":`+result+`}`)
	}))
	defer srv.Close()
	req := func() *wire.SendMessageRequest { return sendReq("hello") }

	b.Run("delegate", func(b *testing.B) {
		g, _ := egress.NewGuard(egress.GuardOptions{AllowOrigins: []string{srv.URL}})
		c, err := New(Deps{Policy: a2aPolicy(b, false), Events: newSink(), Guard: g,
			Admissions:  []Admission{{Alias: "bench", CardURL: srv.URL + "/card.json", Credential: CredentialRef{Name: "k"}}},
			Credentials: &staticCredentials{scheme: "Bearer", value: "tok"}}, Options{})
		if err != nil {
			b.Fatal(err)
		}
		conn, err := c.Connect(context.Background(), runID, "bench")
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := conn.remote.SendMessage(context.Background(), req()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("a2aclient", func(b *testing.B) {
		cl, err := a2aclient.NewFromEndpoints(context.Background(),
			[]*wire.AgentInterface{{URL: srv.URL + "/rpc", ProtocolBinding: wire.TransportProtocolJSONRPC, ProtocolVersion: "1.0"}},
			a2aclient.WithJSONRPCTransport(srv.Client()))
		if err != nil {
			b.Fatal(err)
		}
		ctx := a2aclient.AttachServiceParams(context.Background(), a2aclient.ServiceParams{"authorization": {"Bearer tok"}})
		b.ReportAllocs()
		for b.Loop() {
			if _, err := cl.SendMessage(ctx, req()); err != nil {
				b.Fatal(err)
			}
		}
	})
}
