package settle

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/wopinterop/wopinterop/interop"
)

// ctxKey is a context value key of the tests.
type ctxKey struct{}

// closed reports whether done is closed within d.
func closed(done <-chan struct{}, d time.Duration) bool {
	select {
	case <-done:
		return true
	default:
	}
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

// A bound ends as context.WithTimeout with a cancel on stop would: at
// its deadline (DeadlineExceeded), when stop ends (Canceled), when the
// caller's context ends (its error), and on release (Canceled) — whether
// Done was asked for before it ended, or Err only.
func TestBoundEndsLikeATimeoutAndStop(t *testing.T) {
	defer goleak.VerifyNone(t)
	parent := context.WithValue(context.Background(), ctxKey{}, "v")
	for _, tc := range []struct {
		name  string
		armed bool // Done asked for before the end
		end   func(cancelParent, stop func()) (limit time.Duration)
		want  error
	}{
		{"deadline", true, func(_, _ func()) time.Duration { return 20 * time.Millisecond }, context.DeadlineExceeded},
		{"deadline, Err only", false, func(_, _ func()) time.Duration { return 20 * time.Millisecond }, context.DeadlineExceeded},
		{"stop", true, func(_, stop func()) time.Duration { time.AfterFunc(10*time.Millisecond, stop); return time.Hour }, context.Canceled},
		{"stop before", false, func(_, stop func()) time.Duration { stop(); return time.Hour }, context.Canceled},
		{"caller", true, func(cancel, _ func()) time.Duration { time.AfterFunc(10*time.Millisecond, cancel); return time.Hour }, context.Canceled},
		{"caller before, Err only", false, func(cancel, _ func()) time.Duration { cancel(); return time.Hour }, context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(parent)
			defer cancel()
			stop, stopNow := context.WithCancel(context.Background())
			defer stopNow()
			b := newBound(ctx, tc.end(cancel, stopNow), stop)
			defer b.release()
			if b.Value(ctxKey{}) != "v" {
				t.Fatal("the caller's values are lost")
			}
			if tc.armed {
				if !closed(b.Done(), 5*time.Second) {
					t.Fatal("Done did not close")
				}
			} else {
				deadline := time.Now().Add(5 * time.Second)
				for b.Err() == nil && time.Now().Before(deadline) {
					time.Sleep(time.Millisecond)
				}
				if !closed(b.Done(), 0) {
					t.Fatal("Err ended the context but Done is open")
				}
			}
			if err := b.Err(); !errors.Is(err, tc.want) {
				t.Fatalf("Err = %v, want %v", err, tc.want)
			}
		})
	}
}

// Until it ends, a bound is open, whichever of Err and Done is asked; a
// context derived from it ends with it; release ends it; its deadline is
// the earlier of the caller's and its own.
func TestBoundLifetime(t *testing.T) {
	defer goleak.VerifyNone(t)
	b := newBound(context.Background(), time.Hour, nil)
	if b.Err() != nil || closed(b.Done(), 10*time.Millisecond) || b.Err() != nil {
		t.Fatal("a bound ended before its time")
	}
	if d, ok := b.Deadline(); !ok || time.Until(d) < 59*time.Minute {
		t.Fatalf("Deadline = %v, %v", d, ok)
	}
	child, cancelChild := context.WithCancel(b)
	defer cancelChild()
	b.release()
	if !closed(b.Done(), 0) || !errors.Is(b.Err(), context.Canceled) || !closed(child.Done(), 5*time.Second) {
		t.Fatal("release did not end the bound and what derives from it")
	}

	soon, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b = newBound(soon, time.Hour, nil)
	defer b.release()
	if d, _ := b.Deadline(); time.Until(d) > 2*time.Minute {
		t.Fatalf("Deadline = %v, want the caller's, a minute away", d)
	}
}

// A wait the store's first look ends arms no timer and no callback: the
// whole wait costs the bound itself.
func TestRunSettledAtFirstLookArmsNothing(t *testing.T) {
	done := interop.Run{ID: "r", Status: interop.StatusCompleted}
	w := &waiterStore{result: done, checkCtx: true}
	stop, drain := context.WithCancel(context.Background())
	defer drain()
	ctx := context.Background()
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := Run(ctx, w, interop.Subject{}, working(0), Wait{Settled: terminalOrInput, Limit: time.Minute, Stop: stop}); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 1 {
		t.Errorf("%v allocations per settled wait, want 1", allocs)
	}
}
