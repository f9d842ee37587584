package memstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wopinterop/wopinterop/interop"
)

func TestWatchBlocksForNewEventsAndEndsAtTerminal(t *testing.T) {
	s := newStore(t)
	sub := subject(tenantA, "alice")
	run := mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: FixtureApproval})
	seq, err := s.WatchRun(testCtx(t), sub, run.ID, -1)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan interop.RunEvent)
	ended := make(chan error, 1)
	go func() {
		for ev, err := range seq {
			if err != nil {
				ended <- err
				return
			}
			got <- ev
		}
		ended <- nil
	}()
	for _, want := range []interop.EventType{interop.EventRunStarted, interop.EventNodeSuspended} {
		if ev := <-got; ev.Type != want {
			t.Fatalf("event %s, want %s", ev.Type, want)
		}
	}
	// The watcher is now blocked on a suspended run: nothing more arrives
	// until the interrupt is resolved.
	select {
	case ev := <-got:
		t.Fatalf("unexpected event %+v while suspended", ev)
	case <-time.After(20 * time.Millisecond):
	}
	r, _ := s.GetRun(testCtx(t), sub, run.ID)
	in, _ := r.OpenInterrupt()
	if _, err := s.ResolveInterrupt(testCtx(t), sub, interop.ResolveRequest{RunID: run.ID, InterruptID: in.ID, Value: json.RawMessage(`{"action":"accept"}`)}); err != nil {
		t.Fatal(err)
	}
	for i, want := range []interop.EventType{interop.EventInterruptResolved, interop.EventRunCompleted} {
		ev := <-got
		if ev.Type != want || ev.Sequence != int64(i+2) {
			t.Fatalf("event %s #%d, want %s #%d", ev.Type, ev.Sequence, want, i+2)
		}
	}
	if err := <-ended; err != nil {
		t.Fatalf("watch ended with %v, want a clean end after the terminal event", err)
	}
}

func TestWatchResumesAfterSequence(t *testing.T) {
	s := newStore(t)
	sub := subject(tenantA, "alice")
	run := mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: FixtureNoop})
	all := events(t, s, sub, run.ID) // 0 started, 1 artifact, 2 completed
	tests := []struct {
		after int64
		want  []int64
	}{
		{after: -7, want: []int64{0, 1, 2}},
		{after: -1, want: []int64{0, 1, 2}},
		{after: 0, want: []int64{1, 2}},
		{after: 1, want: []int64{2}},
		{after: 2, want: nil},
		{after: 99, want: nil},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.after), func(t *testing.T) {
			seq, err := s.WatchRun(testCtx(t), sub, run.ID, tc.after)
			if err != nil {
				t.Fatal(err)
			}
			var got []int64
			for ev, err := range seq {
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(all[ev.Sequence], ev); diff != "" {
					t.Fatalf("event %d differs from the full read:\n%s", ev.Sequence, diff)
				}
				got = append(got, ev.Sequence)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("sequences (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWatchYieldsContextError(t *testing.T) {
	s := newStore(t)
	sub := subject(tenantA, "alice")
	run := mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: FixtureApproval})
	waitStatus(t, s, sub, run.ID, interop.StatusWaitingApproval)

	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	seq, err := s.WatchRun(ctx, sub, run.ID, -1)
	if err != nil {
		t.Fatal(err)
	}
	var got []interop.EventType
	var gotErr error
	for ev, err := range seq {
		if err != nil {
			gotErr = err
			continue // the sequence must end by itself after the error
		}
		got = append(got, ev.Type)
		if ev.Type == interop.EventNodeSuspended {
			cancel()
		}
	}
	if !errors.Is(gotErr, context.Canceled) {
		t.Fatalf("watch error %v, want context.Canceled", gotErr)
	}
	if diff := cmp.Diff([]interop.EventType{interop.EventRunStarted, interop.EventNodeSuspended}, got); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
	// A done context is refused before anything is read.
	if _, err := s.WatchRun(ctx, sub, run.ID, -1); !errors.Is(err, context.Canceled) {
		t.Fatalf("WatchRun on a done ctx: %v", err)
	}
}

func TestWatchersSeeEveryEventInOrderUnderLoad(t *testing.T) {
	s := newStore(t)
	sub := subject(tenantA, "alice")
	const chunks = 200
	register(t, s, tenantA, "chatty", func(ctx context.Context, rc *RunContext) (json.RawMessage, error) {
		for i := range chunks {
			if err := rc.PublishArtifact(interop.Artifact{ID: "log", Parts: []interop.Part{interop.TextPart(fmt.Sprint(i))}}, i > 0, i == chunks-1); err != nil {
				return nil, err
			}
		}
		return nil, nil
	})
	run := mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: "chatty"})
	const watchers = 16
	var wg sync.WaitGroup
	errs := make(chan error, watchers)
	for w := range watchers {
		wg.Go(func() {
			after := int64(w*13) - 1 // starts at different points, some before events exist
			seq, err := s.WatchRun(testCtx(t), sub, run.ID, after)
			if err != nil {
				errs <- err
				return
			}
			next := after + 1
			for ev, err := range seq {
				if err != nil {
					errs <- err
					return
				}
				if ev.Sequence != next {
					errs <- fmt.Errorf("watcher %d: got sequence %d, want %d", w, ev.Sequence, next)
					return
				}
				next++
			}
			if next != chunks+2 { // run.started + chunks + run.completed
				errs <- fmt.Errorf("watcher %d ended at %d", w, next)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestPollEvents(t *testing.T) {
	s := newStore(t)
	sub := subject(tenantA, "alice")
	run := mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: FixtureApproval})
	waitStatus(t, s, sub, run.ID, interop.StatusWaitingApproval)

	evs, snap, err := s.PollEvents(testCtx(t), sub, run.ID, -1, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]interop.EventType{interop.EventRunStarted, interop.EventNodeSuspended}, typesOf(evs)); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
	if snap.Status != interop.StatusWaitingApproval || snap.LastSequence != 1 {
		t.Fatalf("run with the events: %s last %d", snap.Status, snap.LastSequence)
	}

	// Nothing new: waits for the timeout and returns an empty list.
	start := time.Now()
	evs, snap, err = s.PollEvents(testCtx(t), sub, run.ID, 1, 30*time.Millisecond)
	if err != nil || len(evs) != 0 || evs == nil || snap.ID != run.ID {
		t.Fatalf("idle poll: %v events, run %q, err %v", evs, snap.ID, err)
	}
	if time.Since(start) < 30*time.Millisecond {
		t.Fatal("idle poll returned before its timeout")
	}

	// A poll that is waiting returns as soon as an event arrives.
	polled := make(chan []interop.RunEvent, 1)
	go func() {
		evs, _, _ := s.PollEvents(testCtx(t), sub, run.ID, 1, 10*time.Second)
		polled <- evs
	}()
	in, _ := snap.OpenInterrupt()
	if _, err := s.ResolveInterrupt(testCtx(t), sub, interop.ResolveRequest{RunID: run.ID, InterruptID: in.ID, Value: json.RawMessage(`{"action":"accept"}`)}); err != nil {
		t.Fatal(err)
	}
	if got := <-polled; len(got) == 0 || got[0].Type != interop.EventInterruptResolved {
		t.Fatalf("waiting poll got %v", typesOf(got))
	}

	// Terminal with nothing after: returns at once.
	all := events(t, s, sub, run.ID)
	start = time.Now()
	evs, snap, err = s.PollEvents(testCtx(t), sub, run.ID, all[len(all)-1].Sequence, 10*time.Second)
	if err != nil || len(evs) != 0 || snap.Status != interop.StatusCompleted || time.Since(start) > 5*time.Second {
		t.Fatalf("terminal poll: %v, %s, %v", evs, snap.Status, err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := s.PollEvents(ctx, sub, run.ID, -1, time.Second); !errors.Is(err, context.Canceled) {
		t.Fatalf("poll on a done ctx: %v", err)
	}
}

func TestAppendRunEvent(t *testing.T) {
	s := newStore(t)
	sub := subject(tenantA, "alice")
	run := mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: FixtureApproval})
	waitStatus(t, s, sub, run.ID, interop.StatusWaitingApproval)
	payload := json.RawMessage(`{"protocol":"a2a","outcome":"accepted"}`)
	if err := s.AppendRunEvent(testCtx(t), run.ID, interop.RunEvent{Type: interop.EventNegotiationDecided, Payload: payload, Sequence: 99, Status: interop.StatusCompleted}); err != nil {
		t.Fatal(err)
	}
	payload[0] = 'X'                                                     // the store kept its own copy
	payload = json.RawMessage(`{"protocol":"a2a","outcome":"accepted"}`) // for the refusals below
	got, _ := s.GetRun(testCtx(t), sub, run.ID)
	if got.Status != interop.StatusWaitingApproval || got.LastSequence != 2 {
		t.Fatalf("after audit event: %s last %d", got.Status, got.LastSequence)
	}
	evs, _, _ := s.PollEvents(testCtx(t), sub, run.ID, 1, time.Second)
	if len(evs) != 1 || evs[0].Type != interop.EventNegotiationDecided || evs[0].Sequence != 2 ||
		evs[0].Status != interop.StatusWaitingApproval || string(evs[0].Payload) != `{"protocol":"a2a","outcome":"accepted"}` {
		t.Fatalf("audit event = %+v", evs)
	}

	tests := []struct {
		name  string
		runID string
		ev    interop.RunEvent
		check func(t testing.TB, err error)
	}{
		{"empty type", run.ID, interop.RunEvent{}, func(t testing.TB, err error) { wantInputError(t, err, "type") }},
		{"lifecycle type", run.ID, interop.RunEvent{Type: interop.EventRunCompleted}, func(t testing.TB, err error) { wantInputError(t, err, "type") }},
		{"store-owned type", run.ID, interop.RunEvent{Type: interop.EventInterruptResolved}, func(t testing.TB, err error) { wantInputError(t, err, "type") }},
		{"store vendor type", run.ID, interop.RunEvent{Type: EventCancelRequested, Payload: payload}, func(t testing.TB, err error) { wantInputError(t, err, "type") }},
		{"unregistered lifecycle name", run.ID, interop.RunEvent{Type: "run.cancelling", Payload: payload}, func(t testing.TB, err error) { wantInputError(t, err, "type") }},
		{"reserved org", run.ID, interop.RunEvent{Type: "openwop.thing", Payload: payload}, func(t testing.TB, err error) { wantInputError(t, err, "type") }},
		{"no payload", run.ID, interop.RunEvent{Type: interop.EventNegotiationDecided}, func(t testing.TB, err error) { wantInputError(t, err, "payload") }},
		{"array payload", run.ID, interop.RunEvent{Type: interop.EventNegotiationDecided, Payload: json.RawMessage(`[1]`)}, func(t testing.TB, err error) { wantInputError(t, err, "payload") }},
		{"unknown run", tenantA + "/AAAAAAAAAAAAAAAAAAAAAAAAAA", interop.RunEvent{Type: interop.EventNegotiationDecided, Payload: payload}, func(t testing.TB, err error) { wantErrIs(t, err, interop.ErrNotFound) }},
		{"malformed id", "nope", interop.RunEvent{Type: interop.EventNegotiationDecided, Payload: payload}, func(t testing.TB, err error) { wantErrIs(t, err, interop.ErrNotFound) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.check(t, s.AppendRunEvent(testCtx(t), tc.runID, tc.ev))
			after, _ := s.GetRun(testCtx(t), sub, run.ID)
			if after.LastSequence != 2 {
				t.Fatal("refused append changed the log")
			}
		})
	}

	// The log of a terminal run is closed.
	if _, err := s.CancelRun(testCtx(t), sub, run.ID, ""); err != nil {
		t.Fatal(err)
	}
	final := events(t, s, sub, run.ID)
	err := s.AppendRunEvent(testCtx(t), run.ID, interop.RunEvent{Type: interop.EventNegotiationDecided, Payload: json.RawMessage(`{}`)})
	wantErrIs(t, err, interop.ErrRunTerminal)
	if after, _ := s.GetRun(testCtx(t), sub, run.ID); after.LastSequence != final[len(final)-1].Sequence {
		t.Fatal("append to a terminal run changed the log")
	}
}
