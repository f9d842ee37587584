package interoptest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/wopinterop/wopinterop/interop"
)

// outlive is a Cancellable delay no check waits for: a run that does end on
// its own was not cancelled.
const outlive = 10 * 60 * 1000

func checkCancel(ctx context.Context, k *kit) error {
	a := k.h.TenantA
	contextID := unique("ctx")
	run, err := k.create(ctx, a, k.h.Cancellable, delayInputs(outlive), contextID)
	if err != nil {
		return err
	}
	if _, err := k.waitStatus(ctx, a, run.ID, interop.StatusRunning); err != nil {
		return err
	}
	reason := unique("reason")
	got, err := k.s.CancelRun(ctx, a, run.ID, reason)
	if err != nil {
		return fmt.Errorf("CancelRun of a running run: %w", err)
	}
	if got.ID != run.ID {
		return fmt.Errorf("CancelRun(%s) returned run %s", run.ID, got.ID)
	}
	if got.Status != interop.StatusCancelling && got.Status != interop.StatusCancelled {
		return fmt.Errorf("CancelRun returned the run at %q, want cancelling or cancelled", got.Status)
	}
	if got.CancelReason != reason {
		return fmt.Errorf("CancelRun returned CancelReason %q, want %q", got.CancelReason, reason)
	}
	final, err := k.waitStatus(ctx, a, run.ID, interop.StatusCancelled)
	if err != nil {
		return err
	}
	if final.CancelReason != reason {
		return fmt.Errorf("cancelled run has CancelReason %q, want %q", final.CancelReason, reason)
	}
	log, err := k.readLog(ctx, a, run.ID)
	if err != nil {
		return err
	}
	last := log[len(log)-1]
	if last.Type != interop.EventRunCancelled {
		return fmt.Errorf("log of the cancelled run is %s, want it to end with run.cancelled", describe(log))
	}
	var p interop.RunCancelled
	if err := last.DecodePayload(&p); err != nil || p.Reason != reason {
		return fmt.Errorf("run.cancelled payload %s does not carry the reason %q given to CancelRun", last.Payload, reason)
	}

	// Refused on terminal runs, appending nothing: cancelled and completed.
	done, err := k.startCompleted(ctx, a, contextID, 1)
	if err != nil {
		return err
	}
	for _, r := range []interop.Run{final, done[0]} {
		_, err := k.s.CancelRun(ctx, a, r.ID, unique("reason"))
		if err == nil {
			return fmt.Errorf("CancelRun of a %s run succeeded, want ErrRunTerminal", r.Status)
		}
		if !errors.Is(err, interop.ErrRunTerminal) {
			return fmt.Errorf("CancelRun of a %s run = %v, want ErrRunTerminal", r.Status, err)
		}
		if err := k.unchanged(ctx, a, r, "CancelRun of a "+string(r.Status)+" run"); err != nil {
			return err
		}
	}
	return nil
}

func (k *kit) accept(ctx context.Context, s interop.Subject, runID, interruptID string) (interop.Run, error) {
	return k.s.ResolveInterrupt(ctx, s, interop.ResolveRequest{
		RunID: runID, InterruptID: interruptID, Outcome: interop.OutcomeAccept, Value: json.RawMessage(acceptValue),
	})
}

func checkResolveAtMostOnce(ctx context.Context, k *kit) error {
	a := k.h.TenantA
	run, in, err := k.startSuspended(ctx, a, unique("ctx"))
	if err != nil {
		return err
	}
	errs := make([]error, concurrentCallers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range concurrentCallers {
		wg.Go(func() {
			<-start
			_, errs[i] = k.accept(ctx, a, run.ID, in.ID)
		})
	}
	close(start)
	wg.Wait()
	succeeded := 0
	for _, err := range errs {
		switch {
		case err == nil:
			succeeded++
		case !errors.Is(err, interop.ErrAlreadyResolved):
			return fmt.Errorf("a concurrent ResolveInterrupt of one interrupt = %v, want success or ErrAlreadyResolved", err)
		}
	}
	if succeeded != 1 {
		return fmt.Errorf("%d of %d concurrent ResolveInterrupt calls of one interrupt succeeded, want exactly 1", succeeded, concurrentCallers)
	}
	final, err := k.waitStatus(ctx, a, run.ID, interop.StatusCompleted)
	if err != nil {
		return err
	}
	log, err := k.readLog(ctx, a, run.ID)
	if err != nil {
		return err
	}
	resolved := 0
	for _, ev := range log {
		if ev.Type == interop.EventInterruptResolved {
			resolved++
			if got := interruptOf(ev); got != in.ID {
				return fmt.Errorf("interrupt.resolved event %d names interrupt %q, want %q", ev.Sequence, got, in.ID)
			}
		}
	}
	if resolved != 1 {
		return fmt.Errorf("log holds %d interrupt.resolved events after concurrent resolution, want exactly 1: %s", resolved, describe(log))
	}

	// A later attempt is refused the same way and changes nothing.
	_, err = k.accept(ctx, a, run.ID, in.ID)
	if err == nil || !errors.Is(err, interop.ErrAlreadyResolved) {
		return fmt.Errorf("ResolveInterrupt of a resolved interrupt = %v, want ErrAlreadyResolved", err)
	}
	return k.unchanged(ctx, a, final, "a repeated ResolveInterrupt")
}

func checkResolveEligibility(ctx context.Context, k *kit) error {
	a := k.h.TenantA
	run, in, err := k.startSuspended(ctx, a, unique("ctx"))
	if err != nil {
		return err
	}
	_, err = k.accept(ctx, k.h.NonApprover, run.ID, in.ID)
	if err == nil || !errors.Is(err, interop.ErrNotEligible) {
		return fmt.Errorf("ResolveInterrupt by a non-approver = %v, want ErrNotEligible", err)
	}
	if err := k.unchanged(ctx, a, run, "ResolveInterrupt by a non-approver"); err != nil {
		return err
	}
	if _, err := k.accept(ctx, a, run.ID, in.ID); err != nil {
		return fmt.Errorf("ResolveInterrupt by an approver after a non-approver's attempt: %w", err)
	}
	_, err = k.waitStatus(ctx, a, run.ID, interop.StatusCompleted)
	return err
}

func checkRefuseBadResolution(ctx context.Context, k *kit) error {
	a := k.h.TenantA
	run, in, err := k.startSuspended(ctx, a, unique("ctx"))
	if err != nil {
		return err
	}
	unknownInterrupt, err := sameShape(in.ID, "")
	if err != nil {
		return err
	}
	cases := []struct {
		what string
		req  interop.ResolveRequest
		want error
	}{
		{"a resume value naming no offered action", interop.ResolveRequest{
			RunID: run.ID, InterruptID: in.ID, Outcome: interop.OutcomeAccept,
			Value: json.RawMessage(`{"action":"interoptest-no-such-action"}`),
		}, interop.ErrInvalidInput},
		{"an interrupt never issued on the run", interop.ResolveRequest{
			RunID: run.ID, InterruptID: unknownInterrupt, Outcome: interop.OutcomeAccept,
			Value: json.RawMessage(acceptValue),
		}, interop.ErrNotFound},
	}
	for _, c := range cases {
		_, err := k.s.ResolveInterrupt(ctx, a, c.req)
		if err == nil || !errors.Is(err, c.want) {
			return fmt.Errorf("ResolveInterrupt with %s = %v, want %v", c.what, err, c.want)
		}
		if err := k.unchanged(ctx, a, run, "ResolveInterrupt with "+c.what); err != nil {
			return err
		}
	}
	if _, err := k.accept(ctx, a, run.ID, in.ID); err != nil {
		return fmt.Errorf("ResolveInterrupt with a valid value after refused ones: %w", err)
	}
	_, err = k.waitStatus(ctx, a, run.ID, interop.StatusCompleted)
	return err
}
