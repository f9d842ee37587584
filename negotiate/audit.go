package negotiate

import (
	"context"
	"crypto/rand"
	"errors"
	"log/slog"
	"sync"

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

// AuditorOptions configures an [Auditor]. The zero value is usable.
type AuditorOptions struct {
	// Logger receives sink failures (never record contents beyond the
	// outcome). Nil discards.
	Logger *slog.Logger
	// QueueSize bounds the records waiting for the sink; 0 means 1024. A
	// full queue makes Record wait: records are never dropped.
	QueueSize int
	// Synchronous makes Record deliver to the sink on the caller's goroutine
	// and return the sink's error, for a host that wants a failing audit
	// trail to fail the request. By default delivery is asynchronous and a
	// sink failure is logged, so it cannot turn an accepted request into a
	// server error.
	Synchronous bool
}

// Auditor delivers negotiation.decided records to the host's EventSink off
// the request path. It owns one worker goroutine between Start and Close.
type Auditor struct {
	sink   interop.EventSink
	log    *slog.Logger
	sync   bool
	queue  chan pending
	mu     sync.RWMutex // guards closed against sends on a closed queue
	closed bool
	once   sync.Once
	done   chan struct{}
}

type pending struct {
	ctx   context.Context
	d     Decision
	scope Scope
}

// NewAuditor returns an Auditor delivering to sink. Call Start before
// Record in asynchronous mode.
func NewAuditor(sink interop.EventSink, opts AuditorOptions) *Auditor {
	size := opts.QueueSize
	if size <= 0 {
		size = 1024
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Auditor{
		sink:  sink,
		log:   log,
		sync:  opts.Synchronous,
		queue: make(chan pending, size),
		done:  make(chan struct{}),
	}
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
	for p := range a.queue {
		if err := a.deliver(p.ctx, p.d, p.scope); err != nil {
			a.log.LogAttrs(p.ctx, slog.LevelWarn, "negotiation.decided not recorded",
				slog.String("protocol", string(p.d.Protocol)),
				slog.String("outcome", string(p.d.Outcome)),
				slog.String("error", err.Error()))
		}
	}
}

// Record emits exactly one negotiation.decided record for d. In
// asynchronous mode it returns once the record is queued (waiting while the
// queue is full, or returning ctx.Err() if ctx ends first); after Close it
// delivers synchronously so that no record is lost.
func (a *Auditor) Record(ctx context.Context, d Decision, scope Scope) error {
	if a.sync {
		return a.deliver(ctx, d, scope)
	}
	a.mu.RLock()
	if a.closed {
		a.mu.RUnlock()
		return a.deliver(ctx, d, scope)
	}
	defer a.mu.RUnlock()
	select {
	case a.queue <- pending{ctx: context.WithoutCancel(ctx), d: d, scope: scope}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops accepting records, delivers every queued one and waits for
// the worker, or returns ctx.Err() if ctx ends first. It is idempotent.
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
		return ctx.Err()
	}
}

var errNoSink = errors.New("negotiate: auditor has no event sink")

func (a *Auditor) deliver(ctx context.Context, d Decision, scope Scope) error {
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
		// A finished run's log ends with its terminal event; the record
		// then belongs to the tenant's host events instead of being lost.
		if !errors.Is(err, interop.ErrRunTerminal) {
			return err
		}
	}
	return a.sink.PublishHostEvent(ctx, scope.Tenant, interop.HostEvent{
		EventID:     "hev-" + rand.Text(),
		Type:        EventType,
		Timestamp:   d.At,
		Delivery:    interop.DeliveryDurable,
		WorkspaceID: scope.Workspace,
		Payload:     payload,
	})
}
