package sealed

import (
	"container/heap"
	"context"
	"sync"
	"time"
)

// Ledger records which requestState ids were consumed, so each state opens
// at most once (OpenWOP interop map, mcp.mrtr: "single use: a second retry with it
// MUST fail"). It is the only state this package keeps.
//
// Consume records id and reports fresh=true if and only if id was not
// recorded before. It must be atomic: of any number of concurrent calls
// with the same id, across every replica that serves the same host, exactly
// one reports fresh. A non-nil error means nothing is known; [Sealer.Open]
// then fails closed and the state stays unconsumed only if the ledger did
// not record it.
//
// expiresAt is the state's expiry. The ledger must keep id at least until
// expiresAt plus the largest clock skew between replicas; after that
// [Sealer.Open] refuses the state as expired on every replica, so the id
// may be forgotten. An id whose expiry has already passed when Consume is
// called (Open checked it a moment before) may be answered fresh=false
// at once, as [MemoryLedger] does once its retention has passed; answered
// fresh, it is recorded like any other, so it is never fresh twice. Ids
// are compared byte for byte: a case-insensitive column would merge ids
// that differ.
//
// The in-memory default, [MemoryLedger], is correct for one process only.
// A host with several replicas supplies a Ledger over its shared database,
// for example a table with the id as primary key and an expires_at column:
// Consume inserts the row and does nothing on a key conflict
// (INSERT … ON CONFLICT DO NOTHING, or the database's equivalent), and
// reports fresh when exactly one row was inserted; a periodic job owned by
// the host deletes rows whose expires_at is older than the retention. A
// read-then-write without a unique constraint is not atomic and lets two
// replicas both accept the same state. Ids are 22 base64url characters and
// carry no claims, so they may be stored and logged as they are. The kit
// in package mcp/sealed/sealedtest checks an implementation.
type Ledger interface {
	Consume(ctx context.Context, id string, expiresAt time.Time) (fresh bool, err error)
}

// LedgerFunc adapts a function to [Ledger].
type LedgerFunc func(ctx context.Context, id string, expiresAt time.Time) (bool, error)

// Consume calls f.
func (f LedgerFunc) Consume(ctx context.Context, id string, expiresAt time.Time) (bool, error) {
	return f(ctx, id, expiresAt)
}

// Defaults of [MemoryLedgerConfig].
const (
	// DefaultLedgerCapacity bounds a MemoryLedger to about 10 MB. At the
	// default TTL it absorbs a sustained ~150 consumed states per second.
	DefaultLedgerCapacity = 100_000
	// DefaultRetentionSlack is how long a MemoryLedger keeps an id past
	// its expiry, covering the time between Open's expiry check and its
	// Consume call.
	DefaultRetentionSlack = time.Minute
)

// MemoryLedgerConfig configures [NewMemoryLedger]. The zero value is
// usable: every field has a documented default.
type MemoryLedgerConfig struct {
	// Capacity is the most ids held at once; 0 means
	// [DefaultLedgerCapacity]. A Consume that would exceed it after pruning
	// fails with [ErrLedgerFull] instead of forgetting a live id.
	Capacity int
	// RetentionSlack is kept on top of each id's expiry; 0 means
	// [DefaultRetentionSlack].
	RetentionSlack time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// MemoryLedger is the in-memory [Ledger]: a map of consumed ids plus a
// min-heap of their retention deadlines. It runs no goroutine: each
// Consume first drops the ids whose retention has passed, so memory is
// bounded by Capacity and by the ids consumed within one TTL. Nothing needs
// starting or closing. Safe for concurrent use; not shared across
// processes (see [Ledger] for multi-replica hosts).
type MemoryLedger struct {
	capacity int
	slack    time.Duration
	now      func() time.Time

	mu       sync.Mutex
	deadline map[string]int64 // id → retention deadline, Unix ns
	order    deadlineHeap
}

// NewMemoryLedger returns an empty in-memory ledger.
func NewMemoryLedger(cfg MemoryLedgerConfig) *MemoryLedger {
	m := &MemoryLedger{capacity: cfg.Capacity, slack: cfg.RetentionSlack, now: cfg.Now}
	if m.capacity <= 0 {
		m.capacity = DefaultLedgerCapacity
	}
	if m.slack <= 0 {
		m.slack = DefaultRetentionSlack
	}
	if m.now == nil {
		m.now = time.Now
	}
	m.deadline = make(map[string]int64)
	return m
}

// Consume implements [Ledger]. An id whose retention (expiresAt plus the
// slack) has already passed is answered fresh=false without being stored:
// it may have been pruned, so it can no longer be told apart from a replay.
func (m *MemoryLedger) Consume(ctx context.Context, id string, expiresAt time.Time) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	now := m.now().UnixNano()
	until := expiresAt.Add(m.slack).UnixNano()

	m.mu.Lock()
	defer m.mu.Unlock()
	if _, seen := m.deadline[id]; seen {
		return false, nil
	}
	if until < now {
		return false, nil
	}
	m.pruneLocked(now)
	if len(m.deadline) >= m.capacity {
		return false, ErrLedgerFull
	}
	m.deadline[id] = until
	heap.Push(&m.order, deadlineEntry{until: until, id: id})
	return true, nil
}

// Len reports how many ids the ledger currently holds.
func (m *MemoryLedger) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.deadline)
}

// pruneLocked drops ids whose retention ended before now.
func (m *MemoryLedger) pruneLocked(now int64) {
	for len(m.order) > 0 && m.order[0].until < now {
		e := heap.Pop(&m.order).(deadlineEntry)
		delete(m.deadline, e.id)
	}
}

type deadlineEntry struct {
	until int64
	id    string
}

// deadlineHeap orders entries by retention deadline, earliest first.
type deadlineHeap []deadlineEntry

func (h deadlineHeap) Len() int           { return len(h) }
func (h deadlineHeap) Less(i, j int) bool { return h[i].until < h[j].until }
func (h deadlineHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *deadlineHeap) Push(x any)        { *h = append(*h, x.(deadlineEntry)) }
func (h *deadlineHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = deadlineEntry{}
	*h = old[:len(old)-1]
	return e
}
