package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wopinterop/wopinterop/postgres/internal/pgtest"
)

// TestLedgerSingleUseAcrossReplicas races consumers of the same ids on two
// pools over one database, as two replicas would: of each id's consumers
// exactly one is told fresh.
func TestLedgerSingleUseAcrossReplicas(t *testing.T) {
	dsn := pgtest.NewDSN(t)
	first := pgtest.Pool(t, dsn)
	if _, err := Migrate(testCtx(t), first); err != nil {
		t.Fatal(err)
	}
	var replicas []*Ledger
	for _, pool := range []*pgxpool.Pool{first, pgtest.Pool(t, dsn)} {
		l, err := NewLedger(testCtx(t), pool, LedgerConfig{})
		if err != nil {
			t.Fatal(err)
		}
		replicas = append(replicas, l)
	}
	const ids, consumers = 8, 16
	expires := time.Now().Add(time.Minute)
	var fresh [ids]atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make(chan error, ids*consumers)
	for id := range ids {
		for c := range consumers {
			wg.Go(func() {
				<-start
				ok, err := replicas[c%2].Consume(testCtx(t), fmt.Sprintf("state-%02d-aaaaaaaaaaaa", id), expires)
				if err != nil {
					errs <- err
					return
				}
				if ok {
					fresh[id].Add(1)
				}
			})
		}
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("Consume: %v", err)
	}
	for id := range ids {
		if n := fresh[id].Load(); n != 1 {
			t.Errorf("id %d: %d of %d consumers were told fresh, want exactly 1", id, n, consumers)
		}
	}
	// A later consumer of a consumed id, on either replica, is refused.
	for i, l := range replicas {
		if ok, err := l.Consume(testCtx(t), "state-00-aaaaaaaaaaaa", expires); ok || err != nil {
			t.Errorf("replica %d: second Consume = %v, %v; want false, nil", i, ok, err)
		}
	}
}

// TestLedgerExpiryCleanup checks that expired ids are deleted in bounded
// batches, lazily from Consume, that live ids stay, and that an id whose
// retention has passed is refused without being stored.
func TestLedgerExpiryCleanup(t *testing.T) {
	pool := migratedPool(t)
	var mu sync.Mutex
	now := time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	l, err := NewLedger(testCtx(t), pool, LedgerConfig{RetentionSlack: time.Second, PurgeEvery: time.Minute, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	rows := func() int {
		var n int
		if err := pool.QueryRow(testCtx(t), `SELECT count(*) FROM wopinterop_sealed_ledger`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	consume := func(id string, expires time.Time) bool {
		t.Helper()
		ok, err := l.Consume(testCtx(t), id, expires)
		if err != nil {
			t.Fatalf("Consume(%s): %v", id, err)
		}
		return ok
	}
	// The first Consume runs the (empty) cleanup; the next ones within
	// PurgeEvery do not.
	for i := range 1200 {
		if !consume(fmt.Sprintf("short-%04d", i), clock().Add(time.Minute)) {
			t.Fatalf("short-%04d not fresh", i)
		}
	}
	if !consume("long", clock().Add(time.Hour)) {
		t.Fatal("long not fresh")
	}
	if got := rows(); got != 1201 {
		t.Fatalf("%d rows before expiry, want 1201", got)
	}
	// Past the short ids' retention: they are refused, without a row, and
	// the next Consume deletes a batch of them.
	advance(2 * time.Minute)
	if consume("short-0000", clock().Add(-time.Minute)) {
		t.Fatal("a consumed id past its retention was fresh again")
	}
	if consume("never-seen", clock().Add(-2*time.Second)) {
		t.Fatal("an unseen id past its retention was fresh")
	}
	if !consume("after", clock().Add(time.Minute)) {
		t.Fatal("after not fresh")
	}
	if got, want := rows(), 1201+1-ledgerPurgeBatch; got != want {
		t.Fatalf("%d rows after one cleanup, want %d (one bounded batch deleted)", got, want)
	}
	n, err := l.Purge(testCtx(t))
	if err != nil || n != 200 {
		t.Fatalf("Purge = %d, %v; want the 200 expired ids left", n, err)
	}
	if got := rows(); got != 2 {
		t.Fatalf("%d rows after cleanup, want the 2 live ids", got)
	}
	if consume("long", clock().Add(time.Hour)) || consume("after", clock().Add(time.Minute)) {
		t.Fatal("a live id survived cleanup as fresh")
	}
}

func TestNewLedgerRefusesASchemaBehind(t *testing.T) {
	_, err := NewLedger(context.Background(), pgtest.NewPool(t), LedgerConfig{})
	if !errors.Is(err, ErrSchemaBehind) {
		t.Fatalf("NewLedger on an empty database = %v, want ErrSchemaBehind", err)
	}
}
