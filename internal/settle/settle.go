// Package settle waits for a run to settle, for the surfaces whose
// blocking calls answer a run's state: A2A's blocking SendMessage (settled
// is terminal or interrupted; OpenWOP interop map, a2a.operations) and
// MCP's tools/call (terminal or asking the caller for input, within
// BlockTimeout or TaskWait; OpenWOP interop map, mcp.methods). The surfaces
// disagree on what settled means, so the caller says it.
package settle

import (
	"context"
	"iter"
	"time"

	"github.com/wopinterop/wopinterop/interop"
)

// Store is the part of interop.RunStore a wait reads.
type Store interface {
	GetRun(ctx context.Context, s interop.Subject, runID string) (interop.Run, error)
	WatchRun(ctx context.Context, s interop.Subject, runID string, afterSequence int64) (iter.Seq2[interop.RunEvent, error], error)
}

// Wait says what one wait is for.
type Wait struct {
	// Settled reports a status the caller stops waiting at.
	Settled func(interop.RunStatus) bool
	// Limit bounds the wait; <= 0 answers the run as given.
	Limit time.Duration
	// Stop, when it ends (the surface drains), ends the wait early; nil
	// never does.
	Stop context.Context
}

// Error is a store call of the wait that failed; Op names it ("WaitRun",
// "WatchRun", "GetRun") for the surface's logs.
type Error struct {
	Op  string
	Err error
}

func (e *Error) Error() string { return "settle: " + e.Op + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Run waits until run's status is settled, w.Limit passes or w.Stop ends,
// and returns the run as it is then. A store that implements
// [interop.RunWaiter] is asked for the status alone ([waitStatus]);
// otherwise Run follows the run's event log from its LastSequence until an
// event's status is settled, then reads the run again. When the read finds the run not settled although
// its log grew — it moved on after the settled event, or the store ended
// the watch early — it follows again from there, within the same limit; a
// watch that ends without the log growing is not followed again, so a
// failing store cannot make it spin. A run already settled, or a wait
// without time, is returned as given, unread.
//
// It returns ctx.Err() once ctx ends (the caller went away), and an
// *Error when the store fails; a watch that ends because the wait's time
// is up, or w.Stop ended, is no failure.
func Run(ctx context.Context, store Store, sub interop.Subject, run interop.Run, w Wait) (interop.Run, error) {
	if w.Settled(run.Status) || w.Limit <= 0 {
		return run, nil
	}
	if waiter, ok := store.(interop.RunWaiter); ok {
		// The store checks the status before it waits: a run settled by
		// now is answered without arming the limit (bound).
		wctx := newBound(ctx, w.Stop, w.Limit)
		defer wctx.release()
		return waitStatus(ctx, wctx, waiter, store, sub, run, w.Settled)
	}
	wctx, cancel := context.WithTimeout(ctx, w.Limit)
	defer cancel()
	if w.Stop != nil {
		if w.Stop.Err() != nil {
			cancel()
		}
		defer context.AfterFunc(w.Stop, cancel)()
	}
	settled := w.Settled // the one value the loop body below captures
	for {
		after := run.LastSequence
		events, err := store.WatchRun(wctx, sub, run.ID, after)
		switch {
		case err == nil:
			// The body writes nothing it captures, so following costs no
			// allocation beyond the iterator's own.
			for ev, err := range events {
				if err != nil || settled(ev.Status) {
					break
				}
			}
		case wctx.Err() == nil:
			return run, &Error{Op: "WatchRun", Err: err}
		}
		if err := ctx.Err(); err != nil {
			return run, err
		}
		latest, err := store.GetRun(ctx, sub, run.ID)
		if err != nil {
			return run, &Error{Op: "GetRun", Err: err}
		}
		run = latest
		if w.Settled(run.Status) || wctx.Err() != nil || run.LastSequence <= after {
			return run, nil
		}
	}
}

// waitStatus is Run over a store's status-only wait. wctx is the wait's
// bounded context, ctx the caller's: when wctx ends first (time up,
// drained) the run is read once more and answered as it is.
func waitStatus(ctx, wctx context.Context, waiter interop.RunWaiter, store Store, sub interop.Subject, run interop.Run, settled func(interop.RunStatus) bool) (interop.Run, error) {
	latest, err := waiter.WaitRun(wctx, sub, run.ID, settled)
	switch {
	case err == nil:
		return latest, nil
	case ctx.Err() != nil:
		return run, ctx.Err()
	case wctx.Err() == nil:
		return run, &Error{Op: "WaitRun", Err: err}
	}
	latest, err = store.GetRun(ctx, sub, run.ID)
	if err != nil {
		return run, &Error{Op: "GetRun", Err: err}
	}
	return latest, nil
}
