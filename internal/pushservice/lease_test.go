package pushservice

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wopinterop/wopinterop/egress"
	"github.com/wopinterop/wopinterop/push"
)

// errGone is what a gatedOutbox answers while its worker is cut off.
var errGone = errors.New("outbox unreachable")

// gatedOutbox is one worker's view of a shared outbox: cut off, every
// call fails as if the worker's process were gone or partitioned;
// noRenew fails only Renew; take, when set, limits what the worker keeps
// of a Lease (the rest is released at once). It counts the Removes the
// worker made.
type gatedOutbox struct {
	push.Outbox
	owner   string
	cut     atomic.Bool
	noRenew atomic.Bool
	take    func(push.Delivery) bool
	removed atomic.Int32
}

func (o *gatedOutbox) Put(ctx context.Context, d push.Delivery) error {
	if o.cut.Load() {
		return errGone
	}
	return o.Outbox.Put(ctx, d)
}

func (o *gatedOutbox) Lease(ctx context.Context, owner string, max int, ttl time.Duration) ([]push.Delivery, error) {
	if o.cut.Load() {
		return nil, errGone
	}
	got, err := o.Outbox.Lease(ctx, owner, max, ttl)
	if err != nil || o.take == nil {
		return got, err
	}
	kept := got[:0]
	for _, d := range got {
		if o.take(d) {
			kept = append(kept, d)
		} else if err := o.Outbox.Release(ctx, owner, d.ID); err != nil {
			return nil, err
		}
	}
	return kept, nil
}

func (o *gatedOutbox) Renew(ctx context.Context, owner string, ids []string, ttl time.Duration) ([]string, error) {
	if o.cut.Load() || o.noRenew.Load() {
		return nil, errGone
	}
	return o.Outbox.Renew(ctx, owner, ids, ttl)
}

func (o *gatedOutbox) Release(ctx context.Context, owner, id string) error {
	if o.cut.Load() {
		return errGone
	}
	return o.Outbox.Release(ctx, owner, id)
}

func (o *gatedOutbox) Remove(ctx context.Context, id string) error {
	if o.cut.Load() {
		return errGone
	}
	err := o.Outbox.Remove(ctx, id)
	if err == nil {
		o.removed.Add(1)
	}
	return err
}

// withLease sets the lease duration and the poll interval.
func withLease(ttl, poll time.Duration) envOption {
	return func(c *envConfig) { c.opts.LeaseTTL, c.opts.OutboxPoll = ttl, poll }
}

// withGate puts the env's worker behind gate, over the env's outbox.
func withGate(gate *gatedOutbox) envOption {
	return func(c *envConfig) {
		gate.Outbox = c.opts.Outbox
		c.opts.Outbox = gate
	}
}

// replica starts a second worker over e's stores, as another replica of
// the host: its own owner and logs, a guard allowing origins, the dial
// function dial (nil: a loopback dialler), and the options change edits.
// It is started before any config is registered on e, so it follows no
// run of its own: it only drains the outbox.
func (e *pushEnv) replica(t *testing.T, origins []string, dial func(ctx context.Context, network, address string) (net.Conn, error), change func(*push.Options)) (*Service, *syncBuffer) {
	t.Helper()
	if dial == nil {
		dial = newDialLog(t).dial
	}
	guard, err := egress.NewGuard(egress.GuardOptions{AllowOrigins: origins, Resolver: e.resolver, Dial: dial})
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	o := push.Options{
		Events: e.events, Guard: guard, Configs: e.configs, Vault: e.vault, Outbox: e.outbox, Retry: fastRetry(),
		Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if change != nil {
		change(&o)
	}
	svc, err := New(e.store, testProjector(), o)
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = svc.Close(ctx)
	})
	return svc, logs
}

// keyOf is a push's Idempotency-Key.
func keyOf(r received) string { return r.header.Get("Idempotency-Key") }

var keyForm = regexp.MustCompile(`^"dl-[A-Za-z0-9_-]{22}"$`)

// TestIdempotencyKeyIsStable: every push carries an Idempotency-Key
// (draft-ietf-httpapi-idempotency-key-header) that is the same on each
// attempt of the push and different for every other push, so a receiver
// can drop a duplicate of at-least-once delivery.
func TestIdempotencyKeyIsStable(t *testing.T) {
	var calls atomic.Int32
	rc := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) {
		if calls.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	e := newPushEnv(t, withAllow(rc.origin()))
	run := e.suspended(t, e.alice, 2)
	e.register(t, e.alice, run, Spec{URL: rc.origin(), Token: secretToken})
	e.accept(t, e.alice, run)
	var keys, labels []string
	for range 5 { // WORKING twice (503, then 204), two chunks, COMPLETED
		r := rc.next(t)
		if !keyForm.MatchString(keyOf(r)) || len(r.header["Idempotency-Key"]) != 1 {
			t.Fatalf("Idempotency-Key %q, want one sf-string \"dl-\" + 22 base64url characters", r.header["Idempotency-Key"])
		}
		keys, labels = append(keys, keyOf(r)), append(labels, label(t, r.body))
	}
	if diff := cmp.Diff([]string{"TASK_STATE_WORKING", "TASK_STATE_WORKING", "chunk 0", "chunk 1", "TASK_STATE_COMPLETED"}, labels); diff != "" {
		t.Fatalf("pushes (-want +got):\n%s", diff)
	}
	if keys[0] != keys[1] {
		t.Errorf("the retry of a push carries another key: %s then %s", keys[0], keys[1])
	}
	seen := map[string]bool{}
	for _, k := range keys[1:] {
		if seen[k] {
			t.Errorf("two pushes share the key %s", k)
		}
		seen[k] = true
	}
}

// flakyAdvance fails the next Advance calls while fail is above zero and
// counts every call.
type flakyAdvance struct {
	push.ConfigStore
	fail  atomic.Int32
	calls atomic.Int32
}

func (c *flakyAdvance) Advance(ctx context.Context, taskID string, seq int64) error {
	c.calls.Add(1)
	if c.fail.Add(-1) >= 0 {
		return errors.New("config store down")
	}
	return c.ConfigStore.Advance(ctx, taskID, seq)
}

// TestRequeuedEventIsQueuedOnce: when the watermark cannot be raised
// after an event was queued, the watcher queues the event again; the
// second pass names the same deliveries, which the outbox already holds,
// so every push is sent once.
func TestRequeuedEventIsQueuedOnce(t *testing.T) {
	hold := make(chan struct{})
	var first atomic.Bool
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		if first.CompareAndSwap(false, true) {
			select {
			case <-hold:
			case <-r.Context().Done():
			}
		}
		w.WriteHeader(http.StatusNoContent)
	})
	flaky := &flakyAdvance{}
	e := newPushEnv(t, withAllow(rc.origin()), func(c *envConfig) {
		flaky.ConfigStore = c.opts.Configs
		c.opts.Configs = flaky
	})
	run := e.suspended(t, e.alice, 1)
	e.register(t, e.alice, run, Spec{URL: rc.origin(), Token: secretToken})
	flaky.fail.Store(1)
	e.accept(t, e.alice, run)
	working := rc.next(t) // held while its event is queued again
	waitFor(t, "the event queued a second time", func() bool { return flaky.calls.Load() >= 2 })
	close(hold)
	got := []string{label(t, working.body)}
	got = append(got, rc.collect(t, 2)...)
	if diff := cmp.Diff(wantLabels(1), got); diff != "" {
		t.Fatalf("pushes (-want +got):\n%s", diff)
	}
	rc.none(t, 200*time.Millisecond)
	waitFor(t, "the outbox drained", func() bool { return e.outbox.Len() == 0 })
}

// TestTwoWorkersDrainOneOutbox: two workers share one outbox, one taking
// only the pushes of even run events and the other only those of odd
// ones, so a lane passes from worker to worker at every push. The receiver still gets
// every push once, in run order: only a lane's head is leased.
func TestTwoWorkersDrainOneOutbox(t *testing.T) {
	rc := newReceiver(t, nil)
	even := &gatedOutbox{take: func(d push.Delivery) bool { return d.Sequence%2 == 0 }}
	e := newPushEnv(t, withAllow(rc.origin()), withLease(time.Minute, 5*time.Millisecond), withGate(even))
	other := &gatedOutbox{Outbox: e.outbox, take: func(d push.Delivery) bool { return d.Sequence%2 != 0 }}
	e.replica(t, []string{rc.origin()}, nil, func(o *push.Options) {
		o.Outbox, o.LeaseTTL, o.OutboxPoll = other, time.Minute, 5*time.Millisecond
	})
	const chunks = 12
	run := e.suspended(t, e.alice, chunks)
	e.register(t, e.alice, run, Spec{URL: rc.origin(), Token: secretToken})
	e.accept(t, e.alice, run)
	if diff := cmp.Diff(wantLabels(chunks), rc.collect(t, chunks+2)); diff != "" {
		t.Fatalf("pushes (-want +got):\n%s", diff)
	}
	rc.none(t, 100*time.Millisecond)
	waitFor(t, "the outbox drained", func() bool { return e.outbox.Len() == 0 })
	a, b := even.removed.Load(), other.removed.Load()
	if a == 0 || b == 0 || a+b != chunks+2 {
		t.Fatalf("the workers finished %d and %d pushes, want both some, %d in all", a, b, chunks+2)
	}
}

// TestTakeoverWhenAWorkerDies: the worker that queued a task's pushes
// dies while its receiver holds the first one. Once its lease expires a
// second worker takes the push over and sends it again — at least once,
// with the same Idempotency-Key — then the rest, in order, each once.
func TestTakeoverWhenAWorkerDies(t *testing.T) {
	hold := make(chan struct{})
	var first atomic.Bool
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		if first.CompareAndSwap(false, true) {
			select {
			case <-hold:
			case <-r.Context().Done():
			}
		}
		w.WriteHeader(http.StatusNoContent)
	})
	dying := &gatedOutbox{}
	e := newPushEnv(t, withAllow(rc.origin()), withLease(200*time.Millisecond, time.Hour), withGate(dying))
	t.Cleanup(func() { dying.cut.Store(false); close(hold) })
	e.replica(t, []string{rc.origin()}, nil, func(o *push.Options) { o.LeaseTTL, o.OutboxPoll = 200*time.Millisecond, 10*time.Millisecond })
	const chunks = 3
	run := e.suspended(t, e.alice, chunks)
	e.register(t, e.alice, run, Spec{URL: rc.origin(), Token: secretToken})
	e.accept(t, e.alice, run)
	held := rc.next(t)
	waitFor(t, "every push queued", func() bool { return e.outbox.Len() == chunks+2 })
	dying.cut.Store(true)
	start := time.Now()
	again := rc.next(t)
	if took := time.Since(start); took < 100*time.Millisecond {
		t.Errorf("taken over after %v, before the lease could expire", took)
	}
	if label(t, again.body) != label(t, held.body) || keyOf(again) != keyOf(held) {
		t.Fatalf("taken over: %s with key %s, want the held push %s again with key %s", label(t, again.body), keyOf(again), label(t, held.body), keyOf(held))
	}
	got := append([]string{label(t, again.body)}, rc.collect(t, chunks+1)...)
	if diff := cmp.Diff(wantLabels(chunks), got); diff != "" {
		t.Fatalf("pushes after the takeover (-want +got):\n%s", diff)
	}
	rc.none(t, 100*time.Millisecond)
	waitFor(t, "the outbox drained", func() bool { return e.outbox.Len() == 0 })
}

// TestLostLeaseStopsItsDelivery: a worker cut off from the receiver and
// unable to renew its lease keeps retrying a push while another worker
// takes it over and delivers it. Once the first worker reaches the outbox
// again, Renew tells it the lease is lost, and it stops attempting the
// push. (Neither worker takes the task's final push, so the config stays
// live and nothing else would stop the first worker.)
func TestLostLeaseStopsItsDelivery(t *testing.T) {
	rc := newReceiver(t, nil)
	var dials atomic.Int32
	partitioned := func(context.Context, string, string) (net.Conn, error) {
		dials.Add(1)
		return nil, errors.New("network unreachable")
	}
	notFinal := func(d push.Delivery) bool { return !d.Final }
	gate := &gatedOutbox{take: notFinal}
	e := newPushEnv(t, withAllow(rc.origin()), withLease(150*time.Millisecond, time.Hour), withGate(gate),
		withRetry(push.RetryPolicy{MaxAttempts: 100000, Backoff: push.BackoffFixed, Delay: 5 * time.Millisecond, AttemptTimeout: time.Second}),
		func(c *envConfig) { c.guard.Dial = partitioned })
	e.replica(t, []string{rc.origin()}, nil, func(o *push.Options) {
		o.Outbox, o.LeaseTTL, o.OutboxPoll = &gatedOutbox{Outbox: e.outbox, take: notFinal}, 150*time.Millisecond, 10*time.Millisecond
	})
	run := e.suspended(t, e.alice, 0)
	e.register(t, e.alice, run, Spec{URL: rc.origin(), Token: secretToken})
	gate.noRenew.Store(true)
	e.accept(t, e.alice, run)
	waitFor(t, "failed attempts", func() bool { return dials.Load() >= 3 })
	if got := rc.collect(t, 1); got[0] != "TASK_STATE_WORKING" {
		t.Fatalf("the other worker pushed %v, want WORKING", got)
	}
	gate.noRenew.Store(false)
	waitFor(t, "the lost lease noticed", func() bool { return strings.Contains(e.logs.String(), "push: leases lost") })
	time.Sleep(50 * time.Millisecond) // an attempt under way ends
	n := dials.Load()
	time.Sleep(200 * time.Millisecond)
	if more := dials.Load() - n; more > 0 {
		t.Fatalf("%d more attempts after the lease was lost", more)
	}
}
