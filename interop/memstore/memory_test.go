package memstore

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/interop"
)

// maxStoredRunBytes is the heap budget of one settled A2A-shaped run
// (storedRunBytes): every run a host creates stays in memory for the
// life of the store, and the garbage collector marks all of it on each
// cycle, so this is what the store costs every request's GC share.
const maxStoredRunBytes = 2000 // main before issue 15: 3,017

// TestStoredRunBytesWithinBudget: a settled run keeps no context, no
// per-event strings and no spare log capacity.
func TestStoredRunBytesWithinBudget(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("measures the heap of 10,000 runs; not under -short or -race")
	}
	if got := storedRunBytes(t, 10000); got > maxStoredRunBytes {
		t.Fatalf("a settled run keeps %.0f B of heap, budget %d B", got, maxStoredRunBytes)
	}
}

// TestEventsReadBackExactly: what the lean log rebuilds on read — event
// id, run id, sequence, type, node id, timestamp to the nanosecond (also
// before 1970 and after 2262, outside Unix nanoseconds), schema version,
// payload, status and chunk — is what was appended, the same through
// WatchRun and PollEvents, and every read is a fresh copy.
func TestEventsReadBackExactly(t *testing.T) {
	var (
		mu    sync.Mutex
		ticks = []time.Time{
			time.Date(1901, 2, 3, 4, 5, 6, 7, time.UTC),
			time.Date(2026, 12, 1, 21, 0, 0, 123456789, time.FixedZone("x", 3600)),
			time.Date(2300, 1, 1, 0, 0, 0, 999999999, time.UTC),
		}
		stamped []time.Time // what the store read, in order
	)
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		at := ticks[len(stamped)%len(ticks)]
		stamped = append(stamped, at)
		return at
	}
	s := newStore(t, WithClock(clock))
	sub := subject(tenantA, "alice")
	release := make(chan struct{})
	register(t, s, tenantA, "steps", func(ctx context.Context, rc *RunContext) (json.RawMessage, error) {
		if _, err := rc.Node("step-1", func() (json.RawMessage, error) { return json.RawMessage(`{"n":1}`), nil }); err != nil {
			return nil, err
		}
		if err := rc.PublishArtifact(interop.Artifact{ID: "a", Name: "art", Parts: []interop.Part{interop.TextPart("chunk")}}, false, true); err != nil {
			return nil, err
		}
		<-release
		return json.RawMessage(`{"done":true}`), nil
	})
	run := mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: "steps"})
	waitFor(t, s, sub, run.ID, func(ev interop.RunEvent) bool { return ev.Type == interop.EventArtifactCreated })
	audit := interop.RunEvent{Type: "acme.audit", SchemaVersion: 7, Payload: json.RawMessage(`{"k":"v"}`), NodeID: "dropped", CausationID: "dropped"}
	if err := s.AppendRunEvent(testCtx(t), run.ID, audit); err != nil {
		t.Fatal(err)
	}
	close(release)
	watched := events(t, s, sub, run.ID)
	polled, _, err := s.PollEvents(testCtx(t), sub, run.ID, -1, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(watched, polled) {
		t.Fatalf("WatchRun and PollEvents disagree:\n%+v\n%+v", watched, polled)
	}
	type want struct {
		typ     interop.EventType
		node    string
		version int
		payload string
		status  interop.RunStatus
	}
	wants := []want{
		{interop.EventRunStarted, "", interop.SchemaVersion, `{"workflowId":"steps"}`, interop.StatusRunning},
		{interop.EventNodeCompleted, "step-1", interop.SchemaVersion, `{"nodeId":"step-1","outputs":{"n":1}}`, interop.StatusRunning},
		{interop.EventArtifactCreated, "", interop.SchemaVersion, `{"artifactId":"a","artifactType":"artifact","summary":"art","registered":false}`, interop.StatusRunning},
		{"acme.audit", "", 7, `{"k":"v"}`, interop.StatusRunning},
		{interop.EventRunCompleted, "", interop.SchemaVersion, `{"outputs":{"done":true}}`, interop.StatusCompleted},
	}
	if len(watched) != len(wants) {
		t.Fatalf("%d events, want %d: %+v", len(watched), len(wants), watched)
	}
	mu.Lock()
	defer mu.Unlock()
	ids := map[string]bool{}
	for i, ev := range watched {
		w := wants[i]
		if ev.RunID != run.ID || ev.Sequence != int64(i) || ev.Type != w.typ || ev.NodeID != w.node || ev.CausationID != "" ||
			ev.SchemaVersion != w.version || string(ev.Payload) != w.payload || ev.Status != w.status {
			t.Errorf("event %d = %+v, want %+v", i, ev, w)
		}
		if ids[ev.EventID] || !strings.HasPrefix(ev.EventID, "evt-") {
			t.Errorf("event %d: id %q repeated or malformed", i, ev.EventID)
		}
		ids[ev.EventID] = true
		if (ev.Chunk != nil) != (w.typ == interop.EventArtifactCreated) {
			t.Errorf("event %d: chunk %+v", i, ev.Chunk)
		}
	}
	// Timestamps are the store clock in UTC, == equal (same wall, ext and
	// location) to what a stored time.Time would give.
	if len(stamped) < len(watched) {
		t.Fatalf("clock read %d times", len(stamped))
	}
	var seen []time.Time
	for _, ev := range watched {
		seen = append(seen, ev.Timestamp)
	}
	for i, at := range seen {
		found := false
		for _, st := range stamped {
			if at == st.UTC() {
				found = true
			}
		}
		if !found || at.Location() != time.UTC {
			t.Errorf("event %d: timestamp %v (%v) is not a clock reading in UTC", i, at, at.Location())
		}
	}
	if watched[0].Timestamp != ticks[0].UTC() {
		t.Errorf("run.started at %v, want %v", watched[0].Timestamp, ticks[0].UTC())
	}
	// Copies: changing one read changes no other.
	watched[2].Payload[0] = 'X'
	watched[2].Chunk.Artifact.Parts[0].Text = "changed"
	again := events(t, s, sub, run.ID)
	if string(again[2].Payload) != wants[2].payload || again[2].Chunk.Artifact.Parts[0].Text != "chunk" {
		t.Fatalf("a read aliased the log: %+v", again[2])
	}
}

// TestEqualMessageMetadataIsStoredOnce: runs whose first messages carry
// equal flat metadata keep one map between them, and every read still
// gets its own copy; other metadata is stored per run.
func TestEqualMessageMetadataIsStoredOnce(t *testing.T) {
	s := newStore(t)
	sub := subject(tenantA, "alice")
	create := func(meta map[string]any) interop.Run {
		return mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: FixtureNoop, Message: &interop.Message{
			ID: "m", Role: interop.RoleUser, Parts: []interop.Part{interop.TextPart("go")}, Metadata: meta,
		}})
	}
	stored := func(id string) map[string]any {
		ten := s.tenant(tenantA)
		ten.mu.RLock()
		defer ten.mu.RUnlock()
		return ten.runs[id].run.Messages[0].Metadata
	}
	same := func(a, b map[string]any) bool { return reflect.ValueOf(a).Pointer() == reflect.ValueOf(b).Pointer() }

	first := create(map[string]any{"skillId": "noop", "n": 1.0, "ok": true, "none": nil})
	second := create(map[string]any{"skillId": "noop", "n": 1.0, "ok": true, "none": nil})
	if !same(stored(first.ID), stored(second.ID)) {
		t.Fatal("equal flat metadata stored twice")
	}
	for _, meta := range []map[string]any{
		{"skillId": "other", "n": 1.0, "ok": true, "none": nil},
		{"skillId": "noop", "n": 1.0, "ok": true, "none": nil, "more": "x"},
		{"skillId": "noop", "n": 1.0, "ok": true, "none": "set"},
		{"skillId": "noop", "n": 1.0, "ok": true, "nested": map[string]any{}},
	} {
		run := create(meta)
		if same(stored(run.ID), stored(second.ID)) || !reflect.DeepEqual(run.Messages[0].Metadata, meta) {
			t.Fatalf("metadata %v shared with or stored unlike %v", meta, stored(second.ID))
		}
	}
	// Reads are copies: changing one changes neither the store nor the
	// run that shares its map.
	got, err := s.GetRun(testCtx(t), sub, first.ID)
	if err != nil {
		t.Fatal(err)
	}
	got.Messages[0].Metadata["skillId"] = "changed"
	first.Messages[0].Metadata["skillId"] = "changed"
	again, _ := s.GetRun(testCtx(t), sub, second.ID)
	if again.Messages[0].Metadata["skillId"] != "noop" || stored(first.ID)["skillId"] != "noop" {
		t.Fatalf("a read aliased the shared metadata: %v", again.Messages[0].Metadata)
	}
}

// maxCreateRunAllocs bounds the allocations of creating and finishing a
// run of an inline workflow that writes no events of its own and takes
// no inputs: the run's record, id, log and output, its RunContext and
// context, and the snapshot returned. main before issue 15: 24.
const maxCreateRunAllocs = 10

// TestCreateRunAllocations: creating a run allocates nothing per event
// (ids and payloads are not separate objects), nothing for the error
// cases a run that succeeds never reaches, no box per payload, and
// nothing to validate absent inputs (the schema's verdict on {} is
// taken at Register).
func TestCreateRunAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes what escapes")
	}
	s := newStore(t)
	if err := s.Register(tenantA, WorkflowDef{Workflow: interop.Workflow{ID: "ok"}, Inline: true,
		Run: func(context.Context, *RunContext) (json.RawMessage, error) {
			return json.RawMessage(`{"ok":true}`), nil
		},
	}); err != nil {
		t.Fatal(err)
	}
	sub := subject(tenantA, "alice")
	// {} as the A2A binding sends it for a message without a data part.
	req := interop.CreateRunRequest{WorkflowID: "ok", Transport: interop.TransportA2A, ContextID: "ctx", Inputs: json.RawMessage(`{}`)}
	ctx := context.Background()
	allocs := testing.AllocsPerRun(1000, func() {
		if _, _, err := s.CreateRun(ctx, sub, req); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > maxCreateRunAllocs {
		t.Fatalf("CreateRun allocates %.1f times, budget %d", allocs, maxCreateRunAllocs)
	}
	t.Logf("%.1f allocations per CreateRun", allocs)
}
