package interoptest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wopinterop/wopinterop/interop"
)

// checkWaitRun holds a store that implements interop.RunWaiter to its
// contract: it answers a settled run as GetRun reads it, blocks while the
// run is not settled, returns a terminal run whatever settled says, ends
// with ctx, and answers a foreign run exactly as a never-minted one. A
// store without the extension has nothing to check.
func checkWaitRun(ctx context.Context, k *kit) error {
	waiter, ok := k.s.(interop.RunWaiter)
	if !ok {
		return nil
	}
	a, b := k.h.TenantA, k.h.TenantB
	suspendedOrTerminal := func(st interop.RunStatus) bool { return st.Terminal() || st.Suspended() }
	never := func(interop.RunStatus) bool { return false }

	// A suspended run, waited for from its creation.
	run, err := k.create(ctx, a, k.h.Approval, emptyInputs, unique("ctx"))
	if err != nil {
		return err
	}
	got, err := waiter.WaitRun(ctx, a, run.ID, suspendedOrTerminal)
	if err != nil {
		return fmt.Errorf("WaitRun(approval run, suspended or terminal): %w", err)
	}
	if got.Status != interop.StatusWaitingApproval || len(got.Interrupts) == 0 {
		return fmt.Errorf("WaitRun(approval run) = status %q with %d open interrupts; want waiting-approval with its interrupt", got.Status, len(got.Interrupts))
	}
	read, err := k.s.GetRun(ctx, a, run.ID)
	if err != nil {
		return fmt.Errorf("GetRun after WaitRun: %w", err)
	}
	if g, r := snap(got), snap(read); !g.equal(r) {
		return fmt.Errorf("WaitRun answered %v, GetRun reads %v", g, r)
	}

	// Isolation: another tenant's run is a never-minted one.
	foreignErr := func() error { _, err := waiter.WaitRun(ctx, b, run.ID, suspendedOrTerminal); return err }()
	if e := isNotFound("WaitRun by another tenant", foreignErr); e != nil {
		return e
	}
	for _, tenant := range []string{"", b.Tenant} {
		u, err := sameShape(run.ID, tenant)
		if err != nil {
			return err
		}
		_, unknownErr := waiter.WaitRun(ctx, b, u, suspendedOrTerminal)
		if e := isNotFound("WaitRun of a never-minted id", unknownErr); e != nil {
			return e
		}
		if diff := sameAnswer(foreignErr, unknownErr, idForms(run.ID), idForms(u)); diff != "" {
			return fmt.Errorf("WaitRun of another tenant's run answers unlike a never-minted id %s: %s", u, diff)
		}
	}

	// A live run that does not settle: the wait ends with its ctx.
	live, err := k.create(ctx, a, k.h.Cancellable, delayInputs(outlive), unique("ctx"))
	if err != nil {
		return err
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	got, err = waiter.WaitRun(short, a, live.ID, never)
	cancel()
	if ctx.Err() != nil {
		return fmt.Errorf("WaitRun(live run) did not return before the check's deadline")
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("WaitRun(live run, never settled) with an expiring ctx = status %q, %v; want context.DeadlineExceeded", got.Status, err)
	}
	// Cancelled from another goroutine while waited for: terminal ends the
	// wait although settled never holds.
	go func() {
		time.Sleep(10 * time.Millisecond)
		_, _ = k.s.CancelRun(ctx, a, live.ID, "interoptest-wait")
	}()
	got, err = waiter.WaitRun(ctx, a, live.ID, never)
	if err != nil {
		return fmt.Errorf("WaitRun(live run, never settled) across its cancellation: %w", err)
	}
	if got.Status != interop.StatusCancelled {
		return fmt.Errorf("WaitRun(live run, never settled) across its cancellation = status %q; want cancelled", got.Status)
	}
	return nil
}
