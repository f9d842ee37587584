package pushservice

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"time"

	"github.com/wopinterop/wopinterop/internal/recovery"
	"github.com/wopinterop/wopinterop/push"
)

// Leasing. The worker leases lane heads from the outbox under the
// service's owner name. The pump leases when a delivery was queued here
// and every OutboxPoll, for what other replicas queued or left behind,
// starts a goroutine per leased delivery, and renews every lease held
// each third of LeaseTTL. A delivery's goroutine attempts it until it is
// finished and removes it, which makes its lane's next push a head, then
// leases one more head itself and goes on with it, until none is left:
// a lane's pushes follow one another without a trip through the pump. A
// lease this worker loses (it could not renew in time, and another
// replica took the delivery over) ends its delivery before the next
// attempt: the other owner delivers it, at least once. Close releases
// what is still held.

const (
	defaultLeaseTTL   = 30 * time.Second
	defaultOutboxPoll = time.Second
	// leaseBatch is what one Lease call asks for; the pump asks again
	// while batches come back full.
	leaseBatch = 64
)

// held is a lease the worker holds; its fields are guarded by
// Service.mu.
type held struct {
	// cancel ends the delivery's goroutine (the lease was lost).
	cancel context.CancelFunc
	// running: a goroutine works on it. A held lease that is not running
	// was abandoned on Close and is released when the pump stops.
	running bool
	// lost: Renew reported that the worker no longer holds it.
	lost bool
}

// deliveryID names the push of body part of run event seq to config
// configID of task taskID: the same push queued twice — a watcher that
// resumes after a failure, a restart, two replicas following one run —
// gets the same id, which the outbox keeps once, and receivers see the
// same Idempotency-Key. 128 bits of SHA-256 over the length-prefixed
// fields: fixed-size, encoding nothing readable.
func deliveryID(taskID, configID string, seq int64, part int) string {
	b := make([]byte, 0, len(taskID)+len(configID)+4*binary.MaxVarintLen64)
	b = binary.AppendUvarint(b, uint64(len(taskID)))
	b = append(b, taskID...)
	b = binary.AppendUvarint(b, uint64(len(configID)))
	b = append(b, configID...)
	b = binary.AppendVarint(b, seq)
	b = binary.AppendUvarint(b, uint64(part))
	sum := sha256.Sum256(b)
	return "dl-" + base64.RawURLEncoding.EncodeToString(sum[:16])
}

// idempotencyKey is the Idempotency-Key header of every attempt of
// delivery id: an sf-string (draft-ietf-httpapi-idempotency-key-header
// §2; RFC 9651 §3.3.3). Delivery ids need no escaping.
func idempotencyKey(id string) []string { return []string{`"` + id + `"`} }

// wakePump asks the pump to lease again.
func (s *Service) wakePump() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// pump runs from Start until Close stops it.
func (s *Service) pump() {
	defer close(s.pumpDone)
	defer s.releaseAll()
	ctx := s.pumpCtx
	poll := time.NewTicker(s.poll)
	defer poll.Stop()
	renew := time.NewTicker(max(s.leaseTTL/3, time.Millisecond))
	defer renew.Stop()
	drained, renewNow := false, false
	for {
		s.pumpStep(ctx, &drained, renewNow)
		renewNow = false
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		case <-poll.C:
		case <-renew.C:
			renewNow = true
		}
	}
}

// pumpStep renews the held leases when asked to, leases what it can, and
// tells a waiting Close once nothing is left to attempt. Host code is
// called under recovered; a panic that gets here anyway is logged, and
// the pump rests before its next step.
func (s *Service) pumpStep(ctx context.Context, drained *bool, renew bool) {
	defer func() {
		if v := recover(); v != nil {
			s.logPanic(ctx, "leasing", "", recovery.Contain(v))
			pause(ctx, faultPause)
		}
	}()
	if renew {
		s.renew(ctx)
	}
	s.leaseMore(ctx)
	if !*drained && s.idleClosing() {
		*drained = true
		close(s.drained)
	}
}

// idleClosing reports whether Close is waiting and no delivery is being
// attempted: nothing more will finish, so nothing more can be leased.
func (s *Service) idleClosing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != stateClosing {
		return false
	}
	for _, h := range s.held {
		if h.running {
			return false
		}
	}
	return true
}

// leaseMore leases lane heads and starts a delivery for each. A fault of
// the outbox is logged; the next wake or poll tries again.
func (s *Service) leaseMore(ctx context.Context) {
	for ctx.Err() == nil {
		var batch []push.Delivery
		err := s.contained(ctx, "the outbox", "", func() (err error) {
			batch, err = s.outbox.Lease(ctx, s.owner, leaseBatch, s.leaseTTL)
			return err
		})
		if err != nil {
			if !errors.Is(err, errPanicked) && ctx.Err() == nil {
				s.log.ErrorContext(ctx, "push: leasing deliveries from the outbox failed")
			}
			return
		}
		for _, d := range batch {
			s.startDelivery(d)
		}
		if len(batch) < leaseBatch {
			return
		}
	}
}

// startDelivery starts a goroutine for a delivery the pump leased.
func (s *Service) startDelivery(d push.Delivery) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ctx, h, ok := s.holdLocked(d)
	if !ok {
		return
	}
	s.laneWG.Add(1)
	go s.runDeliveries(ctx, d, h)
}

// holdLocked records d's lease and returns the context to deliver it
// under. It reports false when Close has stopped the deliveries — the
// lease is then released with the rest — or when the lease is held
// already (an outbox that leased a live lease twice). s.mu is held.
func (s *Service) holdLocked(d push.Delivery) (context.Context, *held, bool) {
	if s.held[d.ID] != nil {
		return nil, nil, false
	}
	h := &held{cancel: func() {}}
	s.held[d.ID] = h
	if s.lanesStopped {
		return nil, nil, false
	}
	ctx, cancel := context.WithCancel(s.laneCtx)
	h.cancel, h.running = cancel, true
	return ctx, h, true
}

// runDeliveries finishes d, then goes on with the next head it can
// lease — usually the one its own lane just freed — until there is none:
// a lane's pushes follow one another without a trip through the pump.
func (s *Service) runDeliveries(ctx context.Context, d push.Delivery, h *held) {
	defer s.laneWG.Done()
	for {
		s.runDelivery(ctx, d, h)
		var ok bool
		if ctx, d, h, ok = s.leaseNext(); !ok {
			return
		}
	}
}

// leaseNext leases one more head for the goroutine that just finished a
// delivery. When the outbox fails, the pump tries again later.
func (s *Service) leaseNext() (context.Context, push.Delivery, *held, bool) {
	ctx := s.laneCtx
	if ctx.Err() != nil {
		return nil, push.Delivery{}, nil, false
	}
	var batch []push.Delivery
	err := s.contained(ctx, "the outbox", "", func() (err error) {
		batch, err = s.outbox.Lease(ctx, s.owner, 1, s.leaseTTL)
		return err
	})
	if err != nil || len(batch) == 0 {
		if err != nil {
			s.wakePump()
		}
		return nil, push.Delivery{}, nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	dctx, h, ok := s.holdLocked(batch[0])
	return dctx, batch[0], h, ok
}

// runDelivery finishes d and removes it from the outbox. A panic that
// escapes the recovery around host code is logged and d tried again
// after a pause.
func (s *Service) runDelivery(ctx context.Context, d push.Delivery, h *held) {
	finished := false
	for {
		var panicked bool
		finished, panicked = s.deliverOnce(ctx, &d)
		if !panicked || ctx.Err() != nil {
			break
		}
		pause(ctx, faultPause)
	}
	removed := finished && s.remove(ctx, &d)
	s.mu.Lock()
	h.running = false
	if (removed || h.lost) && s.held[d.ID] == h {
		delete(s.held, d.ID)
	}
	s.mu.Unlock()
	h.cancel()
}

// deliverOnce is deliver, reporting a panic instead of passing it on.
func (s *Service) deliverOnce(ctx context.Context, d *push.Delivery) (finished, panicked bool) {
	defer func() {
		if v := recover(); v != nil {
			s.logPanic(ctx, "delivering", d.TaskID, recovery.Contain(v))
			finished, panicked = false, true
		}
	}()
	return s.deliver(ctx, d), false
}

// remove forgets a finished delivery, trying again after a fault until
// ctx ends: its lane moves on only once it is gone. It reports whether
// it is gone; if not, the lease lapses and the push is delivered again,
// by this worker or another (at least once).
func (s *Service) remove(ctx context.Context, d *push.Delivery) bool {
	for try := 1; ; try++ {
		err := s.contained(ctx, "the outbox", d.TaskID, func() error { return s.outbox.Remove(context.WithoutCancel(ctx), d.ID) })
		if err == nil {
			return true
		}
		if !errors.Is(err, errPanicked) {
			s.log.ErrorContext(ctx, "push: removing a delivery from the outbox failed; trying again", "task", d.TaskID, "config", d.ConfigID, "try", try)
		}
		if !s.sleep(ctx, watchRetry(try)) {
			return false
		}
	}
}

// renew extends every lease held. One that is lost ends its delivery
// before the next attempt: the owner that took it over delivers it.
func (s *Service) renew(ctx context.Context) {
	s.mu.Lock()
	ids := make([]string, 0, len(s.held))
	for id := range s.held {
		ids = append(ids, id)
	}
	s.mu.Unlock()
	if len(ids) == 0 {
		return
	}
	var lost []string
	err := s.contained(ctx, "the outbox", "", func() (err error) {
		lost, err = s.outbox.Renew(ctx, s.owner, ids, s.leaseTTL)
		return err
	})
	if err != nil {
		if !errors.Is(err, errPanicked) && ctx.Err() == nil {
			s.log.ErrorContext(ctx, "push: renewing leases in the outbox failed")
		}
		return
	}
	n := 0
	s.mu.Lock()
	for _, id := range lost {
		h := s.held[id]
		if h == nil {
			continue // finished meanwhile
		}
		n++
		h.lost = true
		if h.running {
			h.cancel()
		} else {
			delete(s.held, id)
		}
	}
	s.mu.Unlock()
	if n > 0 {
		s.log.WarnContext(ctx, "push: leases lost; another worker delivers those pushes", "count", n)
	}
}

// releaseAll gives back every lease still held when the pump stops:
// deliveries abandoned on Close, for another replica or the next Start.
func (s *Service) releaseAll() {
	s.mu.Lock()
	ids := make([]string, 0, len(s.held))
	for id := range s.held {
		ids = append(ids, id)
	}
	clear(s.held)
	s.mu.Unlock()
	ctx := context.Background()
	for _, id := range ids {
		err := s.contained(ctx, "the outbox", "", func() error { return s.outbox.Release(ctx, s.owner, id) })
		if err != nil && !errors.Is(err, errPanicked) {
			s.log.ErrorContext(ctx, "push: releasing a lease failed; it lapses after LeaseTTL")
		}
	}
}
