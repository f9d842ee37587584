package delegate

import (
	"net/http"
	"testing"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/wopinterop/wopinterop/internal/a2apeers"
)

// BenchmarkDelegation is one delegation — send, the task completed, its
// artifact admitted — to a2apeers' a2a-go agent (a2asrv over JSON-RPC,
// streaming), through a Client built with New (Connect once, outside the
// loop) and through a bare a2aclient reading the same stream against the
// same agent, so the ratio is what the library adds: the egress guard,
// our strict transport, the lifecycle, artifact admission and the run's
// records.
func BenchmarkDelegation(b *testing.B) {
	p := a2apeers.StartGo(b, a2apeers.Script{})
	b.Run("delegate", func(b *testing.B) {
		e := newE2EClient(b, p)
		conn, err := e.client.Connect(b.Context(), newE2ERunID(), e2eAlias)
		if err != nil {
			b.Fatal(err)
		}
		step := e2eStep(a2apeers.Complete)
		b.ReportAllocs()
		for b.Loop() {
			out, err := conn.Delegate(b.Context(), step)
			if err != nil || len(out.Artifacts) != 1 || out.Artifacts[0].Parts[0].Text() != a2apeers.CompletedText {
				b.Fatalf("Delegate = %+v, %v", out, err)
			}
		}
	})
	b.Run("bare-a2aclient", func(b *testing.B) {
		transport := &http.Transport{}
		defer transport.CloseIdleConnections()
		client, err := a2aclient.NewFromCard(b.Context(), p.Card,
			a2aclient.WithJSONRPCTransport(&http.Client{Transport: transport}))
		if err != nil {
			b.Fatal(err)
		}
		defer client.Destroy()
		skill := a2apeers.DefaultSkills()[0].ID
		b.ReportAllocs()
		for b.Loop() {
			msg := wire.NewMessage(wire.MessageRoleUser, wire.NewTextPart(a2apeers.Complete))
			msg.Metadata = map[string]any{"skillId": skill}
			var art *wire.Artifact
			var state wire.TaskState
			for ev, err := range client.SendStreamingMessage(b.Context(), &wire.SendMessageRequest{Message: msg}) {
				if err != nil {
					b.Fatal(err)
				}
				switch ev := ev.(type) {
				case *wire.TaskArtifactUpdateEvent:
					art = ev.Artifact
				case *wire.TaskStatusUpdateEvent:
					state = ev.Status.State
				}
			}
			if state != wire.TaskStateCompleted || art == nil || art.Parts[0].Text() != a2apeers.CompletedText {
				b.Fatalf("state %s artifact %+v", state, art)
			}
		}
	})
}
