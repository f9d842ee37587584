package interoptest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/wopinterop/wopinterop/interop"
)

// checkEventDocuments reads the logs of a completed, a resolved and a
// cancelled run and holds every event to the RunEventDoc contract: the
// envelope and the payloads the library and OpenWOP clients read.
func checkEventDocuments(ctx context.Context, k *kit) error {
	a := k.h.TenantA
	seen := map[string]string{} // eventId → where it was seen

	// A run that completes on its own.
	noop, err := k.create(ctx, a, k.h.Noop, emptyInputs, unique("ctx"))
	if err != nil {
		return err
	}
	done, err := k.waitStatus(ctx, a, noop.ID, interop.StatusCompleted)
	if err != nil {
		return err
	}
	log, err := k.readLog(ctx, a, noop.ID)
	if err != nil {
		return err
	}
	if err := checkDocs(log, noop.ID, seen); err != nil {
		return err
	}
	var started interop.RunStarted
	if err := log[0].DecodePayload(&started); err != nil || log[0].Type != interop.EventRunStarted {
		return fmt.Errorf("first event of a run is %s with payload %s, want run.started", log[0].Type, log[0].Payload)
	}
	if started.WorkflowID != k.h.Noop || started.Transport != interop.TransportA2A {
		return fmt.Errorf("run.started payload %s, want workflowId %q and transport %q (the CreateRun request's)", log[0].Payload, k.h.Noop, interop.TransportA2A)
	}
	last := log[len(log)-1]
	var completed interop.RunCompleted
	if err := last.DecodePayload(&completed); err != nil || last.Type != interop.EventRunCompleted {
		return fmt.Errorf("log of a completed run ends with %s (payload %s), want run.completed", last.Type, last.Payload)
	}
	if !sameJSON(completed.Outputs, interop.OutputsOf(done.Output)) {
		return fmt.Errorf("run.completed outputs %s, want the run's output as an outputs object %s", completed.Outputs, interop.OutputsOf(done.Output))
	}

	// A run that suspends and is resolved: both interrupt events name the
	// node and the interrupt the run showed.
	run, in, err := k.startSuspended(ctx, a, unique("ctx"))
	if err != nil {
		return err
	}
	if _, err := k.accept(ctx, a, run.ID, in.ID); err != nil {
		return fmt.Errorf("ResolveInterrupt: %w", err)
	}
	if _, err := k.waitStatus(ctx, a, run.ID, interop.StatusCompleted); err != nil {
		return err
	}
	if log, err = k.readLog(ctx, a, run.ID); err != nil {
		return err
	}
	if err := checkDocs(log, run.ID, seen); err != nil {
		return err
	}
	for _, typ := range []interop.EventType{interop.EventNodeSuspended, interop.EventInterruptResolved} {
		i := slices.IndexFunc(log, func(ev interop.RunEvent) bool { return ev.Type == typ })
		if i < 0 {
			return fmt.Errorf("log of a resolved run %s has no %s", describe(log), typ)
		}
		var p interop.NodeSuspended // interrupt.resolved shares these members
		if err := log[i].DecodePayload(&p); err != nil {
			return err
		}
		if p.InterruptID != in.ID || (in.NodeID != "" && p.NodeID != in.NodeID) || log[i].NodeID != p.NodeID {
			return fmt.Errorf("%s names node %q (envelope %q) and interrupt %q, want node %q and interrupt %q", typ, p.NodeID, log[i].NodeID, p.InterruptID, in.NodeID, in.ID)
		}
	}

	// A cancelled run: run.cancelled carries the reason.
	cancellable, err := k.create(ctx, a, k.h.Cancellable, delayInputs(600000), unique("ctx"))
	if err != nil {
		return err
	}
	reason := unique("reason")
	if _, err := k.s.CancelRun(ctx, a, cancellable.ID, reason); err != nil {
		return fmt.Errorf("CancelRun: %w", err)
	}
	if _, err := k.waitStatus(ctx, a, cancellable.ID, interop.StatusCancelled); err != nil {
		return err
	}
	if log, err = k.readLog(ctx, a, cancellable.ID); err != nil {
		return err
	}
	if err := checkDocs(log, cancellable.ID, seen); err != nil {
		return err
	}
	var cancelled interop.RunCancelled
	last = log[len(log)-1]
	if err := last.DecodePayload(&cancelled); err != nil || last.Type != interop.EventRunCancelled || cancelled.Reason != reason {
		return fmt.Errorf("log of a cancelled run ends with %s (payload %s), want run.cancelled with reason %q", last.Type, last.Payload, reason)
	}
	return nil
}

// checkDocs validates every event of one run's log and that event ids are
// unique across every log seen so far.
func checkDocs(log []interop.RunEvent, runID string, seen map[string]string) error {
	for i, ev := range log {
		if err := ev.Validate(); err != nil {
			return fmt.Errorf("event %d of %s: %w", i, describe(log), err)
		}
		if ev.RunID != runID {
			return fmt.Errorf("event %d names run %q, want %q", ev.Sequence, ev.RunID, runID)
		}
		if i > 0 && ev.Timestamp.Before(log[i-1].Timestamp) {
			return fmt.Errorf("event %d is timestamped before event %d", ev.Sequence, log[i-1].Sequence)
		}
		where := fmt.Sprintf("%s event %d", runID, ev.Sequence)
		if prev, dup := seen[ev.EventID]; dup {
			return fmt.Errorf("eventId %q of %s was already used by %s", ev.EventID, where, prev)
		}
		seen[ev.EventID] = where
	}
	return nil
}

// sameJSON compares two JSON documents byte for byte after compaction.
func sameJSON(x, y json.RawMessage) bool {
	var bx, by bytes.Buffer
	if json.Compact(&bx, x) != nil || json.Compact(&by, y) != nil {
		return false
	}
	return bytes.Equal(bx.Bytes(), by.Bytes())
}

// hostEventType is the vendor host-event type the host-events check
// publishes.
const hostEventType = "interoptest.probe"

// checkHostEvents subscribes in two tenants and two workspaces, publishes
// durable and ephemeral events of every scope, and holds each subscriber
// to exactly what it may see (events.md §Host events).
func checkHostEvents(ctx context.Context, k *kit) error {
	sink, ok := k.s.(interop.EventSink)
	feed, ok2 := k.s.(interop.HostEventFeed)
	if !ok || !ok2 {
		return fmt.Errorf("%w: Harness.HostEvents is set but the store does not implement interop.EventSink and interop.HostEventFeed", ErrInvalidHarness)
	}
	ta, tb := k.h.TenantA.Tenant, k.h.TenantB.Tenant
	w1, w2 := unique("ws"), unique("ws")
	subCtx, stop := context.WithCancel(ctx)
	defer stop()

	type sub struct {
		name, tenant, workspace string
		want                    []string
		got                     []string
		err                     error
	}
	subs := []*sub{
		{name: "tenant-wide subscriber of A", tenant: ta, want: []string{"a-tenant-wide"}},
		{name: "subscriber of A's workspace 1", tenant: ta, workspace: w1, want: []string{"a-tenant-wide", "a-ws1-durable", "a-ws1-ephemeral"}},
		{name: "subscriber of A's workspace 2", tenant: ta, workspace: w2, want: []string{"a-tenant-wide", "a-ws2-durable"}},
		{name: "tenant-wide subscriber of B", tenant: tb, want: []string{"b-tenant-wide"}},
	}
	marker := unique("marker")
	ids := map[string]string{}
	var wg sync.WaitGroup
	for _, s := range subs {
		seq := feed.SubscribeHostEvents(subCtx, s.tenant, s.workspace, "")
		wg.Go(func() {
			s.got, s.err = readHostEvents(subCtx, seq, marker)
		})
	}
	publish := func(tenant, workspace, name string, d interop.Delivery) error {
		id := unique("hev")
		ids[name] = id
		ev := interop.HostEvent{
			EventID: id, Type: hostEventType, Delivery: d, WorkspaceID: workspace,
			Payload: json.RawMessage(fmt.Sprintf(`{"marker":%q,"name":%q}`, marker, name)),
		}
		if err := sink.PublishHostEvent(ctx, tenant, ev); err != nil {
			return fmt.Errorf("PublishHostEvent(%s, %s): %w", tenant, name, err)
		}
		return nil
	}
	steps := []struct {
		tenant, workspace, name string
		d                       interop.Delivery
	}{
		{ta, "", "a-tenant-wide", interop.DeliveryDurable},
		{ta, w1, "a-ws1-durable", interop.DeliveryDurable},
		{tb, "", "b-tenant-wide", interop.DeliveryDurable},
		{ta, w1, "a-ws1-ephemeral", interop.DeliveryEphemeral},
		{ta, w2, "a-ws2-durable", interop.DeliveryDurable},
		{ta, "", "end", interop.DeliveryDurable},
		{tb, "", "end", interop.DeliveryDurable},
	}
	for _, st := range steps {
		if err := publish(st.tenant, st.workspace, st.name, st.d); err != nil {
			stop()
			wg.Wait()
			return err
		}
	}
	wg.Wait()
	for _, s := range subs {
		if s.err != nil {
			return fmt.Errorf("%s: %w (received %v)", s.name, s.err, s.got)
		}
		if !slices.Equal(s.got, s.want) {
			return fmt.Errorf("%s received %v, want exactly %v in order", s.name, s.got, s.want)
		}
	}

	// A reconnect of workspace 1 after its first event never replays the
	// ephemeral event; a host that resumes durable events replays exactly
	// the workspace's later durable ones.
	resumed := feed.SubscribeHostEvents(subCtx, ta, w1, ids["a-tenant-wide"])
	var got []string
	var rerr error
	wg.Go(func() { got, rerr = readHostEvents(subCtx, resumed, marker) })
	if err := publish(ta, "", "end", interop.DeliveryDurable); err != nil {
		stop()
		wg.Wait()
		return err
	}
	wg.Wait()
	if rerr != nil {
		return fmt.Errorf("resumed subscriber of A's workspace 1: %w (received %v)", rerr, got)
	}
	if !slices.Equal(got, []string{}) && !slices.Equal(got, []string{"a-ws1-durable"}) {
		return fmt.Errorf("a subscriber of A's workspace 1 resuming after %q received %v, want nothing or exactly [a-ws1-durable] before the live event", "a-tenant-wide", got)
	}
	return nil
}

// readHostEvents collects the names of the check's own events from seq
// until the event named "end"; events of other checks or hosts (another
// marker) are ignored.
func readHostEvents(ctx context.Context, seq func(func(interop.HostEvent) bool), marker string) ([]string, error) {
	got := []string{}
	var end bool
	seq(func(ev interop.HostEvent) bool {
		var p struct{ Marker, Name string }
		if ev.Type != hostEventType || json.Unmarshal(ev.Payload, &p) != nil || p.Marker != marker {
			return true
		}
		if p.Name == "end" {
			end = true
			return false
		}
		got = append(got, p.Name)
		return true
	})
	if !end {
		if ctx.Err() != nil {
			return got, fmt.Errorf("the sequence did not deliver the final event before the deadline")
		}
		return got, fmt.Errorf("the sequence ended before the final event")
	}
	return got, nil
}
