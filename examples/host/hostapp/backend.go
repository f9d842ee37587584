package hostapp

import (
	"context"
	"flag"
	"log/slog"
	"time"

	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/mcp/sealed"
	"github.com/wopinterop/wopinterop/push"
)

// Backend is where a host keeps its state. The zero Backend is the
// in-memory store (package interop/memstore) seeded with the demo's
// fixtures, workflows and agents: examples/host. A replicated host gives
// every replica the same Backend over one database.
type Backend struct {
	// Flags, when set, adds the backend's own flags to the host's before
	// they are parsed; Open reads them.
	Flags func(fs *flag.FlagSet)
	// Open opens and seeds the store once the flags are parsed and the
	// listener is bound. Required, unless the whole Backend is zero.
	Open func(ctx context.Context, o OpenOptions) (Opened, error)
}

// OpenOptions is what the host tells [Backend.Open].
type OpenOptions struct {
	// Tenants are the tenants of -keys: seed each of them.
	Tenants []string
	// BaseURL is the host's public origin, without a trailing slash.
	BaseURL string
	// Logger is the host's logger.
	Logger *slog.Logger
	// RunRetention and HostEventMaxAge are -run-retention and
	// -host-event-max-age.
	RunRetention, HostEventMaxAge time.Duration
	// SealKey is -seal-key, nil when it is not given (the host then seals
	// with a random key of its own): a secret every replica shares, from
	// which a backend may derive keys of its own.
	SealKey []byte
}

// Opened is an open backend.
type Opened struct {
	// Store holds runs, events, host events and agents. Required.
	Store Store
	// Workflows, when set, is where the host registers its own workflows
	// (the conformance seams', delegate-remote and conformance-mcp-client),
	// which -conformance-seams, -a2a-agent and -mcp-server need. Nil: the
	// host refuses those flags.
	Workflows workflowRegistry
	// Ledger, when set, is the MRTR single-use ledger the replicas share.
	// Nil: the in-memory ledger of one process.
	Ledger sealed.Ledger
	// Push, when set, holds the A2A push notification stores the replicas
	// share. Nil: the in-memory stores of one process.
	Push *PushStores
	// Close releases the store; the host calls it last, after the
	// library's audit records have reached the store. Required.
	Close func() error
}

// PushStores are the stores of A2A push notifications (OpenWOP RFC
// 0214): config records, their secrets, and the queue of deliveries.
// Every replica must open the same three, and the Vault with the same
// keys. A nil field is that store's in-memory default.
type PushStores struct {
	Configs push.ConfigStore
	Vault   push.Vault
	Outbox  push.Outbox
	// LeaseTTL is how long a delivery a replica leased from Outbox stays
	// its own without a renewal, so how soon another replica takes over
	// the pushes of one that died; 0 is push.Options' default.
	LeaseTTL time.Duration
}

// memoryBackend is the zero Backend: memstore, seeded by seed.
func memoryBackend() Backend {
	return Backend{Open: func(_ context.Context, o OpenOptions) (Opened, error) {
		store := memstore.New(memstore.WithLogger(o.Logger),
			memstore.WithRunRetention(o.RunRetention), memstore.WithHostEventMaxAge(o.HostEventMaxAge))
		if err := seed(store, o.Tenants, o.BaseURL); err != nil {
			_ = store.Close()
			return Opened{}, err
		}
		return Opened{Store: store, Workflows: store, Close: store.Close}, nil
	}}
}
