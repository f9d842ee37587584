package interoptest

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/wopinterop/wopinterop/interop"
)

func checkWatch(ctx context.Context, k *kit) error {
	a := k.h.TenantA
	contextID := unique("ctx")
	run, err := k.create(ctx, a, k.h.Approval, emptyInputs, contextID)
	if err != nil {
		return err
	}
	evs, err := k.watchThroughApproval(ctx, run.ID)
	if err != nil {
		return err
	}
	if err := k.checkLog(ctx, run.ID, evs); err != nil {
		return err
	}

	// Resuming from the middle yields exactly the tail; resuming from the
	// terminal event yields nothing and ends.
	for _, m := range []int{len(evs)/2 - 1, len(evs) - 1} {
		after := evs[m].Sequence
		seq, err := k.s.WatchRun(ctx, a, run.ID, after)
		if err != nil || seq == nil {
			return fmt.Errorf("WatchRun(%s, %d) of a terminal run = (sequence set %v, %v), want a sequence", run.ID, after, seq != nil, err)
		}
		stop, cancel := context.WithCancel(ctx)
		tail, err := collect(ctx, drain(stop, seq))
		cancel()
		if err != nil {
			return fmt.Errorf("WatchRun(%s, %d): %w", run.ID, after, err)
		}
		if !sameEvents(tail, evs[m+1:]) {
			return fmt.Errorf("WatchRun(%s, %d) yielded %s, want the tail %s", run.ID, after, describe(tail), describe(evs[m+1:]))
		}
	}

	seq, err := k.s.WatchRun(ctx, k.h.TenantB, run.ID, -1)
	if e := isNotFound("WatchRun by another tenant", err); e != nil {
		return e
	}
	if seq != nil {
		return errors.New("WatchRun by another tenant returned a sequence along with its error")
	}
	return k.watchEndsOnCancel(ctx)
}

// watchThroughApproval watches an Approval run from its start, resolves the
// interrupt once the watch has delivered node.suspended (so the rest must
// arrive live), and returns every event.
func (k *kit) watchThroughApproval(ctx context.Context, runID string) ([]interop.RunEvent, error) {
	a := k.h.TenantA
	seq, err := k.s.WatchRun(ctx, a, runID, -1)
	if err != nil {
		return nil, fmt.Errorf("WatchRun(%s, -1): %w", runID, err)
	}
	if seq == nil {
		return nil, fmt.Errorf("WatchRun(%s, -1) returned a nil sequence without error", runID)
	}
	stop, cancel := context.WithCancel(ctx)
	defer cancel()
	ch := drain(stop, seq)
	var evs []interop.RunEvent
	for len(evs) == 0 || evs[len(evs)-1].Type != interop.EventNodeSuspended {
		item, ok, err := next(ctx, ch, "node.suspended")
		switch {
		case err != nil:
			return nil, fmt.Errorf("%w (got %s)", err, describe(evs))
		case !ok:
			return nil, fmt.Errorf("watch ended before the run suspended: %s", describe(evs))
		case item.err != nil:
			return nil, fmt.Errorf("watch yielded an error after %s: %w", describe(evs), item.err)
		case item.ev.Terminal():
			return nil, fmt.Errorf("watch yielded %s before node.suspended: %s", item.ev.Type, describe(append(evs, item.ev)))
		}
		evs = append(evs, item.ev)
	}
	_, in, err := k.waitSuspended(ctx, a, runID)
	if err != nil {
		return nil, err
	}
	if _, err := k.accept(ctx, a, runID, in.ID); err != nil {
		return nil, fmt.Errorf("ResolveInterrupt during the watch: %w", err)
	}
	rest, err := collect(ctx, ch)
	evs = append(evs, rest...)
	if err != nil {
		return nil, fmt.Errorf("%w (got %s)", err, describe(evs))
	}
	return evs, nil
}

// checkLog checks a whole log read from sequence -1 of a completed Approval
// run.
func (k *kit) checkLog(ctx context.Context, runID string, evs []interop.RunEvent) error {
	if evs[0].Type != interop.EventRunStarted {
		return fmt.Errorf("first event of a fresh run is %s, want run.started: %s", evs[0].Type, describe(evs))
	}
	suspended, resolved := -1, -1
	for i, ev := range evs {
		if ev.Sequence != int64(i) {
			return fmt.Errorf("event %d has sequence %d; want consecutive sequences from 0: %s", i, ev.Sequence, describe(evs))
		}
		if ev.RunID != runID {
			return fmt.Errorf("event %d names run %q, want %q", ev.Sequence, ev.RunID, runID)
		}
		switch ev.Type {
		case interop.EventNodeSuspended:
			suspended = i
		case interop.EventInterruptResolved:
			resolved = i
		}
	}
	if suspended < 0 || resolved < suspended {
		return fmt.Errorf("log %s lacks node.suspended followed by interrupt.resolved", describe(evs))
	}
	last := evs[len(evs)-1]
	if last.Type != interop.EventRunCompleted || last.Status != interop.StatusCompleted {
		return fmt.Errorf("watch ended with %s (status %q), want run.completed at completed: %s", last.Type, last.Status, describe(evs))
	}
	run, err := k.s.GetRun(ctx, k.h.TenantA, runID)
	if err != nil {
		return fmt.Errorf("GetRun after the watch: %w", err)
	}
	if run.LastSequence != last.Sequence {
		return fmt.Errorf("GetRun.LastSequence = %d, but the watch ended at %d", run.LastSequence, last.Sequence)
	}
	return nil
}

func sameEvents(x, y []interop.RunEvent) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if x[i].Sequence != y[i].Sequence || x[i].EventID != y[i].EventID || x[i].Type != y[i].Type || x[i].Status != y[i].Status || !bytes.Equal(x[i].Payload, y[i].Payload) {
			return false
		}
	}
	return true
}

// watchEndsOnCancel watches a suspended run, cancels the watch's context and
// expects the sequence to yield ctx.Err() and end.
func (k *kit) watchEndsOnCancel(ctx context.Context) error {
	a := k.h.TenantA
	run, _, err := k.startSuspended(ctx, a, unique("ctx"))
	if err != nil {
		return err
	}
	// The run would otherwise stay suspended until the store is closed.
	defer func() { _, _ = k.s.CancelRun(context.WithoutCancel(ctx), a, run.ID, "interoptest-cleanup") }()

	watchCtx, cancelWatch := context.WithCancel(ctx)
	defer cancelWatch()
	seq, err := k.s.WatchRun(watchCtx, a, run.ID, -1)
	if err != nil || seq == nil {
		return fmt.Errorf("WatchRun of a suspended run = (sequence set %v, %v), want a sequence", seq != nil, err)
	}
	stop, cancel := context.WithCancel(ctx)
	defer cancel()
	ch := drain(stop, seq)
	for n := 0; ; n++ {
		item, ok, err := next(ctx, ch, "node.suspended of a suspended run")
		switch {
		case err != nil:
			return err
		case !ok:
			return fmt.Errorf("watch of a suspended run ended after %d events before its context was cancelled", n)
		case item.err != nil:
			return fmt.Errorf("watch of a suspended run yielded an error: %w", item.err)
		}
		if item.ev.Type == interop.EventNodeSuspended {
			break
		}
	}
	cancelWatch()
	var last error
	for {
		item, ok, err := next(ctx, ch, "the end of the watch after its context was cancelled")
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if last != nil {
			return fmt.Errorf("watch yielded more after reporting %v", last)
		}
		if item.err == nil {
			return fmt.Errorf("watch of a suspended run yielded %s after its context was cancelled", item.ev.Type)
		}
		last = item.err
	}
	if !errors.Is(last, context.Canceled) {
		return fmt.Errorf("watch ended on context cancellation yielding %v, want the context's error", last)
	}
	return nil
}
