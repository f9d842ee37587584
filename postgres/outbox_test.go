package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wopinterop/wopinterop/postgres/internal/pgtest"
	"github.com/wopinterop/wopinterop/push"
	"github.com/wopinterop/wopinterop/push/pushtest"
)

func openOutbox(t testing.TB, pool *pgxpool.Pool) *Outbox {
	t.Helper()
	o, err := NewOutbox(testCtx(t), pool)
	if err != nil {
		t.Fatalf("NewOutbox: %v", err)
	}
	return o
}

// twoOutboxes is a fresh migrated database and an outbox on each of two
// pools on it: two replicas.
func twoOutboxes(t testing.TB) [2]*Outbox {
	t.Helper()
	dsn := pgtest.NewDSN(t)
	if _, err := Migrate(testCtx(t), pgtest.Pool(t, dsn)); err != nil {
		t.Fatal(err)
	}
	return [2]*Outbox{openOutbox(t, pgtest.Pool(t, dsn)), openOutbox(t, pgtest.Pool(t, dsn))}
}

// The PostgreSQL outbox passes the push kit's Outbox checks, with a
// second connection pool on the same database as the second replica.
func TestOutboxConformance(t *testing.T) {
	set := newReplicaSet(func(t testing.TB, pool *pgxpool.Pool) push.Outbox { return openOutbox(t, pool) })
	pushtest.RunConformance(t, pushtest.Harness{NewOutbox: set.first, OutboxReplica: set.replica})
}

func outboxDelivery(task, config string, seq int64) push.Delivery {
	return push.Delivery{ID: fmt.Sprintf("dl-%s-%s-%d", task, config, seq), TaskID: task, ConfigID: config,
		Sequence: seq, Body: fmt.Appendf(nil, `{"statusUpdate":{"n":%d}}`, seq)}
}

// TestOutboxConcurrentPools: workers on two pools lease in batches at the
// same time, all racing for the same lane heads; no delivery is ever held
// by two of them, none of a lane is leased before the previous one was
// removed, and every delivery is leased exactly once.
func TestOutboxConcurrentPools(t *testing.T) {
	boxes := twoOutboxes(t)
	ctx := testCtx(t)
	const lanes, perLane, workers = 40, 6, 8
	for i := range perLane {
		for l := range lanes {
			if err := boxes[l%2].Put(ctx, outboxDelivery("task", fmt.Sprint("lane-", l), int64(i))); err != nil {
				t.Fatal(err)
			}
		}
	}
	var (
		mu       sync.Mutex
		leased   = map[string]int{}
		inFlight = map[string]string{} // lane → delivery held
		next     = map[string]int64{}  // lane → the sequence due
		errs     []error
		start    = make(chan struct{})
		wg       sync.WaitGroup
		drained  = func() bool { return len(leased) == lanes*perLane }
		failf    = func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
		holdBack = 200 * time.Microsecond
	)
	for w := range workers {
		wg.Go(func() {
			o, owner := boxes[w%2], fmt.Sprint("owner-", w)
			<-start
			for ctx.Err() == nil {
				mu.Lock()
				stop := drained() || len(errs) > 0
				mu.Unlock()
				if stop {
					return
				}
				got, err := o.Lease(ctx, owner, 4, time.Minute)
				mu.Lock()
				if err != nil {
					failf("Lease: %v", err)
				}
				for _, d := range got {
					if leased[d.ID]++; leased[d.ID] > 1 {
						failf("%s leased twice", d.ID)
					}
					if other, busy := inFlight[d.ConfigID]; busy {
						failf("%s leased while %s of its lane was held", d.ID, other)
					}
					if d.Sequence != next[d.ConfigID] {
						failf("%s leased while sequence %d of its lane was due", d.ID, next[d.ConfigID])
					}
					inFlight[d.ConfigID] = d.ID
				}
				mu.Unlock()
				time.Sleep(holdBack)
				for _, d := range got {
					mu.Lock()
					delete(inFlight, d.ConfigID)
					next[d.ConfigID]++
					mu.Unlock()
					if err := o.Remove(ctx, d.ID); err != nil {
						mu.Lock()
						failf("Remove: %v", err)
						mu.Unlock()
					}
				}
			}
		})
	}
	close(start)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if !drained() {
		t.Fatalf("%d of %d deliveries leased: %v", len(leased), lanes*perLane, ctx.Err())
	}
	var left int
	if err := boxes[0].pool.QueryRow(ctx, `SELECT count(*) FROM wopinterop_push_lanes`).Scan(&left); err != nil || left != 0 {
		t.Fatalf("%d lanes left after draining (%v), want 0", left, err)
	}
}

// TestOutboxPutWhileRemoving: each lane's next delivery is Put on one
// pool just as its head, the lane's last delivery, is being removed on
// the other, so the lane empties and refills under the race again and
// again; every delivery is still leased, in Put order — none is left
// behind without its lane.
func TestOutboxPutWhileRemoving(t *testing.T) {
	boxes := twoOutboxes(t)
	ctx, cancel := context.WithCancel(testCtx(t))
	const n, lanes = 100, 4
	var wg sync.WaitGroup
	leased := make([]chan struct{}, lanes) // the lane's last Put was leased
	putErrs := make([]error, lanes)
	for l := range lanes {
		leased[l] = make(chan struct{}, 1)
		wg.Go(func() {
			for i := range int64(n) {
				if i > 0 {
					select {
					case <-leased[l]:
					case <-ctx.Done():
						return
					}
				}
				if putErrs[l] = boxes[0].Put(ctx, outboxDelivery("t", fmt.Sprint(l), i)); putErrs[l] != nil {
					return
				}
			}
		})
	}
	defer wg.Wait()
	defer cancel()
	next := make([]int64, lanes)
	deadline := time.Now().Add(10 * time.Second)
	for got := 0; got < n*lanes; {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d deliveries leased; the rest are stuck", got, n*lanes)
		}
		ds, err := boxes[1].Lease(ctx, "x", lanes, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			var l int
			fmt.Sscan(d.ConfigID, &l)
			if d.Sequence != next[l] {
				t.Fatalf("%s leased while %d of its lane was due", d.ID, next[l])
			}
			next[l]++
			got++
			leased[l] <- struct{}{}
			if err := boxes[1].Remove(ctx, d.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	wg.Wait()
	if err := errors.Join(putErrs...); err != nil {
		t.Fatal(err)
	}
}

// TestOutboxTakeoverOnDatabaseClock: a lease is held for its ttl on the
// database's clock against every replica, then taken over by another
// owner on another pool, whose Remove then advances the lane.
func TestOutboxTakeoverOnDatabaseClock(t *testing.T) {
	boxes := twoOutboxes(t)
	ctx := testCtx(t)
	d1, d2 := outboxDelivery("t", "c", 1), outboxDelivery("t", "c", 2)
	for _, d := range []push.Delivery{d1, d2} {
		if err := boxes[0].Put(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	const ttl = 400 * time.Millisecond
	got, err := boxes[0].Lease(ctx, "dies", 10, ttl)
	if err != nil || len(got) != 1 || got[0].ID != d1.ID {
		t.Fatalf("Lease = %v, %v; want [%s]", got, err, d1.ID)
	}
	var until time.Time
	if err := boxes[0].pool.QueryRow(ctx, `SELECT lease_until FROM wopinterop_push_lanes`).Scan(&until); err != nil {
		t.Fatal(err)
	}
	// Whether the lease has expired is read before and after each Lease:
	// the database clock only moves on between them.
	expired := func() bool {
		var e bool
		if err := boxes[1].pool.QueryRow(ctx, `SELECT $1 <= now()`, until).Scan(&e); err != nil {
			t.Fatal(err)
		}
		return e
	}
	for {
		before := expired()
		got, err := boxes[1].Lease(ctx, "takes-over", 10, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		after := expired()
		switch {
		case len(got) > 0 && !after:
			t.Fatalf("leased %v before the first lease expired on the database clock", got)
		case len(got) == 0 && before:
			t.Fatal("the expired lease was not taken over")
		case len(got) == 0:
			time.Sleep(20 * time.Millisecond)
			continue
		}
		if got[0].ID != d1.ID {
			t.Fatalf("taken over %v, want %s", got, d1.ID)
		}
		break
	}
	if lost, err := boxes[0].Renew(ctx, "dies", []string{d1.ID}, time.Minute); err != nil || len(lost) != 1 {
		t.Fatalf("Renew by the dead owner = %v, %v; want [%s] lost", lost, err, d1.ID)
	}
	if err := boxes[1].Remove(ctx, d1.ID); err != nil {
		t.Fatal(err)
	}
	got, err = boxes[0].Lease(ctx, "dies", 10, time.Minute)
	if err != nil || len(got) != 1 || got[0].ID != d2.ID {
		t.Fatalf("Lease after the takeover's Remove = %v, %v; want [%s]", got, err, d2.ID)
	}
}

// TestOutboxTombstones: a delivery removed and then Put again — a second
// replica's watcher queueing a run event the first already delivered —
// is not queued again while its tombstone is kept; Removes sweep expired
// tombstones, at most sweepBatch each, after which the id is new again.
func TestOutboxTombstones(t *testing.T) {
	boxes := twoOutboxes(t)
	ctx := testCtx(t)
	d := outboxDelivery("t", "c", 1)
	if err := boxes[0].Put(ctx, d); err != nil {
		t.Fatal(err)
	}
	if err := boxes[0].Remove(ctx, d.ID); err != nil {
		t.Fatal(err)
	}
	if err := boxes[1].Put(ctx, d); err != nil {
		t.Fatal(err)
	}
	if got, err := boxes[1].Lease(ctx, "x", 10, time.Minute); err != nil || len(got) != 0 {
		t.Fatalf("Lease after a removed delivery was Put again = %v, %v; want nothing", got, err)
	}
	var body []byte
	if err := boxes[0].pool.QueryRow(ctx, `SELECT body FROM wopinterop_push_outbox WHERE id = $1`, d.ID).Scan(&body); err != nil || body != nil {
		t.Fatalf("the tombstone keeps body %q (%v), want none", body, err)
	}

	tombstones := func() int {
		var n int
		if err := boxes[0].pool.QueryRow(ctx, `SELECT count(*) FROM wopinterop_push_outbox WHERE removed_at IS NOT NULL`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	putRemove := func(seq int64) {
		e := outboxDelivery("t", "c", seq)
		if err := boxes[0].Put(ctx, e); err != nil {
			t.Fatal(err)
		}
		if err := boxes[0].Remove(ctx, e.ID); err != nil {
			t.Fatal(err)
		}
	}
	for seq := range int64(4) {
		putRemove(10 + seq)
	}
	if n := tombstones(); n != 5 {
		t.Fatalf("%d tombstones after five Removes, want 5 (none expired)", n)
	}
	// Expire them: each Remove now sweeps the two oldest and adds its own.
	boxes[0].keepRemoved = time.Microsecond
	time.Sleep(2 * time.Millisecond)
	for i, want := range []int{4, 3, 2, 1, 1} {
		putRemove(20 + int64(i))
		if n := tombstones(); n != want {
			t.Fatalf("%d tombstones after sweeping Remove %d, want %d", n, i+1, want)
		}
	}
	if err := boxes[1].Put(ctx, d); err != nil {
		t.Fatal(err)
	}
	if got, err := boxes[1].Lease(ctx, "x", 10, time.Minute); err != nil || len(got) != 1 || got[0].ID != d.ID {
		t.Fatalf("Lease after d's tombstone was swept = %v, %v; want [%s] queued anew", got, err, d.ID)
	}
}

// TestOutboxRefusals: a lease for no owner, or for a ttl that is not
// positive, is ErrOutboxLease and leases nothing; a failing database
// reaches the caller wrapped, naming the operation.
func TestOutboxRefusals(t *testing.T) {
	boxes := twoOutboxes(t)
	ctx := testCtx(t)
	d := outboxDelivery("t", "c", 1)
	if err := boxes[0].Put(ctx, d); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		owner string
		ttl   time.Duration
		want  string
	}{
		{"", time.Minute, "postgres: invalid push outbox lease: empty owner"},
		{"x", 0, "postgres: invalid push outbox lease: ttl 0s is not positive"},
		{"x", -time.Second, "postgres: invalid push outbox lease: ttl -1s is not positive"},
	} {
		got, err := boxes[0].Lease(ctx, c.owner, 10, c.ttl)
		if !errors.Is(err, ErrOutboxLease) || err.Error() != c.want || got != nil {
			t.Errorf("Lease(%q, %v) = %v, %v; want %q", c.owner, c.ttl, got, err, c.want)
		}
		lost, err := boxes[0].Renew(ctx, c.owner, []string{d.ID}, c.ttl)
		if !errors.Is(err, ErrOutboxLease) || err.Error() != c.want || lost != nil {
			t.Errorf("Renew(%q, %v) = %v, %v; want %q", c.owner, c.ttl, lost, err, c.want)
		}
	}
	if got, err := boxes[1].Lease(ctx, "x", 10, time.Minute); err != nil || len(got) != 1 {
		t.Fatalf("after the refusals, Lease = %v, %v; want the delivery, unleased", got, err)
	}

	done, cancel := context.WithCancel(ctx)
	cancel()
	for op, err := range map[string]error{
		"postgres: put push delivery: ":     boxes[0].Put(done, outboxDelivery("t", "c", 2)),
		"postgres: release push lease: ":    boxes[0].Release(done, "x", d.ID),
		"postgres: remove push delivery: ":  boxes[0].Remove(done, d.ID),
		"postgres: lease push deliveries: ": func() error { _, err := boxes[0].Lease(done, "y", 1, time.Minute); return err }(),
		"postgres: renew push leases: ":     func() error { _, err := boxes[0].Renew(done, "x", []string{d.ID}, time.Minute); return err }(),
	} {
		if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), op) {
			t.Errorf("%s on a cancelled context: %v, want it wrapped as %q…: context canceled", op, err, op)
		}
	}
}

// TestOutboxRefuseStaleSchema: like every store, the outbox refuses a
// database Migrate has not brought up to date.
func TestOutboxRefuseStaleSchema(t *testing.T) {
	if _, err := NewOutbox(testCtx(t), pgtest.NewPool(t)); !errors.Is(err, ErrSchemaBehind) {
		t.Fatalf("NewOutbox on an empty database = %v, want ErrSchemaBehind", err)
	}
}
