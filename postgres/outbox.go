package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wopinterop/wopinterop/push"
)

var _ push.Outbox = (*Outbox)(nil)

// ErrOutboxLease reports a lease request push.Outbox rules out: an empty
// owner, or a ttl that is not positive.
var ErrOutboxLease = errors.New("postgres: invalid push outbox lease")

// tombstoneTTL is how long a removed delivery's id is kept. It is far
// longer than the window in which two replicas' watchers queue the same
// run event (between one reading the configs and raising their
// watermark), and short enough that the tombstones of a busy host stay a
// small table.
const tombstoneTTL = 10 * time.Minute

// sweepBatch bounds how many expired tombstones one Remove deletes. Each
// Remove adds one, so sweeping two keeps the expired ones from piling up
// without ever making a Remove wait on a long delete.
const sweepBatch = 2

// Outbox is a [push.Outbox] on PostgreSQL: the leased work queue of
// pushes (OpenWOP RFC 0214 §A) that the delivery workers of every replica
// drain together, each under its own owner name. It needs no closing.
// Safe for concurrent use.
//
// Design. A delivery is a row keyed by its id, ordered by an identity
// column (queued) assigned at its first Put: Put is an INSERT … ON
// CONFLICT (id) DO NOTHING, so putting an id again changes nothing. Each
// lane (task, config) holding deliveries has one row in a small lanes
// table: the queued of its head and the head's lease (owner, expiry), so
// a lane has at most one lease by construction. Lease reads two partial
// indexes of that table — unleased heads in queued order, and leases by
// expiry, of which only the expired are read — locks the candidates FOR
// UPDATE SKIP LOCKED, so that concurrent Leases on any replicas never
// grant one lane twice, and takes the oldest max: O(k log n) for k heads
// leased among n lanes, plus the expired leases (at most the leases
// outstanding). Renew, Release and takeover are updates of a lane's row,
// guarded by owner and expiry. Expiry is the database's clock (now()),
// never a replica's.
//
// Put and Remove both lock the lane's row before its head can change:
// Put's upsert of the lane locks it (ON CONFLICT DO UPDATE … WHERE
// false), and Remove locks it before it reads which delivery comes next
// and moves the head or deletes the emptied lane. A Remove therefore
// either sees a concurrent Put's delivery or is seen by that Put, which
// recreates the lane; no delivery is ever left without its lane.
//
// Tombstones. A removed delivery keeps its row, body dropped, for ten
// minutes, so that a late Put of the same id (a second replica's watcher
// queueing a run event the first already queued and delivered) is a
// no-op instead of a second delivery. Each Remove deletes up to two
// expired tombstones, so they never outnumber the Removes of the last ten
// minutes by more than a bounded backlog.
type Outbox struct {
	pool *pgxpool.Pool
	// keepRemoved is tombstoneTTL; tests shorten it.
	keepRemoved time.Duration
}

// NewOutbox returns the outbox over pool, whose database [Migrate] has
// brought up to date (else [ErrSchemaBehind]).
func NewOutbox(ctx context.Context, pool *pgxpool.Pool) (*Outbox, error) {
	if err := checkSchema(ctx, pool); err != nil {
		return nil, err
	}
	return &Outbox{pool: pool, keepRemoved: tombstoneTTL}, nil
}

// micros is d in whole microseconds, rounded up: PostgreSQL's timestamp
// resolution, never rounding a positive duration down to nothing.
func micros(d time.Duration) int64 {
	return int64((d + time.Microsecond - 1) / time.Microsecond)
}

// checkLease refuses an empty owner or a ttl that is not positive.
func checkLease(owner string, ttl time.Duration) error {
	switch {
	case owner == "":
		return fmt.Errorf("%w: empty owner", ErrOutboxLease)
	case ttl <= 0:
		return fmt.Errorf("%w: ttl %v is not positive", ErrOutboxLease, ttl)
	}
	return nil
}

// Put implements [push.Outbox]. The delivery's insert and the lane's
// upsert are one statement; a held id (or a tombstone) inserts nothing,
// and so touches no lane.
func (o *Outbox) Put(ctx context.Context, d push.Delivery) error {
	if _, err := o.pool.Exec(ctx, `WITH d AS (
			INSERT INTO wopinterop_push_outbox (id, task_id, config_id, sequence, body, final)
			VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (id) DO NOTHING
			RETURNING queued)
		INSERT INTO wopinterop_push_lanes (task_id, config_id, head)
		SELECT $2, $3, queued FROM d
		ON CONFLICT (task_id, config_id) DO UPDATE SET head = wopinterop_push_lanes.head WHERE false`,
		d.ID, d.TaskID, d.ConfigID, d.Sequence, d.Body, d.Final); err != nil {
		return fmt.Errorf("postgres: put push delivery: %w", err)
	}
	return nil
}

// Lease implements [push.Outbox]. It refuses an empty owner or a ttl
// that is not positive ([ErrOutboxLease]).
func (o *Outbox) Lease(ctx context.Context, owner string, max int, ttl time.Duration) ([]push.Delivery, error) {
	if err := checkLease(owner, ttl); err != nil {
		return nil, err
	}
	if max < 1 {
		return nil, nil
	}
	// free and expired each lock up to max candidates, skipping lanes
	// another Lease (or a Put, Remove, Renew) holds; picked keeps the
	// oldest max of both; the rest are unlocked when the statement ends.
	rows, err := o.pool.Query(ctx, `WITH free AS (
			SELECT task_id, config_id, head FROM wopinterop_push_lanes
			WHERE lease_until IS NULL ORDER BY head LIMIT $3 FOR UPDATE SKIP LOCKED
		), expired AS (
			SELECT task_id, config_id, head FROM wopinterop_push_lanes
			WHERE lease_until <= now() ORDER BY head LIMIT $3 FOR UPDATE SKIP LOCKED
		), picked AS (
			SELECT task_id, config_id FROM (SELECT * FROM free UNION ALL SELECT * FROM expired) c
			ORDER BY head LIMIT $3
		), leased AS (
			UPDATE wopinterop_push_lanes l SET owner = $1, lease_until = now() + $2 * interval '1 microsecond'
			FROM picked p WHERE l.task_id = p.task_id AND l.config_id = p.config_id
			RETURNING l.head
		)
		SELECT o.id, o.task_id, o.config_id, o.sequence, o.body, o.final
		FROM leased JOIN wopinterop_push_outbox o ON o.queued = leased.head
		ORDER BY leased.head`, owner, micros(ttl), max)
	if err != nil {
		return nil, fmt.Errorf("postgres: lease push deliveries: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (push.Delivery, error) {
		var d push.Delivery
		err := row.Scan(&d.ID, &d.TaskID, &d.ConfigID, &d.Sequence, &d.Body, &d.Final)
		return d, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: lease push deliveries: %w", err)
	}
	return out, nil
}

// Renew implements [push.Outbox]. It refuses an empty owner or a ttl that
// is not positive ([ErrOutboxLease]).
func (o *Outbox) Renew(ctx context.Context, owner string, ids []string, ttl time.Duration) ([]string, error) {
	if err := checkLease(owner, ttl); err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := o.pool.Query(ctx, `UPDATE wopinterop_push_lanes l
		SET lease_until = now() + $3 * interval '1 microsecond'
		FROM wopinterop_push_outbox o
		WHERE o.id = ANY($2) AND o.removed_at IS NULL
			AND l.task_id = o.task_id AND l.config_id = o.config_id AND l.head = o.queued
			AND l.owner = $1 AND l.lease_until > now()
		RETURNING o.id`, owner, ids, micros(ttl))
	if err != nil {
		return nil, fmt.Errorf("postgres: renew push leases: %w", err)
	}
	held, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("postgres: renew push leases: %w", err)
	}
	var lost []string
	for _, id := range ids {
		if !slices.Contains(held, id) {
			lost = append(lost, id)
		}
	}
	return lost, nil
}

// Release implements [push.Outbox].
func (o *Outbox) Release(ctx context.Context, owner, id string) error {
	if _, err := o.pool.Exec(ctx, `UPDATE wopinterop_push_lanes l SET owner = '', lease_until = NULL
		FROM wopinterop_push_outbox o
		WHERE o.id = $2 AND o.removed_at IS NULL
			AND l.task_id = o.task_id AND l.config_id = o.config_id AND l.head = o.queued
			AND l.owner = $1 AND l.lease_until > now()`, owner, id); err != nil {
		return fmt.Errorf("postgres: release push lease: %w", err)
	}
	return nil
}

// Remove implements [push.Outbox]: it turns the delivery into a
// tombstone and, when it was its lane's head, makes the next delivery
// the head, unleased, or deletes the lane it emptied. Its four statements
// go as one batch, one round trip, run by PostgreSQL as one implicit
// transaction, each statement reading what committed before it began.
func (o *Outbox) Remove(ctx context.Context, id string) error {
	var b pgx.Batch
	// Lock the lane first: what the statements after it read of the lane
	// and its deliveries is then what every Put committed before.
	b.Queue(`SELECT 1 FROM wopinterop_push_outbox o JOIN wopinterop_push_lanes l USING (task_id, config_id)
		WHERE o.id = $1 AND o.removed_at IS NULL
		FOR UPDATE OF l`, id)
	// The tombstone, and the sweep riding along: expired tombstones,
	// oldest first, that no other Remove is deleting.
	b.Queue(`WITH swept AS (
			DELETE FROM wopinterop_push_outbox WHERE id IN (
				SELECT id FROM wopinterop_push_outbox
				WHERE removed_at < now() - $2 * interval '1 microsecond'
				ORDER BY removed_at LIMIT $3 FOR UPDATE SKIP LOCKED))
		UPDATE wopinterop_push_outbox SET removed_at = now(), body = NULL
		WHERE id = $1 AND removed_at IS NULL`, id, micros(o.keepRemoved), sweepBatch)
	// A lane whose head is now a tombstone moves to its next delivery;
	// one that has none is deleted. Neither touches a lane whose head
	// is another delivery: id was queued behind it, or was removed before.
	b.Queue(`UPDATE wopinterop_push_lanes l SET head = n.q, owner = '', lease_until = NULL
		FROM wopinterop_push_outbox r, LATERAL (
			SELECT min(queued) AS q FROM wopinterop_push_outbox
			WHERE task_id = r.task_id AND config_id = r.config_id AND removed_at IS NULL) n
		WHERE r.id = $1 AND l.task_id = r.task_id AND l.config_id = r.config_id AND l.head = r.queued
			AND n.q IS NOT NULL`, id)
	b.Queue(`DELETE FROM wopinterop_push_lanes l USING wopinterop_push_outbox r
		WHERE r.id = $1 AND l.task_id = r.task_id AND l.config_id = r.config_id AND l.head = r.queued`, id)
	if err := o.pool.SendBatch(ctx, &b).Close(); err != nil {
		return fmt.Errorf("postgres: remove push delivery: %w", err)
	}
	return nil
}
