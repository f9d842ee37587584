package memstore

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"time"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/isolation"
)

// WatchRun follows a run's event log. Readability is checked now; the
// returned sequence then yields every event with Sequence > afterSequence
// in order and without gaps (a negative afterSequence starts at the first
// event), blocks for new ones, and ends right after the terminal event. If
// ctx is done first it yields (zero event, ctx.Err()) once and ends.
// Events are copies.
func (s *Store) WatchRun(ctx context.Context, sub interop.Subject, runID string, afterSequence int64) (iter.Seq2[interop.RunEvent, error], error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t := s.tenant(sub.Tenant)
	if t == nil {
		return nil, s.notFound.run
	}
	t.mu.RLock()
	rec := t.readableLocked(sub, runID)
	t.mu.RUnlock()
	if rec == nil {
		return nil, s.notFound.run
	}
	after := max(afterSequence, -1)
	return func(yield func(interop.RunEvent, error) bool) {
		for {
			if ctx.Err() != nil {
				yieldDone(ctx, yield)
				return
			}
			changed, more := rec.yieldAfter(&after, yield)
			if !more {
				return
			}
			if changed != nil {
				awaitChange(ctx, changed)
			}
		}
	}, nil
}

// The iterator of WatchRun stays on the stack of its consumer while it
// waits, for as long as the run is idle: it keeps its own frame small (what
// it yields is built in yieldAfter and yieldDone, the select is awaitChange's,
// none of them inlined), so that the runtime can shrink the stack of an
// idle stream's goroutine.

// yieldDone yields ctx's error, the last element of a watch.
//
//go:noinline
func yieldDone(ctx context.Context, yield func(interop.RunEvent, error) bool) {
	yield(interop.RunEvent{}, ctx.Err())
}

// awaitChange blocks until changed is closed or ctx is done.
//
//go:noinline
func awaitChange(ctx context.Context, changed <-chan struct{}) {
	select {
	case <-ctx.Done():
	case <-changed:
	}
}

// yieldAfter yields copies of the events after *after, advancing it, and
// returns the channel to wait on when there were none. more is false once
// the sequence ends: yield stopped it or the terminal event was yielded.
func (rec *runRecord) yieldAfter(after *int64, yield func(interop.RunEvent, error) bool) (changed <-chan struct{}, more bool) {
	log, changed := rec.logAfter(*after)
	first := int(*after + 1)
	for i := first; i < len(log.events); i++ {
		if !yield(rec.eventAt(log.events, log.payloads, i), nil) {
			return nil, false
		}
		*after = int64(i)
		if log.events[i].terminal() {
			return nil, false
		}
	}
	if len(log.events) > first {
		return nil, true
	}
	// terminal, and nothing left after *after: the sequence ends.
	return changed, changed != nil
}

// logAfter returns the log as it is now when it holds events with
// Sequence > after and, when it holds none, the channel closed by the
// next append (nil when the run is terminal, as no event will follow).
// The returned log aliases the run's: that is safe because the log is
// append-only and its entries and their payload bytes never change.
func (rec *runRecord) logAfter(after int64) (eventLog, <-chan struct{}) {
	t := rec.tenant
	t.mu.RLock()
	defer t.mu.RUnlock()
	if after+1 < int64(len(rec.log.events)) {
		return rec.log, nil
	}
	if rec.run.Status.Terminal() {
		return eventLog{}, nil
	}
	return eventLog{}, rec.waitChannel()
}

// PollEvents serves a REST poll endpoint: it returns the events with
// Sequence > after together with the run as of the last of them. When none
// is available yet it waits up to timeout for at least one (returning at
// once for a terminal run), then returns what it has, possibly nothing. An
// unreadable run is ErrNotFound; a done ctx returns ctx.Err().
func (s *Store) PollEvents(ctx context.Context, sub interop.Subject, runID string, after int64, timeout time.Duration) ([]interop.RunEvent, interop.Run, error) {
	if err := ctx.Err(); err != nil {
		return nil, interop.Run{}, err
	}
	t := s.tenant(sub.Tenant)
	if t == nil {
		return nil, interop.Run{}, s.notFound.run
	}
	t.mu.RLock()
	rec := t.readableLocked(sub, runID)
	t.mu.RUnlock()
	if rec == nil {
		return nil, interop.Run{}, s.notFound.run
	}
	after = max(after, -1)
	var timer *time.Timer
	for {
		events, run, changed := rec.snapshotAfter(after)
		if len(events) > 0 || changed == nil {
			return events, run, nil
		}
		if timer == nil {
			timer = time.NewTimer(timeout)
			defer timer.Stop()
		}
		select {
		case <-ctx.Done():
			return nil, interop.Run{}, ctx.Err()
		case <-timer.C:
			return []interop.RunEvent{}, run, nil
		case <-changed:
		}
	}
}

// snapshotAfter is eventsAfter plus a consistent copy of the run, with the
// events copied too.
func (rec *runRecord) snapshotAfter(after int64) ([]interop.RunEvent, interop.Run, <-chan struct{}) {
	t := rec.tenant
	t.mu.RLock()
	defer t.mu.RUnlock()
	run := cloneRun(&rec.run)
	if n := int64(len(rec.log.events)); after+1 < n {
		out := make([]interop.RunEvent, 0, n-after-1)
		for i := after + 1; i < n; i++ {
			out = append(out, rec.eventAt(rec.log.events, rec.log.payloads, int(i)))
		}
		return out, run, nil
	}
	if rec.run.Status.Terminal() {
		return []interop.RunEvent{}, run, nil
	}
	return nil, run, rec.waitChannel()
}

// AppendRunEvent appends an audit event (negotiation.decided and the like)
// to a run's log with the run's current status; the status does not
// change. EventID, RunID, Sequence and Timestamp are assigned here, and
// SchemaVersion when zero. The type must be valid ([interop.EventType.Valid])
// and the payload a JSON object; the lifecycle types the store writes
// itself (run.*, node.suspended, interrupt.resolved, artifact.created,
// [EventCancelRequested]) are refused with an *interop.InputError, as are
// events for a terminal run (interop.ErrRunTerminal): the log ends with its
// terminal event, and watchers rely on it. An unknown run is ErrNotFound.
func (s *Store) AppendRunEvent(ctx context.Context, runID string, ev interop.RunEvent) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	switch ev.Type {
	case interop.EventRunStarted, interop.EventNodeSuspended, interop.EventInterruptResolved,
		interop.EventArtifactCreated, EventCancelRequested, interop.EventRunCompleted,
		interop.EventRunFailed, interop.EventRunCancelled:
		return &interop.InputError{Field: "type", Reason: fmt.Sprintf("%s is written by the run store", ev.Type)}
	}
	if !ev.Type.Valid() {
		return &interop.InputError{Field: "type", Reason: "not a registered or vendor event type"}
	}
	if p := bytes.TrimSpace(ev.Payload); len(p) == 0 || p[0] != '{' || !json.Valid(p) {
		return &interop.InputError{Field: "payload", Reason: "must be a JSON object"}
	}
	// The sink is called by the library for runs its caller could read; the
	// id's own tenant segment locates the run.
	t := s.tenant(isolation.TenantOf(runID))
	if t == nil {
		return s.notFound.run
	}
	ev.NodeID, ev.CausationID, ev.Chunk = "", "", nil // the payload is copied on append
	t.mu.Lock()
	defer t.mu.Unlock()
	rec := t.runs[runID]
	if rec == nil {
		return s.notFound.run
	}
	if rec.run.Status.Terminal() {
		return fmt.Errorf("memstore: append %s: %w", ev.Type, interop.ErrRunTerminal)
	}
	rec.appendEventLocked(ev, s.now())
	return nil
}
