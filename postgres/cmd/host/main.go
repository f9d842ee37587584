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
// an agent's A2A routing value is the same on every replica. A2A push
// notification configs, their secrets and the queue of deliveries are in
// the database too, so any replica delivers any task's pushes; the push
// secrets are encrypted with -vault-key (AES-256 keys in hex, the first
// encrypting, the others still opening: put a new key first to rotate),
// by default one derived from -seal-key with HKDF (RFC 5869), which
// replicas then share with it. -lease-ttl bounds how long a dead
// replica's hold on a run it executed, or on a push it was delivering,
// lasts before a live replica takes them over. The host's own
// workflows (-conformance-seams, -a2a-agent, -mcp-server) are memstore
// workflows and are refused here; each tenant of -keys gets the OpenWOP
// conformance fixtures (package postgres).
package main

import (
	"context"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wopinterop/wopinterop/examples/host/hostapp"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/postgres"
)

func main() { hostapp.RunMain(backend()) }

// backend is the host's state in the database named by -postgres.
func backend() hostapp.Backend {
	var dsn, vaultSpec string
	var leaseTTL time.Duration
	return hostapp.Backend{
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&dsn, "postgres", "", "PostgreSQL `DSN` (URL or key=value) of the database every replica shares; the schema migrations are applied on start (required)")
			fs.StringVar(&vaultSpec, "vault-key", "", "`keys` encrypting A2A push secrets: AES-256 keys in hex, comma-separated, the first encrypting (default: derived from -seal-key; every replica needs the same)")
			fs.DurationVar(&leaseTTL, "lease-ttl", postgres.DefaultLeaseTTL, "how long a replica's hold on a run it executes, or on a push it delivers, outlives the replica: after it, another replica takes over a dead one's runs and pushes")
		},
		Open: func(ctx context.Context, o hostapp.OpenOptions) (hostapp.Opened, error) {
			if dsn == "" {
				return hostapp.Opened{}, errors.New("-postgres is required")
			}
			keys, err := vaultKeys(vaultSpec, o.SealKey, o.Logger)
			if err != nil {
				return hostapp.Opened{}, err
			}
			if leaseTTL <= 0 {
				return hostapp.Opened{}, errors.New("-lease-ttl must be positive")
			}
			return open(ctx, settings{dsn: dsn, vaultKeys: keys, leaseTTL: leaseTTL}, o)
		},
	}
}

// vaultKeyLabel is the HKDF info (RFC 5869 §3.2) deriving the default
// vault key from the seal key: a key of its own, not the seal key reused.
const vaultKeyLabel = "wopinterop example host: push vault key"

// vaultKeys returns the push vault's keys: those of spec (-vault-key), else
// one derived from sealKey (-seal-key), else — with neither — a random
// key, which no other replica and no restart shares. No error or log line
// carries key material.
func vaultKeys(spec string, sealKey []byte, logger *slog.Logger) ([][]byte, error) {
	if spec != "" {
		var keys [][]byte
		for i, s := range strings.Split(spec, ",") {
			k, err := hex.DecodeString(strings.TrimSpace(s))
			if err != nil || len(k) != postgres.VaultKeySize {
				return nil, fmt.Errorf("invalid -vault-key: key %d is not %d hex digits", i+1, 2*postgres.VaultKeySize)
			}
			keys = append(keys, k)
		}
		return keys, nil
	}
	if sealKey == nil {
		logger.Warn("push secrets are encrypted with a random key: give every replica the same -vault-key or -seal-key, or pushes fail after a restart and on other replicas")
		k := make([]byte, postgres.VaultKeySize)
		_, _ = rand.Read(k) // crypto/rand.Read never fails (Go 1.24+)
		return [][]byte{k}, nil
	}
	k, err := hkdf.Key(sha256.New, sealKey, nil, vaultKeyLabel, postgres.VaultKeySize)
	if err != nil {
		return nil, fmt.Errorf("deriving the vault key: %w", err)
	}
	return [][]byte{k}, nil
}

// settings are the backend's flags, checked.
type settings struct {
	dsn       string
	vaultKeys [][]byte
	leaseTTL  time.Duration
}

// open connects, migrates, opens the store, the ledger and the push
// stores, and registers the conformance fixtures in every tenant.
func open(ctx context.Context, set settings, o hostapp.OpenOptions) (hostapp.Opened, error) {
	pool, err := pgxpool.New(ctx, set.dsn)
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
	configs, err := postgres.NewConfigs(ctx, pool)
	if err != nil {
		return fail(err)
	}
	vault, err := postgres.NewVault(ctx, pool, postgres.VaultConfig{Keys: set.vaultKeys})
	if err != nil {
		return fail(err)
	}
	outbox, err := postgres.NewOutbox(ctx, pool)
	if err != nil {
		return fail(err)
	}
	store, err := postgres.New(ctx, pool, postgres.WithLogger(o.Logger), postgres.WithLeaseTTL(set.leaseTTL),
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
		Push:   &hostapp.PushStores{Configs: configs, Vault: vault, Outbox: outbox, LeaseTTL: set.leaseTTL},
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

// The embedded Store's WaitRun stays visible: a blocking SendMessage or
// tools/call waits on the run's status, not its event log.
var _ interop.RunWaiter = polling{}

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
