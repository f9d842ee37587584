package delegate

import (
	"context"
	"errors"
	"testing"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/outbound"
)

// TestSubmitHandsOff: Submit sends the one message with returnImmediately
// — never streamed, even on a streaming connection — returns the task as
// its answer shows it, and reads nothing more; Resume then follows the
// task without sending the message again.
func TestSubmitHandsOff(t *testing.T) {
	r := &fakeRemote{
		send: func(context.Context, int, *wire.SendMessageRequest) (wire.SendMessageResult, error) {
			return task(wire.TaskStateSubmitted), nil
		},
		get: func(context.Context, int, *wire.GetTaskRequest) (*wire.Task, error) {
			return task(wire.TaskStateCompleted, textArtifact("a1", "done")), nil
		},
	}
	c, sink := testConn(r)
	step := testStep()
	step.Poll = true
	out, err := c.Submit(t.Context(), step)
	if err != nil {
		t.Fatalf("Submit: %v", err)
	}
	want := &Outcome{
		AttemptID: out.AttemptID, Attempts: 1, TaskID: testTask, ContextID: testContext,
		State: wire.TaskStateSubmitted, Status: interop.StatusPending,
	}
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("Outcome (-want +got):\n%s", diff)
	}
	sends, gets, cancels, subs := r.counts()
	if sends != 1 || r.streamed[0] || gets != 0 || cancels != 0 || subs != 0 {
		t.Fatalf("sends=%d (streamed %v) gets=%d cancels=%d subscribes=%d, want one plain send and nothing else", sends, r.streamed, gets, cancels, subs)
	}
	if cfg := r.sent(0).Config; cfg == nil || !cfg.ReturnImmediately || r.sent(0).Message.ID != out.AttemptID {
		t.Errorf("send %+v, want returnImmediately and the attempt id as messageId", r.sent(0))
	}
	if len(sink.events) != 0 {
		t.Errorf("run events %+v for a hand-off, want none: nothing ended", sink.events)
	}

	done, err := c.Resume(t.Context(), out, step)
	if err != nil || done.Status != interop.StatusCompleted || len(done.Artifacts) != 1 || done.AttemptID != out.AttemptID {
		t.Fatalf("Resume: %v, %+v", err, done)
	}
	if sends, _, _, _ := r.counts(); sends != 1 {
		t.Fatalf("%d sends after Resume, want the one of Submit", sends)
	}
}

// TestSubmitSettledAnswers: an answer that already settles the task ends
// the Submit as it would end Delegate.
func TestSubmitSettledAnswers(t *testing.T) {
	for _, tc := range []struct {
		name    string
		answer  wire.SendMessageResult
		status  interop.RunStatus
		wantErr error
	}{
		{"completed", task(wire.TaskStateCompleted, textArtifact("a1", "done")), interop.StatusCompleted, nil},
		{"failed", task(wire.TaskStateFailed), interop.StatusFailed, ErrRemoteFailed},
		{"message", &wire.Message{ID: "m1", Role: wire.MessageRoleAgent, Parts: []*wire.Part{wire.NewTextPart("hi")}}, interop.StatusCompleted, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &fakeRemote{send: func(context.Context, int, *wire.SendMessageRequest) (wire.SendMessageResult, error) {
				return tc.answer, nil
			}}
			c, _ := testConn(r)
			out, err := c.Submit(t.Context(), testStep())
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) || out.Status != tc.status {
				t.Fatalf("%v, %+v; want %v and status %s", err, out, tc.wantErr, tc.status)
			}
			if tc.status == interop.StatusCompleted && out.Acceptance != AcceptancePendingVerification {
				t.Errorf("acceptance %q", out.Acceptance)
			}
		})
	}
}

// TestSubmitOneAttempt: a send the peer refused is not retried, whatever
// the attempt budget, and says it had no effect; a step the admission
// does not cover sends nothing.
func TestSubmitOneAttempt(t *testing.T) {
	r := &fakeRemote{send: func(context.Context, int, *wire.SendMessageRequest) (wire.SendMessageResult, error) {
		return nil, wire.ErrInvalidParams
	}}
	c, _ := testConn(r, func(a *Admission) { a.Limits.Attempts = 3 })
	out, err := c.Submit(t.Context(), testStep())
	if err == nil || out.Status != interop.StatusFailed || out.Reconciliation != outbound.FailedNoEffect {
		t.Fatalf("%v, %+v", err, out)
	}
	if sends, _, _, _ := r.counts(); sends != 1 {
		t.Fatalf("%d sends, want 1", sends)
	}
	step := testStep()
	step.Skill = "not-admitted"
	if out, err := c.Submit(t.Context(), step); out != nil || !errors.Is(err, ErrStepRefused) {
		t.Fatalf("%v, %+v; want the step refused", err, out)
	}
	if sends, _, _, _ := r.counts(); sends != 1 {
		t.Fatalf("%d sends, want still 1", sends)
	}
}
