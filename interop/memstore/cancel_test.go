package memstore

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wopinterop/wopinterop/interop"
)

func TestCancelRunningRun(t *testing.T) {
	s := newStore(t)
	sub := subject(tenantA, "alice")
	run := mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: FixtureCancellable})
	got, err := s.CancelRun(testCtx(t), sub, run.ID, "no longer needed")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != interop.StatusCancelling && got.Status != interop.StatusCancelled {
		t.Fatalf("CancelRun returned %s", got.Status)
	}
	if got.CancelReason != "no longer needed" {
		t.Fatalf("CancelReason = %q", got.CancelReason)
	}
	evs := events(t, s, sub, run.ID)
	checkSequences(t, run.ID, evs)
	want := []interop.EventType{interop.EventRunStarted, EventCancelRequested, interop.EventRunCancelled}
	if diff := cmp.Diff(want, typesOf(evs)); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
	wantStatus := []interop.RunStatus{interop.StatusRunning, interop.StatusCancelling, interop.StatusCancelled}
	if diff := cmp.Diff(wantStatus, statusesOf(evs)); diff != "" {
		t.Fatalf("statuses (-want +got):\n%s", diff)
	}
	checkDocs(t, evs)
	for _, ev := range evs[1:] {
		if got := reasonOf(t, ev); got != "no longer needed" {
			t.Fatalf("%s reason %q", ev.Type, got)
		}
	}
}

func TestCancelSuspendedRunWithdrawsInterrupt(t *testing.T) {
	s := newStore(t)
	sub := subject(tenantA, "alice")
	run := mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: FixtureApproval})
	waitStatus(t, s, sub, run.ID, interop.StatusWaitingApproval)
	got, err := s.CancelRun(testCtx(t), sub, run.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Interrupts) != 0 {
		t.Fatalf("cancelling run still offers interrupts %+v", got.Interrupts)
	}
	evs := events(t, s, sub, run.ID)
	want := []interop.EventType{interop.EventRunStarted, interop.EventNodeSuspended, EventCancelRequested, interop.EventRunCancelled}
	if diff := cmp.Diff(want, typesOf(evs)); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
}

func TestCancelWinsOverCompletion(t *testing.T) {
	s := newStore(t)
	g := newGate()
	register(t, s, tenantA, "gate", func(ctx context.Context, rc *RunContext) (json.RawMessage, error) {
		g.started <- rc.RunID()
		<-g.release // ignores ctx on purpose: finishes "successfully" after the cancel
		return json.RawMessage(`{"done":true}`), nil
	})
	sub := subject(tenantA, "alice")
	run := mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: "gate"})
	<-g.started
	if _, err := s.CancelRun(testCtx(t), sub, run.ID, "late"); err != nil {
		t.Fatal(err)
	}
	g.release <- gateResult{}
	evs := events(t, s, sub, run.ID)
	last := evs[len(evs)-1]
	if last.Type != interop.EventRunCancelled || reasonOf(t, last) != "late" {
		t.Fatalf("last event %+v, want run.cancelled", last)
	}
	got, _ := s.GetRun(testCtx(t), sub, run.ID)
	if got.Output != nil {
		t.Fatalf("cancelled run kept output %s", got.Output)
	}
}

func TestCancelRefusalsAndRepeats(t *testing.T) {
	s := newStore(t)
	sub := subject(tenantA, "alice")

	done := mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: FixtureNoop})
	evs := events(t, s, sub, done.ID)
	_, err := s.CancelRun(testCtx(t), sub, done.ID, "too late")
	wantErrIs(t, err, interop.ErrRunTerminal)
	after, _ := s.GetRun(testCtx(t), sub, done.ID)
	if after.LastSequence != evs[len(evs)-1].Sequence || after.Status != interop.StatusCompleted || after.CancelReason != "" {
		t.Fatalf("refused cancel changed the run: %+v", after)
	}

	// A second cancel of a cancelling run returns it and appends nothing.
	g := newGate()
	register(t, s, tenantA, "stubborn", func(ctx context.Context, rc *RunContext) (json.RawMessage, error) {
		g.started <- rc.RunID()
		<-g.release
		return nil, nil
	})
	run := mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: "stubborn"})
	<-g.started
	first, err := s.CancelRun(testCtx(t), sub, run.ID, "one")
	if err != nil {
		t.Fatal(err)
	}
	second, err := s.CancelRun(testCtx(t), sub, run.ID, "two")
	if err != nil {
		t.Fatal(err)
	}
	if second.Status != interop.StatusCancelling || second.LastSequence != first.LastSequence || second.CancelReason != "one" {
		t.Fatalf("second cancel: %s last %d reason %q; first last %d", second.Status, second.LastSequence, second.CancelReason, first.LastSequence)
	}
	g.release <- gateResult{}
	evs = events(t, s, sub, run.ID)
	if last := evs[len(evs)-1]; last.Type != interop.EventRunCancelled || reasonOf(t, last) != "one" {
		t.Fatalf("last event %+v", last)
	}
	_, err = s.CancelRun(testCtx(t), sub, run.ID, "three")
	wantErrIs(t, err, interop.ErrRunTerminal)
}
