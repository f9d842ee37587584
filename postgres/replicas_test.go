package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wopinterop/wopinterop/interop"
)

// crash stops s as a killed process would: its executions stop, nothing
// is recorded or released, and its leases run out on their own.
func (s *Store) crash() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.stopRuns(errStoreClosed)
	s.running.Wait()
	s.loops.Wait()
}

// checkLog checks that a run's log runs 0, 1, 2, … and holds each
// lifecycle type the given number of times.
func checkLog(t *testing.T, evs []interop.RunEvent, want map[interop.EventType]int) {
	t.Helper()
	got := map[interop.EventType]int{}
	for i, ev := range evs {
		if ev.Sequence != int64(i) {
			t.Fatalf("event %d has sequence %d: %v", i, ev.Sequence, typesOf(evs))
		}
		if err := ev.Validate(); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		got[ev.Type]++
	}
	for typ, n := range want {
		if got[typ] != n {
			t.Errorf("log %v holds %d %s, want %d", typesOf(evs), got[typ], typ, n)
		}
	}
}

// TestReplicasServeEachOthersRuns: a run started on one replica is read,
// listed, watched, continued and cancelled on another.
func TestReplicasServeEachOthersRuns(t *testing.T) {
	pool := migratedPool(t)
	a, b := openStore(t, pool), openStore(t, pool)
	ctx := testCtx(t)
	sub := alice()

	run := mustCreate(t, a, sub, interop.CreateRunRequest{WorkflowID: FixtureApproval, ContextID: "c1", Transport: interop.TransportA2A})
	// B watches from the start, before the run suspends on A.
	seq, err := b.WatchRun(ctx, sub, run.ID, -1)
	if err != nil {
		t.Fatalf("WatchRun on B: %v", err)
	}
	suspended := waitStatus(t, b, sub, run.ID, interop.StatusWaitingApproval)
	in, ok := suspended.OpenInterrupt()
	if !ok {
		t.Fatal("B reads the suspended run without its interrupt")
	}
	page, err := b.ListRuns(ctx, sub, interop.ListRunsQuery{ContextID: "c1"})
	if err != nil || page.Total != 1 || page.Runs[0].ID != run.ID {
		t.Fatalf("ListRuns on B = %+v, %v; want the run", page, err)
	}
	if _, err := b.ResolveInterrupt(ctx, sub, interop.ResolveRequest{
		RunID: run.ID, InterruptID: in.ID, Outcome: interop.OutcomeAccept, Value: json.RawMessage(`{"action":"accept"}`),
	}); err != nil {
		t.Fatalf("ResolveInterrupt on B: %v", err)
	}
	var evs []interop.RunEvent
	for ev, err := range seq {
		if err != nil {
			t.Fatalf("watch on B: %v", err)
		}
		evs = append(evs, ev)
	}
	checkLog(t, evs, map[interop.EventType]int{interop.EventRunStarted: 1, interop.EventNodeSuspended: 1,
		interop.EventInterruptResolved: 1, interop.EventRunCompleted: 1})
	done := waitStatus(t, a, sub, run.ID, interop.StatusCompleted)
	if string(done.Output) != `{"approved":true}` {
		t.Errorf("output on A = %s", done.Output)
	}

	// Cancelled on B while its workflow waits on A.
	long := mustCreate(t, a, sub, interop.CreateRunRequest{WorkflowID: FixtureCancellable, Inputs: json.RawMessage(`{"delayMs":600000}`)})
	if _, err := b.CancelRun(ctx, sub, long.ID, "stop"); err != nil {
		t.Fatalf("CancelRun on B: %v", err)
	}
	cancelled := waitStatus(t, b, sub, long.ID, interop.StatusCancelled)
	if cancelled.CancelReason != "stop" {
		t.Errorf("CancelReason = %q", cancelled.CancelReason)
	}
	checkLog(t, events(t, a, sub, long.ID), map[interop.EventType]int{EventCancelRequested: 1, interop.EventRunCancelled: 1})
}

// TestIdempotentCreateAcrossReplicas races one key on two replicas.
func TestIdempotentCreateAcrossReplicas(t *testing.T) {
	pool := migratedPool(t)
	stores := []*Store{openStore(t, pool), openStore(t, pool)}
	req := interop.CreateRunRequest{WorkflowID: FixtureNoop, IdempotencyKey: "k1", ContextID: "race"}
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		ids     = map[string]int{}
		created atomic.Int32
	)
	start := make(chan struct{})
	for i := range 16 {
		wg.Go(func() {
			<-start
			run, c, err := stores[i%2].CreateRun(context.Background(), alice(), req)
			if err != nil {
				t.Error(err)
				return
			}
			if c {
				created.Add(1)
			}
			mu.Lock()
			ids[run.ID]++
			mu.Unlock()
		})
	}
	close(start)
	wg.Wait()
	if len(ids) != 1 || created.Load() != 1 {
		t.Fatalf("16 creations with one key on two replicas: runs %v, %d created; want one run created once", ids, created.Load())
	}
	page, err := stores[1].ListRuns(testCtx(t), alice(), interop.ListRunsQuery{ContextID: "race"})
	if err != nil || page.Total != 1 {
		t.Fatalf("ListRuns = total %d, %v; want 1", page.Total, err)
	}
}

// TestCursorAcrossReplicas: a cursor one replica issued continues on
// another (the signing key is in the database).
func TestCursorAcrossReplicas(t *testing.T) {
	pool := migratedPool(t)
	a, b := openStore(t, pool), openStore(t, pool)
	for range 3 {
		run := mustCreate(t, a, alice(), interop.CreateRunRequest{WorkflowID: FixtureNoop, ContextID: "pages"})
		waitStatus(t, a, alice(), run.ID, interop.StatusCompleted)
	}
	ctx := testCtx(t)
	first, err := a.ListRuns(ctx, alice(), interop.ListRunsQuery{ContextID: "pages", PageSize: 2})
	if err != nil || first.NextCursor == "" {
		t.Fatalf("first page = %+v, %v", first, err)
	}
	second, err := b.ListRuns(ctx, alice(), interop.ListRunsQuery{ContextID: "pages", PageSize: 2, Cursor: first.NextCursor})
	if err != nil || len(second.Runs) != 1 || second.NextCursor != "" {
		t.Fatalf("second page on the other replica = %+v, %v; want the last run", second, err)
	}
}

// effectsWorkflow publishes an artifact, waits for an approval, publishes
// another and completes, counting how often its body starts.
func effectsWorkflow(starts *atomic.Int32) WorkflowDef {
	return WorkflowDef{
		Workflow: interop.Workflow{ID: "effects"},
		Run: func(ctx context.Context, rc *RunContext) (json.RawMessage, error) {
			starts.Add(1)
			if err := rc.PublishArtifact(interop.Artifact{ID: "before", Parts: []interop.Part{interop.TextPart("one")}}, false, true); err != nil {
				return nil, err
			}
			res, err := rc.Interrupt(ctx, interop.Interrupt{Kind: interop.InterruptApproval, Key: "go", Actions: []string{"accept", "reject"}})
			if err != nil {
				return nil, err
			}
			if err := rc.PublishArtifact(interop.Artifact{ID: "after", Parts: []interop.Part{interop.TextPart("two")}}, false, true); err != nil {
				return nil, err
			}
			return json.Marshal(map[string]string{"resolver": res.Resolver.Principal})
		},
	}
}

// TestTakeoverReplaysEffects: the replica executing a suspended run dies;
// another takes the run over once the lease expires, replays the artifact
// and the interrupt without recording them again, and completes it when
// the interrupt is answered.
func TestTakeoverReplaysEffects(t *testing.T) {
	pool := migratedPool(t)
	var starts atomic.Int32
	opts := []Option{WithLeaseTTL(300 * time.Millisecond), WithPollInterval(50 * time.Millisecond)}
	a, b := openStore(t, pool, opts...), openStore(t, pool, opts...)
	for _, s := range []*Store{a, b} {
		if err := s.Register(tenantA, effectsWorkflow(&starts)); err != nil {
			t.Fatal(err)
		}
	}
	sub := alice()
	run := mustCreate(t, a, sub, interop.CreateRunRequest{WorkflowID: "effects"})
	suspended := waitStatus(t, b, sub, run.ID, interop.StatusWaitingApproval)
	a.crash()

	// B claims the run and executes it again.
	deadline := time.Now().Add(10 * time.Second)
	for starts.Load() < 2 {
		if time.Now().After(deadline) {
			t.Fatal("no replica took the run over")
		}
		time.Sleep(10 * time.Millisecond)
	}
	in, _ := suspended.OpenInterrupt()
	if _, err := b.ResolveInterrupt(testCtx(t), bob(), interop.ResolveRequest{
		RunID: run.ID, InterruptID: in.ID, Value: json.RawMessage(`{"action":"accept"}`),
	}); err != nil {
		t.Fatalf("ResolveInterrupt: %v", err)
	}
	done := waitStatus(t, b, sub, run.ID, interop.StatusCompleted)
	if string(done.Output) != `{"resolver":"bob"}` {
		t.Errorf("output = %s, want the resolution the replayed interrupt returned", done.Output)
	}
	if ids := []string{done.Artifacts[0].ID, done.Artifacts[1].ID}; len(done.Artifacts) != 2 || !slices.Equal(ids, []string{"before", "after"}) {
		t.Errorf("artifacts = %+v, want before and after once each", done.Artifacts)
	}
	checkLog(t, events(t, b, sub, run.ID), map[interop.EventType]int{interop.EventRunStarted: 1,
		interop.EventArtifactCreated: 2, interop.EventNodeSuspended: 1, interop.EventInterruptResolved: 1, interop.EventRunCompleted: 1})
	if n := starts.Load(); n != 2 {
		t.Errorf("workflow body started %d times, want 2 (once per replica)", n)
	}
}

// TestCloseHandsRunsOver: a replica that closes releases its leases, and
// another takes the runs over without waiting for them to expire.
func TestCloseHandsRunsOver(t *testing.T) {
	pool := migratedPool(t)
	var starts atomic.Int32
	a := openStore(t, pool, WithLeaseTTL(time.Hour))
	b := openStore(t, pool, WithLeaseTTL(300*time.Millisecond))
	for _, s := range []*Store{a, b} {
		if err := s.Register(tenantA, effectsWorkflow(&starts)); err != nil {
			t.Fatal(err)
		}
	}
	run := mustCreate(t, a, alice(), interop.CreateRunRequest{WorkflowID: "effects"})
	suspended := waitStatus(t, a, alice(), run.ID, interop.StatusWaitingApproval)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	in, _ := suspended.OpenInterrupt()
	if _, err := b.ResolveInterrupt(testCtx(t), alice(), interop.ResolveRequest{
		RunID: run.ID, InterruptID: in.ID, Value: json.RawMessage(`{"action":"accept"}`),
	}); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, b, alice(), run.ID, interop.StatusCompleted)
}

// TestCancelOrphanedRun: a run whose replica died is cancelled on
// another; the replica that takes it over ends it cancelled without
// calling the workflow again.
func TestCancelOrphanedRun(t *testing.T) {
	pool := migratedPool(t)
	var calls atomic.Int32
	def := WorkflowDef{
		Workflow: interop.Workflow{ID: "sleeper"},
		Run: func(ctx context.Context, _ *RunContext) (json.RawMessage, error) {
			calls.Add(1)
			<-ctx.Done()
			return nil, ctx.Err()
		},
	}
	opts := []Option{WithLeaseTTL(300 * time.Millisecond)}
	a, b := openStore(t, pool, opts...), openStore(t, pool, opts...)
	for _, s := range []*Store{a, b} {
		if err := s.Register(tenantA, def); err != nil {
			t.Fatal(err)
		}
	}
	run := mustCreate(t, a, alice(), interop.CreateRunRequest{WorkflowID: "sleeper"})
	for calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	a.crash()
	if _, err := b.CancelRun(testCtx(t), alice(), run.ID, "orphaned"); err != nil {
		t.Fatal(err)
	}
	final := waitStatus(t, b, alice(), run.ID, interop.StatusCancelled)
	if final.CancelReason != "orphaned" || calls.Load() != 1 {
		t.Errorf("cancelled run: reason %q, workflow called %d times; want reason orphaned, called once", final.CancelReason, calls.Load())
	}
	checkLog(t, events(t, b, alice(), run.ID), map[interop.EventType]int{EventCancelRequested: 1, interop.EventRunCancelled: 1})
}

// TestStaleReplicaIsFenced: a replica whose lease expired and was taken
// over can no longer write to the run, even if its workflow goes on.
func TestStaleReplicaIsFenced(t *testing.T) {
	pool := migratedPool(t)
	release := make(chan struct{})
	results := make(chan error, 2)
	def := WorkflowDef{
		Workflow: interop.Workflow{ID: "slow"},
		Run: func(ctx context.Context, rc *RunContext) (json.RawMessage, error) {
			<-release
			err := rc.PublishArtifact(interop.Artifact{ID: "late", Parts: []interop.Part{interop.TextPart("x")}}, false, true)
			results <- err
			return nil, err
		},
	}
	// Long leases: the test expires A's by hand, as if A had stalled.
	a, b := openStore(t, pool, WithLeaseTTL(time.Hour)), openStore(t, pool, WithLeaseTTL(time.Hour))
	for _, s := range []*Store{a, b} {
		if err := s.Register(tenantA, def); err != nil {
			t.Fatal(err)
		}
	}
	run := mustCreate(t, a, alice(), interop.CreateRunRequest{WorkflowID: "slow"})
	if _, err := pool.Exec(testCtx(t), `UPDATE wopinterop_runs SET lease_until = now() - interval '1 second' WHERE id = $1`, run.ID); err != nil {
		t.Fatal(err)
	}
	b.takeOver()
	close(release) // both executions now try to publish
	var errs []error
	for range 2 {
		errs = append(errs, <-results)
	}
	fenced := 0
	for _, err := range errs {
		if errors.Is(err, errLeaseFenced) {
			fenced++
		} else if err != nil {
			t.Errorf("publish: %v", err)
		}
	}
	if fenced != 1 {
		t.Fatalf("publish results %v: want exactly the stale replica's refused", errs)
	}
	done := waitStatus(t, b, alice(), run.ID, interop.StatusCompleted)
	if len(done.Artifacts) != 1 {
		t.Errorf("artifacts = %+v, want one", done.Artifacts)
	}
	checkLog(t, events(t, b, alice(), run.ID), map[interop.EventType]int{interop.EventArtifactCreated: 1, interop.EventRunCompleted: 1})
}

// TestReplayRefusesADifferentEffect: a workflow that, run again, makes
// another effect than the recorded one fails the run instead of writing
// over its history.
func TestReplayRefusesADifferentEffect(t *testing.T) {
	pool := migratedPool(t)
	var starts atomic.Int32
	def := WorkflowDef{
		Workflow: interop.Workflow{ID: "fickle"},
		Run: func(ctx context.Context, rc *RunContext) (json.RawMessage, error) {
			n := starts.Add(1)
			_, err := rc.Interrupt(ctx, interop.Interrupt{Kind: interop.InterruptApproval, Key: fmt.Sprint("key-", n)})
			return nil, err
		},
	}
	opts := []Option{WithLeaseTTL(300 * time.Millisecond)}
	a, b := openStore(t, pool, opts...), openStore(t, pool, opts...)
	for _, s := range []*Store{a, b} {
		if err := s.Register(tenantA, def); err != nil {
			t.Fatal(err)
		}
	}
	run := mustCreate(t, a, alice(), interop.CreateRunRequest{WorkflowID: "fickle"})
	waitStatus(t, a, alice(), run.ID, interop.StatusWaitingApproval)
	a.crash()
	failed := waitStatus(t, b, alice(), run.ID, interop.StatusFailed)
	if failed.FailureCode != codeInternal || failed.FailureMessage != genericFailure {
		t.Errorf("failed run: %q %q", failed.FailureCode, failed.FailureMessage)
	}
}

// TestGapFreeAcrossReplicas: appends on two replicas at once, watched on
// both; every watcher sees 0, 1, 2, … and the same log.
func TestGapFreeAcrossReplicas(t *testing.T) {
	pool := migratedPool(t)
	a, b := openStore(t, pool), openStore(t, pool)
	sub := alice()
	run := mustCreate(t, a, sub, interop.CreateRunRequest{WorkflowID: FixtureApproval})
	suspended := waitStatus(t, a, sub, run.ID, interop.StatusWaitingApproval)

	var watchers sync.WaitGroup
	logs := make([][]interop.RunEvent, 4)
	for i := range logs {
		s := []*Store{a, b}[i%2]
		seq, err := s.WatchRun(testCtx(t), sub, run.ID, -1)
		if err != nil {
			t.Fatal(err)
		}
		watchers.Go(func() {
			for ev, err := range seq {
				if err != nil {
					t.Error(err)
					return
				}
				logs[i] = append(logs[i], ev)
			}
		})
	}
	const writers, each = 6, 25
	var wg sync.WaitGroup
	for w := range writers {
		s := []*Store{a, b}[w%2]
		wg.Go(func() {
			for range each {
				ev, _ := interop.NewRunEvent("acme.audit-noted", map[string]int{"writer": w})
				if err := s.AppendRunEvent(context.Background(), run.ID, ev); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	in, _ := suspended.OpenInterrupt()
	if _, err := b.ResolveInterrupt(testCtx(t), sub, interop.ResolveRequest{
		RunID: run.ID, InterruptID: in.ID, Value: json.RawMessage(`{"action":"accept"}`),
	}); err != nil {
		t.Fatal(err)
	}
	watchers.Wait()
	want := 2 + writers*each + 2 // started, suspended, audits, resolved, completed
	for i, log := range logs {
		if len(log) != want {
			t.Fatalf("watcher %d saw %d events, want %d", i, len(log), want)
		}
		checkLog(t, log, map[interop.EventType]int{"acme.audit-noted": writers * each})
		if i > 0 {
			if diff := cmp.Diff(ids(logs[0]), ids(log)); diff != "" {
				t.Errorf("watcher %d saw another log (-0 +%d):\n%s", i, i, diff)
			}
		}
	}
}

func ids(evs []interop.RunEvent) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = ev.EventID
	}
	return out
}

// TestWatchSurvivesALostListener: the notification connection is killed
// while a watch waits on another replica's writes; the poll delivers them,
// and the listener comes back.
func TestWatchSurvivesALostListener(t *testing.T) {
	pool := migratedPool(t)
	a := openStore(t, pool, WithPollInterval(50*time.Millisecond))
	b := openStore(t, pool)
	sub := alice()
	run := mustCreate(t, b, sub, interop.CreateRunRequest{WorkflowID: FixtureApproval})
	suspended := waitStatus(t, b, sub, run.ID, interop.StatusWaitingApproval)
	if _, err := pool.Exec(testCtx(t), `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND query = 'LISTEN wopinterop'`); err != nil {
		t.Fatal(err)
	}
	seq, err := a.WatchRun(testCtx(t), sub, run.ID, suspended.LastSequence)
	if err != nil {
		t.Fatal(err)
	}
	in, _ := suspended.OpenInterrupt()
	if _, err := b.ResolveInterrupt(testCtx(t), sub, interop.ResolveRequest{
		RunID: run.ID, InterruptID: in.ID, Value: json.RawMessage(`{"action":"accept"}`),
	}); err != nil {
		t.Fatal(err)
	}
	var got []interop.EventType
	for ev, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev.Type)
	}
	if want := []interop.EventType{interop.EventInterruptResolved, interop.EventRunCompleted}; !slices.Equal(got, want) {
		t.Fatalf("watch after the listener died = %v, want %v", got, want)
	}
	// Every store listens again.
	deadline := time.Now().Add(10 * time.Second)
	for {
		var n int
		if err := pool.QueryRow(testCtx(t), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND query = 'LISTEN wopinterop'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d listeners after the connection was killed, want 2", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestPollingAcrossReplicas: a replica without notifications still sees
// another replica's writes (its watch polls) and is still told to cancel
// the run it executes (its lease renewal reads the status).
func TestPollingAcrossReplicas(t *testing.T) {
	pool := migratedPool(t)
	deaf := openStore(t, pool, WithoutNotifications(), WithPollInterval(20*time.Millisecond), WithLeaseTTL(300*time.Millisecond))
	other := openStore(t, pool)
	sub := alice()

	run := mustCreate(t, other, sub, interop.CreateRunRequest{WorkflowID: FixtureApproval})
	suspended := waitStatus(t, other, sub, run.ID, interop.StatusWaitingApproval)
	seq, err := deaf.WatchRun(testCtx(t), sub, run.ID, suspended.LastSequence)
	if err != nil {
		t.Fatal(err)
	}
	in, _ := suspended.OpenInterrupt()
	if _, err := other.ResolveInterrupt(testCtx(t), sub, interop.ResolveRequest{
		RunID: run.ID, InterruptID: in.ID, Value: json.RawMessage(`{"action":"accept"}`),
	}); err != nil {
		t.Fatal(err)
	}
	var got []interop.EventType
	for ev, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev.Type)
	}
	if want := []interop.EventType{interop.EventInterruptResolved, interop.EventRunCompleted}; !slices.Equal(got, want) {
		t.Fatalf("polling watch = %v, want %v", got, want)
	}

	long := mustCreate(t, deaf, sub, interop.CreateRunRequest{WorkflowID: FixtureCancellable})
	if _, err := other.CancelRun(testCtx(t), sub, long.ID, "stop"); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, other, sub, long.ID, interop.StatusCancelled)
}

// TestEventTimesNeverGoBack: a run's status times are its events' times,
// and a replica whose clock lags another's still appends no event earlier
// than the one before it.
func TestEventTimesNeverGoBack(t *testing.T) {
	pool := migratedPool(t)
	ahead := newManualClock()
	behind := func() time.Time { return ahead.Now().Add(-time.Hour) }
	a, b := openStore(t, pool, WithClock(ahead.Now)), openStore(t, pool, WithClock(behind))
	sub := alice()
	run := mustCreate(t, a, sub, interop.CreateRunRequest{WorkflowID: FixtureApproval})
	suspended := waitStatus(t, a, sub, run.ID, interop.StatusWaitingApproval)
	in, _ := suspended.OpenInterrupt()
	if _, err := b.ResolveInterrupt(testCtx(t), sub, interop.ResolveRequest{
		RunID: run.ID, InterruptID: in.ID, Value: json.RawMessage(`{"action":"accept"}`),
	}); err != nil {
		t.Fatal(err)
	}
	done := waitStatus(t, a, sub, run.ID, interop.StatusCompleted)
	evs := events(t, b, sub, run.ID)
	for i := 1; i < len(evs); i++ {
		if evs[i].Timestamp.Before(evs[i-1].Timestamp) {
			t.Errorf("event %d (%s) at %v is before event %d at %v", i, evs[i].Type, evs[i].Timestamp, i-1, evs[i-1].Timestamp)
		}
	}
	if !evs[0].Timestamp.Equal(done.CreatedAt) || !evs[len(evs)-1].Timestamp.Equal(done.StatusAt) {
		t.Errorf("run created %v, status at %v; run.started at %v, run.completed at %v: want equal", done.CreatedAt, done.StatusAt, evs[0].Timestamp, evs[len(evs)-1].Timestamp)
	}
}
