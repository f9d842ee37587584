package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/isolation"
)

// hostBatch bounds the host events one read of a subscription returns.
const hostBatch = 256

// PublishHostEvent records a host event for tenant (OpenWOP
// host-event.schema.json; events.md §Host events; RFC 0242 §B.4), visible
// to the subscribers of every replica. It fills EventID ("hev-" + opaque
// id) and Timestamp when empty and requires a Type matching the host-event
// type grammar, a Delivery of durable or ephemeral, and a Payload that is a
// JSON object (nil becomes {}).
//
// Each tenant's events are numbered under the tenant's head row, so they
// commit in publication order and a subscriber reading by number misses
// none; publications of one tenant therefore take turns. Durable events
// are kept up to the count and age bounds; ephemeral ones are kept only
// briefly, for the subscribers present now, and never replayed. Events of
// the empty tenant (unauthenticated exchanges) are kept but reach no
// subscriber.
func (s *Store) PublishHostEvent(ctx context.Context, tenant string, ev interop.HostEvent) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	switch {
	case !s.hostEventType.MatchString(ev.Type):
		return &interop.InputError{Field: "type", Reason: "not a host-event type"}
	case ev.Delivery != interop.DeliveryDurable && ev.Delivery != interop.DeliveryEphemeral:
		return &interop.InputError{Field: "delivery", Reason: "must be durable or ephemeral"}
	}
	payload := []byte(`{}`)
	if len(ev.Payload) > 0 {
		p := bytes.TrimSpace(ev.Payload)
		if len(p) == 0 || p[0] != '{' || !json.Valid(p) {
			return &interop.InputError{Field: "payload", Reason: "must be a JSON object"}
		}
		payload = p
	}
	if ev.EventID == "" {
		ev.EventID = "hev-" + isolation.NewOpaque()
	}
	now := s.now()
	if ev.Timestamp.IsZero() {
		ev.Timestamp = now
	}
	durable := ev.Delivery == interop.DeliveryDurable
	if !durable && tenant == "" {
		return nil // nobody may receive it, and it is never replayed
	}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var seq, ordinal int64
		err := tx.QueryRow(ctx, `
			INSERT INTO wopinterop_host_event_heads AS h (tenant, seq, durable) VALUES ($1, 1, $2::int)
			ON CONFLICT (tenant) DO UPDATE SET seq = h.seq + 1, durable = h.durable + $2::int
			RETURNING seq, durable`, tenant, boolInt(durable)).Scan(&seq, &ordinal)
		if err != nil {
			return fmt.Errorf("postgres: publish host event: %w", err)
		}
		var ordinalArg *int64
		if durable {
			ordinalArg = &ordinal
		}
		_, err = tx.Exec(ctx, `
			INSERT INTO wopinterop_host_events (tenant, seq, durable_ordinal, event_id, type, at, published_at,
				delivery, workspace, payload)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
			tenant, seq, ordinalArg, ev.EventID, ev.Type, ev.Timestamp.UTC(), now, string(ev.Delivery),
			ev.WorkspaceID, payload)
		if err != nil {
			return fmt.Errorf("postgres: publish host event: %w", err)
		}
		if durable && ordinal > int64(s.cfg.hostEventRetention) {
			if _, err := tx.Exec(ctx, `DELETE FROM wopinterop_host_events WHERE tenant = $1 AND durable_ordinal <= $2`,
				tenant, ordinal-int64(s.cfg.hostEventRetention)); err != nil {
				return fmt.Errorf("postgres: publish host event: retention: %w", err)
			}
		}
		if tenant == "" {
			return nil
		}
		return notify(ctx, tx, hostNotice(tenant))
	})
	if err != nil {
		return err
	}
	s.hub.wake(hostKey(tenant))
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// SubscribeHostEvents is the feed behind GET /host/events for one tenant
// (and workspace, "" = the whole tenant), served from any replica. The
// subscription starts when SubscribeHostEvents is called and lasts until
// ctx is done, so the caller must cancel ctx. The returned sequence may be
// ranged over once; it yields the retained durable events after
// lastEventID when that id is still retained ("" or an id no longer
// retained: none), then waits and yields every new durable and ephemeral
// event visible to the workspace, in publication order, until ctx is done.
// An event naming a workspace goes only to subscribers of that workspace;
// a tenant-wide subscriber receives only events naming none (events.md
// §Host events, invariant host-event-tenant-isolation). Ephemeral events
// are delivered only to subscriptions that existed when they were
// published, so a reconnect never sees them again whatever lastEventID
// says. A subscription to the empty tenant yields nothing and waits for
// ctx. If the database cannot be read when the subscription starts, the
// failure is logged and the sequence ends at once (the client reconnects
// with its Last-Event-ID).
func (s *Store) SubscribeHostEvents(ctx context.Context, tenant, workspace, lastEventID string) iter.Seq[interop.HostEvent] {
	if tenant == "" {
		return func(func(interop.HostEvent) bool) { <-ctx.Done() }
	}
	w := s.hub.join(hostKey(tenant))
	stop := context.AfterFunc(ctx, w.leave)
	start, after, err := s.subscriptionStart(ctx, tenant, lastEventID)
	if err != nil {
		if stop() {
			w.leave()
		}
		if ctx.Err() == nil {
			s.logBackground("starting a host event subscription failed", err)
		}
		return func(func(interop.HostEvent) bool) {}
	}
	var used atomic.Bool
	return func(yield func(interop.HostEvent) bool) {
		if used.Swap(true) {
			return
		}
		defer func() {
			if stop() { // ctx not done yet: leave now
				w.leave()
			}
		}()
		for {
			if ctx.Err() != nil {
				return
			}
			ch := w.C()
			batch, err := s.hostEventsAfter(ctx, tenant, workspace, after, start)
			if err != nil {
				s.logBackground("reading host events failed; retrying", err)
			}
			for _, e := range batch {
				if !yield(e.ev) {
					return
				}
				after = e.seq
			}
			if len(batch) == hostBatch {
				continue
			}
			if s.wait(ctx, ch) != nil {
				return
			}
		}
	}
}

// subscriptionStart returns the tenant's newest event number (ephemeral
// events after it are this subscription's) and where durable delivery
// resumes: after lastEventID when it is retained, else at start.
func (s *Store) subscriptionStart(ctx context.Context, tenant, lastEventID string) (start, after int64, err error) {
	err = s.pool.QueryRow(ctx, `SELECT coalesce((SELECT seq FROM wopinterop_host_event_heads WHERE tenant = $1), 0)`,
		tenant).Scan(&start)
	if err != nil {
		return 0, 0, fmt.Errorf("postgres: subscribe host events: %w", err)
	}
	after = start
	if lastEventID == "" {
		return start, after, nil
	}
	err = s.pool.QueryRow(ctx, `SELECT seq FROM wopinterop_host_events
		WHERE tenant = $1 AND event_id = $2 AND durable_ordinal IS NOT NULL
		ORDER BY seq DESC LIMIT 1`, tenant, lastEventID).Scan(&after)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return start, start, nil
	case err != nil:
		return 0, 0, fmt.Errorf("postgres: subscribe host events: %w", err)
	}
	return start, min(after, start), nil
}

type numberedHostEvent struct {
	seq int64
	ev  interop.HostEvent
}

// hostEventsAfter reads the events after number `after` that a subscriber
// of workspace that started at number start may see.
func (s *Store) hostEventsAfter(ctx context.Context, tenant, workspace string, after, start int64) ([]numberedHostEvent, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+hostEventColumns+` FROM wopinterop_host_events
		WHERE tenant = $1 AND seq > $2 AND (workspace = '' OR workspace = $3)
		  AND (durable_ordinal IS NOT NULL OR seq > $4)
		ORDER BY seq LIMIT $5`, tenant, after, workspace, start, hostBatch)
	if err != nil {
		return nil, fmt.Errorf("postgres: read host events: %w", err)
	}
	return scanHostEvents(rows)
}

// hostEventColumns are the columns scanHostEvents reads.
const hostEventColumns = `seq, event_id, type, at, delivery, workspace, payload`

func scanHostEvents(rows pgx.Rows) ([]numberedHostEvent, error) {
	var out []numberedHostEvent
	for rows.Next() {
		var (
			e        numberedHostEvent
			at       time.Time
			delivery string
			payload  []byte
		)
		if err := rows.Scan(&e.seq, &e.ev.EventID, &e.ev.Type, &at, &delivery, &e.ev.WorkspaceID, &payload); err != nil {
			rows.Close()
			return nil, fmt.Errorf("postgres: read host events: %w", err)
		}
		e.ev.Timestamp, e.ev.Delivery, e.ev.Payload = at.UTC(), interop.Delivery(delivery), payload
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: read host events: %w", err)
	}
	return out, nil
}

// DurableHostEvents returns the retained durable host events of tenant,
// oldest first, including those of the empty tenant that no subscriber
// receives. It is an audit read for the host, not a subscriber feed: it
// applies no workspace filter.
func (s *Store) DurableHostEvents(ctx context.Context, tenant string) ([]interop.HostEvent, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+hostEventColumns+` FROM wopinterop_host_events
		WHERE tenant = $1 AND durable_ordinal IS NOT NULL ORDER BY seq`, tenant)
	if err != nil {
		return nil, fmt.Errorf("postgres: read host events: %w", err)
	}
	events, err := scanHostEvents(rows)
	if err != nil {
		return nil, err
	}
	out := make([]interop.HostEvent, len(events))
	for i, e := range events {
		out[i] = e.ev
	}
	return out, nil
}
