// Command host is the example host (examples/host) on PostgreSQL: the same
// REST subset, A2A surface and MCP server, with runs, events, host events,
// agents and the MRTR single-use ledger in one database that any number of
// replicas share. It takes every flag of examples/host plus -postgres, and
// applies the schema migrations on start.
//
//	go run ./cmd/host -postgres "$DSN" -addr 127.0.0.1:8081 \
//	    -seal-key "$SEAL_KEY" -routing-secret "$ROUTING_SECRET"
//
// Replicas must share -postgres, -seal-key and -routing-secret (and -keys):
// a requestState sealed on one replica opens on another exactly once, and
// an agent's A2A routing value is the same on every replica. The host's own
// workflows (-conformance-seams, -a2a-agent, -mcp-server) are memstore
// workflows and are refused here; each tenant of -keys gets the OpenWOP
// conformance fixtures (package postgres).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wopinterop/wopinterop/examples/host/hostapp"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/postgres"
)

func main() { hostapp.RunMain(backend()) }

// backend is the host's state in the database named by -postgres.
func backend() hostapp.Backend {
	var dsn string
	return hostapp.Backend{
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&dsn, "postgres", "", "PostgreSQL `DSN` (URL or key=value) of the database every replica shares; the schema migrations are applied on start (required)")
		},
		Open: func(ctx context.Context, o hostapp.OpenOptions) (hostapp.Opened, error) {
			if dsn == "" {
				return hostapp.Opened{}, errors.New("-postgres is required")
			}
			return open(ctx, dsn, o)
		},
	}
}

// open connects, migrates, opens the store and the ledger, and registers
// the conformance fixtures in every tenant.
func open(ctx context.Context, dsn string, o hostapp.OpenOptions) (hostapp.Opened, error) {
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return hostapp.Opened{}, fmt.Errorf("postgres: %w", err) // pgx never echoes the password
	}
	fail := func(err error) (hostapp.Opened, error) { pool.Close(); return hostapp.Opened{}, err }
	if _, err := postgres.Migrate(ctx, pool); err != nil {
		return fail(err)
	}
	ledger, err := postgres.NewLedger(ctx, pool, postgres.LedgerConfig{Logger: o.Logger})
	if err != nil {
		return fail(err)
	}
	store, err := postgres.New(ctx, pool, postgres.WithLogger(o.Logger),
		postgres.WithRunRetention(o.RunRetention), postgres.WithHostEventMaxAge(o.HostEventMaxAge))
	if err != nil {
		return fail(err)
	}
	for _, t := range o.Tenants {
		if err := store.RegisterFixtures(t); err != nil {
			_ = store.Close()
			return fail(fmt.Errorf("register fixtures for %q: %w", t, err))
		}
	}
	return hostapp.Opened{
		Store:  polling{store},
		Ledger: ledger,
		Close: func() error {
			err := store.Close()
			pool.Close()
			return err
		},
	}, nil
}

// polling gives the Store the long poll of the host's REST events route
// (GET /runs/{runId}/events?after=N), over WatchRun.
type polling struct{ *postgres.Store }

// pollBatch is how long a poll that has an event waits for the next one
// before it answers: the events a run appends together arrive together.
const pollBatch = 20 * time.Millisecond

// PollEvents returns the events after after, waiting up to timeout for
// the first, and the run as read after the last of them.
func (p polling) PollEvents(ctx context.Context, sub interop.Subject, runID string, after int64, timeout time.Duration) ([]interop.RunEvent, interop.Run, error) {
	waitCtx, cancel := context.WithTimeout(ctx, max(timeout, time.Millisecond))
	defer cancel()
	seq, err := p.WatchRun(waitCtx, sub, runID, max(after, -1))
	if err != nil {
		return nil, interop.Run{}, err
	}
	events := []interop.RunEvent{}
	for ev, err := range seq {
		if err != nil {
			break // the wait (or the batch) ended
		}
		events = append(events, ev)
		if len(events) == 1 {
			batch := time.AfterFunc(pollBatch, cancel)
			defer batch.Stop()
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, interop.Run{}, err
	}
	run, err := p.GetRun(ctx, sub, runID)
	return events, run, err
}
