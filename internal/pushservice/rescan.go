package pushservice

import (
	"context"
	"errors"
	"time"

	"github.com/wopinterop/wopinterop/internal/recovery"
	"github.com/wopinterop/wopinterop/push"
)

// Following every live task. A task's run is followed by the replica its
// config was registered on; if that replica dies, the outbox leases hand
// over what it queued, but nobody would queue the run's later events. So
// every WatchRescan each service reads the live configs again and follows
// every task it does not follow yet, from the task's lowest watermark, as
// Start does. Every replica thus follows every task with live configs;
// two followers of one run queue the same deliveries under the same ids
// (deliveryID), which the outbox holds once, and skip what a watermark
// says is queued already. A watcher here whose task has no live config
// any more — its configs were deleted on another replica — is stopped.

const defaultWatchRescan = 5 * time.Second

// rescan reads the live configs every s.rescanEvery until Close.
func (s *Service) rescan() {
	defer s.watchWG.Done()
	ctx := s.watchCtx
	tick := time.NewTicker(s.rescanEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		s.rescanOnce(ctx)
	}
}

// rescanOnce follows the live tasks not followed here. A failing or
// panicking config store is logged and read again at the next tick.
func (s *Service) rescanOnce(ctx context.Context) {
	defer func() {
		if v := recover(); v != nil {
			s.logPanic(ctx, "rescanning live configs", "", recovery.Contain(v))
		}
	}()
	s.mu.Lock()
	s.scans++
	scan := s.scans
	s.mu.Unlock()
	var live []push.Record
	err := s.contained(ctx, "the config store", "", func() (err error) {
		live, err = s.configs.Live(ctx)
		return err
	})
	if err != nil {
		if !errors.Is(err, errPanicked) && ctx.Err() == nil {
			s.log.ErrorContext(ctx, "push: reading live configs failed; trying again at the next rescan")
		}
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.followLiveLocked(live)
	s.dropUnconfiguredLocked(live, scan)
}

// dropUnconfiguredLocked stops the watchers of tasks that have no config
// in live, read by rescan number scan. A watcher started or given a
// config while live was read (seen == scan) is kept: live may predate
// its config. s.mu is held.
func (s *Service) dropUnconfiguredLocked(live []push.Record, scan uint64) {
	configured := make(map[string]bool, len(live))
	for _, r := range live {
		configured[r.TaskID] = true
	}
	for id, w := range s.watchers {
		if !configured[id] && w.seen < scan && !w.stopped {
			w.stop()
		}
	}
}

// followLiveLocked follows each task of live that no watcher here
// follows, from the lowest watermark of its configs, its status there
// unknown (the watcher reads it). s.mu is held.
func (s *Service) followLiveLocked(live []push.Record) {
	from := map[string]push.Record{} // per task: the lowest watermark
	for _, r := range live {
		if low, ok := from[r.TaskID]; !ok || r.After < low.After {
			from[r.TaskID] = r
		}
	}
	for id, r := range from {
		if w := s.watchers[id]; w != nil && !w.stopped {
			continue // followed already; no recheck, nothing was registered
		}
		s.watchLocked(r, "")
	}
}
