package memstore

import (
	"runtime/debug"
	"slices"
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
// before cutoff (Unix nanoseconds), oldest first, and returns how many.
// The index is sorted by status timestamp, so the candidates are its tail;
// the live runs among them stay.
func (t *tenantState) purgeRuns(cutoff int64, limit int) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	recs := t.byStatusAt.recs
	first := len(recs)
	for first > 0 && recs[first-1].run.StatusAt.UnixNano() < cutoff {
		first--
	}
	purged := 0
	for i := len(recs) - 1; i >= first && purged < limit; i-- {
		rec := recs[i]
		if !rec.run.Status.Terminal() {
			continue
		}
		rec.purged = true
		delete(t.runs, rec.id)
		if rec.hasKey && t.idempotency[rec.idem] == rec {
			delete(t.idempotency, rec.idem)
		}
		purged++
	}
	if purged == 0 {
		return 0
	}
	// DeleteFunc zeroes the vacated tail, so the index keeps no pointer to
	// a purged run.
	kept := slices.DeleteFunc(recs[first:], func(rec *runRecord) bool { return rec.purged })
	recs = recs[:first+len(kept)]
	if cap(recs) > 256 && cap(recs) > 4*len(recs) {
		recs = slices.Clone(recs)
	}
	t.byStatusAt.recs = recs
	t.purgedSinceRebuild += purged
	if t.purgedSinceRebuild > len(t.runs) {
		t.runs = rebuilt(t.runs)
		t.idempotency = rebuilt(t.idempotency)
		t.purgedSinceRebuild = 0
	}
	return purged
}

// rebuilt copies m into a map sized for what it holds now.
func rebuilt[K comparable, V any](m map[K]V) map[K]V {
	out := make(map[K]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
