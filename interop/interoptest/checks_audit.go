package interoptest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/wopinterop/wopinterop/interop"
)

// auditEventType is the vendor run-event type the audit-events check
// appends; the library appends negotiation.decided records the same way.
const auditEventType interop.EventType = "interoptest.audit-noted"

// checkAuditEvents appends an audit event through the store's
// interop.EventSink — what the negotiation Auditor does for an exchange
// that belongs to a run (OpenWOP interop.md §The audit event) — and holds
// the store to its contract: the event joins a live run's log at the next
// sequence with the run's status, which does not change; a finished run's
// log ends at its terminal event (ErrRunTerminal); an unknown run is
// ErrNotFound.
func checkAuditEvents(ctx context.Context, k *kit) error {
	sink, ok := k.s.(interop.EventSink)
	if !ok {
		return fmt.Errorf("%w: Harness.HostEvents is set but the store does not implement interop.EventSink", ErrInvalidHarness)
	}
	a := k.h.TenantA
	run, _, err := k.startSuspended(ctx, a, unique("ctx"))
	if err != nil {
		return err
	}
	payload := json.RawMessage(fmt.Sprintf(`{"marker":%q}`, unique("audit")))
	if err := sink.AppendRunEvent(ctx, run.ID, interop.RunEvent{
		Type: auditEventType, Payload: payload, SchemaVersion: 1, Timestamp: time.Now().UTC(),
	}); err != nil {
		return fmt.Errorf("AppendRunEvent on a live run: %w", err)
	}
	after, err := k.s.GetRun(ctx, a, run.ID)
	if err != nil {
		return fmt.Errorf("GetRun after AppendRunEvent: %w", err)
	}
	want := snap(run)
	want.LastSequence++
	if got := snap(after); !want.equal(got) {
		return fmt.Errorf("after AppendRunEvent the run is %v, want %v: one more event, nothing else changed", got, want)
	}
	seq, err := k.s.WatchRun(ctx, a, run.ID, run.LastSequence)
	if err != nil || seq == nil {
		return fmt.Errorf("WatchRun(%s, %d) = %v", run.ID, run.LastSequence, err)
	}
	stop, cancel := context.WithCancel(ctx)
	defer cancel()
	item, ok, err := next(ctx, drain(stop, seq), "the audit event")
	switch {
	case err != nil:
		return err
	case !ok:
		return errors.New("the watch after AppendRunEvent ended without the audit event")
	case item.err != nil:
		return fmt.Errorf("the watch after AppendRunEvent: %w", item.err)
	}
	ev := item.ev
	switch {
	case ev.Type != auditEventType || !sameJSON(ev.Payload, payload):
		return fmt.Errorf("the event after AppendRunEvent is %s %s, want the audit event %s %s", ev.Type, ev.Payload, auditEventType, payload)
	case ev.Sequence != run.LastSequence+1 || ev.RunID != run.ID || ev.EventID == "":
		return fmt.Errorf("the audit event has sequence %d, runId %q, eventId %q; want %d, %q and an id", ev.Sequence, ev.RunID, ev.EventID, run.LastSequence+1, run.ID)
	case ev.Status != run.Status:
		return fmt.Errorf("the audit event carries status %s, want the run's %s", ev.Status, run.Status)
	}
	if err := ev.Validate(); err != nil {
		return fmt.Errorf("the audit event is not a RunEventDoc: %w", err)
	}

	done, err := k.startCompleted(ctx, a, unique("ctx"), 1)
	if err != nil {
		return err
	}
	err = sink.AppendRunEvent(ctx, done[0].ID, interop.RunEvent{Type: auditEventType, Payload: payload, SchemaVersion: 1, Timestamp: time.Now().UTC()})
	if !errors.Is(err, interop.ErrRunTerminal) {
		return fmt.Errorf("AppendRunEvent on a completed run = %v, want ErrRunTerminal: its log ends at run.completed", err)
	}
	if err := k.unchanged(ctx, a, done[0], "AppendRunEvent on a completed run"); err != nil {
		return err
	}
	unknown := neverMinted(a.Tenant, 26)
	err = sink.AppendRunEvent(ctx, unknown, interop.RunEvent{Type: auditEventType, Payload: payload, SchemaVersion: 1, Timestamp: time.Now().UTC()})
	if !errors.Is(err, interop.ErrNotFound) {
		return fmt.Errorf("AppendRunEvent on a never-minted run = %v, want ErrNotFound", err)
	}
	return nil
}
