package delegate

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/outbound"
)

// dialRefused is a send that never left this host.
var dialRefused = fmt.Errorf("failed to send HTTP request: %w",
	&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED})

// peerError is a peer refusal as a2a-go's client reports it.
func peerError(sentinel error) error { return fmt.Errorf("peer: %w", sentinel) }

// reconciled returns the reconciliation records of sink.
func reconciled(t *testing.T, sink *recordingSink) []map[string]any {
	t.Helper()
	return sink.payloads(t, EventReconciled)
}

func TestCancelledBeforeAdmission(t *testing.T) {
	t.Run("Delegate with a cancelled context", func(t *testing.T) {
		r := &fakeRemote{stream: streamOf(ev(task(wire.TaskStateCompleted)))}
		c, sink := testConn(r)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		out, err := c.Delegate(ctx, testStep())
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("error %v, want context.Canceled", err)
		}
		want := &Outcome{Status: interop.StatusCancelled, Reconciliation: outbound.CancelledBeforeAdmission}
		if diff := cmp.Diff(want, out); diff != "" {
			t.Errorf("Outcome (-want +got):\n%s", diff)
		}
		if sends, _, _, _ := r.counts(); sends != 0 {
			t.Errorf("sends = %d, want 0", sends)
		}
		if got := reconciled(t, sink); len(got) != 1 || !cmp.Equal(got[0], map[string]any{
			"protocol": "a2a", "reconciliation": "cancelled-before-admission", "status": "cancelled"}) {
			t.Errorf("records %v", got)
		}
	})
	t.Run("Cancel before anything was sent", func(t *testing.T) {
		r := &fakeRemote{}
		c, sink := testConn(r)
		for _, prev := range []*Outcome{nil, {}} {
			rec, err := c.Cancel(t.Context(), prev)
			if rec != outbound.CancelledBeforeAdmission || err != nil {
				t.Errorf("Cancel(%+v) = %q, %v; want cancelled-before-admission", prev, rec, err)
			}
		}
		if _, _, cancels, _ := r.counts(); cancels != 0 {
			t.Errorf("cancels = %d, want none", cancels)
		}
		if got := reconciled(t, sink); len(got) != 2 {
			t.Errorf("records %v, want one per cancel", got)
		}
	})
}

func TestCancelReadsBackRemoteCancelled(t *testing.T) {
	r := &fakeRemote{
		cancel: func(context.Context, int, *wire.CancelTaskRequest) (*wire.Task, error) {
			return task(wire.TaskStateWorking), nil
		},
		get: func(_ context.Context, n int, _ *wire.GetTaskRequest) (*wire.Task, error) {
			if n == 1 {
				return task(wire.TaskStateWorking), nil // the cancel is still taking effect
			}
			return task(wire.TaskStateCanceled), nil
		},
	}
	c, sink := testConn(r)
	rec, err := c.Cancel(t.Context(), &Outcome{AttemptID: "att_1", TaskID: testTask})
	if rec != outbound.RemoteCancelled || err != nil {
		t.Fatalf("Cancel = %q, %v; want remote-cancelled", rec, err)
	}
	if _, gets, cancels, _ := r.counts(); cancels != 1 || gets != 2 {
		t.Errorf("cancels=%d gets=%d, want one cancel read back until settled", cancels, gets)
	}
	if got := reconciled(t, sink); len(got) != 0 {
		t.Errorf("records %v for a verified state, want none", got)
	}
}

func TestCancelAcknowledgementAloneIsNotVerification(t *testing.T) {
	r := &fakeRemote{
		cancel: func(context.Context, int, *wire.CancelTaskRequest) (*wire.Task, error) {
			return task(wire.TaskStateCanceled), nil
		},
		get: getReturns(task(wire.TaskStateWorking)),
	}
	c, sink := testConn(r)
	rec, err := c.Cancel(t.Context(), &Outcome{AttemptID: "att_1", TaskID: testTask})
	if rec != outbound.CancelRequestedRemoteUnknown || !errors.Is(err, ErrRemoteUnknown) {
		t.Fatalf("Cancel = %q, %v; want cancel-requested-remote-unknown", rec, err)
	}
	if _, gets, cancels, _ := r.counts(); cancels != 2 || gets != 6 {
		t.Errorf("cancels=%d gets=%d, want 2 cancels each read back 3 times", cancels, gets)
	}
	if got := reconciled(t, sink); len(got) != 1 || !cmp.Equal(got[0], map[string]any{
		"protocol": "a2a", "attemptId": "att_1", "reconciliation": "cancel-requested-remote-unknown", "status": "running"}) {
		t.Errorf("records %v", got)
	}
}

func TestCancelRequestedRemoteUnknownWhenTheReadBackFails(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cancel error
	}{
		{"cancel acknowledged", nil},
		{"cancel lost", errors.New("connection reset")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &fakeRemote{
				cancel: func(context.Context, int, *wire.CancelTaskRequest) (*wire.Task, error) { return nil, tc.cancel },
				get: func(context.Context, int, *wire.GetTaskRequest) (*wire.Task, error) {
					return nil, errors.New("connection refused")
				},
			}
			c, sink := testConn(r)
			rec, err := c.Cancel(t.Context(), &Outcome{AttemptID: "att_1", TaskID: testTask})
			if rec != outbound.CancelRequestedRemoteUnknown || !errors.Is(err, ErrRemoteUnknown) {
				t.Fatalf("Cancel = %q, %v; want cancel-requested-remote-unknown", rec, err)
			}
			if got := reconciled(t, sink); len(got) != 1 || got[0]["reconciliation"] != "cancel-requested-remote-unknown" {
				t.Errorf("records %v", got)
			}
		})
	}
	t.Run("task not found", func(t *testing.T) {
		r := &fakeRemote{cancel: func(context.Context, int, *wire.CancelTaskRequest) (*wire.Task, error) {
			return nil, peerError(wire.ErrTaskNotFound)
		}}
		c, _ := testConn(r)
		rec, err := c.Cancel(t.Context(), &Outcome{AttemptID: "att_1", TaskID: testTask})
		if rec != outbound.CancelRequestedRemoteUnknown || !errors.Is(err, ErrRemoteUnknown) || !errors.Is(err, wire.ErrTaskNotFound) {
			t.Fatalf("Cancel = %q, %v", rec, err)
		}
	})
}

func TestCancelFindsTheTaskAlreadySettled(t *testing.T) {
	for _, tc := range []struct {
		state wire.TaskState
		want  outbound.Reconciliation
	}{
		{wire.TaskStateCompleted, outbound.CompletedBeforeCancel},
		{wire.TaskStateFailed, outbound.FailedPossibleEffect},
		{wire.TaskStateRejected, outbound.FailedNoEffect},
	} {
		t.Run(string(tc.state), func(t *testing.T) {
			r := &fakeRemote{
				cancel: func(context.Context, int, *wire.CancelTaskRequest) (*wire.Task, error) {
					return nil, peerError(wire.ErrTaskNotCancelable)
				},
				get: getReturns(task(tc.state)),
			}
			c, _ := testConn(r)
			rec, err := c.Cancel(t.Context(), &Outcome{AttemptID: "att_1", TaskID: testTask})
			if rec != tc.want || err != nil {
				t.Fatalf("Cancel = %q, %v; want %q", rec, err, tc.want)
			}
		})
	}
	t.Run("a direct reply", func(t *testing.T) {
		c, _ := testConn(&fakeRemote{})
		rec, err := c.Cancel(t.Context(), &Outcome{AttemptID: "att_1", Reply: agentText("hi")})
		if rec != outbound.CompletedBeforeCancel || err != nil {
			t.Fatalf("Cancel = %q, %v", rec, err)
		}
	})
	t.Run("no task named", func(t *testing.T) {
		c, _ := testConn(&fakeRemote{})
		rec, err := c.Cancel(t.Context(), &Outcome{AttemptID: "att_1"})
		if rec != outbound.FailedPossibleEffect || !errors.Is(err, ErrNoRemoteTask) {
			t.Fatalf("Cancel = %q, %v", rec, err)
		}
	})
}

func TestCompletedBeforeCancelKeepsTheResult(t *testing.T) {
	r := inputScript(agentText("which region?"))
	r.cancel = func(context.Context, int, *wire.CancelTaskRequest) (*wire.Task, error) {
		return nil, peerError(wire.ErrTaskNotCancelable)
	}
	r.get = getReturns(task(wire.TaskStateCompleted, textArtifact("a1", "done anyway")))
	c, sink := testConn(r)
	out, err := c.Delegate(t.Context(), testStep()) // no decider: the input request cancels
	if err != nil {
		t.Fatalf("Delegate: %v", err)
	}
	want := &Outcome{
		AttemptID: out.AttemptID, Attempts: 1, TaskID: testTask, ContextID: testContext,
		State: wire.TaskStateCompleted, Status: interop.StatusCompleted,
		Artifacts:      []*wire.Artifact{textArtifact("a1", "done anyway")},
		Acceptance:     AcceptancePendingVerification,
		Reconciliation: outbound.CompletedBeforeCancel,
	}
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("Outcome (-want +got):\n%s", diff)
	}
	if got := reconciled(t, sink); len(got) != 0 {
		t.Errorf("records %v for a verified state", got)
	}
}

func TestFailedNoEffectWhenThePeerRefusesBeforeExecution(t *testing.T) {
	for _, sentinel := range []error{wire.ErrInvalidParams, wire.ErrUnsupportedContentType, wire.ErrVersionNotSupported, wire.ErrUnauthenticated} {
		t.Run(sentinel.Error(), func(t *testing.T) {
			r := &fakeRemote{stream: streamOf(item{err: peerError(sentinel)})}
			c, sink := testConn(r, func(a *Admission) { a.Limits.Attempts = 3 })
			out, err := c.Delegate(t.Context(), testStep())
			if !errors.Is(err, sentinel) {
				t.Fatalf("error %v, want the peer's %v", err, sentinel)
			}
			want := &Outcome{AttemptID: out.AttemptID, Attempts: 1, Status: interop.StatusFailed, Reconciliation: outbound.FailedNoEffect}
			if diff := cmp.Diff(want, out); diff != "" {
				t.Errorf("Outcome (-want +got):\n%s", diff)
			}
			if sends, _, _, _ := r.counts(); sends != 1 {
				t.Errorf("sends = %d, want 1: a refusal would only be refused again", sends)
			}
			if got := reconciled(t, sink); len(got) != 1 || got[0]["reconciliation"] != "failed-no-effect" {
				t.Errorf("records %v", got)
			}
		})
	}
}

func TestFailedPossibleEffect(t *testing.T) {
	t.Run("send failed mid-request", func(t *testing.T) {
		r := &fakeRemote{stream: streamOf(item{err: peerError(wire.ErrInternalError)})}
		c, sink := testConn(r, func(a *Admission) { a.Limits.Attempts = 3 })
		out, err := c.Delegate(t.Context(), testStep())
		if !errors.Is(err, wire.ErrInternalError) || out.Reconciliation != outbound.FailedPossibleEffect || out.Status != interop.StatusFailed {
			t.Fatalf("Delegate = %+v, %v; want failed-possible-effect", out, err)
		}
		if sends, _, _, _ := r.counts(); sends != 1 {
			t.Errorf("sends = %d, want 1: without an idempotency contract a possible effect is never retried", sends)
		}
		if got := reconciled(t, sink); len(got) != 1 || got[0]["reconciliation"] != "failed-possible-effect" {
			t.Errorf("records %v", got)
		}
	})
	t.Run("remote task failed", func(t *testing.T) {
		r := &fakeRemote{stream: streamOf(ev(task(wire.TaskStateWorking, textArtifact("partial", "half"))), ev(statusEvent(wire.TaskStateFailed, agentText("boom"))))}
		c, sink := testConn(r)
		out, err := c.Delegate(t.Context(), testStep())
		if !errors.Is(err, ErrRemoteFailed) || errors.Is(err, ErrRemoteRejected) {
			t.Fatalf("error %v, want ErrRemoteFailed only", err)
		}
		if out.Status != interop.StatusFailed || out.Reconciliation != outbound.FailedPossibleEffect || out.Artifacts != nil {
			t.Errorf("outcome %+v, want failed-possible-effect without artifacts", out)
		}
		loss := sink.payloads(t, EventTranslationLoss)
		if len(loss) != 1 || !cmp.Equal(loss[0]["dropped"], map[string]any{"artifacts": 1.0, "messages": 1.0}) {
			t.Errorf("loss %v, want the failed task's artifact and status message counted", loss)
		}
	})
}

func TestLocalTimeoutIsNeverNothingHappened(t *testing.T) {
	for _, tc := range []struct {
		name   string
		remote func() *fakeRemote
		wantID bool
	}{
		{"the send never answers", func() *fakeRemote {
			return &fakeRemote{stream: func(ctx context.Context, _ int, _ *wire.SendMessageRequest) iter.Seq2[wire.Event, error] {
				return blockUntilDone(ctx)
			}}
		}, false},
		{"the stream stays open", func() *fakeRemote {
			return &fakeRemote{stream: func(ctx context.Context, _ int, _ *wire.SendMessageRequest) iter.Seq2[wire.Event, error] {
				return blockUntilDone(ctx, ev(task(wire.TaskStateWorking)))
			}}
		}, true},
		{"polling never settles", func() *fakeRemote {
			return &fakeRemote{
				send: func(context.Context, int, *wire.SendMessageRequest) (wire.SendMessageResult, error) {
					return task(wire.TaskStateSubmitted), nil
				},
				get: getReturns(task(wire.TaskStateWorking)),
			}
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.remote()
			c, sink := testConn(r, func(a *Admission) { a.Limits.Deadline = 200 * time.Millisecond; a.Limits.Attempts = 3 })
			c.Streaming = r.stream != nil
			start := time.Now()
			out, err := c.Delegate(t.Context(), testStep())
			if !errors.Is(err, ErrDeadline) || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("error %v, want ErrDeadline", err)
			}
			if elapsed := time.Since(start); elapsed > 2*time.Second {
				t.Errorf("took %v for a 200ms deadline", elapsed)
			}
			if out.Reconciliation != outbound.FailedPossibleEffect || out.AttemptID == "" || (out.TaskID != "") != tc.wantID {
				t.Errorf("outcome %+v, want failed-possible-effect with the attempt's ids", out)
			}
			sends, _, cancels, _ := r.counts()
			if sends != 1 || cancels != 0 {
				t.Errorf("sends=%d cancels=%d, want one send and the remote task left for the host to cancel", sends, cancels)
			}
			if got := reconciled(t, sink); len(got) != 1 || got[0]["reconciliation"] != "failed-possible-effect" {
				t.Errorf("records %v", got)
			}
		})
	}
}

func TestHostCancellingTheStepCancelsTheRemoteTask(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	r := &fakeRemote{
		stream: func(sctx context.Context, _ int, _ *wire.SendMessageRequest) iter.Seq2[wire.Event, error] {
			return func(yield func(wire.Event, error) bool) {
				if !yield(task(wire.TaskStateWorking), nil) {
					return
				}
				cancel()
				<-sctx.Done()
				yield(nil, sctx.Err())
			}
		},
		cancel: func(cctx context.Context, _ int, _ *wire.CancelTaskRequest) (*wire.Task, error) {
			if cctx.Err() != nil {
				return nil, cctx.Err()
			}
			return nil, nil
		},
		get: func(gctx context.Context, _ int, _ *wire.GetTaskRequest) (*wire.Task, error) {
			if gctx.Err() != nil {
				return nil, gctx.Err()
			}
			return task(wire.TaskStateCanceled), nil
		},
	}
	c, _ := testConn(r)
	out, err := c.Delegate(ctx, testStep())
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if out.Reconciliation != outbound.RemoteCancelled || out.Status != interop.StatusCancelled {
		t.Errorf("outcome %+v, want the remote task cancelled and verified", out)
	}
	if sends, _, cancels, _ := r.counts(); sends != 1 || cancels != 1 {
		t.Errorf("sends=%d cancels=%d", sends, cancels)
	}
}

func TestDisconnectedStillActiveNeverReplaysTheSend(t *testing.T) {
	lost := errors.New("connection reset by peer")
	r := &fakeRemote{
		stream: streamOf(ev(task(wire.TaskStateWorking)), item{err: lost}),
		subscribe: func(context.Context, int, *wire.SubscribeToTaskRequest) iter.Seq2[wire.Event, error] {
			return seqOf(item{err: lost})
		},
		get: func(context.Context, int, *wire.GetTaskRequest) (*wire.Task, error) { return nil, lost },
	}
	c, sink := testConn(r, func(a *Admission) { a.Limits.Attempts = 3; a.IdempotentSends = true })
	out, err := c.Delegate(t.Context(), testStep())
	if !errors.Is(err, ErrDisconnected) || !errors.Is(err, lost) {
		t.Fatalf("error %v, want ErrDisconnected", err)
	}
	want := &Outcome{
		AttemptID: out.AttemptID, Attempts: 1, TaskID: testTask, ContextID: testContext,
		State: wire.TaskStateWorking, Status: interop.StatusRunning, Reconciliation: outbound.DisconnectedStillActive,
	}
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("Outcome (-want +got):\n%s", diff)
	}
	sends, gets, _, subs := r.counts()
	if sends != 1 || subs != maxReadFailures || gets != maxReadFailures {
		t.Errorf("sends=%d subscribes=%d gets=%d, want one send and %d re-attach attempts", sends, subs, gets, maxReadFailures)
	}
	if s := r.subscribes[0]; s.ID != testTask || s.Tenant != testTenant {
		t.Errorf("subscribe request %+v", s)
	}
	if got := reconciled(t, sink); len(got) != 1 || got[0]["reconciliation"] != "disconnected-still-active" || got[0]["status"] != "running" {
		t.Errorf("records %v", got)
	}

	// Resume re-attaches later and finishes without sending again.
	r.subscribe = func(context.Context, int, *wire.SubscribeToTaskRequest) iter.Seq2[wire.Event, error] {
		return seqOf(ev(task(wire.TaskStateWorking)), ev(artifactEvent(textArtifact("a1", "late"), false, true)), ev(statusEvent(wire.TaskStateCompleted, nil)))
	}
	res, err := c.Resume(t.Context(), out, testStep())
	if err != nil {
		t.Fatalf("Resume: %v", err)
	}
	if res.Status != interop.StatusCompleted || res.AttemptID != out.AttemptID || len(res.Artifacts) != 1 || res.Reconciliation != "" {
		t.Errorf("resumed outcome %+v, want the same attempt completed", res)
	}
	if sends, _, _, _ := r.counts(); sends != 1 {
		t.Errorf("sends = %d after Resume, want still 1", sends)
	}
}

func TestLostStreamIsReattachedNotResent(t *testing.T) {
	for _, tc := range []struct {
		name      string
		subscribe func(context.Context, int, *wire.SubscribeToTaskRequest) iter.Seq2[wire.Event, error]
		get       func(context.Context, int, *wire.GetTaskRequest) (*wire.Task, error)
	}{
		{"by SubscribeToTask", func(context.Context, int, *wire.SubscribeToTaskRequest) iter.Seq2[wire.Event, error] {
			return seqOf(ev(task(wire.TaskStateWorking)), ev(statusEvent(wire.TaskStateCompleted, nil)))
		}, nil},
		{"by GetTask when the task settled meanwhile", func(context.Context, int, *wire.SubscribeToTaskRequest) iter.Seq2[wire.Event, error] {
			return seqOf(item{err: peerError(wire.ErrUnsupportedOperation)})
		}, getReturns(task(wire.TaskStateCompleted))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &fakeRemote{
				stream:    streamOf(ev(task(wire.TaskStateSubmitted)), item{err: errors.New("unexpected EOF")}),
				subscribe: tc.subscribe, get: tc.get,
			}
			c, _ := testConn(r, func(a *Admission) { a.Limits.Attempts = 3; a.IdempotentSends = true })
			out, err := c.Delegate(t.Context(), testStep())
			if err != nil || out.Status != interop.StatusCompleted {
				t.Fatalf("Delegate = %+v, %v; want completed", out, err)
			}
			if sends, _, _, subs := r.counts(); sends != 1 || subs != 1 {
				t.Errorf("sends=%d subscribes=%d, want the send once and one re-attach", sends, subs)
			}
		})
	}
}

func TestRetryOnlyWhenTheFailureProvesNoEffect(t *testing.T) {
	r := &fakeRemote{stream: func(_ context.Context, n int, _ *wire.SendMessageRequest) iter.Seq2[wire.Event, error] {
		if n == 1 {
			return seqOf(item{err: dialRefused})
		}
		return seqOf(ev(task(wire.TaskStateCompleted)))
	}}
	c, sink := testConn(r, func(a *Admission) { a.Limits.Attempts = 2 })
	out, err := c.Delegate(t.Context(), testStep())
	if err != nil {
		t.Fatalf("Delegate: %v", err)
	}
	sends, _, _, _ := r.counts()
	if sends != 2 || out.Attempts != 2 {
		t.Fatalf("sends=%d attempts=%d, want a retry", sends, out.Attempts)
	}
	first, second := r.sent(0).Message.ID, r.sent(1).Message.ID
	if first == second || !strings.HasPrefix(first, "att_") || second != out.AttemptID {
		t.Errorf("message ids %q then %q (outcome %q): a retry is a new attempt", first, second, out.AttemptID)
	}
	if got := reconciled(t, sink); len(got) != 0 {
		t.Errorf("records %v after a completed retry", got)
	}

	t.Run("budget spent", func(t *testing.T) {
		r := &fakeRemote{stream: streamOf(item{err: dialRefused})}
		c, sink := testConn(r, func(a *Admission) { a.Limits.Attempts = 2 })
		out, err := c.Delegate(t.Context(), testStep())
		if !errors.Is(err, syscall.ECONNREFUSED) || out.Reconciliation != outbound.FailedNoEffect || out.Attempts != 2 {
			t.Fatalf("Delegate = %+v, %v; want failed-no-effect after 2 attempts", out, err)
		}
		if sends, _, _, _ := r.counts(); sends != 2 {
			t.Errorf("sends = %d, want 2", sends)
		}
		if got := reconciled(t, sink); len(got) != 1 {
			t.Errorf("records %v, want one for the delegation", got)
		}
	})
	t.Run("default budget is one attempt", func(t *testing.T) {
		r := &fakeRemote{stream: streamOf(item{err: dialRefused})}
		c, _ := testConn(r)
		if _, err := c.Delegate(t.Context(), testStep()); err == nil {
			t.Fatal("want an error")
		}
		if sends, _, _, _ := r.counts(); sends != 1 {
			t.Errorf("sends = %d, want 1", sends)
		}
	})
}

func TestIdempotentPeerRetriesWithTheSameAttempt(t *testing.T) {
	r := &fakeRemote{
		send: func(_ context.Context, n int, _ *wire.SendMessageRequest) (wire.SendMessageResult, error) {
			if n == 1 {
				return nil, errors.New("unexpected HTTP status: 502 Bad Gateway")
			}
			return task(wire.TaskStateCompleted), nil
		},
	}
	c, _ := testConn(r, func(a *Admission) { a.Limits.Attempts = 2; a.IdempotentSends = true })
	c.Streaming = false
	out, err := c.Delegate(t.Context(), testStep())
	if err != nil {
		t.Fatalf("Delegate: %v", err)
	}
	if sends, _, _, _ := r.counts(); sends != 2 {
		t.Fatalf("sends = %d, want 2", sends)
	}
	if a, b := r.sent(0).Message.ID, r.sent(1).Message.ID; a != b || b != out.AttemptID {
		t.Errorf("message ids %q then %q: the peer's messageId deduplication covers the retry only with the same id", a, b)
	}
}

func TestDeadlineWhileTheHostDecidesIsATimeout(t *testing.T) {
	r := inputScript(agentText("which region?"))
	c, sink := testConn(r, func(a *Admission) { a.Limits.Deadline = 100 * time.Millisecond })
	step := testStep()
	step.Decide = func(ctx context.Context, _ InputRequest) (InputAnswer, error) {
		<-ctx.Done()
		return InputAnswer{}, ctx.Err()
	}
	out, err := c.Delegate(t.Context(), step)
	if !errors.Is(err, ErrDeadline) || out.Reconciliation != outbound.FailedPossibleEffect || out.Status != interop.StatusWaitingInput {
		t.Fatalf("Delegate = %+v, %v; want a timeout while waiting for input", out, err)
	}
	if sends, _, cancels, _ := r.counts(); sends != 1 || cancels != 0 {
		t.Errorf("sends=%d cancels=%d, want no answer and the task left for the host", sends, cancels)
	}
	if got := reconciled(t, sink); len(got) != 1 || got[0]["status"] != "waiting-input" {
		t.Errorf("records %v", got)
	}
}

// TestACancelRefusedWhileActiveIsSentAgain is the race a2a-go shows: a
// cancel that meets the end of an execution is refused as not cancelable
// while the task stays INPUT_REQUIRED.
func TestACancelRefusedWhileActiveIsSentAgain(t *testing.T) {
	var r *fakeRemote
	r = &fakeRemote{
		cancel: func(_ context.Context, n int, _ *wire.CancelTaskRequest) (*wire.Task, error) {
			if n == 1 {
				return nil, peerError(wire.ErrTaskNotCancelable)
			}
			return task(wire.TaskStateCanceled), nil
		},
		get: func(context.Context, int, *wire.GetTaskRequest) (*wire.Task, error) {
			if _, _, cancels, _ := r.counts(); cancels < 2 {
				return task(wire.TaskStateInputRequired), nil
			}
			return task(wire.TaskStateCanceled), nil
		},
	}
	c, _ := testConn(r)
	rec, err := c.Cancel(t.Context(), &Outcome{AttemptID: "att_1", TaskID: testTask})
	if rec != outbound.RemoteCancelled || err != nil {
		t.Fatalf("Cancel = %q, %v; want remote-cancelled", rec, err)
	}
	if _, _, cancels, _ := r.counts(); cancels != 2 {
		t.Errorf("cancels = %d, want 2", cancels)
	}
}
