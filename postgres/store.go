package postgres

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"runtime/debug"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wopinterop/wopinterop/internal/schemacheck"
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
var ErrClosed = errors.New("postgres: store is closed")

// Defaults of the options.
const (
	DefaultPollInterval       = time.Second
	DefaultLeaseTTL           = 30 * time.Second
	DefaultHostEventRetention = 10000
	DefaultHostEventMaxAge    = 24 * time.Hour
	// ephemeralKeep is how long an ephemeral host event stays in the
	// table: long enough for every replica's live subscribers to read it.
	ephemeralKeep = time.Minute
)

type config struct {
	now                func() time.Time
	logger             *slog.Logger
	notify             bool
	pollInterval       time.Duration
	leaseTTL           time.Duration
	hostEventRetention int
	hostEventMaxAge    time.Duration
	runRetention       time.Duration
}

// Option configures a [Store].
type Option func(*config)

// WithClock sets the clock of every timestamp the store writes (runs,
// events, interrupts, host events). Default time.Now. Times are stored in
// UTC at microsecond precision, PostgreSQL's. Leases use the database's
// clock instead, so that replicas agree on when one expires.
func WithClock(now func() time.Time) Option {
	return func(c *config) {
		if now != nil {
			c.now = now
		}
	}
}

// WithLogger sets the logger for workflow failures, panics and database
// trouble in the background. Default: a logger that discards everything.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) {
		if l != nil {
			c.logger = l
		}
	}
}

// WithPollInterval sets how often a waiting reader (a run watch, a host
// event subscription, a suspended workflow) reads again when no
// notification woke it (default [DefaultPollInterval]). Notifications make
// delivery prompt; the poll makes it certain, so a notification lost with
// a dropped connection delays an event by at most this much.
func WithPollInterval(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.pollInterval = d
		}
	}
}

// WithoutNotifications turns LISTEN/NOTIFY wake-ups off: readers then
// rely on polling alone. Use it behind a connection pooler in transaction
// mode, which cannot hold a LISTEN session, with a short poll interval.
func WithoutNotifications() Option {
	return func(c *config) { c.notify = false }
}

// WithLeaseTTL sets how long a replica's claim on a run it executes lasts
// without renewal (default [DefaultLeaseTTL]); the replica renews it every
// third of that. When a replica dies, another takes its runs over once
// their leases expire.
func WithLeaseTTL(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.leaseTTL = d
		}
	}
}

// WithHostEventRetention sets how many durable host events each tenant
// keeps for Last-Event-ID resumption (default
// [DefaultHostEventRetention]); values below 1 are raised to 1.
func WithHostEventRetention(n int) Option {
	return func(c *config) { c.hostEventRetention = max(n, 1) }
}

// WithHostEventMaxAge bounds how long a durable host event is kept
// (default [DefaultHostEventMaxAge]), measured on the store clock from
// publication; d <= 0 keeps events until the count bound removes them. A
// Last-Event-ID naming a removed event resumes like an unknown one
// (OpenWOP events.md §Host events: within retention).
func WithHostEventMaxAge(d time.Duration) Option {
	return func(c *config) { c.hostEventMaxAge = max(d, 0) }
}

// WithRunRetention deletes a terminal run once its status timestamp is
// older than ttl, with its events, interrupts and idempotency key: it then
// reads exactly as an id never minted, and its key may start a new run.
// Runs that are not terminal are never deleted. ttl <= 0 (the default)
// keeps every run.
func WithRunRetention(ttl time.Duration) Option {
	return func(c *config) { c.runRetention = max(ttl, 0) }
}

// Store is an [interop.RunStore], [interop.EventSink],
// [interop.HostEventFeed], [interop.AgentInventory] and
// [interop.RunWaiter] on PostgreSQL, safe
// for concurrent use, and safe to run in many replicas over one database.
// See the package documentation for how runs execute across replicas.
type Store struct {
	pool    *pgxpool.Pool
	cfg     config
	owner   string // this replica's lease-owner id
	cursors *cursorSigner
	schemas *schemacheck.Cache
	hub     *hub
	// hostEventType is the host-event type grammar (host-event.schema.json).
	hostEventType *regexp.Regexp

	mu        sync.Mutex // guards workflows, local and closed
	workflows map[string]*tenantWorkflows
	local     map[string]*execution // runs executing in this replica
	closed    bool

	// runsCtx is the parent of every background goroutine and every
	// execution; Close cancels it with errStoreClosed as the cause.
	runsCtx  context.Context
	stopRuns context.CancelCauseFunc
	running  sync.WaitGroup // executions
	loops    sync.WaitGroup // listener and maintenance
	listener *pgx.Conn      // handed to the listen loop; nil without notifications
}

// Causes of an execution's cancellation, told apart when it ends.
var (
	errStoreClosed     = errors.New("postgres: store closed")
	errCancelRequested = errors.New("postgres: cancel requested")
	errLeaseLost       = errors.New("postgres: lease lost to another replica")
)

// New returns a Store over pool, whose database [Migrate] has brought up
// to date (else [ErrSchemaBehind]). It starts listening for notifications
// (unless [WithoutNotifications]) and the maintenance loop that renews
// leases, takes over runs whose replica died and applies retention. Every
// replica of a host calls New with the same database and registers the
// same workflows. Close the Store before the pool.
func New(ctx context.Context, pool *pgxpool.Pool, opts ...Option) (*Store, error) {
	cfg := config{
		now:                time.Now,
		logger:             slog.New(slog.DiscardHandler),
		notify:             true,
		pollInterval:       DefaultPollInterval,
		leaseTTL:           DefaultLeaseTTL,
		hostEventRetention: DefaultHostEventRetention,
		hostEventMaxAge:    DefaultHostEventMaxAge,
	}
	for _, o := range opts {
		o(&cfg)
	}
	if err := checkSchema(ctx, pool); err != nil {
		return nil, err
	}
	key, err := sharedSecret(ctx, pool, "list-cursor")
	if err != nil {
		return nil, err
	}
	runsCtx, stop := context.WithCancelCause(context.Background())
	s := &Store{
		pool:          pool,
		cfg:           cfg,
		owner:         "replica-" + isolation.NewOpaque(),
		cursors:       newCursorSigner(key),
		schemas:       schemacheck.NewCache(),
		hub:           newHub(),
		hostEventType: regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*\.[a-z][a-z0-9]*(-[a-z0-9]+)*$`),
		workflows:     map[string]*tenantWorkflows{},
		local:         map[string]*execution{},
		runsCtx:       runsCtx,
		stopRuns:      stop,
	}
	if cfg.notify {
		if s.listener, err = s.listen(ctx); err != nil {
			stop(errStoreClosed)
			return nil, err
		}
		s.loops.Add(1)
		go s.listenLoop()
	}
	s.loops.Add(1)
	go s.maintain()
	return s, nil
}

// sharedSecret returns the 32-byte secret name, creating it on first use;
// every replica reads the same one.
func sharedSecret(ctx context.Context, pool *pgxpool.Pool, name string) ([]byte, error) {
	fresh := make([]byte, 32)
	_, _ = rand.Read(fresh) // crypto/rand.Read never fails (Go ≥ 1.24).
	// A creation that loses a race with another replica's finds nothing to
	// return in its own snapshot; the next statement sees the winner's.
	for attempt := 0; ; attempt++ {
		var key []byte
		err := pool.QueryRow(ctx, `
			WITH ins AS (
				INSERT INTO wopinterop_secrets (name, value) VALUES ($1, $2)
				ON CONFLICT (name) DO NOTHING RETURNING value)
			SELECT value FROM ins
			UNION ALL
			SELECT value FROM wopinterop_secrets WHERE name = $1
			LIMIT 1`, name, fresh).Scan(&key)
		switch {
		case err == nil:
			return key, nil
		case !errors.Is(err, pgx.ErrNoRows) || attempt == 2:
			return nil, fmt.Errorf("postgres: read secret %q: %w", name, err)
		}
	}
}

// Close stops this replica: it cancels the workflows executing here
// without ending their runs, waits for them and for the background loops,
// and releases their leases, so that another replica (or this host's next
// start) takes each run over where its log left it. It does not close the
// pool. After Close, CreateRun returns [ErrClosed]; every other method
// keeps working. Close is idempotent.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	s.stopRuns(errStoreClosed)
	s.running.Wait()
	s.loops.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := s.pool.Exec(ctx, `UPDATE wopinterop_runs SET lease_until = now() WHERE lease_owner = $1 AND lease_until IS NOT NULL`, s.owner)
	if err != nil {
		return fmt.Errorf("postgres: close: release leases: %w", err)
	}
	return nil
}

// now is the store clock in UTC at the database's precision.
func (s *Store) now() time.Time { return s.cfg.now().UTC().Truncate(time.Microsecond) }

// inTx runs fn in a transaction, again (up to four times) when PostgreSQL
// aborts it for a serialization failure or a deadlock, which a retry
// resolves. fn must reset whatever it records on each call.
func (s *Store) inTx(ctx context.Context, fn func(pgx.Tx) error) error {
	for attempt := 1; ; attempt++ {
		err := pgx.BeginFunc(ctx, s.pool, fn)
		if err == nil || attempt == 4 || !retryable(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(attempt) * 5 * time.Millisecond):
		}
	}
}

func retryable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40001" || pgErr.Code == "40P01")
}

// recovering runs fn, logging a panic instead of crashing the host.
func (s *Store) recovering(what string, fn func()) {
	defer func() {
		if p := recover(); p != nil {
			s.cfg.logger.Error("postgres: "+what+" panicked", "panic", p, "stack", string(debug.Stack()))
		}
	}()
	fn()
}

// sleep waits d or until the store closes; it reports whether the store
// is still open.
func (s *Store) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.runsCtx.Done():
		return false
	case <-t.C:
		return true
	}
}
