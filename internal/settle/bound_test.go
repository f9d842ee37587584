package settle

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/interop"
)

// ctxStore is a waiterStore that keeps the context WaitRun got.
type ctxStore struct {
	waiterStore
	got context.Context
}

func (c *ctxStore) WaitRun(ctx context.Context, sub interop.Subject, id string, settled func(interop.RunStatus) bool) (interop.Run, error) {
	c.got = ctx
	return c.waiterStore.WaitRun(ctx, sub, id, settled)
}

// A store that answers at once, without asking for Done, costs the wait
// no timer and no hook on Stop: the bound is never armed.
func TestRunSettledAtOnceArmsNothing(t *testing.T) {
	stop, drain := context.WithCancel(t.Context())
	defer drain()
	s := &ctxStore{waiterStore: waiterStore{result: interop.Run{ID: "r", Status: interop.StatusCompleted}}}
	if _, err := Run(t.Context(), s, interop.Subject{}, working(0), Wait{Settled: terminalOrInput, Limit: time.Hour, Stop: stop}); err != nil {
		t.Fatal(err)
	}
	b, ok := s.got.(*bound)
	if !ok || b.isSet.Load() {
		t.Fatalf("WaitRun got %T (armed: %v); want an unarmed *bound", s.got, ok && b.isSet.Load())
	}
	// Asked for later, its context has ended.
	select {
	case <-b.Done():
	default:
		t.Fatal("a released bound's Done is open")
	}
	if !errors.Is(b.Err(), context.Canceled) {
		t.Fatalf("released bound: Err = %v", b.Err())
	}
}

// An unarmed bound reports every end through Err alone, as the armed one
// does through Done and Err: the parent's, Stop's and the deadline's.
func TestBoundEnds(t *testing.T) {
	parent, cancelParent := context.WithCancel(context.WithValue(t.Context(), ctxKey{}, "v"))
	stop, drain := context.WithCancel(t.Context())
	defer drain()

	b := newBound(parent, stop, time.Hour)
	defer b.release()
	if b.Err() != nil || b.isSet.Load() {
		t.Fatalf("fresh bound: Err %v, armed %v", b.Err(), b.isSet.Load())
	}
	if d, ok := b.Deadline(); !ok || time.Until(d) < 59*time.Minute {
		t.Fatalf("Deadline = %v, %v", d, ok)
	}
	if b.Value(ctxKey{}) != "v" {
		t.Fatal("Value does not reach the parent")
	}
	cancelParent()
	if !errors.Is(b.Err(), context.Canceled) {
		t.Fatalf("parent ended: Err = %v", b.Err())
	}
	<-b.Done()

	b = newBound(t.Context(), stop, time.Hour)
	defer b.release()
	drain()
	if !errors.Is(b.Err(), context.Canceled) {
		t.Fatalf("stop ended: Err = %v", b.Err())
	}
	<-b.Done()

	b = newBound(t.Context(), nil, time.Millisecond)
	defer b.release()
	time.Sleep(5 * time.Millisecond)
	if !errors.Is(b.Err(), context.DeadlineExceeded) {
		t.Fatalf("deadline passed: Err = %v", b.Err())
	}
	<-b.Done()
}

// Armed by Done, a bound ends at its limit and when Stop ends later.
func TestBoundArmedEnds(t *testing.T) {
	b := newBound(t.Context(), nil, 20*time.Millisecond)
	defer b.release()
	select {
	case <-b.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the limit did not end the armed bound")
	}
	if !errors.Is(b.Err(), context.DeadlineExceeded) {
		t.Fatalf("Err = %v", b.Err())
	}

	stop, drain := context.WithCancel(t.Context())
	b = newBound(t.Context(), stop, time.Hour)
	defer b.release()
	done := b.Done()
	// A context derived from the armed bound shares its cancellation.
	child, cancelChild := context.WithCancel(b)
	defer cancelChild()
	drain()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Stop did not end the armed bound")
	}
	<-child.Done()
	if !errors.Is(b.Err(), context.Canceled) {
		t.Fatalf("Err = %v", b.Err())
	}
}

type ctxKey struct{}
