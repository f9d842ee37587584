package memstore

import (
	"runtime/debug"
	"time"
)

// Bounds of the retention purge.
const (
	// purgeBatch bounds the runs one purge removes under one hold of a
	// tenant's lock, so that a large purge delays that tenant's requests by
	// one batch at most.
	purgeBatch = 1024
	// minPurgeEvery and maxPurgeEvery clamp the purge period, a quarter of
	// the shortest retention configured.
	minPurgeEvery = 10 * time.Millisecond
	maxPurgeEvery = time.Minute
)

// startPurge starts the retention purge goroutine unless it runs already
// or the store is closed. The first write that keeps something subject to
// retention (a run with WithRunRetention, a durable host event with an age
// bound) calls it, so a Store that never holds such state owns no
// goroutine for it.
func (s *Store) startPurge() {
	if s.purgeStarted.Load() {
		return
	}
	every := s.purgePeriod()
	if every == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.purgeStarted.Load() {
		return
	}
	s.purgeStarted.Store(true)
	s.purging.Add(1)
	go s.purgeLoop(every)
}

// purgePeriod is a quarter of the shortest retention configured, clamped
// to [minPurgeEvery, maxPurgeEvery]: an expired run or event outlives its
// retention by at most that much. 0 means nothing expires.
func (s *Store) purgePeriod() time.Duration {
	shortest := time.Duration(0)
	for _, d := range []time.Duration{s.cfg.runRetention, s.cfg.hostEventMaxAge} {
		if d > 0 && (shortest == 0 || d < shortest) {
			shortest = d
		}
	}
	if shortest == 0 {
		return 0
	}
	return min(max(shortest/4, minPurgeEvery), maxPurgeEvery)
}

// purgeLoop purges every period until Close.
func (s *Store) purgeLoop(every time.Duration) {
	defer s.purging.Done()
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-s.runsCtx.Done():
			return
		case <-tick.C:
			s.purgeRecovering()
		}
	}
}

// purgeRecovering is one purge; a panic is logged and the next tick tries
// again, so that a bug here cannot take the host down.
func (s *Store) purgeRecovering() {
	defer func() {
		if p := recover(); p != nil {
			s.cfg.logger.Error("memstore: retention purge panicked", "panic", p, "stack", string(debug.Stack()))
		}
	}()
	s.purgeExpired()
}

// purgeExpired removes, in every tenant, the terminal runs whose status
// timestamp is older than the run retention and the durable host events
// published longer than the age bound ago. It returns the numbers removed.
func (s *Store) purgeExpired() (runs, events int) {
	now := s.now()
	s.mu.Lock()
	tenants := make([]*tenantState, 0, len(s.tenants))
	for _, t := range s.tenants {
		tenants = append(tenants, t)
	}
	s.mu.Unlock()
	// Tenant locks are taken one at a time, never under s.mu (CreateRun
	// takes s.mu under a tenant lock).
	for _, t := range tenants {
		if ttl := s.cfg.runRetention; ttl > 0 {
			cutoff := now.Add(-ttl).UnixNano()
			for {
				n := t.purgeRuns(cutoff, purgeBatch)
				runs += n
				if n < purgeBatch {
					break
				}
			}
		}
		if age := s.cfg.hostEventMaxAge; age > 0 {
			t.mu.Lock()
			events += t.host.expire(now.Add(-age).UnixNano())
			t.mu.Unlock()
		}
	}
	return runs, events
}

// purgeRuns removes up to limit terminal runs whose status timestamp is
// before cutoff (Unix nanoseconds), oldest first per status, and returns
// how many. They are the oldest entries of the tenant's terminal-status
// trees, so finding them costs O(limit + log n); live runs are never
// among them.
func (t *tenantState) purgeRuns(cutoff int64, limit int) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	expired := t.index.oldestTerminal(nil, cutoff, limit)
	for _, rec := range expired {
		t.dropRunLocked(rec)
	}
	if len(expired) == 0 {
		return 0
	}
	t.purgedSinceRebuild += len(expired)
	if t.purgedSinceRebuild > len(t.runs) {
		t.runs = rebuilt(t.runs)
		t.idempotency = rebuilt(t.idempotency)
		t.index.parts = rebuilt(t.index.parts)
		t.purgedSinceRebuild = 0
	}
	return len(expired)
}

// rebuilt copies m into a map sized for what it holds now.
func rebuilt[K comparable, V any](m map[K]V) map[K]V {
	out := make(map[K]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
