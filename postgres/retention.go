package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Bounds of the retention purge.
const (
	// purgeBatch bounds the runs one purge transaction deletes, so that a
	// large purge holds its locks briefly.
	purgeBatch = 1000
	// minPurgeEvery and maxPurgeEvery clamp the purge period, a quarter of
	// the shortest retention configured.
	minPurgeEvery = 10 * time.Millisecond
	maxPurgeEvery = time.Minute
	// purgeLockKey is the transaction-level advisory lock one purge holds,
	// so that replicas do not purge at the same time.
	purgeLockKey int64 = 0x1f3c_5a2e_7b90_44d2
)

// purgePeriod is a quarter of the shortest retention, clamped to
// [minPurgeEvery, maxPurgeEvery]: an expired run or event outlives its
// retention by at most that much. Ephemeral host events always expire.
func (s *Store) purgePeriod() time.Duration {
	shortest := ephemeralKeep
	for _, d := range []time.Duration{s.cfg.runRetention, s.cfg.hostEventMaxAge} {
		if d > 0 && d < shortest {
			shortest = d
		}
	}
	return min(max(shortest/4, minPurgeEvery), maxPurgeEvery)
}

// purgeExpired deletes, in every tenant, the terminal runs whose status
// timestamp is older than the run retention (their events, interrupts,
// effects and idempotency keys go with them), the durable host events
// published longer than the age bound ago, and the ephemeral ones older
// than ephemeralKeep.
func (s *Store) purgeExpired() {
	if _, _, err := s.purge(s.runsCtx); err != nil {
		s.logBackground("retention purge failed", err)
	}
}

// purge is one purge; it returns how many runs and host events it
// deleted. Another replica's purge in progress makes it a no-op.
func (s *Store) purge(ctx context.Context) (runs, events int64, err error) {
	now := s.now()
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		runs, events = 0, 0
		var mine bool
		if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock($1)`, purgeLockKey).Scan(&mine); err != nil {
			return fmt.Errorf("postgres: purge: %w", err)
		}
		if !mine {
			return nil
		}
		if age := s.cfg.hostEventMaxAge; age > 0 {
			tag, err := tx.Exec(ctx, `DELETE FROM wopinterop_host_events WHERE published_at < $1 AND durable_ordinal IS NOT NULL`, now.Add(-age))
			if err != nil {
				return fmt.Errorf("postgres: purge host events: %w", err)
			}
			events += tag.RowsAffected()
		}
		tag, err := tx.Exec(ctx, `DELETE FROM wopinterop_host_events WHERE published_at < $1 AND durable_ordinal IS NULL`, now.Add(-ephemeralKeep))
		if err != nil {
			return fmt.Errorf("postgres: purge host events: %w", err)
		}
		events += tag.RowsAffected()
		return nil
	})
	if err != nil || s.cfg.runRetention <= 0 {
		return runs, events, err
	}
	cutoff := now.Add(-s.cfg.runRetention)
	for {
		var n int64
		err := s.inTx(ctx, func(tx pgx.Tx) error {
			// Ended runs only (lease_until IS NULL), skipping any a writer
			// holds; the trigger keeps the counts.
			tag, err := tx.Exec(ctx, `DELETE FROM wopinterop_runs WHERE id IN (
				SELECT id FROM wopinterop_runs WHERE lease_until IS NULL AND status_at < $1
				ORDER BY status_at LIMIT $2 FOR UPDATE SKIP LOCKED)`, cutoff, purgeBatch)
			if err != nil {
				return fmt.Errorf("postgres: purge runs: %w", err)
			}
			n = tag.RowsAffected()
			return nil
		})
		runs += n
		if err != nil || n < purgeBatch {
			return runs, events, err
		}
	}
}
