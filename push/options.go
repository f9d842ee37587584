package push

import (
	"crypto/tls"
	"log/slog"
	"time"

	"github.com/wopinterop/wopinterop/egress"
	"github.com/wopinterop/wopinterop/interop"
)

// DeadLetterEventType is the host-event type of a push that exhausted its
// attempts (OpenWOP RFC 0214 §C; webhooks.md §Durability). It matches the host-event type grammar; a
// host that enables push advertises it as durable.
const DeadLetterEventType = "a2a.push-dead-lettered"

// Options configure A2A push delivery (a2a.Options.Push). Events is
// required; every other field has a documented default.
type Options struct {
	// Events receives dead letters as host events of the task's tenant.
	Events interop.EventSink
	// Guard is the egress guard; nil means egress.NewGuard(egress.GuardOptions{}):
	// https only, public unicast only, the system resolver.
	Guard *egress.Guard
	// Configs keeps the config records; nil means NewMemoryConfigs().
	Configs ConfigStore
	// Vault keeps the secrets; nil means NewMemoryVault().
	Vault Vault
	// Outbox keeps queued deliveries; nil means NewMemoryOutbox().
	Outbox Outbox
	// LeaseTTL is how long a delivery the worker leased from the Outbox
	// stays its own without a renewal: the worker renews its leases every
	// third of it, and another replica takes a delivery over once its
	// lease has expired (a worker that died). 0 means 30s.
	LeaseTTL time.Duration
	// OutboxPoll is how often the worker looks in the Outbox for
	// deliveries another replica queued or left behind; a delivery this
	// worker queues is started at once. 0 means 1s.
	OutboxPoll time.Duration
	// WatchRescan is how often the worker reads ConfigStore.Live and
	// follows the runs of the tasks it does not follow yet — those whose
	// configs another replica registered — so a run whose replica died is
	// still pushed. 0 means 5s. The three durations are measured on the
	// system clock, whatever Clock is.
	WatchRescan time.Duration
	// Retry bounds each push's attempts; the zero value is the default
	// policy (see RetryPolicy).
	Retry RetryPolicy
	// MaxConfigsPerTask bounds the configs one task may hold; 0 means 10.
	MaxConfigsPerTask int
	// Concurrency bounds the attempts in flight across all tasks; 0 means
	// 32. Each task keeps its own order whatever the bound.
	Concurrency int
	// TLS configures the client side of https deliveries (e.g. RootCAs of
	// a private CA); nil means the system roots.
	TLS *tls.Config
	// Logger receives delivery faults: task and config ids and a status
	// class, never a URL, a header or a secret. Nil discards.
	Logger *slog.Logger
	// Now stamps records; nil means time.Now.
	Now func() time.Time
	// Clock times the waits between attempts and after store faults, and
	// dates a Retry-After; nil means the system clock.
	Clock Clock
}
