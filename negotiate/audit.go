package negotiate

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wopinterop/wopinterop/interop"
)

// Scope says where a decision's record belongs (OpenWOP interop.md §The audit event; RFC 0242 §B).
type Scope struct {
	// RunID, when set, puts the record on that run's event log: the exchange
	// belongs to the run. The caller must have checked that the run is
	// readable by the peer.
	RunID string
	// Tenant and Workspace own the record when it belongs to no run; it is
	// then a durable host event. An empty Tenant is an unauthenticated
	// exchange: still recorded, delivered to no subscriber (OpenWOP RFC 0242 §B.4).
	Tenant    string
	Workspace string
}

// Defaults of [AuditorOptions].
const (
	DefaultAuditQueueSize      = 1024
	DefaultAuditEnqueueWait    = 250 * time.Millisecond
	DefaultAuditMaxAttempts    = 8
	DefaultAuditRetryBackoff   = 100 * time.Millisecond
	DefaultAuditMaxBackoff     = 5 * time.Second
	DefaultAuditAttemptTimeout = 10 * time.Second
)

// AuditorOptions configures an [Auditor]. The zero value is usable; every
// zero field takes the default named on it.
type AuditorOptions struct {
	// Logger receives retries, recoveries and drops (never record contents
	// beyond protocol and outcome). Nil discards.
	Logger *slog.Logger
	// QueueSize bounds the records waiting for the sink, including those
	// waiting to be retried; 0 means [DefaultAuditQueueSize].
	QueueSize int
	// EnqueueWait bounds how long Record waits for room in a full queue
	// while the sink is working; 0 means [DefaultAuditEnqueueWait], a
	// negative value never waits. While the sink is failing, a full queue
	// drops at once: waiting would only slow requests without saving the
	// record.
	EnqueueWait time.Duration
	// MaxAttempts bounds the deliveries of one record; 0 means
	// [DefaultAuditMaxAttempts]. A record the sink refuses as invalid
	// (interop.ErrInvalidInput) is not retried.
	MaxAttempts int
	// RetryBackoff is the pause after a record's first failed delivery,
	// doubled after each further failure up to MaxBackoff; 0 means
	// [DefaultAuditRetryBackoff] and [DefaultAuditMaxBackoff].
	RetryBackoff, MaxBackoff time.Duration
	// AttemptTimeout bounds one delivery through the sink's context; 0
	// means [DefaultAuditAttemptTimeout]. A sink that ignores its context
	// holds the worker until it returns.
	AttemptTimeout time.Duration
	// Synchronous makes Record deliver to the sink on the caller's goroutine
	// and return the sink's error, for a host that wants a failing audit
	// trail to fail the request. By default delivery is asynchronous and
	// retried, so a sink failure cannot turn an accepted request into a
	// server error — at the price that a record the sink never takes is
	// dropped and counted ([Auditor.Stats]) instead of refused.
	Synchronous bool
}

// AuditStats counts what an asynchronous [Auditor] did with its records;
// a host exports them as metrics. The counters only grow.
type AuditStats struct {
	// Delivered counts records the sink accepted.
	Delivered uint64
	// Retried counts failed deliveries that were tried again.
	Retried uint64
	// Dropped counts records that never reached the sink: the queue was
	// full, every attempt failed, the sink refused the record as invalid,
	// or Close gave up on it. Each drop is also logged once.
	Dropped uint64
	// Queued is the number of records waiting now.
	Queued int
}

// Auditor delivers negotiation.decided records to the host's EventSink.
// By default it does so off the request path: Record queues the record and
// one worker goroutine, owned between Start and Close, delivers it,
// retrying a failing sink with exponential backoff from the bounded queue.
type Auditor struct {
	sink interop.EventSink
	log  *slog.Logger
	sync bool
	opts AuditorOptions // defaults filled in

	queue  chan pending
	mu     sync.RWMutex // guards closed against sends on a closed queue
	closed bool
	once   sync.Once
	done   chan struct{}
	// giveUp, cancelled when Close's context ends, aborts the delivery in
	// flight and turns every remaining record into a drop.
	giveUp     context.Context
	stopTrying context.CancelFunc

	// The delivery in flight: its context, renewed only after the watchdog
	// cancelled it, and its start. The watchdog is one timer, armed while
	// deliveries go on and checking the one in flight, so that a delivery
	// costs no timer or context of its own.
	attemptMu     sync.Mutex
	attemptCtx    context.Context
	cancelAttempt context.CancelFunc
	attemptStart  time.Time // zero between attempts
	watchdogArmed bool
	watchdog      *time.Timer

	// ids mints the host-event ids of runless records.
	ids eventIDs

	failing                     atomic.Bool // the last delivery attempt failed
	delivered, retried, dropped atomic.Uint64
}

// pending is a queued record. ctx carries the request's values without its
// cancellation: a record outlives its request.
type pending struct {
	ctx   context.Context
	d     Decision
	scope Scope
}

// NewAuditor returns an Auditor delivering to sink. Call Start before
// Record in asynchronous mode.
func NewAuditor(sink interop.EventSink, opts AuditorOptions) *Auditor {
	opts.QueueSize = orDefault(opts.QueueSize, DefaultAuditQueueSize)
	if opts.EnqueueWait == 0 {
		opts.EnqueueWait = DefaultAuditEnqueueWait
	}
	opts.MaxAttempts = orDefault(opts.MaxAttempts, DefaultAuditMaxAttempts)
	opts.RetryBackoff = orDefault(opts.RetryBackoff, DefaultAuditRetryBackoff)
	opts.MaxBackoff = max(orDefault(opts.MaxBackoff, DefaultAuditMaxBackoff), opts.RetryBackoff)
	opts.AttemptTimeout = orDefault(opts.AttemptTimeout, DefaultAuditAttemptTimeout)
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	giveUp, stop := context.WithCancel(context.Background())
	a := &Auditor{
		sink:       sink,
		log:        log,
		sync:       opts.Synchronous,
		opts:       opts,
		queue:      make(chan pending, opts.QueueSize),
		done:       make(chan struct{}),
		giveUp:     giveUp,
		stopTrying: stop,
	}
	a.ids.prefix = "hev-" + rand.Text() + "."
	a.watchdog = time.AfterFunc(time.Hour, a.attemptTimedOut)
	a.watchdog.Stop()
	return a
}

// orDefault is v, or def when v is zero or negative.
func orDefault[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// Start launches the delivery worker. It is a no-op in synchronous mode and
// on a second call.
func (a *Auditor) Start() {
	if a.sync {
		return
	}
	a.once.Do(func() { go a.run() })
}

func (a *Auditor) run() {
	defer close(a.done)
	defer a.watchdog.Stop()
	defer a.stopTrying() // releases the attempt contexts derived from it
	for p := range a.queue {
		a.deliverWithRetry(p)
	}
}

// Record emits exactly one negotiation.decided record for d.
//
// In asynchronous mode it returns nil once the record is queued. When the
// queue is full it waits up to EnqueueWait for room while the sink is
// working (a burst on a healthy sink drains quickly), and not at all while
// the sink is failing; a record that finds no room is dropped, counted and
// logged rather than holding the request, so that a broken audit trail
// costs requests at most EnqueueWait. If ctx ends while Record waits, the
// record is dropped too and ctx.Err() returned. After Close, Record
// delivers synchronously and returns the sink's error, so that no record
// is lost silently.
func (a *Auditor) Record(ctx context.Context, d Decision, scope Scope) error {
	if a.sync {
		return a.deliver(ctx, d, scope, "")
	}
	a.mu.RLock()
	if a.closed {
		a.mu.RUnlock()
		return a.deliver(ctx, d, scope, "")
	}
	defer a.mu.RUnlock()
	p := pending{ctx: context.WithoutCancel(ctx), d: d, scope: scope}
	select {
	case a.queue <- p:
		return nil
	default:
	}
	wait := a.opts.EnqueueWait
	if wait < 0 || a.failing.Load() {
		a.drop(p, "queue full", nil)
		return nil
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case a.queue <- p:
		return nil
	case <-timer.C:
		a.drop(p, "queue full", nil)
		return nil
	case <-ctx.Done():
		a.drop(p, "request ended while the queue was full", nil)
		return ctx.Err()
	}
}

// Close stops accepting records and delivers every queued one, retries
// included, then waits for the worker. If ctx ends first it gives up: the
// delivery in flight is abandoned through its context, every record still
// queued is dropped (counted and logged), and Close returns ctx.Err()
// without waiting for a sink that ignores its context. It is idempotent.
func (a *Auditor) Close(ctx context.Context) error {
	if a.sync {
		return nil
	}
	a.mu.Lock()
	if !a.closed {
		a.closed = true
		close(a.queue)
	}
	a.mu.Unlock()
	a.Start() // drain even if Start was never called
	select {
	case <-a.done:
		return nil
	case <-ctx.Done():
	}
	a.stopTrying()
	// The worker drops what it receives from now on; taking the rest here
	// makes the count final for every record not in flight.
	for p := range a.queue {
		a.drop(p, "closed before delivery", nil)
	}
	return ctx.Err()
}

// Stats returns the auditor's counters. In synchronous mode (and after
// Close) the sink's errors go to the caller of Record instead, and are not
// counted.
func (a *Auditor) Stats() AuditStats {
	return AuditStats{
		Delivered: a.delivered.Load(),
		Retried:   a.retried.Load(),
		Dropped:   a.dropped.Load(),
		Queued:    len(a.queue),
	}
}

// deliverWithRetry delivers one queued record, retrying with exponential
// backoff. The event id of a runless record is minted once, so a sink that
// stored a record before failing can recognise the retry.
func (a *Auditor) deliverWithRetry(p pending) {
	eventID := a.ids.next()
	backoff := a.opts.RetryBackoff
	for attempt := 1; ; attempt++ {
		if a.giveUp.Err() != nil {
			a.drop(p, "closed before delivery", nil)
			return
		}
		err := a.attempt(p, eventID)
		if err == nil {
			a.delivered.Add(1)
			if a.failing.Swap(false) {
				a.log.LogAttrs(p.ctx, slog.LevelInfo, "negotiation.decided sink recovered")
			}
			return
		}
		if errors.Is(err, interop.ErrInvalidInput) {
			// The record, not the sink, is at fault: a retry cannot help.
			a.drop(p, "refused by the sink", err)
			return
		}
		if !a.failing.Swap(true) {
			a.log.LogAttrs(p.ctx, slog.LevelWarn, "negotiation.decided sink failing",
				slog.String("error", err.Error()))
		}
		if attempt >= a.opts.MaxAttempts {
			a.drop(p, fmt.Sprintf("sink failed %d times", attempt), err)
			return
		}
		a.retried.Add(1)
		timer := time.NewTimer(backoff)
		select {
		case <-timer.C:
		case <-a.giveUp.Done():
			timer.Stop()
		}
		backoff = min(2*backoff, a.opts.MaxBackoff)
	}
}

// attempt is one delivery, bounded by AttemptTimeout and abandoned when
// Close gives up. A panicking sink is a failed attempt, not a dead worker.
func (a *Auditor) attempt(p pending, eventID string) (err error) {
	ctx := recordContext{Context: a.beginAttempt(), values: p.ctx}
	defer a.endAttempt()
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("negotiate: event sink panicked: %v", v)
		}
	}()
	return a.deliver(ctx, p.d, p.scope, eventID)
}

// beginAttempt marks a delivery in flight and returns its context: the
// previous attempt's unless the watchdog cancelled it.
func (a *Auditor) beginAttempt() context.Context {
	a.attemptMu.Lock()
	defer a.attemptMu.Unlock()
	if a.attemptCtx == nil || a.attemptCtx.Err() != nil {
		a.attemptCtx, a.cancelAttempt = context.WithCancel(a.giveUp)
	}
	a.attemptStart = time.Now()
	if !a.watchdogArmed {
		a.watchdogArmed = true
		a.watchdog.Reset(a.opts.AttemptTimeout)
	}
	return a.attemptCtx
}

func (a *Auditor) endAttempt() {
	a.attemptMu.Lock()
	a.attemptStart = time.Time{}
	a.attemptMu.Unlock()
}

// attemptTimedOut runs on the watchdog's timer: it cancels the delivery in
// flight once it has run AttemptTimeout, and otherwise re-arms for the
// time that delivery has left, or disarms when none is in flight.
func (a *Auditor) attemptTimedOut() {
	a.attemptMu.Lock()
	defer a.attemptMu.Unlock()
	if a.attemptStart.IsZero() {
		a.watchdogArmed = false
		return
	}
	left := a.opts.AttemptTimeout - time.Since(a.attemptStart)
	if left <= 0 {
		a.cancelAttempt()
		left = a.opts.AttemptTimeout
	}
	a.watchdog.Reset(left)
}

// recordContext is what the sink receives: the attempt's cancellation with
// the values of the request that produced the record (its trace, its
// logging attributes). values is a context.WithoutCancel, which also hides
// the request's cancellation from context.Cause.
type recordContext struct {
	context.Context // the attempt's
	values          context.Context
}

func (c recordContext) Value(key any) any { return c.values.Value(key) }

// drop counts and logs one record that will never reach the sink. The log
// line names only the protocol and outcome of the record.
func (a *Auditor) drop(p pending, why string, err error) {
	a.dropped.Add(1)
	attrs := []slog.Attr{
		slog.String("protocol", string(p.d.Protocol)),
		slog.String("outcome", string(p.d.Outcome)),
		slog.String("cause", why),
	}
	if err != nil {
		attrs = append(attrs, slog.String("error", err.Error()))
	}
	a.log.LogAttrs(p.ctx, slog.LevelWarn, "negotiation.decided record dropped", attrs...)
}

var errNoSink = errors.New("negotiate: auditor has no event sink")

// deliver hands one record to the sink. eventID names the host event when
// the record becomes one ("" mints a fresh id).
func (a *Auditor) deliver(ctx context.Context, d Decision, scope Scope, eventID string) error {
	if a.sink == nil {
		return errNoSink
	}
	payload := d.Record()
	if scope.RunID != "" {
		err := a.sink.AppendRunEvent(ctx, scope.RunID, interop.RunEvent{
			Type:          interop.EventNegotiationDecided,
			Timestamp:     d.At,
			SchemaVersion: interop.SchemaVersion,
			Payload:       payload,
		})
		// A finished run's log ends with its terminal event, and a run
		// past the host's retention has no log: the record then belongs
		// to the tenant's host events instead of being lost.
		if !errors.Is(err, interop.ErrRunTerminal) && !errors.Is(err, interop.ErrNotFound) {
			return err
		}
	}
	if eventID == "" {
		eventID = a.ids.next()
	}
	return a.sink.PublishHostEvent(ctx, scope.Tenant, interop.HostEvent{
		EventID:     eventID,
		Type:        EventType,
		Timestamp:   d.At,
		Delivery:    interop.DeliveryDurable,
		WorkspaceID: scope.Workspace,
		Payload:     payload,
	})
}

// eventIDs mints host-event ids: "hev-", a random prefix drawn once per
// auditor, '.', and a counter in base 36. An eventId is a host-minted
// resumption cursor and webhook dedup key, not a secret (OpenWOP
// host-event.schema.json, ids.schema.json#/$defs/eventId: unique,
// [A-Za-z0-9._~-]{16,128}); the prefix's 130 random bits keep ids unique
// across auditors and processes sharing a sink, and the counter keeps them
// unique within one, so a record costs no crypto/rand read.
type eventIDs struct {
	prefix string // "hev-" + 26 base32 characters + "."
	n      atomic.Uint64
}

func (ids *eventIDs) next() string {
	var buf [64]byte
	b := append(buf[:0], ids.prefix...)
	return string(strconv.AppendUint(b, ids.n.Add(1), 36))
}
