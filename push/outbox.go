package push

import (
	"cmp"
	"context"
	"slices"
	"sync"
)

// Delivery is one push on its way to one config: the body is encoded
// when the run event is queued, so a delivery holds everything but the
// destination and the secret, which are read from the config at each
// attempt (a deleted config stops its deliveries; OpenWOP RFC 0214 §A).
type Delivery struct {
	// ID is unique among deliveries.
	ID string
	// TaskID and ConfigID name the config the push goes to.
	TaskID   string
	ConfigID string
	// Sequence is the run event the body projects.
	Sequence int64
	// Body is the encoded StreamResponse; nil for a delivery that only
	// closes the config after its run ended without a last body.
	Body []byte
	// Final marks the config's last delivery: once it is attempted the
	// config's secret is discarded (OpenWOP RFC 0214 §A).
	Final bool
}

// Outbox keeps the deliveries that are queued but not yet finished
// (delivered, dead-lettered, or dropped because their config was
// deleted). Delivery's start (a2a.Server.Start) resumes whatever it holds, so a durable
// implementation makes delivery survive a restart: at least once, never
// lost. The in-memory default is [MemoryOutbox]. Implementations must be
// safe for concurrent use.
type Outbox interface {
	// Put records d as pending.
	Put(ctx context.Context, d Delivery) error
	// Remove forgets a finished delivery; an unknown id is not an error.
	Remove(ctx context.Context, id string) error
	// Pending returns the pending deliveries in the order they were Put.
	Pending(ctx context.Context) ([]Delivery, error)
}

// MemoryOutbox is the in-memory [Outbox].
type MemoryOutbox struct {
	mu      sync.Mutex
	next    uint64
	pending map[string]queued
}

type queued struct {
	order uint64
	d     Delivery
}

// NewMemoryOutbox returns an empty outbox.
func NewMemoryOutbox() *MemoryOutbox { return &MemoryOutbox{pending: map[string]queued{}} }

// Put implements [Outbox].
func (o *MemoryOutbox) Put(_ context.Context, d Delivery) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.next++
	o.pending[d.ID] = queued{order: o.next, d: d}
	return nil
}

// Remove implements [Outbox].
func (o *MemoryOutbox) Remove(_ context.Context, id string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.pending, id)
	return nil
}

// Pending implements [Outbox].
func (o *MemoryOutbox) Pending(_ context.Context) ([]Delivery, error) {
	o.mu.Lock()
	all := make([]queued, 0, len(o.pending))
	for _, q := range o.pending {
		all = append(all, q)
	}
	o.mu.Unlock()
	slices.SortFunc(all, func(a, b queued) int { return cmp.Compare(a.order, b.order) })
	out := make([]Delivery, len(all))
	for i, q := range all {
		out[i] = q.d
	}
	return out, nil
}

// Len is the number of pending deliveries.
func (o *MemoryOutbox) Len() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.pending)
}
