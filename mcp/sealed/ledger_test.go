package sealed

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"
)

func newTestLedger(capacity int) (*MemoryLedger, *fakeClock) {
	clock := newClock(t0)
	return NewMemoryLedger(MemoryLedgerConfig{Capacity: capacity, RetentionSlack: time.Minute, Now: clock.Now}), clock
}

func consume(t *testing.T, l Ledger, id string, exp time.Time) bool {
	t.Helper()
	fresh, err := l.Consume(context.Background(), id, exp)
	if err != nil {
		t.Fatalf("Consume(%q): %v", id, err)
	}
	return fresh
}

func TestMemoryLedgerSingleUse(t *testing.T) {
	l, _ := newTestLedger(0)
	exp := t0.Add(time.Minute)
	if !consume(t, l, "a", exp) {
		t.Fatal("first Consume not fresh")
	}
	if consume(t, l, "a", exp) || consume(t, l, "a", exp.Add(time.Hour)) {
		t.Error("second Consume fresh (also with another expiry)")
	}
	if !consume(t, l, "b", exp) {
		t.Error("another id not fresh")
	}
	if l.Len() != 2 {
		t.Errorf("Len = %d, want 2", l.Len())
	}
}

// An id is kept until expiry plus the slack, and pruned lazily after.
func TestMemoryLedgerRetentionAndPruning(t *testing.T) {
	l, clock := newTestLedger(0)
	exp := t0.Add(10 * time.Minute)
	consume(t, l, "a", exp)

	clock.Set(exp.Add(time.Minute)) // exactly expiry + slack: still held
	if consume(t, l, "a", exp) {
		t.Fatal("id forgotten before expiry + slack")
	}
	clock.Advance(time.Nanosecond)
	if l.Len() != 1 {
		t.Fatalf("pruned without a Consume: Len = %d", l.Len())
	}
	consume(t, l, "other", clock.Now().Add(time.Minute)) // triggers pruning
	if l.Len() != 1 || slices.Contains(heapIDs(l), "a") {
		t.Errorf("after pruning: ids %v, want only \"other\"", heapIDs(l))
	}
	// The pruned id is past its retention and therefore still not fresh.
	if consume(t, l, "a", exp) {
		t.Error("a pruned id was accepted as fresh")
	}
	if l.Len() != 1 {
		t.Errorf("a too-old id was stored: Len = %d", l.Len())
	}
}

// Within the slack an id that was never seen is still accepted: Open's
// expiry check came first, and Consume may run a moment later.
func TestMemoryLedgerAcceptsWithinSlack(t *testing.T) {
	l, clock := newTestLedger(0)
	exp := t0
	clock.Set(exp.Add(30 * time.Second))
	if !consume(t, l, "late", exp) {
		t.Error("id within the slack refused")
	}
}

// Ids expire out of insertion order; pruning follows expiry.
func TestMemoryLedgerPrunesByExpiry(t *testing.T) {
	l, clock := newTestLedger(0)
	for _, e := range []struct {
		id  string
		exp time.Duration
	}{{"c", 30 * time.Minute}, {"a", 10 * time.Minute}, {"d", 40 * time.Minute}, {"b", 20 * time.Minute}} {
		consume(t, l, e.id, t0.Add(e.exp))
	}
	clock.Set(t0.Add(25 * time.Minute))
	consume(t, l, "e", t0.Add(50*time.Minute))
	if got, want := heapIDs(l), []string{"c", "d", "e"}; !slices.Equal(got, want) {
		t.Errorf("ids after pruning at 25 min: %v, want %v", got, want)
	}
}

func heapIDs(l *MemoryLedger) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var ids []string
	for id := range l.deadline {
		ids = append(ids, id)
	}
	if len(ids) != len(l.order) {
		panic(fmt.Sprintf("map has %d ids, heap %d", len(ids), len(l.order)))
	}
	slices.Sort(ids)
	return ids
}

func TestMemoryLedgerCapacity(t *testing.T) {
	l, clock := newTestLedger(3)
	exp := t0.Add(time.Minute)
	for _, id := range []string{"a", "b", "c"} {
		consume(t, l, id, exp)
	}
	fresh, err := l.Consume(context.Background(), "d", exp)
	if err != ErrLedgerFull || fresh {
		t.Fatalf("Consume beyond capacity = %v, %v; want false, ErrLedgerFull", fresh, err)
	}
	if errors.Is(err, ErrInvalidState) {
		t.Error("ErrLedgerFull wraps ErrInvalidState")
	}
	if consume(t, l, "a", exp) {
		t.Error("a full ledger forgot a live id")
	}
	clock.Set(exp.Add(2 * time.Minute))
	if !consume(t, l, "d", clock.Now().Add(time.Minute)) {
		t.Error("Consume refused after the held ids expired")
	}
	if l.Len() != 1 {
		t.Errorf("Len = %d, want 1", l.Len())
	}
}

// A full ledger surfaces through Open as a server fault, not as a client's
// invalid state, and the state stays usable.
func TestOpenWithFullLedger(t *testing.T) {
	l, clock := newTestLedger(1)
	s, err := NewSealer(Config{Key: keyA, Ledger: l, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	g := testGrant(t)
	v1, _ := s.Seal(alice, g)
	v2, _ := s.Seal(alice, g)
	if _, err := s.Open(context.Background(), v1, expectFor(g)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Open(context.Background(), v2, expectFor(g)); !errors.Is(err, ErrLedgerFull) || errors.Is(err, ErrInvalidState) {
		t.Fatalf("err %v, want ErrLedgerFull only", err)
	}
}

func TestMemoryLedgerCancelledContext(t *testing.T) {
	l, _ := newTestLedger(0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	fresh, err := l.Consume(ctx, "a", t0.Add(time.Minute))
	if !errors.Is(err, context.Canceled) || fresh {
		t.Fatalf("Consume = %v, %v; want false, context.Canceled", fresh, err)
	}
	if l.Len() != 0 {
		t.Error("a cancelled Consume recorded the id")
	}
}

func TestMemoryLedgerConcurrent(t *testing.T) {
	const n = 64
	l, _ := newTestLedger(0)
	start := make(chan struct{})
	var fresh sync.Map
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			for j := range 4 { // four ids, each raced by all goroutines
				id := fmt.Sprint("id-", j)
				ok, err := l.Consume(context.Background(), id, t0.Add(time.Minute))
				if err != nil {
					t.Error(err)
				}
				if ok {
					if _, dup := fresh.LoadOrStore(id, i); dup {
						t.Errorf("%s fresh twice", id)
					}
				}
			}
		})
	}
	close(start)
	wg.Wait()
	count := 0
	fresh.Range(func(any, any) bool { count++; return true })
	if count != 4 {
		t.Errorf("%d ids were fresh once, want 4", count)
	}
}

func TestMemoryLedgerDefaults(t *testing.T) {
	l := NewMemoryLedger(MemoryLedgerConfig{})
	if l.capacity != DefaultLedgerCapacity || l.slack != DefaultRetentionSlack || l.now == nil {
		t.Errorf("defaults: capacity %d, slack %s, clock set %t", l.capacity, l.slack, l.now != nil)
	}
	if !consume(t, l, "a", time.Now().Add(time.Minute)) {
		t.Error("default ledger refused a fresh id")
	}
}

// The memory bound in DefaultLedgerCapacity's comment, measured.
func TestMemoryLedgerFootprint(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a ledger of the default capacity")
	}
	heap := func() uint64 {
		runtime.GC()
		var s runtime.MemStats
		runtime.ReadMemStats(&s)
		return s.HeapAlloc
	}
	before := heap()
	l, _ := newTestLedger(0)
	for i := range DefaultLedgerCapacity {
		consume(t, l, fmt.Sprintf("%022d", i), t0.Add(time.Hour)) // ids are 22 characters
	}
	after := heap()
	runtime.KeepAlive(l)
	mb := float64(int64(after)-int64(before)) / 1e6
	t.Logf("a full default ledger holds %.1f MB", mb)
	if mb > 15 || mb < 1 {
		t.Errorf("a full default ledger holds %.1f MB; the documentation says about 10 MB", mb)
	}
}
