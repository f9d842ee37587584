package settle

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// bound is a wait's bounded context: ctx, ended once the wait's limit
// passes or stop ends, as context.WithDeadline and context.AfterFunc
// would make it — but armed only when the store first asks for Done. A
// store that finds the run settled at once answers without ever asking
// (an inline run has finished when CreateRun returns), and the wait then
// costs no timer, no cancel hook on stop and no context of its own.
//
// Err judges the parent, stop and the deadline itself while unarmed, so
// a store that only polls Err sees the same ends as one that waits on
// Done.
type bound struct {
	parent   context.Context
	stop     context.Context // nil: nothing but the parent and the deadline end it
	deadline time.Time

	mu     sync.Mutex
	isSet  atomic.Bool // armed is set (once, under mu)
	armed  context.Context
	cancel context.CancelFunc
	unhook func() bool
	// released: the wait is over; a Done asked for later finds the
	// context already ended.
	released bool
}

func newBound(parent, stop context.Context, limit time.Duration) *bound {
	return &bound{parent: parent, stop: stop, deadline: time.Now().Add(limit)}
}

// arm makes the context the wait stands for, once.
func (b *bound) arm() context.Context {
	if b.isSet.Load() {
		return b.armed
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.armed == nil {
		b.armed, b.cancel = context.WithDeadline(b.parent, b.deadline)
		switch {
		case b.released:
			b.cancel()
		case b.stop != nil:
			if b.stop.Err() != nil {
				b.cancel() // AfterFunc would cancel on another goroutine
			}
			b.unhook = context.AfterFunc(b.stop, b.cancel)
		}
		b.isSet.Store(true)
	}
	return b.armed
}

// release ends the wait: it stops the timer and the hook on stop when
// they were armed.
func (b *bound) release() {
	b.mu.Lock()
	b.released = true
	armed := b.armed != nil
	b.mu.Unlock()
	if armed {
		b.cancel()
		if b.unhook != nil {
			b.unhook()
		}
	}
}

// ended reports whether an unarmed bound has ended: its parent or stop
// did, or its deadline passed.
func (b *bound) ended() bool {
	return b.parent.Err() != nil || (b.stop != nil && b.stop.Err() != nil) || !time.Now().Before(b.deadline)
}

func (b *bound) Deadline() (time.Time, bool) {
	if d, ok := b.parent.Deadline(); ok && d.Before(b.deadline) {
		return d, true
	}
	return b.deadline, true
}

func (b *bound) Done() <-chan struct{} { return b.arm().Done() }

func (b *bound) Err() error {
	if b.isSet.Load() || b.ended() {
		return b.arm().Err()
	}
	return nil
}

// Value answers from the armed context once there is one, so that a
// context derived from it finds its cancellation without a goroutine.
func (b *bound) Value(key any) any {
	if b.isSet.Load() {
		return b.armed.Value(key)
	}
	return b.parent.Value(key)
}
