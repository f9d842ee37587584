package memstore

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/isolation"
)

// Compile-time checks: Store is the whole host side of the contract except
// InputDeliverer (messages to a running, unsuspended run are refused).
var (
	_ interop.RunStore       = (*Store)(nil)
	_ interop.AgentInventory = (*Store)(nil)
	_ interop.EventSink      = (*Store)(nil)
	_ interop.HostEventFeed  = (*Store)(nil)
)

// ErrClosed reports an operation on a Store after [Store.Close].
var ErrClosed = errors.New("memstore: store is closed")

// DefaultHostEventRetention is how many durable host events a tenant keeps
// when [WithHostEventRetention] is not given.
const DefaultHostEventRetention = 10000

// DefaultHostEventMaxAge is how long durable host events are kept when
// [WithHostEventMaxAge] is not given.
const DefaultHostEventMaxAge = 24 * time.Hour

type config struct {
	now                func() time.Time
	logger             *slog.Logger
	hostEventRetention int
	hostEventMaxAge    time.Duration // 0: no age bound
	runRetention       time.Duration // 0: runs are kept
}

// Option configures a [Store].
type Option func(*config)

// WithClock sets the clock used for every timestamp (run, event, interrupt,
// host event). Default time.Now. Timestamps are stored in UTC.
func WithClock(now func() time.Time) Option {
	return func(c *config) {
		if now != nil {
			c.now = now
		}
	}
}

// WithLogger sets the logger for workflow failures and panics. Default: a
// logger that discards everything.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) {
		if l != nil {
			c.logger = l
		}
	}
}

// WithHostEventRetention sets how many durable host events are kept per
// tenant for Last-Event-ID resumption (default
// [DefaultHostEventRetention]). Values below 1 are raised to 1, because
// live delivery of durable events reads the retained log.
func WithHostEventRetention(n int) Option {
	return func(c *config) { c.hostEventRetention = max(n, 1) }
}

// WithHostEventMaxAge bounds how long a durable host event is kept
// (default [DefaultHostEventMaxAge]), on top of the per-tenant count of
// [WithHostEventRetention]: together they bound the audit records a
// long-running host keeps. Age is measured from publication on the store
// clock; d <= 0 keeps events until the count evicts them. A Last-Event-ID
// naming an expired event resumes like an unknown one (OpenWOP events.md
// §Host events: within retention).
func WithHostEventMaxAge(d time.Duration) Option {
	return func(c *config) { c.hostEventMaxAge = max(d, 0) }
}

// WithRunRetention purges a terminal run once its status timestamp
// (Run.StatusAt, when it became completed, failed or cancelled) is older
// than ttl. A purged run is gone with its events, interrupts and
// idempotency key: every method answers for it exactly as for an id that
// was never minted, and its key may start a new run. Runs that are not
// terminal are never purged. ttl <= 0 (the default) keeps every run for
// the life of the Store.
func WithRunRetention(ttl time.Duration) Option {
	return func(c *config) { c.runRetention = max(ttl, 0) }
}

// Store is an in-memory [interop.RunStore], [interop.AgentInventory] and
// [interop.EventSink], safe for concurrent use. Workflows are Go functions
// registered per tenant; every run executes on its own goroutine, owned by
// the Store and stopped by [Store.Close].
//
// State is partitioned by tenant: each tenant has its own lock, so tenants
// never contend and a Subject's reads only ever touch its own tenant.
type Store struct {
	cfg      config
	cursors  *cursorSigner
	notFound notFoundErrors

	mu      sync.Mutex // guards tenants and closed
	tenants map[string]*tenantState
	closed  bool

	// runsCtx is the parent of every run's context; Close cancels it with
	// errStoreClosed as the cause.
	runsCtx  context.Context
	stopRuns context.CancelCauseFunc
	running  sync.WaitGroup

	// purgeStarted is set once the retention purge goroutine runs (see
	// startPurge); Close stops it through runsCtx and waits on purging.
	purgeStarted atomic.Bool
	purging      sync.WaitGroup
}

// Cancellation causes, told apart in a run's final step.
var (
	errStoreClosed     = errors.New("memstore: store closed")
	errCancelRequested = errors.New("memstore: cancel requested")
)

// New returns an empty Store. Register workflows (or RegisterFixtures)
// before creating runs, and Close it when done.
func New(opts ...Option) *Store {
	cfg := config{
		now:                time.Now,
		logger:             slog.New(slog.DiscardHandler),
		hostEventRetention: DefaultHostEventRetention,
		hostEventMaxAge:    DefaultHostEventMaxAge,
	}
	for _, o := range opts {
		o(&cfg)
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key) // crypto/rand.Read never fails (Go ≥ 1.24).
	ctx, cancel := context.WithCancelCause(context.Background())
	return &Store{
		cfg:      cfg,
		cursors:  newCursorSigner(key),
		notFound: newNotFoundErrors(),
		tenants:  make(map[string]*tenantState),
		runsCtx:  ctx,
		stopRuns: cancel,
	}
}

// Close cancels every live run's context and waits until all workflow
// goroutines have returned; a workflow that ignores its context therefore
// blocks Close. A run whose workflow returns an error because of it ends
// cancelled with reason "store closed". Close also stops the retention
// purge. After Close, CreateRun returns [ErrClosed]; reads keep working
// (and nothing is purged any more). Close is idempotent and returns nil.
func (s *Store) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.stopRuns(errStoreClosed)
	s.running.Wait()
	s.purging.Wait()
	return nil
}

// now is the store clock in UTC (which also drops the monotonic reading, so
// stored times compare by wall clock only).
func (s *Store) now() time.Time { return s.cfg.now().UTC() }

// tenant returns the state of an existing tenant, or nil. Reads use it so
// that a Subject of an unknown tenant creates nothing.
func (s *Store) tenant(name string) *tenantState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tenants[name]
}

// tenantForWrite returns the state of tenant, creating it.
func (s *Store) tenantForWrite(name string) *tenantState {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tenants[name]
	if t == nil {
		t = newTenantState(name)
		s.tenants[name] = t
	}
	return t
}

// reserveRunSlot accounts a workflow goroutine about to start, unless the
// store is closed. Called with the tenant lock held; the lock order is
// tenant.mu then s.mu.
func (s *Store) reserveRunSlot() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	s.running.Add(1)
	return nil
}

func validTenant(tenant string) error {
	if !isolation.ValidTenant(tenant) {
		return fmt.Errorf("memstore: invalid tenant %q", tenant)
	}
	return nil
}

// tenantState is everything one tenant owns. mu guards all of it.
type tenantState struct {
	name string

	mu           sync.RWMutex
	workflows    map[string]*workflowEntry
	workflowList []*workflowEntry // registration order
	agents       []interop.Agent
	runs         map[string]*runRecord
	index        runIndex // ListRuns order, by filter partition
	idempotency  map[idempotencyKey]*runRecord
	// purgedSinceRebuild counts runs deleted from runs, idempotency and
	// the index's partitions since those maps were last rebuilt: Go maps
	// never shrink, so the purge rebuilds them once the deleted outnumber
	// the kept.
	purgedSinceRebuild int
	host               hostEventLog
	// Run event ids are "evt-", a random prefix drawn once per tenant,
	// '.', and a count of the tenant's events in base 36: unique, and no
	// crypto/rand read per event. An eventId is a resumption cursor, not
	// a secret (OpenWOP run-event.schema.json, ids.schema.json).
	eventPrefix string
	eventCount  uint64
	scratch     []byte // encodes a lifecycle event's payload (appendLifecycleLocked)
	// lastMetadata is the metadata of the last first message stored
	// (storedMessageLocked); the store never changes it.
	lastMetadata map[string]any
}

type idempotencyKey struct{ principal, key string }

func newTenantState(name string) *tenantState {
	return &tenantState{
		name:        name,
		workflows:   make(map[string]*workflowEntry),
		runs:        make(map[string]*runRecord),
		idempotency: make(map[idempotencyKey]*runRecord),
		index:       newRunIndex(),
		host:        newHostEventLog(),
		eventPrefix: "evt-" + isolation.NewOpaque() + ".",
	}
}

// readableLocked returns the run iff sub may read it: same tenant (the
// caller looked the tenant up from sub.Tenant) and, when sub names a
// workspace, the run's workspace. Everything else is nil, exactly like an
// id that never existed (OpenWOP interop.md §Isolation).
func (t *tenantState) readableLocked(sub interop.Subject, runID string) *runRecord {
	rec := t.runs[runID]
	if rec == nil || !canRead(sub, rec) {
		return nil
	}
	return rec
}

func canRead(sub interop.Subject, rec *runRecord) bool {
	return sub.Workspace == "" || rec.run.Workspace == sub.Workspace
}

// notFoundErrors are the store's not-found answers, made once. Their text
// never depends on whether the thing exists elsewhere, so a foreign run
// reads exactly like an unknown one; sharing them also keeps refusals free
// of allocations.
type notFoundErrors struct{ run, workflow, interrupt error }

func newNotFoundErrors() notFoundErrors {
	return notFoundErrors{
		run:       fmt.Errorf("memstore: run: %w", interop.ErrNotFound),
		workflow:  fmt.Errorf("memstore: workflow: %w", interop.ErrNotFound),
		interrupt: fmt.Errorf("memstore: interrupt: %w", interop.ErrNotFound),
	}
}
