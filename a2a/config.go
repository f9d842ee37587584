package a2a

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/isolation"
	"github.com/wopinterop/wopinterop/mapping"
	"github.com/wopinterop/wopinterop/negotiate"
	"github.com/wopinterop/wopinterop/push"
)

// Capabilities are the a2a facets the server honours. They become the
// card's capabilities and open or close the operation rows whose
// `requires` names them (OpenWOP interop map, a2a.card; interop.md §The operation mappings).
type Capabilities struct {
	Streaming         bool
	PushNotifications bool
	DurableTasks      bool
}

// CardConfig is what the public agent card says about the host beyond what
// the server derives (interfaces, capabilities, skills).
type CardConfig struct {
	Name             string
	Description      string
	Version          string
	Provider         *wire.AgentProvider
	DocumentationURL string
	IconURL          string
	// DefaultInputModes and DefaultOutputModes default to text/plain and
	// application/json.
	DefaultInputModes  []string
	DefaultOutputModes []string
	// SecuritySchemes and SecurityRequirements must describe exactly the
	// authentication the SubjectResolver enforces (OpenWOP interop map, a2a.card).
	SecuritySchemes      wire.NamedSecuritySchemes
	SecurityRequirements wire.SecurityRequirementsOptions
}

// Config configures a [Server]. Store, Subjects, Policy, Auditor,
// JSONRPCURL and Routed are required.
type Config struct {
	Store    interop.RunStore
	Subjects interop.SubjectResolver
	// Policy is the A2A version policy (negotiate.A2A); its offered
	// versions are the interfaces' protocolVersion values (OpenWOP interop map, a2a.card).
	Policy *negotiate.Policy
	// Auditor receives one negotiation.decided record per request.
	Auditor *negotiate.Auditor
	// Map is the interop map; nil means mapping.Builtin().
	Map *mapping.Map

	Capabilities Capabilities

	// JSONRPCURL is the public URL of the JSON-RPC interface, as clients
	// reach it. Card URLs come from here, never from the request's Host.
	JSONRPCURL string
	// HTTPJSONURL is the public base URL of the HTTP+JSON interface; empty
	// when that binding is not served.
	HTTPJSONURL string
	// AgentCardURL is the public URL of the card (a2a.agentCardUrl).
	AgentCardURL string

	Card CardConfig

	// Routed are the workflows this interface routes: one skill each on the
	// public card (OpenWOP interop map, a2a.card). SendMessage without a taskId starts one of
	// them; with a single routed workflow no selector is needed.
	Routed []interop.Workflow
	// SelectWorkflow picks the workflow for a new task when more than one
	// is a candidate: the routed workflows, or through a per-agent routing
	// value the agent's workflows the caller may start, in the agent's
	// order (the first is the agent's default). Nil means: the skill id
	// named in message.metadata.skillId, and through an agent the default
	// when the message names none.
	SelectWorkflow func(msg *wire.Message, candidates []string) (string, error)

	// Inventory and Routing enable per-agent cards (OpenWOP RFC 0202 §B, §C, §D.6, §D.9; interop.md §Per-agent cards). Both or
	// neither.
	Inventory interop.AgentInventory
	Routing   *isolation.RoutingKeys
	// ExtendedCard, when true, serves GetExtendedAgentCard for the host
	// card (the caller's own view). Per-agent cards are served whenever
	// Inventory and Routing are set.
	ExtendedCard bool

	// WorkflowTTL is how long a caller's workflows (input schemas, media
	// types), read with ListWorkflows to judge messages before a run
	// exists, are cached per authorization context; 0 means
	// DefaultWorkflowTTL, a negative value reads them for every message.
	// [Server.InvalidateWorkflows] drops them at once.
	WorkflowTTL time.Duration

	// BlockTimeout bounds how long a blocking SendMessage waits for the run
	// to reach a terminal or interrupted state; 0 means 30s.
	BlockTimeout time.Duration
	// MaxBodyBytes bounds request bodies; 0 means 4 MiB. A body is read
	// only once the caller is authenticated, into memory that grows with
	// the bytes that arrive, never with the length a client declares.
	MaxBodyBytes int64
	// BodyTimeout bounds how long a request body may take to arrive; 0
	// means DefaultBodyTimeout, a negative value no limit. A body still
	// arriving then is refused with HTTP 408 in the binding's shape. The
	// limit is a read deadline on the connection: it takes the place of
	// the http.Server's ReadTimeout while the body is read (a shorter
	// ReadTimeout stays the limit) and is lifted once it is, so a
	// response, however long, is never cut by it. A
	// ResponseWriter wrapped by middleware without an Unwrap method cannot
	// take the deadline; the body is then bounded in size only.
	BodyTimeout time.Duration
	// StreamWriteTimeout bounds each write of an event stream
	// (SendStreamingMessage, SubscribeToTask), a heartbeat included: a
	// client that stops reading is cut after it, and it replaces the
	// http.Server's WriteTimeout, which would otherwise end every stream
	// at that age. 0 means DefaultStreamWriteTimeout, a negative value no
	// limit.
	StreamWriteTimeout time.Duration
	// MaxBatch is the most requests one JSON-RPC batch may hold; 0 means
	// DefaultMaxBatch. A bigger batch is refused whole before any of it
	// runs.
	MaxBatch int
	// BatchConcurrency is how many requests of one JSON-RPC batch run at
	// once; 0 means DefaultBatchConcurrency.
	BatchConcurrency int
	// Push configures the push-config operations and push delivery
	// (OpenWOP RFC 0214; webhooks.md §Egress). It is required when Capabilities.PushNotifications
	// is on and refused when it is off. Events is required in it; Logger
	// and Now default to this Config's. The server renders push bodies
	// itself, so a push shows exactly what the task's stream would.
	Push *push.Options
	// Logger receives server faults (never secrets); nil discards.
	Logger *slog.Logger
	// Now stamps task timestamps; nil means time.Now.
	Now func() time.Time
}

// Defaults of the Config limits.
const (
	DefaultBodyTimeout        = 30 * time.Second
	DefaultStreamWriteTimeout = 30 * time.Second
	DefaultMaxBatch           = 32
	DefaultBatchConcurrency   = 4
)

// Server serves A2A 1.0 over a host's RunStore. Build it with [New]; mount
// its handlers with [Server.JSONRPC], [Server.HTTPJSON] and
// [Server.AgentCard].
type Server struct {
	cfg    Config
	m      *mapping.Map
	errs   *errorTable
	log    *slog.Logger
	now    func() time.Time
	routed map[string]interop.Workflow
	// workflows, inputModes and outputModes judge a message before a run
	// exists (workflows.go, content.go).
	workflows               *workflowCache
	inputModes, outputModes []mediaRange
	// push serves the push-config rows and delivers pushes; nil while
	// push is off.
	push *push.Service
	// drain ends when Drain is called (drain.go).
	drain      context.Context
	startDrain context.CancelFunc
}

// New validates cfg and returns a server.
func New(cfg Config) (*Server, error) {
	var problems []error
	if cfg.Store == nil {
		problems = append(problems, errors.New("Store is required"))
	}
	if cfg.Subjects == nil {
		problems = append(problems, errors.New("Subjects is required"))
	}
	if cfg.Policy == nil || cfg.Policy.Protocol() != negotiate.A2A {
		problems = append(problems, errors.New("Policy must be an A2A negotiate.Policy"))
	}
	if cfg.Auditor == nil {
		problems = append(problems, errors.New("Auditor is required"))
	}
	for name, u := range map[string]string{"JSONRPCURL": cfg.JSONRPCURL, "HTTPJSONURL": cfg.HTTPJSONURL, "AgentCardURL": cfg.AgentCardURL} {
		if u == "" && name != "JSONRPCURL" {
			continue
		}
		if p, err := url.Parse(u); err != nil || !p.IsAbs() || (p.Scheme != "https" && p.Scheme != "http") {
			problems = append(problems, fmt.Errorf("%s %q is not an absolute http(s) URL", name, u))
		}
	}
	if len(cfg.Routed) == 0 {
		problems = append(problems, errors.New("Routed must name at least one workflow"))
	}
	if (cfg.Inventory == nil) != (cfg.Routing == nil) {
		problems = append(problems, errors.New("Inventory and Routing go together"))
	}
	switch {
	case cfg.Capabilities.PushNotifications && cfg.Push == nil:
		problems = append(problems, errors.New("Push is required when Capabilities.PushNotifications is on"))
	case !cfg.Capabilities.PushNotifications && cfg.Push != nil:
		problems = append(problems, errors.New("Push is set but Capabilities.PushNotifications is off"))
	}
	routed := make(map[string]interop.Workflow, len(cfg.Routed))
	for _, w := range cfg.Routed {
		if w.ID == "" {
			problems = append(problems, errors.New("a routed workflow has no ID"))
		}
		if _, dup := routed[w.ID]; dup {
			problems = append(problems, fmt.Errorf("workflow %q routed twice", w.ID))
		}
		routed[w.ID] = w
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("a2a: invalid config: %w", errors.Join(problems...))
	}
	m := cfg.Map
	if m == nil {
		m = mapping.Builtin()
	}
	errs, err := newErrorTable(m)
	if err != nil {
		return nil, err
	}
	if cfg.BlockTimeout <= 0 {
		cfg.BlockTimeout = 30 * time.Second
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 4 << 20
	}
	cfg.BodyTimeout = orDefault(cfg.BodyTimeout, DefaultBodyTimeout)
	cfg.StreamWriteTimeout = orDefault(cfg.StreamWriteTimeout, DefaultStreamWriteTimeout)
	if cfg.MaxBatch <= 0 {
		cfg.MaxBatch = DefaultMaxBatch
	}
	if cfg.BatchConcurrency <= 0 {
		cfg.BatchConcurrency = DefaultBatchConcurrency
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	s := &Server{cfg: cfg, m: m, errs: errs, log: log, now: now, routed: routed}
	s.drain, s.startDrain = context.WithCancel(context.Background())
	s.initJudging()
	if cfg.Push != nil {
		opts := *cfg.Push
		if opts.Logger == nil {
			opts.Logger = log
		}
		if opts.Now == nil {
			opts.Now = now
		}
		if s.push, err = push.New(cfg.Store, push.ProjectorFunc(s.pushEvents), opts); err != nil {
			return nil, fmt.Errorf("a2a: invalid config: Push: %w", err)
		}
	}
	return s, nil
}

// orDefault reads a duration where 0 means def and a negative value
// means none (0 from then on).
func orDefault(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}

// Start starts push delivery, resuming what its stores hold; call it once
// before serving. Without push it does nothing.
func (s *Server) Start(ctx context.Context) error {
	if s.push == nil {
		return nil
	}
	return s.push.Start(ctx)
}

// Close stops push delivery: no more run events are followed, and queued
// pushes are attempted until ctx ends (what is left stays in the outbox).
// Call it after [Server.Drain] and after the HTTP server has drained.
// Without push it does nothing.
func (s *Server) Close(ctx context.Context) error {
	if s.push == nil {
		return nil
	}
	return s.push.Close(ctx)
}
