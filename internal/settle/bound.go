package settle

import (
	"context"
	"sync"
	"time"
)

// bound is the context of one wait: the caller's context, ended also at a
// deadline and when stop ends, as context.WithTimeout and a
// context.AfterFunc on stop would make it. Most waits of a blocking call
// find the run settled at the store's first look, which reads only Err;
// so the timer and the callbacks that end Done are armed on the first
// call to Done, and until then Err looks at the clock and at both
// contexts itself.
type bound struct {
	context.Context // the caller's: its values, its own end
	deadline        time.Time
	stop            context.Context // nil: never

	mu   sync.Mutex
	err  error         // set once: the first reason the context ended
	done chan struct{} // nil until Done is first called
	// What Done armed, for release to disarm.
	timer                   *time.Timer
	unwatchCtx, unwatchStop func() bool
}

// newBound returns ctx bounded by limit and stop. The caller must release
// it when the wait is over.
func newBound(ctx context.Context, limit time.Duration, stop context.Context) *bound {
	return &bound{Context: ctx, deadline: time.Now().Add(limit), stop: stop}
}

func (b *bound) Deadline() (time.Time, bool) {
	if d, ok := b.Context.Deadline(); ok && d.Before(b.deadline) {
		return d, true
	}
	return b.deadline, true
}

func (b *bound) Err() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err == nil && b.done == nil {
		// Not armed: nothing else would end it.
		b.endLocked(b.ended())
	}
	return b.err
}

func (b *bound) Done() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done != nil {
		return b.done
	}
	b.done = make(chan struct{})
	if b.err != nil {
		close(b.done)
		return b.done
	}
	if err := b.ended(); err != nil {
		b.endLocked(err)
		return b.done
	}
	// Each callback runs on its own goroutine (time.AfterFunc,
	// context.AfterFunc), never under b.mu.
	b.timer = time.AfterFunc(time.Until(b.deadline), func() { b.end(context.DeadlineExceeded) })
	b.unwatchCtx = context.AfterFunc(b.Context, func() { b.end(b.Context.Err()) })
	if b.stop != nil {
		b.unwatchStop = context.AfterFunc(b.stop, func() { b.end(context.Canceled) })
	}
	return b.done
}

// ended is why the context has ended by now, without a callback: the
// caller's end first, then stop's, then the deadline; nil while it lasts.
func (b *bound) ended() error {
	switch {
	case b.Context.Err() != nil:
		return b.Context.Err()
	case b.stop != nil && b.stop.Err() != nil:
		return context.Canceled
	case !time.Now().Before(b.deadline):
		return context.DeadlineExceeded
	}
	return nil
}

func (b *bound) end(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.endLocked(err)
}

// endLocked ends the context with err, unless it ended already or err is
// nil.
func (b *bound) endLocked(err error) {
	if err == nil || b.err != nil {
		return
	}
	b.err = err
	if b.done != nil {
		close(b.done)
	}
}

// release ends the context, as a context.CancelFunc does, and disarms
// what Done armed.
func (b *bound) release() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.endLocked(context.Canceled)
	if b.timer != nil {
		b.timer.Stop()
		b.unwatchCtx()
	}
	if b.unwatchStop != nil {
		b.unwatchStop()
	}
}
