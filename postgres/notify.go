package postgres

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// notifyChannel is the one LISTEN/NOTIFY channel of this module. A
// payload is "r <status> <run id>" after a run's log grew (the status is
// the run's after the append) or "h <tenant>" after a host event was
// published. NOTIFY is delivered at commit, so a woken reader finds the
// change (PostgreSQL §NOTIFY).
const notifyChannel = "wopinterop"

func runKey(runID string) string   { return "r " + runID }
func hostKey(tenant string) string { return "h " + tenant }

func runNotice(runID, status string) string { return "r " + status + " " + runID }
func hostNotice(tenant string) string       { return "h " + tenant }

// notify queues a notification in tx; it is sent when tx commits.
func notify(ctx context.Context, tx pgx.Tx, payload string) error {
	if _, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, notifyChannel, payload); err != nil {
		return fmt.Errorf("postgres: notify: %w", err)
	}
	return nil
}

// hub wakes the readers of this replica that wait on a key (a run or a
// tenant's host events). A reader takes the key's channel before it reads
// the database and waits on it after: a change committed after the read
// closes the channel, so it is never missed between the two.
type hub struct {
	mu   sync.Mutex
	keys map[string]*wakeEntry
}

type wakeEntry struct {
	ch   chan struct{}
	refs int
}

func newHub() *hub { return &hub{keys: map[string]*wakeEntry{}} }

// waiter is one reader's registration on a key.
type waiter struct {
	h   *hub
	key string
	e   *wakeEntry
}

func (h *hub) join(key string) *waiter {
	h.mu.Lock()
	defer h.mu.Unlock()
	e := h.keys[key]
	if e == nil {
		e = &wakeEntry{ch: make(chan struct{})}
		h.keys[key] = e
	}
	e.refs++
	return &waiter{h: h, key: key, e: e}
}

// C is the channel the next wake of the key closes.
func (w *waiter) C() <-chan struct{} {
	w.h.mu.Lock()
	defer w.h.mu.Unlock()
	return w.e.ch
}

func (w *waiter) leave() {
	w.h.mu.Lock()
	defer w.h.mu.Unlock()
	if w.e.refs--; w.e.refs == 0 {
		delete(w.h.keys, w.key)
	}
}

func (h *hub) wake(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if e := h.keys[key]; e != nil {
		close(e.ch)
		e.ch = make(chan struct{})
	}
}

// wakeAll wakes every reader: after notifications may have been missed.
func (h *hub) wakeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, e := range h.keys {
		close(e.ch)
		e.ch = make(chan struct{})
	}
}

// wait blocks until the waiter's channel ch is closed, the poll interval
// passes or ctx is done; it returns ctx.Err() in the last case.
func (s *Store) wait(ctx context.Context, ch <-chan struct{}) error {
	t := time.NewTimer(s.cfg.pollInterval)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-ch:
	case <-t.C:
	}
	return nil
}

// listen takes a connection out of the pool for good and LISTENs on it.
func (s *Store) listen(ctx context.Context) (*pgx.Conn, error) {
	pc, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("postgres: listen: %w", err)
	}
	conn := pc.Hijack()
	if _, err := conn.Exec(ctx, "LISTEN "+notifyChannel); err != nil {
		_ = conn.Close(context.Background())
		return nil, fmt.Errorf("postgres: listen: %w", err)
	}
	return conn, nil
}

// listenLoop receives notifications until the store closes. When the
// connection breaks it reconnects with backoff; readers keep polling in
// the meantime, and every reader is woken once it is back, since
// notifications sent in between are lost.
func (s *Store) listenLoop() {
	defer s.loops.Done()
	conn := s.listener
	backoff := 50 * time.Millisecond
	for {
		if conn != nil {
			err := s.receive(conn)
			_ = conn.Close(context.Background())
			if s.runsCtx.Err() != nil {
				return
			}
			s.cfg.logger.Warn("postgres: notification connection lost; readers poll until it is back", "error", err)
		}
		if !s.sleep(backoff) {
			return
		}
		var err error
		if conn, err = s.listen(s.runsCtx); err != nil {
			conn = nil
			backoff = min(2*backoff, 5*time.Second)
			continue
		}
		backoff = 50 * time.Millisecond
		s.hub.wakeAll()
	}
}

// receive dispatches notifications from conn until it fails or the store
// closes.
func (s *Store) receive(conn *pgx.Conn) error {
	for {
		n, err := conn.WaitForNotification(s.runsCtx)
		if err != nil {
			return err
		}
		s.recovering("notification dispatch", func() { s.dispatch(n) })
	}
}

func (s *Store) dispatch(n *pgconn.Notification) {
	kind, rest, _ := strings.Cut(n.Payload, " ")
	switch kind {
	case "r":
		status, runID, _ := strings.Cut(rest, " ")
		s.hub.wake(runKey(runID))
		if status == "cancelling" {
			s.cancelLocal(runID, errCancelRequested)
		}
	case "h":
		s.hub.wake(hostKey(rest))
	}
}
