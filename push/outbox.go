package push

import (
	"container/heap"
	"context"
	"slices"
	"sync"
	"time"
)

// Delivery is one push on its way to one config: the body is encoded
// when the run event is queued, so a delivery holds everything but the
// destination and the secret, which are read from the config at each
// attempt (a deleted config stops its deliveries; OpenWOP RFC 0214 §A).
type Delivery struct {
	// ID is unique among deliveries and stable: the delivery worker
	// derives it from the task, the config, the run event and the body's
	// place among that event's bodies, so the same push queued twice (a
	// watcher that resumes, two replicas following one run) is the same
	// delivery. Every attempt carries it as the Idempotency-Key header
	// (draft-ietf-httpapi-idempotency-key-header), the key a receiver
	// dedupes on: delivery is at least once.
	ID string
	// TaskID and ConfigID name the config the push goes to; together they
	// are the delivery's lane (see [Outbox]).
	TaskID   string
	ConfigID string
	// Sequence is the run event the body projects.
	Sequence int64
	// Body is the encoded StreamResponse; nil for a delivery that only
	// closes the config after its run ended without a last body. An
	// Outbox returns a nil Body as nil.
	Body []byte
	// Final marks the config's last delivery: once it is attempted the
	// config's secret is discarded (OpenWOP RFC 0214 §A).
	Final bool
}

// Outbox is the queue of deliveries that are queued but not yet finished
// (delivered, dead-lettered, or dropped because their config was
// deleted): a leased work queue that any number of delivery workers —
// one per replica of a host, each under its own owner name — drain
// together. The in-memory default is [MemoryOutbox]; a multi-replica host
// implements it over its database (a table keyed by ID, a lease owner and
// expiry per row, heads selected with FOR UPDATE SKIP LOCKED or the
// database's equivalent). Implementations must be safe for concurrent
// use and return copies.
//
// Lanes. A delivery's lane is its (TaskID, ConfigID): the pushes to one
// config, in the order they were first Put. Only a lane's head — its
// oldest delivery still in the outbox — is ever leased, and only while no
// live lease holds it, so each lane has at most one delivery in flight
// across every owner, and a config receives its pushes in run order
// whichever replica sends them. Lanes are independent: a receiver that is
// down holds back only its own config's pushes.
//
// Leases. Lease grants an owner the heads it returns for ttl; the owner
// renews them while it works and ends each lease with Remove (finished)
// or Release (given back). A lease that is neither renewed nor ended
// expires ttl after it was granted or last renewed; from then on the
// owner no longer holds it, and the delivery is leasable by any owner
// again. So a worker that dies mid-delivery loses nothing: its deliveries
// are taken over, and delivered at least once — a receiver may see a push
// twice, with the same [Delivery.ID] as its Idempotency-Key. Expiry is
// measured on the outbox's own clock (a database's), never the worker's.
type Outbox interface {
	// Put queues d at the tail of its lane. Putting an ID the outbox
	// holds changes nothing: the delivery keeps its place, body and lease.
	// An outbox may keep a removed ID for a while, so that the same push
	// queued again late (by another replica's watcher) is not sent twice.
	Put(ctx context.Context, d Delivery) error
	// Lease leases to owner, for ttl (> 0) from now, up to max deliveries
	// (none when max < 1): lane heads that no live lease holds — not
	// owner's own either — oldest first (in the order they were Put).
	Lease(ctx context.Context, owner string, max int, ttl time.Duration) ([]Delivery, error)
	// Renew extends to ttl from now each lease among ids that owner
	// still holds, and returns the ids among them it no longer holds: the
	// lease expired (taken over or not), was released, or the delivery was
	// removed. Nothing lost: lost is empty.
	Renew(ctx context.Context, owner string, ids []string, ttl time.Duration) (lost []string, err error)
	// Release ends owner's live lease of id: the delivery stays the head
	// of its lane, leasable by any owner at once. When owner does not hold
	// it, Release does nothing and is not an error.
	Release(ctx context.Context, owner, id string) error
	// Remove forgets a finished delivery, whoever holds it, and so lets
	// its lane's next delivery be leased; an unknown id is not an error.
	Remove(ctx context.Context, id string) error
}

// MemoryOutbox is the in-memory [Outbox]: correct for one process, whose
// deliveries it loses when the process ends. Lease is O(k log n) for k
// deliveries leased among n lanes.
type MemoryOutbox struct {
	now func() time.Time

	mu     sync.Mutex
	next   uint64
	byID   map[string]*entry
	lanes  map[laneKey]*memLane
	free   freeHeap   // lanes whose head may be unleased; stale items are skipped
	expiry expiryHeap // the leased entries, soonest expiry first
}

type laneKey struct{ task, config string }

type memLane struct {
	key   laneKey
	queue []*entry // in Put order; queue[0] is the head
}

type entry struct {
	d     Delivery
	order uint64
	lane  *memLane // nil once removed
	owner string
	until time.Time // the lease's expiry; zero when not leased
	at    int       // its index in the expiry heap, -1 when not in it
}

// NewMemoryOutbox returns an empty outbox.
func NewMemoryOutbox() *MemoryOutbox {
	return &MemoryOutbox{now: time.Now, byID: map[string]*entry{}, lanes: map[laneKey]*memLane{}}
}

// live reports whether e is leased at now.
func (e *entry) live(now time.Time) bool { return e.owner != "" && e.until.After(now) }

// Put implements [Outbox].
func (o *MemoryOutbox) Put(_ context.Context, d Delivery) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, held := o.byID[d.ID]; held {
		return nil
	}
	d.Body = slices.Clone(d.Body)
	o.next++
	k := laneKey{d.TaskID, d.ConfigID}
	l := o.lanes[k]
	if l == nil {
		l = &memLane{key: k}
		o.lanes[k] = l
	}
	e := &entry{d: d, order: o.next, lane: l, at: -1}
	o.byID[d.ID] = e
	l.queue = append(l.queue, e)
	if len(l.queue) == 1 {
		heap.Push(&o.free, freeItem{order: e.order, lane: l})
	}
	return nil
}

// Lease implements [Outbox].
func (o *MemoryOutbox) Lease(_ context.Context, owner string, max int, ttl time.Duration) ([]Delivery, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	now := o.now()
	// Heads whose lease expired are free again.
	for len(o.expiry) > 0 && !o.expiry[0].until.After(now) {
		e := heap.Pop(&o.expiry).(*entry)
		e.owner, e.until = "", time.Time{}
		heap.Push(&o.free, freeItem{order: e.order, lane: e.lane})
	}
	var out []Delivery
	for len(out) < max && len(o.free) > 0 {
		it := heap.Pop(&o.free).(freeItem)
		l := it.lane
		if len(l.queue) == 0 || l.queue[0].order != it.order || l.queue[0].live(now) {
			continue
		}
		e := l.queue[0]
		e.owner, e.until = owner, now.Add(ttl)
		heap.Push(&o.expiry, e)
		d := e.d
		d.Body = slices.Clone(d.Body)
		out = append(out, d)
	}
	return out, nil
}

// Renew implements [Outbox].
func (o *MemoryOutbox) Renew(_ context.Context, owner string, ids []string, ttl time.Duration) ([]string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	now := o.now()
	var lost []string
	for _, id := range ids {
		e := o.byID[id]
		if e == nil || e.owner != owner || !e.live(now) {
			lost = append(lost, id)
			continue
		}
		e.until = now.Add(ttl)
		heap.Fix(&o.expiry, e.at)
	}
	return lost, nil
}

// Release implements [Outbox].
func (o *MemoryOutbox) Release(_ context.Context, owner, id string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	e := o.byID[id]
	if e == nil || e.owner != owner || !e.live(o.now()) {
		return nil
	}
	heap.Remove(&o.expiry, e.at)
	e.owner, e.until = "", time.Time{}
	heap.Push(&o.free, freeItem{order: e.order, lane: e.lane})
	return nil
}

// Remove implements [Outbox].
func (o *MemoryOutbox) Remove(_ context.Context, id string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	e := o.byID[id]
	if e == nil {
		return nil
	}
	delete(o.byID, id)
	if e.at >= 0 {
		heap.Remove(&o.expiry, e.at)
	}
	l := e.lane
	e.lane = nil
	i := slices.Index(l.queue, e)
	l.queue[i] = nil
	switch {
	case len(l.queue) == 1:
		delete(o.lanes, l.key)
		l.queue = nil
	case i == 0:
		l.queue = l.queue[1:]
		heap.Push(&o.free, freeItem{order: l.queue[0].order, lane: l})
	default:
		l.queue = slices.Delete(l.queue, i, i+1)
	}
	return nil
}

// Len is the number of deliveries held, leased or not.
func (o *MemoryOutbox) Len() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.byID)
}

// freeItem is a lane whose head, of Put order order, was unleased when
// the item was pushed.
type freeItem struct {
	order uint64
	lane  *memLane
}

type freeHeap []freeItem

func (h freeHeap) Len() int           { return len(h) }
func (h freeHeap) Less(i, j int) bool { return h[i].order < h[j].order }
func (h freeHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *freeHeap) Push(x any)        { *h = append(*h, x.(freeItem)) }
func (h *freeHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	old[len(old)-1] = freeItem{}
	*h = old[:len(old)-1]
	return it
}

// expiryHeap orders the leased entries by expiry, keeping each entry's
// index so that a renewal, release or removal updates it in place.
type expiryHeap []*entry

func (h expiryHeap) Len() int           { return len(h) }
func (h expiryHeap) Less(i, j int) bool { return h[i].until.Before(h[j].until) }
func (h expiryHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].at, h[j].at = i, j
}
func (h *expiryHeap) Push(x any) {
	e := x.(*entry)
	e.at = len(*h)
	*h = append(*h, e)
}
func (h *expiryHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	e.at = -1
	*h = old[:len(old)-1]
	return e
}
