package pushservice

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/push"
)

// Reservation is a registration decided but not yet stored, for a request
// that registers a config and also changes its task — A2A SendMessage
// with configuration.taskPushNotificationConfig, which creates the task or
// answers its interrupt. Everything that can refuse the registration is
// decided before that change: the spec passed validation and the guard,
// its secret is sealed and, on an existing task, one of the task's slots
// is held, so a refused request changes nothing (OpenWOP interop.md §A2A
// multi-turn: a refused message changes nothing). Commit stores it once
// the task changed; Release gives it up when the change did not happen.
// Exactly one of them must be called; later calls do nothing.
type Reservation struct {
	s    *Service
	spec Spec   // its ID is set
	ref  string // the sealed secret, "" when none
	// task is the existing task, "" for one about to be created; slot is
	// set while one of its slots is held (not for a replacement).
	task string
	slot bool
	once sync.Once
}

// Reserve decides the registration of spec on task taskID — "" for a
// task the caller is about to create — without storing it. On an existing
// task the caller must have read the task under the registering Subject
// first, exactly as for [Service.Register]; a task that already holds
// MaxConfigsPerTask configs, counting the slots other reservations hold,
// is push.ErrTooManyConfigs unless spec replaces one of them. A spec without an
// id gets a minted one now.
//
// The config store is read in any case — the task's configs, or for a
// task not yet created those of "", which has none — so that a store that
// cannot answer refuses the registration before the caller changes
// anything. Only a store that fails between that read and Commit's write
// is left for Commit to report.
func (s *Service) Reserve(ctx context.Context, taskID string, spec Spec) (*Reservation, error) {
	if s.closed() {
		return nil, ErrClosed
	}
	if err := s.precheck(ctx, spec); err != nil {
		return nil, err
	}
	if spec.ID == "" {
		spec.ID = mintConfigID()
	}
	r := &Reservation{s: s, spec: spec, task: taskID}
	recs, err := s.configs.List(ctx, taskID)
	if err != nil {
		return nil, fmt.Errorf("push: listing configs: %w", err)
	}
	if taskID != "" {
		if !slices.ContainsFunc(recs, func(r push.Record) bool { return r.ID == spec.ID }) {
			s.mu.Lock()
			if len(recs)+s.reserved[taskID] >= s.maxPerTask {
				s.mu.Unlock()
				return nil, push.ErrTooManyConfigs
			}
			if s.reserved == nil {
				s.reserved = map[string]int{}
			}
			s.reserved[taskID]++
			s.mu.Unlock()
			r.slot = true
		}
	}
	ref, err := s.seal(ctx, spec)
	if err != nil {
		r.Release(ctx)
		return nil, err
	}
	r.ref = ref
	return r, nil
}

// Commit stores the reserved config on run's task for sub, exactly as
// [Service.Register] would have, and follows the run from
// run.LastSequence: the events of the change the reservation preceded are
// not pushed. After [Service.Close] the config is stored all the same and
// followed from the next Start. A store failure here comes after the
// caller's change and is the caller's to report.
func (r *Reservation) Commit(ctx context.Context, sub interop.Subject, run *interop.Run) (Config, error) {
	committed := false
	r.once.Do(func() { committed = true })
	if !committed {
		return Config{}, fmt.Errorf("push: reservation of config %s already ended", r.spec.ID)
	}
	defer r.freeSlot()
	return r.s.putConfig(ctx, sub, run, r.spec, r.ref)
}

// Release gives the reservation up: its slot is freed and its secret
// discarded.
func (r *Reservation) Release(ctx context.Context) {
	r.once.Do(func() {
		r.freeSlot()
		r.s.discard(ctx, r.task, r.ref)
	})
}

func (r *Reservation) freeSlot() {
	if !r.slot {
		return
	}
	s := r.s
	s.mu.Lock()
	if s.reserved[r.task]--; s.reserved[r.task] <= 0 {
		delete(s.reserved, r.task)
	}
	s.mu.Unlock()
}
