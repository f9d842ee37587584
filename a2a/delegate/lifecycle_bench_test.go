package delegate

import (
	"context"
	"encoding/json"
	"iter"
	"log/slog"
	"net/http/httptest"
	"testing"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// BenchmarkDelegate is one delegation through the scripted peer: the send,
// a task that completes with one artifact, and the artifact's admission
// (media type, size, count, completeness, digest).
func BenchmarkDelegate(b *testing.B) {
	art := withDigest(textArtifact("a1", "the summary"), sha("the summary"))
	r := &fakeRemote{stream: streamOf(
		ev(task(wire.TaskStateSubmitted)),
		ev(artifactEvent(art, false, true)),
		ev(statusEvent(wire.TaskStateCompleted, nil)),
	)}
	c, _ := testConn(r, func(a *Admission) { a.Limits.MediaTypes = []string{"text/plain"} })
	step := testStep()
	b.ReportAllocs()
	for b.Loop() {
		r.sends, r.streamed = r.sends[:0], r.streamed[:0]
		out, err := c.Delegate(b.Context(), step)
		if err != nil || len(out.Artifacts) != 1 {
			b.Fatalf("Delegate = %+v, %v", out, err)
		}
	}
}

// completingAgent completes every task at once with one text artifact.
type completingAgent struct{}

func (completingAgent) Execute(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[wire.Event, error] {
	return func(yield func(wire.Event, error) bool) {
		if !yield(wire.NewSubmittedTask(ec, ec.Message), nil) {
			return
		}
		art := wire.NewArtifactEvent(ec, wire.NewTextPart("the summary"))
		art.LastChunk = true
		if !yield(art, nil) {
			return
		}
		yield(wire.NewStatusUpdateEvent(ec, wire.TaskStateCompleted, nil), nil)
	}
}

func (completingAgent) Cancel(context.Context, *a2asrv.ExecutorContext) iter.Seq2[wire.Event, error] {
	return func(func(wire.Event, error) bool) {}
}

// BenchmarkDelegateA2AGo is one streamed delegation (send → completed →
// admitted artifact) to an a2a-go a2asrv agent over HTTP, through Delegate
// and through a bare a2aclient reading the same stream, so the ratio is
// the lifecycle's own cost.
func BenchmarkDelegateA2AGo(b *testing.B) {
	srv := httptest.NewServer(a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(completingAgent{}, a2asrv.WithLogger(slog.New(slog.DiscardHandler)))))
	defer srv.Close()
	client, err := a2aclient.NewFromEndpoints(b.Context(), []*wire.AgentInterface{wire.NewAgentInterface(srv.URL, wire.TransportProtocolJSONRPC)})
	if err != nil {
		b.Fatal(err)
	}
	defer client.Destroy()

	b.Run("delegate", func(b *testing.B) {
		c, _ := testConn(client)
		step := testStep()
		b.ReportAllocs()
		for b.Loop() {
			out, err := c.Delegate(b.Context(), step)
			if err != nil || len(out.Artifacts) != 1 {
				b.Fatalf("Delegate = %+v, %v", out, err)
			}
		}
	})
	b.Run("bare-a2aclient", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			msg := wire.NewMessage(wire.MessageRoleUser, &wire.Part{Content: wire.Data{Value: json.RawMessage(`{"text":"hello"}`)}})
			var arts int
			var state wire.TaskState
			for ev, err := range client.SendStreamingMessage(b.Context(), &wire.SendMessageRequest{Tenant: testTenant, Message: msg}) {
				if err != nil {
					b.Fatal(err)
				}
				switch ev := ev.(type) {
				case *wire.TaskArtifactUpdateEvent:
					arts++
				case *wire.TaskStatusUpdateEvent:
					state = ev.Status.State
				}
			}
			if arts != 1 || state != wire.TaskStateCompleted {
				b.Fatalf("artifacts %d state %s", arts, state)
			}
		}
	})
}
