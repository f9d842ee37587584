package memstore

import (
	"context"

	"github.com/wopinterop/wopinterop/interop"
)

var _ interop.RunWaiter = (*Store)(nil)

// WaitRun returns a copy of the run once settled reports true for its
// status or the run is terminal, or ctx.Err() when ctx is done first.
// Unknown and unreadable runs are ErrNotFound, as in GetRun. It looks at
// the run's status only — no event is copied — and waits on the channel
// the run's next append closes, so a wait costs no goroutine, and a run
// already settled costs one read. settled is called under the tenant's
// read lock.
func (s *Store) WaitRun(ctx context.Context, sub interop.Subject, runID string, settled func(interop.RunStatus) bool) (interop.Run, error) {
	if err := ctx.Err(); err != nil {
		return interop.Run{}, err
	}
	t := s.tenant(sub.Tenant)
	if t == nil {
		return interop.Run{}, s.notFound.run
	}
	t.mu.RLock()
	rec := t.readableLocked(sub, runID)
	if rec == nil {
		t.mu.RUnlock()
		return interop.Run{}, s.notFound.run
	}
	for {
		// Every status change appends an event in the same locked step,
		// and appends hold the lock for writing: no change can slip
		// between this look and the wait on the channel.
		if st := rec.run.Status; st.Terminal() || settled(st) {
			run := cloneRun(&rec.run)
			t.mu.RUnlock()
			return run, nil
		}
		changed := rec.waitChannel()
		t.mu.RUnlock()
		select {
		case <-ctx.Done():
			return interop.Run{}, ctx.Err()
		case <-changed:
		}
		t.mu.RLock()
	}
}
