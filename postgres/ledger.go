package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wopinterop/wopinterop/mcp/sealed"
)

var _ sealed.Ledger = (*Ledger)(nil)

// Defaults of [LedgerConfig].
const (
	// DefaultLedgerPurgeEvery is how often, at most, Consume deletes
	// expired ids.
	DefaultLedgerPurgeEvery = time.Minute
	// ledgerPurgeBatch bounds the rows one cleanup deletes, so that it
	// holds its locks briefly and a Consume that runs it stays quick.
	ledgerPurgeBatch = 1000
)

// LedgerConfig configures [NewLedger]. The zero value is usable.
type LedgerConfig struct {
	// RetentionSlack is kept on top of each id's expiry, covering the
	// clock skew between replicas and the time between the Sealer's expiry
	// check and its Consume; 0 means [sealed.DefaultRetentionSlack].
	RetentionSlack time.Duration
	// PurgeEvery is the least time between two cleanups of expired ids;
	// 0 means [DefaultLedgerPurgeEvery].
	PurgeEvery time.Duration
	// Now is the clock; nil means time.Now. Every replica's clock should
	// agree within RetentionSlack.
	Now func() time.Time
	// Logger receives cleanup failures, which do not fail a Consume.
	// Default: discard.
	Logger *slog.Logger
}

// Ledger is a [sealed.Ledger] on PostgreSQL, shared by every replica of a
// host: a requestState id is consumed by inserting it into a table whose
// primary key is the id (INSERT … ON CONFLICT DO NOTHING), so of any number
// of concurrent Consume calls with one id, on any replicas, exactly one
// reports fresh. Expired ids are deleted lazily: a Consume at most every
// PurgeEvery deletes up to 1000 of the oldest ones, so the table holds
// about the ids consumed within one state TTL. It runs no goroutine and
// needs no closing. Safe for concurrent use.
type Ledger struct {
	pool       *pgxpool.Pool
	slack      time.Duration
	purgeEvery time.Duration
	now        func() time.Time
	logger     *slog.Logger

	mu        sync.Mutex // guards lastPurge
	lastPurge time.Time
}

// NewLedger returns the ledger over pool, whose database [Migrate] has
// brought up to date (else [ErrSchemaBehind]).
func NewLedger(ctx context.Context, pool *pgxpool.Pool, cfg LedgerConfig) (*Ledger, error) {
	if err := checkSchema(ctx, pool); err != nil {
		return nil, err
	}
	l := &Ledger{pool: pool, slack: cfg.RetentionSlack, purgeEvery: cfg.PurgeEvery, now: cfg.Now, logger: cfg.Logger}
	if l.slack <= 0 {
		l.slack = sealed.DefaultRetentionSlack
	}
	if l.purgeEvery <= 0 {
		l.purgeEvery = DefaultLedgerPurgeEvery
	}
	if l.now == nil {
		l.now = time.Now
	}
	if l.logger == nil {
		l.logger = slog.New(slog.DiscardHandler)
	}
	return l, nil
}

// Consume implements [sealed.Ledger]. Like [sealed.MemoryLedger], an id
// whose retention (expiresAt plus the slack) has already passed is
// answered fresh=false without being stored: it may have been deleted, so
// it can no longer be told apart from a replay.
func (l *Ledger) Consume(ctx context.Context, id string, expiresAt time.Time) (bool, error) {
	now := l.now()
	until := expiresAt.Add(l.slack)
	if until.Before(now) {
		return false, ctx.Err()
	}
	tag, err := l.pool.Exec(ctx,
		`INSERT INTO wopinterop_sealed_ledger (id, retain_until) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING`,
		id, until)
	if err != nil {
		return false, fmt.Errorf("postgres: consume requestState: %w", err)
	}
	if l.purgeDue(now) {
		if _, err := l.Purge(ctx); err != nil {
			l.logger.Warn("sealed ledger cleanup failed", "err", err)
		}
	}
	return tag.RowsAffected() == 1, nil
}

// purgeDue reports whether this Consume runs the cleanup, and if so
// records that it did.
func (l *Ledger) purgeDue(now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.lastPurge) < l.purgeEvery {
		return false
	}
	l.lastPurge = now
	return true
}

// Purge deletes up to 1000 ids whose retention has passed, oldest first,
// and reports how many it deleted. Consume calls it at most every
// PurgeEvery; a host may also call it from a job of its own.
func (l *Ledger) Purge(ctx context.Context) (int64, error) {
	tag, err := l.pool.Exec(ctx, `
		DELETE FROM wopinterop_sealed_ledger WHERE id IN (
			SELECT id FROM wopinterop_sealed_ledger WHERE retain_until < $1
			ORDER BY retain_until LIMIT $2
			FOR UPDATE SKIP LOCKED)`, l.now(), ledgerPurgeBatch)
	if err != nil {
		return 0, fmt.Errorf("postgres: purge sealed ledger: %w", err)
	}
	return tag.RowsAffected(), nil
}
