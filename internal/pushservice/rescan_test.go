package pushservice

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/push"
)

// Test workflow: waits for an approval, publishes chunk 0 of inputs.n,
// then waits until the test releases it, publishes the other chunks and
// completes. Chunk 1 does not change the run's status, so a follower that
// resumes after chunk 0 must know the status there to render it right.
const pausedWorkflow = "push-paused"

func pausedDef(release <-chan struct{}) memstore.WorkflowDef {
	return memstore.WorkflowDef{
		Workflow: interop.Workflow{
			ID: pausedWorkflow, Name: pausedWorkflow,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","minimum":2}}}`),
		},
		Run: func(ctx context.Context, rc *memstore.RunContext) (json.RawMessage, error) {
			var in struct{ N int }
			if err := json.Unmarshal(rc.Inputs(), &in); err != nil {
				return nil, err
			}
			if _, err := rc.Interrupt(ctx, interop.Interrupt{Kind: interop.InterruptApproval, Key: "go", Message: "go?", Actions: []string{"accept"}}); err != nil {
				return nil, err
			}
			for i := range in.N {
				if i == 1 {
					select {
					case <-release:
					case <-ctx.Done():
						return nil, ctx.Err()
					}
				}
				a := interop.Artifact{ID: "out", Parts: []interop.Part{interop.TextPart(fmt.Sprintf("chunk %d", i))}}
				if err := rc.PublishArtifact(a, i > 0, i == in.N-1); err != nil {
					return nil, err
				}
			}
			return json.RawMessage(`{}`), nil
		},
	}
}

// liveStore is a replica's view of the shared config store whose Live
// the test controls: held, Live waits until resumed (a slow store, or a
// rescan tick that comes later); fail and panics make the next calls
// fail or panic. It counts the calls.
type liveStore struct {
	push.ConfigStore
	mu     sync.Mutex
	hold   chan struct{}
	calls  atomic.Int32
	fail   atomic.Int32
	panics atomic.Int32
	// afterRead, when set, runs once Live has read the records, before it
	// returns them.
	afterRead func()
}

func (c *liveStore) Live(ctx context.Context) ([]push.Record, error) {
	c.calls.Add(1)
	c.mu.Lock()
	hold := c.hold
	c.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if c.panics.Add(-1) >= 0 {
		panic("config store broke: " + secretToken)
	}
	if c.fail.Add(-1) >= 0 {
		return nil, errors.New("config store down: " + secretToken)
	}
	recs, err := c.ConfigStore.Live(ctx)
	if c.afterRead != nil {
		c.afterRead()
	}
	return recs, err
}

func (c *liveStore) pause() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hold = make(chan struct{})
}

func (c *liveStore) resume() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.hold != nil {
		close(c.hold)
		c.hold = nil
	}
}

// withRescan sets how often the env's service reads the live configs.
func withRescan(d time.Duration) envOption {
	return func(c *envConfig) { c.opts.WatchRescan = d }
}

// crash ends svc as a crashed process ends: gate cuts it off the shared
// outbox first, so nothing it does afterwards reaches the outbox — it
// queues, drains and releases nothing — then its goroutines stop (Close
// under an ended context abandons the drain at once). Leases it held
// lapse after LeaseTTL.
func crash(t *testing.T, svc *Service, gate *gatedOutbox) {
	t.Helper()
	gate.cut.Store(true)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = svc.Close(ctx)
}

// follows reports whether svc has a watcher of task.
func follows(svc *Service, task string) bool {
	svc.mu.Lock()
	defer svc.mu.Unlock()
	w := svc.watchers[task]
	return w != nil && !w.stopped
}

// TestRescanFollowsARunAfterItsReplicaDies: replica A registers a config
// and queues the run's first pushes, then dies; the run goes on and ends.
// Replica B, started before the registration, never followed the run;
// its rescan finds the live config and follows the run from A's
// watermark, so the receiver gets every push once, in run order — the
// first chunk after the watermark without a repeated status.
func TestRescanFollowsARunAfterItsReplicaDies(t *testing.T) {
	rc := newReceiver(t, nil)
	dying := &gatedOutbox{}
	e := newPushEnv(t, withAllow(rc.origin()), withLease(200*time.Millisecond, 10*time.Millisecond), withGate(dying), withRescan(time.Hour))
	release := make(chan struct{})
	var once sync.Once
	releaseRun := func() { once.Do(func() { close(release) }) }
	t.Cleanup(releaseRun)
	if err := e.store.Register("acme", pausedDef(release)); err != nil {
		t.Fatal(err)
	}
	live := &liveStore{ConfigStore: e.configs}
	b, _ := e.replica(t, []string{rc.origin()}, nil, func(o *push.Options) {
		o.Configs, o.LeaseTTL, o.OutboxPoll, o.WatchRescan = live, 200*time.Millisecond, 10*time.Millisecond, 20*time.Millisecond
	})
	live.pause() // B's rescans wait until A is gone

	const chunks = 4
	run := e.suspendedOf(t, e.alice, pausedWorkflow, chunks)
	e.register(t, e.alice, run, Spec{URL: rc.origin(), Token: secretToken})
	e.accept(t, e.alice, run)
	var keys []string
	var got []string
	for range 2 { // WORKING, chunk 0: queued by A
		r := rc.next(t)
		keys, got = append(keys, keyOf(r)), append(got, label(t, r.body))
	}
	waitFor(t, "A's watermark at chunk 0", func() bool {
		cur, err := e.store.GetRun(context.Background(), e.alice, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		recs, _ := e.configs.List(context.Background(), run.ID)
		return len(recs) == 1 && recs[0].After == cur.LastSequence && e.outbox.Len() == 0
	})
	crash(t, e.svc, dying)
	if follows(b, run.ID) {
		t.Fatal("B followed the run before its rescan")
	}

	releaseRun() // the run goes on with nobody following it
	live.resume()
	for range chunks { // chunks 1…n-1, COMPLETED: queued by B
		r := rc.next(t)
		keys, got = append(keys, keyOf(r)), append(got, label(t, r.body))
	}
	if diff := cmp.Diff(wantLabels(chunks), got); diff != "" {
		t.Fatalf("pushes (-want +got):\n%s", diff)
	}
	rc.none(t, 200*time.Millisecond)
	seen := map[string]bool{}
	for _, k := range keys {
		if seen[k] {
			t.Errorf("the push with key %s was delivered twice", k)
		}
		seen[k] = true
	}
	waitFor(t, "the outbox drained and the config finished", func() bool {
		recs, _ := e.configs.List(context.Background(), run.ID)
		return e.outbox.Len() == 0 && len(recs) == 1 && recs[0].Done
	})
}

// TestTwoReplicasFollowOneRun: both replicas follow one run — A since
// the registration, B since its rescan — and both queue each push. They
// name it alike and render it alike, so the receiver gets every push in
// run order, and a key it sees twice (B queued a push again after A had
// sent and removed it: the at-least-once window) carries the same body.
func TestTwoReplicasFollowOneRun(t *testing.T) {
	rc := newReceiver(t, nil)
	e := newPushEnv(t, withAllow(rc.origin()), withLease(time.Minute, 5*time.Millisecond), withRescan(time.Hour))
	b, _ := e.replica(t, []string{rc.origin()}, nil, func(o *push.Options) {
		o.LeaseTTL, o.OutboxPoll, o.WatchRescan = time.Minute, 5*time.Millisecond, 5*time.Millisecond
	})
	const chunks = 12
	run := e.suspended(t, e.alice, chunks)
	e.register(t, e.alice, run, Spec{URL: rc.origin(), Token: secretToken})
	waitFor(t, "B following the run", func() bool { return follows(b, run.ID) })
	e.accept(t, e.alice, run)
	bodies := map[string]string{}
	var got []string
	dups := 0
	for len(got) < chunks+2 {
		r := rc.next(t)
		k, l := keyOf(r), label(t, r.body)
		if prev, ok := bodies[k]; ok {
			dups++
			if prev != string(r.body) {
				t.Errorf("key %s came with two bodies:\n%s\n%s", k, prev, r.body)
			}
			continue
		}
		bodies[k] = string(r.body)
		got = append(got, l)
	}
	if diff := cmp.Diff(wantLabels(chunks), got); diff != "" {
		t.Fatalf("pushes, duplicates dropped (-want +got):\n%s", diff)
	}
	waitFor(t, "the outbox drained", func() bool { return e.outbox.Len() == 0 })
	t.Logf("%d pushes, %d sent again within the at-least-once window", len(got), dups)
}

// TestRescanFollowsOnlyLiveTasks: a replica's rescan follows a task whose
// config another replica registered, but not one whose config was
// deleted or registered on a finished run (done at once); and it stops
// following a task once its configs are deleted elsewhere.
func TestRescanFollowsOnlyLiveTasks(t *testing.T) {
	rc := newReceiver(t, nil)
	e := newPushEnv(t, withAllow(rc.origin()), withRescan(time.Hour))
	live := &liveStore{ConfigStore: e.configs}
	b, _ := e.replica(t, []string{rc.origin()}, nil, func(o *push.Options) { o.Configs, o.WatchRescan = live, 10*time.Millisecond })
	ctx := context.Background()

	followed := e.suspended(t, e.alice, 1)
	e.register(t, e.alice, followed, Spec{URL: rc.origin()})
	deleted := e.suspended(t, e.alice, 1)
	gone := e.register(t, e.alice, deleted, Spec{URL: rc.origin()})
	if err := e.svc.Delete(ctx, deleted.ID, gone.ID); err != nil {
		t.Fatal(err)
	}
	finished := e.suspended(t, e.alice, 0)
	e.accept(t, e.alice, finished)
	waitFor(t, "the run finished", func() bool {
		r, err := e.store.GetRun(ctx, e.alice, finished.ID)
		return err == nil && r.Status.Terminal()
	})
	finished, _ = e.store.GetRun(ctx, e.alice, finished.ID)
	e.register(t, e.alice, finished, Spec{URL: rc.origin()})

	waitFor(t, "B's rescan following the live task", func() bool { return follows(b, followed.ID) })
	n := live.calls.Load()
	waitFor(t, "two more rescans", func() bool { return live.calls.Load() >= n+2 })
	for _, id := range []string{deleted.ID, finished.ID} {
		if follows(b, id) {
			t.Errorf("B follows task %s, which has no live config", id)
		}
	}

	// The last config is deleted on A: B's next rescan stops its watcher.
	recs, _ := e.configs.List(ctx, followed.ID)
	if err := e.svc.Delete(ctx, followed.ID, recs[0].ID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "B no longer following the task", func() bool { return !follows(b, followed.ID) })
	rc.none(t, 50*time.Millisecond)
}

// TestRescanKeepsAConfigRegisteredWhileItReads: a config registered on
// the replica while its rescan reads the live configs is missing from
// what the rescan read; the rescan must not take that for a deleted
// config and stop the task's new watcher.
func TestRescanKeepsAConfigRegisteredWhileItReads(t *testing.T) {
	rc := newReceiver(t, nil)
	live := &liveStore{}
	e := newPushEnv(t, withAllow(rc.origin()), withRescan(time.Hour), func(c *envConfig) {
		live.ConfigStore = c.opts.Configs
		c.opts.Configs = live
	})
	run := e.suspended(t, e.alice, 1)
	live.afterRead = func() { e.register(t, e.alice, run, Spec{URL: rc.origin()}) }
	e.svc.rescanOnce(context.Background())
	if !follows(e.svc, run.ID) {
		t.Fatal("the rescan stopped the watcher of a config registered while it read")
	}
	live.afterRead = nil
	e.accept(t, e.alice, run)
	if diff := cmp.Diff(wantLabels(1), rc.collect(t, 3)); diff != "" {
		t.Fatalf("pushes (-want +got):\n%s", diff)
	}
}

// TestRescanSurvivesAFailingConfigStore: a Live that fails, then one that
// panics, is logged — ids only, never its error text or panic value,
// which may hold a secret — and read again at the next tick, which
// follows the task.
func TestRescanSurvivesAFailingConfigStore(t *testing.T) {
	rc := newReceiver(t, nil)
	e := newPushEnv(t, withAllow(rc.origin()), withRescan(time.Hour))
	live := &liveStore{ConfigStore: e.configs}
	b, logs := e.replica(t, []string{rc.origin()}, nil, func(o *push.Options) { o.Configs, o.WatchRescan = live, 10*time.Millisecond })
	live.fail.Store(1)
	live.panics.Store(1)
	run := e.suspended(t, e.alice, 1)
	e.register(t, e.alice, run, Spec{URL: rc.origin(), Token: secretToken})
	waitFor(t, "B following the task", func() bool { return follows(b, run.ID) })
	text := logs.String()
	if !strings.Contains(text, "push: reading live configs failed") {
		t.Errorf("the failing Live was not logged: %s", text)
	}
	if got := panicLines(t, text); len(got) != 1 || !strings.Contains(got[0], `"in":"the config store"`) {
		t.Errorf("the panicking Live was logged as %q, want once, in the config store", got)
	}
	mustNotContain(t, "the logs", text, secretToken)
}

// TestRescanStopsOnClose: the rescan is a goroutine of the service that
// reads the live configs every tick, and Close ends it.
func TestRescanStopsOnClose(t *testing.T) {
	e := newPushEnv(t, withRescan(time.Hour))
	live := &liveStore{ConfigStore: e.configs}
	b, _ := e.replica(t, nil, nil, func(o *push.Options) { o.Configs, o.WatchRescan = live, 5*time.Millisecond })
	waitFor(t, "rescans", func() bool { return live.calls.Load() >= 3 })
	if !rescanRunning() {
		t.Fatal("no rescan goroutine while the service runs")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := b.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if rescanRunning() {
		t.Fatal("a rescan goroutine outlived Close")
	}
	n := live.calls.Load()
	time.Sleep(30 * time.Millisecond)
	if more := live.calls.Load() - n; more > 0 {
		t.Fatalf("%d rescans after Close", more)
	}
}

// rescanRunning reports whether any goroutine runs Service.rescan.
func rescanRunning() bool {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Contains(string(buf[:n]), "pushservice.(*Service).rescan(")
		}
		buf = make([]byte, 2*len(buf))
	}
}
