package settle

import (
	"context"
	"errors"
	"iter"
	"sync"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/interop"
)

// fakeStore answers GetRun from reads in order (the last one repeating)
// and each WatchRun with the next script of events, then blocks until
// the watch's context ends.
type fakeStore struct {
	mu       sync.Mutex
	reads    []interop.Run
	watches  [][]interop.RunStatus
	afters   []int64
	getErr   error
	watchErr error
	// endWith, when set, ends every watch with that error after its
	// script instead of blocking.
	endWith error
	gets    int
}

func (f *fakeStore) GetRun(ctx context.Context, _ interop.Subject, _ string) (interop.Run, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gets++
	if f.getErr != nil {
		return interop.Run{}, f.getErr
	}
	r := f.reads[0]
	if len(f.reads) > 1 {
		f.reads = f.reads[1:]
	}
	return r, nil
}

func (f *fakeStore) WatchRun(ctx context.Context, _ interop.Subject, _ string, after int64) (iter.Seq2[interop.RunEvent, error], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.watchErr != nil {
		return nil, f.watchErr
	}
	f.afters = append(f.afters, after)
	var script []interop.RunStatus
	if len(f.watches) > 0 {
		script, f.watches = f.watches[0], f.watches[1:]
	}
	return func(yield func(interop.RunEvent, error) bool) {
		for _, st := range script {
			if !yield(interop.RunEvent{Status: st}, nil) {
				return
			}
		}
		if f.endWith != nil {
			yield(interop.RunEvent{}, f.endWith)
			return
		}
		<-ctx.Done()
		yield(interop.RunEvent{}, ctx.Err())
	}, nil
}

func terminalOrInput(st interop.RunStatus) bool {
	return st.Terminal() || st == interop.StatusWaitingInput
}

func working(seq int64) interop.Run {
	return interop.Run{ID: "r", Status: interop.StatusRunning, LastSequence: seq}
}

func TestRunReturnsTheReadAfterTheSettledEvent(t *testing.T) {
	f := &fakeStore{
		watches: [][]interop.RunStatus{{interop.StatusRunning, interop.StatusWaitingInput}},
		reads:   []interop.Run{{ID: "r", Status: interop.StatusWaitingInput, LastSequence: 7}},
	}
	run, err := Run(t.Context(), f, interop.Subject{}, working(3), Wait{Settled: terminalOrInput, Limit: time.Minute})
	if err != nil || run.Status != interop.StatusWaitingInput || run.LastSequence != 7 {
		t.Fatalf("run %+v, %v", run, err)
	}
	if len(f.afters) != 1 || f.afters[0] != 3 {
		t.Fatalf("watched after %v, want [3]", f.afters)
	}
}

// A run that moved on between its settled event and the read is followed
// again, from the sequence the read found.
func TestRunFollowsAgainWhenTheReadIsNotSettled(t *testing.T) {
	f := &fakeStore{
		watches: [][]interop.RunStatus{{interop.StatusWaitingInput}, {interop.StatusCompleted}},
		reads:   []interop.Run{working(5), {ID: "r", Status: interop.StatusCompleted, LastSequence: 9}},
	}
	run, err := Run(t.Context(), f, interop.Subject{}, working(3), Wait{Settled: terminalOrInput, Limit: time.Minute})
	if err != nil || run.Status != interop.StatusCompleted {
		t.Fatalf("run %+v, %v", run, err)
	}
	if len(f.afters) != 2 || f.afters[1] != 5 {
		t.Fatalf("watched after %v, want [3 5]", f.afters)
	}
}

// A watch the store ends without the run's log growing is not followed
// again: a failing watch cannot make the wait spin until its limit.
func TestRunDoesNotSpinOnAFailingWatch(t *testing.T) {
	f := &fakeStore{endWith: errors.New("watch broke"), reads: []interop.Run{working(3)}}
	start := time.Now()
	run, err := Run(t.Context(), f, interop.Subject{}, working(3), Wait{Settled: terminalOrInput, Limit: time.Hour})
	if err != nil || run.Status != interop.StatusRunning || len(f.afters) != 1 || time.Since(start) > 10*time.Second {
		t.Fatalf("run %+v, %v after %d watches", run, err, len(f.afters))
	}
	// One that ends after the log grew is followed again from there.
	f = &fakeStore{endWith: errors.New("watch broke"), reads: []interop.Run{working(5), {ID: "r", Status: interop.StatusCompleted, LastSequence: 6}}}
	run, err = Run(t.Context(), f, interop.Subject{}, working(3), Wait{Settled: terminalOrInput, Limit: time.Hour})
	if err != nil || run.Status != interop.StatusCompleted || len(f.afters) != 2 || f.afters[1] != 5 {
		t.Fatalf("run %+v, %v, watched after %v", run, err, f.afters)
	}
}

// The caller's predicate decides: waiting_external settles one caller's
// wait and not another's.
func TestRunSettledIsTheCallers(t *testing.T) {
	for _, tc := range []struct {
		settled func(interop.RunStatus) bool
		want    interop.RunStatus
	}{
		{func(st interop.RunStatus) bool { return st.Terminal() || st.Suspended() }, interop.StatusWaitingExternal},
		{terminalOrInput, interop.StatusFailed},
	} {
		f := &fakeStore{
			watches: [][]interop.RunStatus{{interop.StatusWaitingExternal, interop.StatusFailed}},
			reads:   []interop.Run{{ID: "r", Status: tc.want}},
		}
		run, err := Run(t.Context(), f, interop.Subject{}, working(0), Wait{Settled: tc.settled, Limit: time.Minute})
		if err != nil || run.Status != tc.want {
			t.Errorf("run %+v, %v; want %s", run, err, tc.want)
		}
	}
}

func TestRunWithoutWaiting(t *testing.T) {
	f := &fakeStore{}
	done := interop.Run{ID: "r", Status: interop.StatusCompleted}
	if run, err := Run(t.Context(), f, interop.Subject{}, done, Wait{Settled: terminalOrInput, Limit: time.Minute}); err != nil || run.Status != interop.StatusCompleted {
		t.Fatalf("settled run: %+v %v", run, err)
	}
	if run, err := Run(t.Context(), f, interop.Subject{}, working(1), Wait{Settled: terminalOrInput}); err != nil || run.Status != interop.StatusRunning {
		t.Fatalf("no time: %+v %v", run, err)
	}
	if f.gets != 0 || len(f.afters) != 0 {
		t.Fatalf("the store was read: %d reads, watches %v", f.gets, f.afters)
	}
}

// The limit ends the wait with the run as read then; so does Stop, at
// once, even when it ended before the wait began.
func TestRunEndsAtTheLimitOrStop(t *testing.T) {
	f := &fakeStore{reads: []interop.Run{working(4)}}
	start := time.Now()
	run, err := Run(t.Context(), f, interop.Subject{}, working(1), Wait{Settled: terminalOrInput, Limit: 20 * time.Millisecond})
	if err != nil || run.LastSequence != 4 || time.Since(start) < 20*time.Millisecond {
		t.Fatalf("limit: %+v %v after %v", run, err, time.Since(start))
	}

	stopped, stop := context.WithCancel(t.Context())
	stop()
	start = time.Now()
	run, err = Run(t.Context(), f, interop.Subject{}, working(1), Wait{Settled: terminalOrInput, Limit: time.Hour, Stop: stopped})
	if err != nil || run.LastSequence != 4 || time.Since(start) > 10*time.Second {
		t.Fatalf("stopped: %+v %v after %v", run, err, time.Since(start))
	}

	stopping, stopLater := context.WithCancel(t.Context())
	time.AfterFunc(20*time.Millisecond, stopLater)
	if _, err := Run(t.Context(), f, interop.Subject{}, working(1), Wait{Settled: terminalOrInput, Limit: time.Hour, Stop: stopping}); err != nil {
		t.Fatalf("stopping: %v", err)
	}
}

func TestRunFailures(t *testing.T) {
	boom := errors.New("boom")
	f := &fakeStore{watchErr: boom}
	_, err := Run(t.Context(), f, interop.Subject{}, working(1), Wait{Settled: terminalOrInput, Limit: time.Minute})
	if se, ok := errors.AsType[*Error](err); !ok || se.Op != "WatchRun" || !errors.Is(err, boom) {
		t.Fatalf("watch failure: %v", err)
	}
	f = &fakeStore{getErr: boom, watches: [][]interop.RunStatus{{interop.StatusCompleted}}}
	_, err = Run(t.Context(), f, interop.Subject{}, working(1), Wait{Settled: terminalOrInput, Limit: time.Minute})
	if se, ok := errors.AsType[*Error](err); !ok || se.Op != "GetRun" || !errors.Is(err, boom) {
		t.Fatalf("read failure: %v", err)
	}

	// The caller went away: its context's error, and no read.
	ctx, cancel := context.WithCancel(t.Context())
	f = &fakeStore{reads: []interop.Run{working(1)}}
	time.AfterFunc(10*time.Millisecond, cancel)
	if _, err := Run(ctx, f, interop.Subject{}, working(1), Wait{Settled: terminalOrInput, Limit: time.Hour}); !errors.Is(err, context.Canceled) || f.gets != 0 {
		t.Fatalf("caller gone: %v after %d reads", err, f.gets)
	}
}

// waiterStore is a fakeStore that also waits for a status itself: WaitRun
// answers result, or blocks until ctx ends when block is set.
type waiterStore struct {
	fakeStore
	result interop.Run
	err    error
	block  bool
	// checkCtx looks at ctx.Err first, as memstore's WaitRun does.
	checkCtx bool
	waits    int
	settled  func(interop.RunStatus) bool
}

func (w *waiterStore) WaitRun(ctx context.Context, _ interop.Subject, _ string, settled func(interop.RunStatus) bool) (interop.Run, error) {
	w.mu.Lock()
	w.waits++
	w.settled = settled
	w.mu.Unlock()
	if w.checkCtx && ctx.Err() != nil {
		return interop.Run{}, ctx.Err()
	}
	if w.block {
		<-ctx.Done()
		return interop.Run{}, ctx.Err()
	}
	return w.result, w.err
}

// A store that implements interop.RunWaiter is asked for the status
// alone: no event is watched, and its answer is the run returned.
func TestRunUsesTheStoresWait(t *testing.T) {
	done := interop.Run{ID: "r", Status: interop.StatusCompleted, LastSequence: 2}
	w := &waiterStore{result: done}
	got, err := Run(context.Background(), w, interop.Subject{}, working(0), Wait{Settled: terminalOrInput, Limit: time.Second})
	if err != nil || got.Status != interop.StatusCompleted || got.LastSequence != 2 {
		t.Fatalf("Run = %+v, %v; want the waiter's run", got, err)
	}
	if w.waits != 1 || len(w.afters) != 0 || w.gets != 0 {
		t.Fatalf("waits=%d watches=%d gets=%d; want one WaitRun and nothing else", w.waits, len(w.afters), w.gets)
	}
	if !w.settled(interop.StatusWaitingInput) || w.settled(interop.StatusWaitingApproval) {
		t.Fatal("WaitRun did not receive the caller's settled")
	}
}

// When the wait's time is up, or the surface drains, the run is read once
// and answered as it is; a failing wait is an *Error naming WaitRun; a
// caller that went away gets its ctx.Err().
func TestRunStoreWaitEnds(t *testing.T) {
	later := working(5)
	w := &waiterStore{fakeStore: fakeStore{reads: []interop.Run{later}}, block: true}
	got, err := Run(context.Background(), w, interop.Subject{}, working(0), Wait{Settled: terminalOrInput, Limit: 20 * time.Millisecond})
	if err != nil || got.LastSequence != 5 || w.gets != 1 {
		t.Fatalf("time up: Run = %+v, %v after %d reads; want the run read once", got, err, w.gets)
	}

	stop, drain := context.WithCancel(context.Background())
	drain()
	got, err = Run(context.Background(), w, interop.Subject{}, working(0), Wait{Settled: terminalOrInput, Limit: time.Hour, Stop: stop})
	if err != nil || got.LastSequence != 5 {
		t.Fatalf("drained: Run = %+v, %v; want the run read", got, err)
	}

	boom := errors.New("boom")
	failing := &waiterStore{err: boom}
	_, err = Run(context.Background(), failing, interop.Subject{}, working(0), Wait{Settled: terminalOrInput, Limit: time.Second})
	var se *Error
	if !errors.As(err, &se) || se.Op != "WaitRun" || !errors.Is(err, boom) {
		t.Fatalf("failing wait: err = %v; want *Error{Op: WaitRun} wrapping boom", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Run(ctx, w, interop.Subject{}, working(0), Wait{Settled: terminalOrInput, Limit: time.Second})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("caller gone: err = %v; want context.Canceled", err)
	}
}
