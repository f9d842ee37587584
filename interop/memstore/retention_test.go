package memstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/isolation"
)

// manualClock stands still until the test moves it.
type manualClock struct {
	mu  sync.Mutex
	now time.Time
}

func newManualClock() *manualClock {
	return &manualClock{now: time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)}
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// answer is what one RunStore method said about one run id: the error's
// text and sentinel, or the value when there was none.
type answer struct {
	Err      string
	NotFound bool
	Value    string
}

func answerOf(v any, err error) answer {
	if err != nil {
		return answer{Err: err.Error(), NotFound: isNotFound(err)}
	}
	b, _ := json.Marshal(v)
	return answer{Value: string(b)}
}

func isNotFound(err error) bool { return errors.Is(err, interop.ErrNotFound) }

// everyAnswer asks each method of the store that takes a run id about id,
// with interruptID for ResolveInterrupt.
func everyAnswer(t *testing.T, s *Store, sub interop.Subject, id, interruptID string) map[string]answer {
	t.Helper()
	ctx := testCtx(t)
	out := map[string]answer{}
	run, err := s.GetRun(ctx, sub, id)
	out["GetRun"] = answerOf(run, err)
	run, err = s.CancelRun(ctx, sub, id, "why")
	out["CancelRun"] = answerOf(run, err)
	run, err = s.ResolveInterrupt(ctx, sub, interop.ResolveRequest{RunID: id, InterruptID: interruptID, Value: json.RawMessage(`{"action":"accept"}`)})
	out["ResolveInterrupt"] = answerOf(run, err)
	seq, err := s.WatchRun(ctx, sub, id, -1)
	out["WatchRun"] = answerOf(seq != nil, err)
	evs, run, err := s.PollEvents(ctx, sub, id, -1, time.Millisecond)
	out["PollEvents"] = answerOf([]any{evs, run}, err)
	ev, _ := interop.NewRunEvent("vendor.audit", map[string]string{"k": "v"})
	out["AppendRunEvent"] = answerOf(nil, s.AppendRunEvent(ctx, id, ev))
	return out
}

// TestPurgedRunIsUnknown: once purged, a terminal run answers every
// RunStore method (and the store's own PollEvents and AppendRunEvent)
// exactly as an id that was never minted; it is not listed or counted; its
// idempotency key starts a new run. A run that is not terminal, and a
// terminal run younger than the retention, stay.
func TestPurgedRunIsUnknown(t *testing.T) {
	clock := newManualClock()
	s := newStore(t, WithClock(clock.Now), WithRunRetention(time.Hour))
	sub := subject(tenantA, "alice")
	ctx := testCtx(t)

	done := mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: FixtureNoop, IdempotencyKey: "k-1", ContextID: "ctx-old"})
	events(t, s, sub, done.ID)
	// A run cancelled while suspended keeps the id of its withdrawn interrupt.
	cancelled := mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: FixtureApproval, ContextID: "ctx-old"})
	interruptID := interruptIDOf(t, waitFor(t, s, sub, cancelled.ID, func(ev interop.RunEvent) bool { return ev.Type == interop.EventNodeSuspended }))
	if _, err := s.CancelRun(ctx, sub, cancelled.ID, "stop"); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, s, sub, cancelled.ID, interop.StatusCancelled)
	live := mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: FixtureApproval, ContextID: "ctx-old"})
	waitStatus(t, s, sub, live.ID, interop.StatusWaitingApproval)

	clock.Advance(30 * time.Minute)
	young := mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: FixtureNoop, ContextID: "ctx-young"})
	events(t, s, sub, young.ID)
	if runs, _ := s.purgeExpired(); runs != 0 {
		t.Fatalf("purged %d runs before any was past the retention", runs)
	}
	clock.Advance(31 * time.Minute) // done and cancelled: 61 min; young: 31 min
	if runs, _ := s.purgeExpired(); runs != 2 {
		t.Fatalf("purged %d runs, want the 2 old terminal ones", runs)
	}

	neverMinted, err := isolation.NewID(tenantA)
	if err != nil {
		t.Fatal(err)
	}
	neverInterrupt, err := isolation.NewID(tenantA)
	if err != nil {
		t.Fatal(err)
	}
	want := everyAnswer(t, s, sub, neverMinted, neverInterrupt)
	for name, a := range want {
		if !a.NotFound {
			t.Fatalf("a never-minted id: %s answered %+v, want not found", name, a)
		}
	}
	for _, purged := range []struct{ id, interrupt string }{{done.ID, neverInterrupt}, {cancelled.ID, interruptID}} {
		got := everyAnswer(t, s, sub, purged.id, purged.interrupt)
		for name := range want {
			if got[name] != want[name] {
				t.Errorf("purged run %s: %s answered %+v, a never-minted id %+v", purged.id, name, got[name], want[name])
			}
		}
	}

	page, err := s.ListRuns(ctx, sub, interop.ListRunsQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, r := range page.Runs {
		listed = append(listed, r.ID)
	}
	if page.Total != 2 || !slices.Contains(listed, live.ID) || !slices.Contains(listed, young.ID) || len(listed) != 2 {
		t.Fatalf("listed %v (total %d), want only the live and the young run", listed, page.Total)
	}
	page, err = s.ListRuns(ctx, sub, interop.ListRunsQuery{ContextID: "ctx-old", Statuses: []interop.RunStatus{interop.StatusCompleted, interop.StatusCancelled}})
	if err != nil || page.Total != 0 || len(page.Runs) != 0 {
		t.Fatalf("filtered list of purged runs = %+v, %v", page, err)
	}
	if got, err := s.GetRun(ctx, sub, live.ID); err != nil || got.Status != interop.StatusWaitingApproval {
		t.Fatalf("the live run: %+v, %v", got, err)
	}

	// The key is free again: it starts a new run, as a never-used key does.
	again, created, err := s.CreateRun(ctx, sub, interop.CreateRunRequest{WorkflowID: FixtureNoop, IdempotencyKey: "k-1"})
	if err != nil || !created || again.ID == done.ID {
		t.Fatalf("CreateRun with the purged run's key: %s created=%v %v", again.ID, created, err)
	}
}

// TestPurgeRunsOnItsOwnGoroutine: with a real clock and a short retention
// the store purges by itself, and Close stops it (goleak checks the rest).
func TestPurgeRunsOnItsOwnGoroutine(t *testing.T) {
	s := newStore(t, WithRunRetention(40*time.Millisecond))
	sub := subject(tenantA, "alice")
	done := mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: FixtureNoop})
	events(t, s, sub, done.ID)
	live := mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: FixtureApproval})
	waitStatus(t, s, sub, live.ID, interop.StatusWaitingApproval)
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := s.GetRun(testCtx(t), sub, done.ID)
		if isNotFound(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run was not purged: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := s.GetRun(testCtx(t), sub, live.ID); err != nil {
		t.Fatalf("the live run was purged: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if !s.purgeStarted.Load() {
		t.Fatal("the purge never started")
	}
}

// TestNoPurgeGoroutineWithoutRetention: a store that keeps everything
// owns no purge goroutine, even with runs and host events.
func TestNoPurgeGoroutineWithoutRetention(t *testing.T) {
	s := newStore(t, WithHostEventMaxAge(0))
	sub := subject(tenantA, "alice")
	events(t, s, sub, mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: FixtureNoop}).ID)
	if err := s.PublishHostEvent(testCtx(t), tenantA, interop.HostEvent{Type: "vendor.thing", Delivery: interop.DeliveryDurable}); err != nil {
		t.Fatal(err)
	}
	if s.purgeStarted.Load() {
		t.Fatal("a purge goroutine runs with nothing to expire")
	}
}

// TestPurgePanicIsRecovered: a panic in the purge is logged and the next
// tick purges.
func TestPurgePanicIsRecovered(t *testing.T) {
	var logs logBuffer
	var panicking atomic.Bool
	clock := func() time.Time {
		if panicking.Load() {
			panic("clock broke")
		}
		return time.Now()
	}
	s := newStore(t, WithClock(clock), WithLogger(logs.logger()), WithRunRetention(40*time.Millisecond))
	sub := subject(tenantA, "alice")
	done := mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: FixtureNoop})
	events(t, s, sub, done.ID)
	panicking.Store(true)
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(logs.String(), "retention purge panicked") {
		if time.Now().After(deadline) {
			t.Fatal("no panic logged")
		}
		time.Sleep(5 * time.Millisecond)
	}
	panicking.Store(false)
	for {
		if _, err := s.GetRun(testCtx(t), sub, done.ID); isNotFound(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the purge did not survive its panic")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestPurgeReturnsMemory: the heap after creating and purging 10,000 runs
// is back near where it started.
func TestPurgeReturnsMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates 10,000 runs")
	}
	clock := newManualClock()
	s := newStore(t, WithClock(clock.Now), WithRunRetention(time.Hour))
	var runs counter
	// Inline: the runs finish inside CreateRun, so that no goroutines pile
	// up — the runtime keeps every goroutine descriptor it ever made, which
	// is not memory the store kept.
	if err := s.Register(tenantA, WorkflowDef{Workflow: interop.Workflow{ID: "noop"}, Run: runs.noop, Inline: true}); err != nil {
		t.Fatal(err)
	}
	sub := subject(tenantA, "alice")
	ctx := testCtx(t)
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	// One run first, so that lazily built state (the tenant, the purge
	// goroutine) is in the baseline.
	first := mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: "noop"})
	events(t, s, sub, first.ID)
	clock.Advance(2 * time.Hour)
	s.purgeExpired()
	base := heap()

	const n = 10000
	ids := make([]string, n)
	for i := range ids {
		run, _, err := s.CreateRun(ctx, sub, interop.CreateRunRequest{
			WorkflowID: "noop", IdempotencyKey: fmt.Sprintf("key-%d", i), ContextID: "ctx",
			Inputs: json.RawMessage(`{"some":"inputs"}`),
		})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = run.ID
	}
	// One context for every wait: events() would keep a timer and a
	// cleanup per run alive until the test ends, inside the measurement.
	for _, id := range ids {
		seq, err := s.WatchRun(ctx, sub, id, -1)
		if err != nil {
			t.Fatal(err)
		}
		for _, err := range seq {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	ids = nil
	peak := heap()
	clock.Advance(2 * time.Hour)
	if purged, _ := s.purgeExpired(); purged != n {
		t.Fatalf("purged %d runs, want %d", purged, n)
	}
	// The least of a few readings: a collection that runs late (a loaded
	// machine, the race detector) must not read as memory kept.
	after := heap()
	for range 2 {
		after = min(after, heap())
	}
	grown := int64(peak) - int64(base)
	left := int64(after) - int64(base)
	t.Logf("heap: base %d KiB, with %d runs %d KiB, after the purge %d KiB", base>>10, n, peak>>10, after>>10)
	if grown < 1<<20 {
		t.Fatalf("%d runs grew the heap by only %d bytes: the measurement is broken", n, grown)
	}
	if left > grown/10 {
		t.Fatalf("after the purge the heap is %d KiB above the baseline, %d%% of what %d runs took", left>>10, 100*left/grown, n)
	}
}

// TestHostEventsExpire: durable host events older than the age bound are
// dropped, a Last-Event-ID naming one resumes like an unknown id, and the
// per-tenant count still holds alongside.
func TestHostEventsExpire(t *testing.T) {
	clock := newManualClock()
	s := newStore(t, WithClock(clock.Now), WithHostEventMaxAge(time.Hour), WithHostEventRetention(3))
	ctx := testCtx(t)
	publish := func(id string) {
		t.Helper()
		if err := s.PublishHostEvent(ctx, tenantA, interop.HostEvent{EventID: id, Type: "vendor.thing", Delivery: interop.DeliveryDurable}); err != nil {
			t.Fatal(err)
		}
	}
	ids := func() []string {
		var out []string
		for _, ev := range s.DurableHostEvents(tenantA) {
			out = append(out, ev.EventID)
		}
		return out
	}
	publish("hev-old-1")
	publish("hev-old-2")
	clock.Advance(40 * time.Minute)
	publish("hev-new-1")
	publish("hev-new-2") // the count evicts hev-old-1
	if got := ids(); !slices.Equal(got, []string{"hev-old-2", "hev-new-1", "hev-new-2"}) {
		t.Fatalf("retained %v", got)
	}
	clock.Advance(21 * time.Minute)
	if _, events := s.purgeExpired(); events != 1 {
		t.Fatalf("expired %d events, want hev-old-2", events)
	}
	if got := ids(); !slices.Equal(got, []string{"hev-new-1", "hev-new-2"}) {
		t.Fatalf("retained %v", got)
	}

	// Resuming after the expired event replays nothing, as after an
	// unknown id; resuming after a retained one replays what follows it.
	for lastID, want := range map[string][]string{"hev-old-2": {"hev-live"}, "hev-no-such": {"hev-live"}, "hev-new-1": {"hev-new-2", "hev-live"}} {
		subCtx, cancel := context.WithCancel(ctx)
		feed := s.SubscribeHostEvents(subCtx, tenantA, "", lastID)
		publish("hev-live")
		var got []string
		for ev := range feed {
			got = append(got, ev.EventID)
			if ev.EventID == "hev-live" {
				break
			}
		}
		cancel()
		if !slices.Equal(got, want) {
			t.Errorf("Last-Event-ID %s: got %v, want %v", lastID, got, want)
		}
		clock.Advance(2 * time.Hour)
		s.purgeExpired() // hev-live goes before the next round
		publish("hev-new-1")
		publish("hev-new-2")
	}
}

// TestHostEventRingModel drives the ring through random publications and
// expiries and compares it with a plain slice.
func TestHostEventRingModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, retention := range []int{1, 2, 5, 64, 65, 200} {
		var l hostEventLog
		var model []hostEntry
		var seq uint64
		var now int64
		for step := range 5000 {
			if rng.IntN(4) == 0 {
				cutoff := now - int64(rng.IntN(50))
				l.expire(cutoff)
				model = slices.DeleteFunc(model, func(e hostEntry) bool { return e.at < cutoff })
			} else {
				seq++
				now += int64(rng.IntN(3))
				e := hostEntry{seq: seq, at: now}
				l.push(e, retention)
				model = append(model, e)
				if len(model) > retention {
					model = model[1:]
				}
			}
			if l.n != len(model) {
				t.Fatalf("retention %d step %d: %d retained, model %d", retention, step, l.n, len(model))
			}
			for i := range model {
				if got := *l.at(i); got.seq != model[i].seq {
					t.Fatalf("retention %d step %d: entry %d is seq %d, model %d", retention, step, i, got.seq, model[i].seq)
				}
			}
			if len(l.ring) > retention {
				t.Fatalf("ring of %d slots for retention %d", len(l.ring), retention)
			}
		}
	}
}
