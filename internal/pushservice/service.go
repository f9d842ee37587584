package pushservice

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/egress"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/isolation"
	"github.com/wopinterop/wopinterop/push"
)

// ErrClosed reports a registration after [Service.Close].
var ErrClosed = errors.New("push: service is closed")

// TaskRef names the task a push body is about.
type TaskRef struct {
	// ID is the task id: the run's bound id.
	ID string
	// ContextID is the run's contextId ("" when the run has none).
	ContextID string
}

// Projector turns one event of a task's run into the push bodies it
// produces, in order: a statusUpdate when ev changes the status from
// prev, an artifactUpdate per artifact chunk, nothing for other entries
// (OpenWOP RFC 0214 §C; interop map, a2a.fields). It reads under sub, the Subject that registered the
// config. The A2A server supplies it, so a push body is exactly what its
// stream would show.
type Projector interface {
	Project(ctx context.Context, sub interop.Subject, task TaskRef, ev *interop.RunEvent, prev interop.RunStatus) ([]wire.Event, error)
}

// ProjectorFunc adapts a function to [Projector].
type ProjectorFunc func(ctx context.Context, sub interop.Subject, task TaskRef, ev *interop.RunEvent, prev interop.RunStatus) ([]wire.Event, error)

// Project calls f.
func (f ProjectorFunc) Project(ctx context.Context, sub interop.Subject, task TaskRef, ev *interop.RunEvent, prev interop.RunStatus) ([]wire.Event, error) {
	return f(ctx, sub, task, ev, prev)
}

// Service is A2A push delivery: the push-config operations (register,
// get, list, delete) and the worker that delivers a task's run events to
// its configs. Build it with [New], call [Service.Start] before serving
// and [Service.Close] on shutdown.
//
// The Service does not authorize: its callers read the task under the
// caller's Subject first (the A2A server does), so a task the caller
// cannot read never reaches it.
type Service struct {
	store      interop.RunStore
	project    Projector
	events     interop.EventSink
	guard      *egress.Guard
	configs    push.ConfigStore
	vault      push.Vault
	outbox     push.Outbox
	retry      retryPolicy
	maxPerTask int
	client     *http.Client
	log        *slog.Logger
	now        func() time.Time
	clock      push.Clock
	sem        chan struct{}
	// fixedHeader holds the header values every push carries, made once:
	// a request never changes a value slice it is given (attempt).
	fixedHeader struct{ contentType, userAgent []string }
	// owner names this worker's leases in the outbox (lease.go).
	owner    string
	leaseTTL time.Duration
	poll     time.Duration
	// rescanEvery is how often the live configs are read again (rescan.go).
	rescanEvery time.Duration
	wake        chan struct{} // a delivery was queued or finished: lease again

	mu       sync.Mutex
	state    serviceState
	watchers map[string]*watcher
	scans    uint64           // rescans begun (rescan.go)
	held     map[string]*held // the leases this worker holds, by delivery id
	// lanesStopped: no delivery goroutine may start any more (Close).
	lanesStopped bool
	reserved     map[string]int // per task: slots held by reservations (reserve.go)

	watchCtx  context.Context
	stopWatch context.CancelFunc
	watchWG   sync.WaitGroup
	laneCtx   context.Context
	stopLanes context.CancelFunc
	laneWG    sync.WaitGroup
	pumpCtx   context.Context
	stopPump  context.CancelFunc
	pumpDone  chan struct{} // closed when the pump has returned
	drained   chan struct{} // closed by the pump once Close's drain is done
}

type serviceState int

const (
	stateNew serviceState = iota
	stateStarted
	stateClosing
	stateClosed
)

// New validates o and returns a service that follows runs of store and
// renders push bodies with project.
func New(store interop.RunStore, project Projector, o push.Options) (*Service, error) {
	var problems []error
	if store == nil {
		problems = append(problems, errors.New("a RunStore is required"))
	}
	if project == nil {
		problems = append(problems, errors.New("a Projector is required"))
	}
	if o.Events == nil {
		problems = append(problems, errors.New("Events is required (dead letters go there)"))
	}
	retry, err := withDefaults(o.Retry)
	if err != nil {
		problems = append(problems, err)
	}
	if o.MaxConfigsPerTask < 0 || o.Concurrency < 0 {
		problems = append(problems, errors.New("MaxConfigsPerTask and Concurrency must not be negative"))
	}
	if o.LeaseTTL < 0 || o.OutboxPoll < 0 || o.WatchRescan < 0 {
		problems = append(problems, errors.New("LeaseTTL, OutboxPoll and WatchRescan must not be negative"))
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("push: invalid options: %w", errors.Join(problems...))
	}
	s := &Service{
		store: store, project: project, events: o.Events,
		guard: o.Guard, configs: o.Configs, vault: o.Vault, outbox: o.Outbox,
		retry: retry, maxPerTask: o.MaxConfigsPerTask,
		log: o.Logger, now: o.Now, clock: o.Clock,
		owner:    "ow-" + isolation.NewOpaque(),
		leaseTTL: o.LeaseTTL, poll: o.OutboxPoll, rescanEvery: o.WatchRescan,
		wake:     make(chan struct{}, 1),
		watchers: map[string]*watcher{},
		held:     map[string]*held{},
		pumpDone: make(chan struct{}),
		drained:  make(chan struct{}),
	}
	s.fixedHeader.contentType = []string{contentType}
	s.fixedHeader.userAgent = []string{userAgent}
	if s.leaseTTL == 0 {
		s.leaseTTL = defaultLeaseTTL
	}
	if s.poll == 0 {
		s.poll = defaultOutboxPoll
	}
	if s.rescanEvery == 0 {
		s.rescanEvery = defaultWatchRescan
	}
	if s.guard == nil {
		if s.guard, err = egress.NewGuard(egress.GuardOptions{}); err != nil {
			return nil, err
		}
	}
	if s.configs == nil {
		s.configs = push.NewMemoryConfigs()
	}
	if s.vault == nil {
		s.vault = push.NewMemoryVault()
	}
	if s.outbox == nil {
		s.outbox = push.NewMemoryOutbox()
	}
	if s.maxPerTask == 0 {
		s.maxPerTask = 10
	}
	concurrency := o.Concurrency
	if concurrency == 0 {
		concurrency = 32
	}
	s.sem = make(chan struct{}, concurrency)
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.clock == nil {
		s.clock = systemClock{}
	}
	s.client = s.guard.Client(o.TLS)
	s.watchCtx, s.stopWatch = context.WithCancel(context.Background())
	s.laneCtx, s.stopLanes = context.WithCancel(context.Background())
	s.pumpCtx, s.stopPump = context.WithCancel(context.Background())
	return s, nil
}

// Start resumes what the stores hold — a watcher for every task with a
// live config, and the worker that leases the outbox's deliveries, those
// queued before too — and lets registrations start watchers. From then
// on, every WatchRescan, it follows the tasks whose configs other
// replicas registered (rescan.go). Call it once, before serving.
func (s *Service) Start(ctx context.Context) error {
	s.mu.Lock()
	if s.state != stateNew {
		s.mu.Unlock()
		return errors.New("push: Start called twice or after Close")
	}
	s.mu.Unlock()
	live, err := s.configs.Live(ctx)
	if err != nil {
		return fmt.Errorf("push: reading live configs: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state = stateStarted
	go s.pump()
	s.watchWG.Add(1)
	go s.rescan()
	s.followLiveLocked(live)
	return nil
}

// Close stops following runs, then lets every delivery the worker can
// lease be attempted: one that is delivered, dead-lettered or dropped is
// done; one whose attempt fails is not retried now — its wait is cut
// short, it stays in the outbox, its lease is released for another
// replica or the next Start (an in-memory outbox loses it with the
// process; a durable one keeps it), and its config's later pushes wait
// behind it. Close returns once nothing more can be leased and no attempt
// is in flight, or abandons the attempts still in flight when ctx ends
// and returns ctx.Err(). So a receiver that is down at shutdown costs at
// most one attempt's timeout, never the retry schedule. With an outbox
// shared by replicas that keep queueing, Close helps drain it until ctx
// ends. It is idempotent.
func (s *Service) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.state == stateClosing || s.state == stateClosed {
		s.mu.Unlock()
		return nil
	}
	started := s.state == stateStarted
	s.state = stateClosing
	s.mu.Unlock()

	s.stopWatch()
	s.watchWG.Wait()
	var err error
	if started {
		s.wakePump()
		select {
		case <-s.drained:
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	s.mu.Lock()
	s.lanesStopped = true
	s.mu.Unlock()
	s.stopLanes()
	s.laneWG.Wait()
	s.stopPump()
	if started {
		<-s.pumpDone // it released every lease still held
	}
	s.client.CloseIdleConnections()
	s.mu.Lock()
	s.state = stateClosed
	s.mu.Unlock()
	return err
}
