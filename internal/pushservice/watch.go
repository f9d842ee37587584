package pushservice

import (
	"context"
	"errors"
	"fmt"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/internal/recovery"
	"github.com/wopinterop/wopinterop/internal/wirejson"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/push"
)

// Following runs. One watcher per task with live configs follows the run's
// event log (RunStore.WatchRun under the registering Subject), renders each
// event into push bodies once, and queues one delivery per body for every
// config whose watermark is below the event. It ends after the terminal
// event, when the task's last config is deleted (here, or on another
// replica: the next rescan stops it), when the run can no longer be read,
// or on Close.

// watcher is one task's follower. Its fields are guarded by Service.mu.
type watcher struct {
	task    string
	cancel  context.CancelFunc
	stopped bool // cancelled on purpose: a new registration needs a new watcher
	// recheck is set when a config is registered while the watcher runs:
	// before leaving after the terminal event, the watcher looks again for
	// a config the terminal event may have missed.
	recheck bool
	// seen is the rescan under way when the watcher was started or last
	// given a config: a rescan that began later may stop it (rescan.go).
	seen uint64
}

func (w *watcher) stop() {
	w.stopped = true
	w.cancel()
}

// watchLocked makes sure rec's task is followed, from rec's watermark
// when a new watcher starts. prev is the run's status at that watermark,
// "" when unknown. s.mu is held.
func (s *Service) watchLocked(rec push.Record, prev interop.RunStatus) {
	if s.state != stateStarted {
		return // Start resumes live configs; Close stops everything
	}
	if w := s.watchers[rec.TaskID]; w != nil && !w.stopped {
		w.recheck, w.seen = true, s.scans
		return
	}
	ctx, cancel := context.WithCancel(s.watchCtx)
	w := &watcher{task: rec.TaskID, cancel: cancel, seen: s.scans}
	s.watchers[rec.TaskID] = w
	s.watchWG.Add(1)
	go s.watch(ctx, w, rec.Subject.Clone(), TaskRef{ID: rec.TaskID, ContextID: rec.ContextID}, rec.After, prev)
}

// followResult is how one pass over a run's log ended.
type followResult int

const (
	followStopped    followResult = iota // ctx ended
	followTerminal                       // the terminal event was queued
	followUnreadable                     // the run is no longer readable
	followAgain                          // the pass ended early: reopen the watch from the last event queued
)

func (s *Service) watch(ctx context.Context, w *watcher, sub interop.Subject, task TaskRef, from int64, prev interop.RunStatus) {
	defer s.watchWG.Done()
	defer w.cancel()
	// Host code is called under recovered; a panic that gets here anyway
	// is logged, and the task is followed again, from the last event
	// queued, after a pause.
	for !s.watchRecovering(ctx, w, sub, task, &from, &prev) {
		pause(ctx, faultPause)
	}
}

// watchRecovering follows the task until its watcher is done and reports
// true, or false after a panic.
func (s *Service) watchRecovering(ctx context.Context, w *watcher, sub interop.Subject, task TaskRef, from *int64, prev *interop.RunStatus) (done bool) {
	defer func() {
		if v := recover(); v != nil {
			s.logPanic(ctx, "watching", task.ID, recovery.Contain(v))
			if done = ctx.Err() != nil; done {
				s.leave(w)
			}
		}
	}()
	for {
		switch s.follow(ctx, sub, task, from, prev) {
		case followStopped:
			s.leave(w)
			return true
		case followUnreadable:
			// Nothing more can be delivered: the secrets go now (OpenWOP RFC 0214 §A).
			s.finishTask(ctx, task.ID)
			s.leave(w)
			return true
		}
		// A config registered while the terminal event was being queued
		// may have missed it; one more pass from its watermark delivers it
		// (configs that already had the event are past it).
		again := false
		for !again {
			s.mu.Lock()
			if !w.recheck {
				if s.watchers[w.task] == w {
					delete(s.watchers, w.task)
				}
				s.mu.Unlock()
				return true
			}
			w.recheck = false
			s.mu.Unlock()
			if low, ok := s.lowestWatermark(ctx, task.ID); ok && low < *from {
				*from, *prev, again = low, "", true
			}
		}
	}
}

// leave forgets w unless a newer watcher of its task replaced it.
func (s *Service) leave(w *watcher) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.watchers[w.task] == w {
		delete(s.watchers, w.task)
	}
}

// lowestWatermark is the lowest watermark of the task's live configs.
func (s *Service) lowestWatermark(ctx context.Context, taskID string) (int64, bool) {
	var recs []push.Record
	err := s.contained(ctx, "the config store", taskID, func() (err error) {
		recs, err = s.configs.List(ctx, taskID)
		return err
	})
	if err != nil {
		if !errors.Is(err, errPanicked) {
			s.log.ErrorContext(ctx, "push: listing configs failed", "task", taskID)
		}
		return 0, false
	}
	var low int64
	found := false
	for _, r := range recs {
		if !r.Done && (!found || r.After < low) {
			low, found = r.After, true
		}
	}
	return low, found
}

// watchRetry is the pause before reopening a watch that failed.
func watchRetry(failures int) time.Duration {
	d := 50 * time.Millisecond << min(failures, 7) // up to 6.4s
	return d
}

// follow queues the run's events after *from until the terminal one,
// reopening the watch after a failure. *from and *prev advance with every
// event queued.
func (s *Service) follow(ctx context.Context, sub interop.Subject, task TaskRef, from *int64, prev *interop.RunStatus) followResult {
	failures := 0
	for {
		if failures > 0 && !s.sleep(ctx, watchRetry(failures)) {
			return followStopped
		}
		before := *from
		res, err := s.followOnce(ctx, sub, task, from, prev)
		switch {
		case res != followAgain:
			return res
		case ctx.Err() != nil:
			return followStopped
		case *from > before:
			failures = 0
		}
		if err != nil && !errors.Is(err, errPanicked) {
			s.log.WarnContext(ctx, "push: following a run failed", "task", task.ID, "sequence", *from)
		}
		failures++
	}
}

// followOnce opens the watch and queues events until the terminal one or
// until the sequence ends. A panic of host code in it — the RunStore, its
// event sequence, the Projector, the stores — ends the pass as a failure,
// so the watch is reopened after a pause and nothing is skipped.
func (s *Service) followOnce(ctx context.Context, sub interop.Subject, task TaskRef, from *int64, prev *interop.RunStatus) (res followResult, err error) {
	res = followAgain
	defer s.recovered(ctx, "following the run", task.ID, &err)
	// A watcher resumed from a watermark (Start, the rescan) does not know
	// the run's status there; it reads the event at the watermark too, so
	// it renders what follows exactly as the watcher that queued up to the
	// watermark did: no statusUpdate for a status that did not change, and
	// the same bodies under the same delivery ids as another replica's.
	after := *from
	if *prev == "" && after > 0 {
		after--
	}
	events, err := s.store.WatchRun(ctx, sub, task.ID, after)
	switch {
	case ctx.Err() != nil:
		return followStopped, nil
	case errors.Is(err, interop.ErrNotFound):
		return followUnreadable, nil
	case err != nil:
		return followAgain, err
	}
	for ev, err := range events {
		if err != nil {
			break
		}
		if ev.Sequence <= *from {
			if ev.Sequence == *from && *prev == "" {
				*prev = ev.Status
			}
			continue
		}
		qerr := s.contained(ctx, "queueing a run event", task.ID, func() error { return s.queueEvent(ctx, sub, task, &ev, *prev) })
		if qerr != nil {
			return followAgain, qerr
		}
		*from, *prev = ev.Sequence, ev.Status
		if ev.Terminal() {
			return followTerminal, nil
		}
	}
	if ctx.Err() != nil {
		return followStopped, nil
	}
	// The sequence ended early: a failure, or a run that was already
	// terminal with nothing after *from.
	run, err := s.store.GetRun(ctx, sub, task.ID)
	switch {
	case ctx.Err() != nil:
		return followStopped, nil
	case errors.Is(err, interop.ErrNotFound):
		return followUnreadable, nil
	case err == nil && run.Status.Terminal() && run.LastSequence <= *from:
		return followTerminal, nil
	}
	return followAgain, nil
}

// queueEvent renders ev and queues its bodies for every config of the
// task whose watermark is below it, then raises the watermarks. On the
// terminal event each config's last delivery is marked final. Queueing
// an event again — a pass that failed before raising the watermarks, a
// restart, another replica following the same run — names the same
// deliveries (deliveryID), which the outbox already holds.
func (s *Service) queueEvent(ctx context.Context, sub interop.Subject, task TaskRef, ev *interop.RunEvent, prev interop.RunStatus) error {
	events, err := s.project.Project(ctx, sub, task, ev, prev)
	if err != nil {
		return fmt.Errorf("push: projecting event %d: %w", ev.Sequence, err)
	}
	bodies := make([][]byte, len(events))
	for i, e := range events {
		if bodies[i], err = encodeBody(e); err != nil {
			return err
		}
	}
	recs, err := s.configs.List(ctx, task.ID)
	if err != nil {
		return fmt.Errorf("push: listing configs: %w", err)
	}
	terminal := ev.Terminal()
	for _, r := range recs {
		if r.Done || r.After >= ev.Sequence {
			continue
		}
		for i, b := range bodies {
			d := push.Delivery{ID: deliveryID(task.ID, r.ID, ev.Sequence, i), TaskID: task.ID, ConfigID: r.ID, Sequence: ev.Sequence, Body: b, Final: terminal && i == len(bodies)-1}
			if err := s.enqueue(ctx, d); err != nil {
				return err
			}
		}
		if terminal && len(bodies) == 0 {
			if err := s.enqueue(ctx, push.Delivery{ID: deliveryID(task.ID, r.ID, ev.Sequence, 0), TaskID: task.ID, ConfigID: r.ID, Sequence: ev.Sequence, Final: true}); err != nil {
				return err
			}
		}
	}
	if err := s.configs.Advance(ctx, task.ID, ev.Sequence); err != nil {
		return fmt.Errorf("push: advancing the watermark: %w", err)
	}
	return nil
}

// encodeBody encodes one push body: an A2A StreamResponse with exactly
// one member (OpenWOP RFC 0214 §C), e.g. {"statusUpdate":{...}}, in the a2a-go wire
// types' own JSON, the same bytes a stream of the task carries —
// appended, byte for byte what encoding/json writes for
// wire.StreamResponse (FuzzAppendStreamResponse in internal/wirejson).
func encodeBody(ev wire.Event) ([]byte, error) {
	if ev == nil {
		return nil, errors.New("push: encoding a body: no event")
	}
	b, err := wirejson.AppendStreamResponse(make([]byte, 0, 256), ev)
	if err != nil {
		return nil, fmt.Errorf("push: encoding a body: %w", err)
	}
	return b, nil
}

// finishTask ends every live config of a task: its secret is discarded
// and nothing more is delivered.
func (s *Service) finishTask(ctx context.Context, taskID string) {
	var recs []push.Record
	err := s.contained(ctx, "the config store", taskID, func() (err error) {
		recs, err = s.configs.List(context.WithoutCancel(ctx), taskID)
		return err
	})
	if err != nil {
		if !errors.Is(err, errPanicked) {
			s.log.ErrorContext(ctx, "push: listing configs failed", "task", taskID)
		}
		return
	}
	for i := range recs {
		if !recs[i].Done {
			s.finish(ctx, &recs[i])
		}
	}
}

// finish marks a config done and discards its secret (OpenWOP RFC 0214 §A).
func (s *Service) finish(ctx context.Context, r *push.Record) {
	ctx = context.WithoutCancel(ctx)
	err := s.contained(ctx, "the config store", r.TaskID, func() error {
		return s.configs.Finish(ctx, r.TaskID, r.ID, r.SecretRef)
	})
	if err != nil && !errors.Is(err, errPanicked) {
		s.log.ErrorContext(ctx, "push: finishing a config failed", "task", r.TaskID, "config", r.ID)
	}
	s.discard(ctx, r.TaskID, r.SecretRef)
}
