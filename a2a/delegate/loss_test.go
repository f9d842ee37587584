package delegate

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/internal/golden"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/outbound"
)

// stored is ev as a store hands it out, with the attempt id in its
// payload replaced by a fixed one, so golden bytes and the RunEventDoc
// validator see a whole document.
func stored(ev interop.RunEvent, attemptID string) interop.RunEvent {
	ev.EventID = "evt-000000000000001"
	ev.RunID = "tenant-a/run-00000000000000001"
	ev.Sequence = 7
	ev.Payload = bytes.ReplaceAll(ev.Payload, []byte(attemptID), []byte("att_0"))
	return ev
}

func TestEventTypesAreVendorTypesOfTheLibrary(t *testing.T) {
	for _, typ := range []interop.EventType{EventTranslationLoss, EventReconciled} {
		if !typ.Valid() || typ.Registered() {
			t.Errorf("%s: Valid=%v Registered=%v, want a valid vendor type", typ, typ.Valid(), typ.Registered())
		}
	}
}

func TestTranslationLossRecord(t *testing.T) {
	history := []*wire.Message{agentText("h1"), agentText("h2"), agentText("h3")}
	first := task(wire.TaskStateWorking)
	first.Metadata = map[string]any{"vendor.a": 1, "vendor.b": 2}
	first.History = history
	noted := agentText("thinking")
	noted.Extensions = []string{"https://example.com/ext/v1"}
	noted.ReferenceTasks = []wire.TaskID{"task-0"}
	working := statusEvent(wire.TaskStateWorking, noted)
	working.Metadata = map[string]any{"x": true}
	art := artifactEvent(textArtifact("a1", "result"), false, true)
	art.Metadata = map[string]any{"y": true}
	again := task(wire.TaskStateWorking) // a re-read snapshot counts once
	again.Metadata, again.History = first.Metadata, history

	r := &fakeRemote{stream: streamOf(ev(first), ev(working), ev(art), ev(again),
		ev(statusEvent("TASK_STATE_WEIRD", nil)), ev(statusEvent(wire.TaskStateCompleted, nil)))}
	c, sink := testConn(r)
	out, err := c.Delegate(t.Context(), testStep())
	if err != nil {
		t.Fatalf("Delegate: %v", err)
	}
	events := sink.ofType(EventTranslationLoss)
	if len(events) != 1 || len(sink.events) != 1 {
		t.Fatalf("events %+v, want exactly one loss record", sink.events)
	}
	if sink.runIDs[0] != testRunID {
		t.Errorf("appended to run %q, want the conn's run", sink.runIDs[0])
	}
	got := stored(events[0], out.AttemptID)
	if !got.Timestamp.Equal(testNow) || got.SchemaVersion != interop.SchemaVersion {
		t.Errorf("timestamp %v schemaVersion %d", got.Timestamp, got.SchemaVersion)
	}
	if err := got.Validate(); err != nil {
		t.Errorf("the stored record fails RunEventDoc validation: %v", err)
	}
	golden.Check(t, "loss_event.json", append(got.Payload, '\n'))
}

func TestNoLossNoRecord(t *testing.T) {
	c, sink := testConn(&fakeRemote{stream: streamOf(ev(task(wire.TaskStateCompleted, textArtifact("a", "x"))))})
	if _, err := c.Delegate(t.Context(), testStep()); err != nil {
		t.Fatal(err)
	}
	if len(sink.events) != 0 {
		t.Errorf("events %+v, want none", sink.events)
	}
}

func TestReconciliationRecord(t *testing.T) {
	r := &fakeRemote{stream: func(ctx context.Context, _ int, _ *wire.SendMessageRequest) iterSeq {
		return blockUntilDone(ctx, ev(task(wire.TaskStateWorking)))
	}}
	c, sink := testConn(r, func(a *Admission) { a.Limits.Deadline = 100 * time.Millisecond })
	out, err := c.Delegate(t.Context(), testStep())
	if !errors.Is(err, ErrDeadline) || out.Reconciliation != outbound.FailedPossibleEffect {
		t.Fatalf("Delegate = %+v, %v", out, err)
	}
	events := sink.ofType(EventReconciled)
	if len(events) != 1 {
		t.Fatalf("events %+v, want one reconciliation record", sink.events)
	}
	got := stored(events[0], out.AttemptID)
	if err := got.Validate(); err != nil {
		t.Errorf("the stored record fails RunEventDoc validation: %v", err)
	}
	golden.Check(t, "reconciled_event.json", append(got.Payload, '\n'))
}

// failingSink refuses every record.
type failingSink struct{}

func (failingSink) AppendRunEvent(context.Context, string, interop.RunEvent) error {
	return interop.ErrRunTerminal
}

func (failingSink) PublishHostEvent(context.Context, string, interop.HostEvent) error {
	return interop.ErrRunTerminal
}

func TestARefusedRecordDoesNotChangeTheOutcome(t *testing.T) {
	r := &fakeRemote{stream: streamOf(item{err: peerError(wire.ErrInvalidParams)})}
	c, _ := testConn(r)
	c.deps.events = failingSink{}
	out, err := c.Delegate(t.Context(), testStep())
	if !errors.Is(err, wire.ErrInvalidParams) || out.Reconciliation != outbound.FailedNoEffect {
		t.Fatalf("Delegate = %+v, %v", out, err)
	}
}
