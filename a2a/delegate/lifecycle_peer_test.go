package delegate

import (
	"context"
	"fmt"
	"iter"
	"log/slog"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/google/go-cmp/cmp"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/outbound"
)

// askingAgent is an a2a-go agent that asks which region to use, then
// returns one artifact naming it and completes. It records what reached
// it, so the test sees the wire through the peer's eyes.
type askingAgent struct {
	mu       sync.Mutex
	messages []*wire.Message
	tenants  []string
	cancels  int
}

func (a *askingAgent) Execute(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[wire.Event, error] {
	a.mu.Lock()
	a.messages = append(a.messages, ec.Message)
	a.tenants = append(a.tenants, ec.Tenant)
	a.mu.Unlock()
	return func(yield func(wire.Event, error) bool) {
		if ec.StoredTask == nil {
			if !yield(wire.NewSubmittedTask(ec, ec.Message), nil) {
				return
			}
			ask := wire.NewMessageForTask(wire.MessageRoleAgent, ec, wire.NewTextPart("which region?"))
			yield(wire.NewStatusUpdateEvent(ec, wire.TaskStateInputRequired, ask), nil)
			return
		}
		if !yield(wire.NewStatusUpdateEvent(ec, wire.TaskStateWorking, nil), nil) {
			return
		}
		art := wire.NewArtifactEvent(ec, wire.NewTextPart("deployed to "+ec.Message.Parts[0].Text()))
		art.LastChunk = true
		if !yield(art, nil) {
			return
		}
		yield(wire.NewStatusUpdateEvent(ec, wire.TaskStateCompleted, nil), nil)
	}
}

func (a *askingAgent) Cancel(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[wire.Event, error] {
	a.mu.Lock()
	a.cancels++
	a.mu.Unlock()
	return func(yield func(wire.Event, error) bool) {
		yield(wire.NewStatusUpdateEvent(ec, wire.TaskStateCanceled, nil), nil)
	}
}

// realPeer serves agent with a2a-go's own JSON-RPC stack and returns a
// Conn over a2a-go's a2aclient, assembled the way Connect will.
func askingPeer(t *testing.T, agent *askingAgent, streaming bool) (*Conn, *recordingSink) {
	t.Helper()
	srv := httptest.NewServer(a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(agent, a2asrv.WithLogger(slog.New(slog.DiscardHandler)))))
	t.Cleanup(srv.Close)
	iface := wire.NewAgentInterface(srv.URL, wire.TransportProtocolJSONRPC)
	client, err := a2aclient.NewFromEndpoints(t.Context(), []*wire.AgentInterface{iface})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Destroy() })
	c, sink := testConn(client)
	c.Streaming = streaming
	return c, sink
}

func TestDelegateToAnA2AGoAgent(t *testing.T) {
	for _, tc := range []struct {
		name      string
		streaming bool
	}{{"streaming", true}, {"polling", false}} {
		t.Run(tc.name, func(t *testing.T) {
			agent := &askingAgent{}
			c, _ := askingPeer(t, agent, tc.streaming)
			var asked []string
			rounds := 0
			step := testStep()
			step.Decide = func(_ context.Context, req InputRequest) (InputAnswer, error) {
				rounds = req.Round
				if req.Round > 1 && !req.PreviousAnswerFailed {
					t.Errorf("asked again in round %d without a failed answer", req.Round)
				}
				for _, p := range req.Parts {
					asked = append(asked, p.Text())
				}
				return InputAnswer{Parts: []*wire.Part{wire.NewTextPart("eu-west")}}, nil
			}
			ctx := WithTraceContext(t.Context(), interop.TraceContext{TraceParent: testParent})
			out, err := c.Delegate(ctx, step)
			if err != nil {
				t.Fatalf("Delegate: %v", err)
			}
			if out.Status != interop.StatusCompleted || out.Acceptance != AcceptancePendingVerification || out.TaskID == "" || out.ContextID == "" {
				t.Fatalf("outcome %+v, want completed, pending verification, with the remote ids", out)
			}
			if len(out.Artifacts) != 1 || out.Artifacts[0].Parts[0].Text() != "deployed to eu-west" {
				t.Fatalf("artifacts %+v, want the one the answer produced", out.Artifacts)
			}
			// a2a-go may refuse an answer that arrives before the execution
			// that asked has wound down ("task execution is already in
			// progress", -32603): the request is still open, so the host
			// decides again.
			if rounds < 1 || rounds > 2 || len(asked) != rounds || asked[0] != "which region?" || asked[rounds-1] != "which region?" {
				t.Errorf("decider saw %q in %d rounds", asked, rounds)
			}

			agent.mu.Lock()
			defer agent.mu.Unlock()
			if len(agent.messages) != 2 {
				t.Fatalf("the agent received %d messages, want the step and one answer", len(agent.messages))
			}
			first, answer := agent.messages[0], agent.messages[1]
			if first.ID != out.AttemptID || first.Metadata["skillId"] != stepSkill {
				t.Errorf("first message id %q metadata %v", first.ID, first.Metadata)
			}
			if ow, _ := first.Metadata["openwop"].(map[string]any); ow["traceparent"] != testParent {
				t.Errorf("metadata.openwop %v, want the run's traceparent", first.Metadata["openwop"])
			}
			if d, _ := first.Parts[0].Data().(map[string]any); d["text"] != "hello" {
				t.Errorf("inputs arrived as %#v", first.Parts[0].Content)
			}
			if answer.ID != fmt.Sprintf("%s-input-%d", out.AttemptID, rounds) || answer.TaskID != out.TaskID || answer.ContextID != out.ContextID {
				t.Errorf("answer %q on task %q context %q", answer.ID, answer.TaskID, answer.ContextID)
			}
			if diff := cmp.Diff([]string{testTenant, testTenant}, agent.tenants); diff != "" {
				t.Errorf("tenants the agent saw (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCancelAnA2AGoAgentsTask(t *testing.T) {
	agent := &askingAgent{}
	c, sink := askingPeer(t, agent, true)
	out, err := c.Delegate(t.Context(), testStep()) // no decider: the question cancels the task
	if err == nil || out.Reconciliation != outbound.RemoteCancelled || out.State != wire.TaskStateCanceled {
		t.Fatalf("Delegate = %+v, %v; want the task cancelled and verified", out, err)
	}
	agent.mu.Lock()
	cancels, messages := agent.cancels, len(agent.messages)
	agent.mu.Unlock()
	// a2a-go may refuse a cancel that races the end of the execution
	// (ErrTaskNotCancelable while the task stays INPUT_REQUIRED); the
	// read-back sees it active and the cancel is sent again.
	if cancels < 1 || cancels > cancelAttempts || messages != 1 {
		t.Errorf("agent saw %d cancels and %d messages, want 1–%d cancels and 1 message (no automatic reply)", cancels, messages, cancelAttempts)
	}
	if n := len(sink.ofType(EventReconciled)); n != 0 {
		t.Errorf("%d reconciliation records for a verified cancel", n)
	}

	// Cancelling it again finds it cancelled: a2a-go refuses the cancel
	// as not cancelable and the read-back verifies.
	ctx, stop := context.WithTimeout(t.Context(), 5*time.Second)
	defer stop()
	rec, err := c.Cancel(ctx, out)
	if rec != outbound.RemoteCancelled || err != nil {
		t.Errorf("second Cancel = %q, %v; want remote-cancelled", rec, err)
	}
}
