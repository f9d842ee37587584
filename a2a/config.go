package a2a

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/facets"
	"github.com/wopinterop/wopinterop/internal/interopmap"
	"github.com/wopinterop/wopinterop/internal/pushservice"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/isolation"
	"github.com/wopinterop/wopinterop/mapping"
	"github.com/wopinterop/wopinterop/negotiate"
	"github.com/wopinterop/wopinterop/push"
)

// Deps are what a [Server] cannot run without. Every field is required:
// [New] names each one missing.
type Deps struct {
	// Store holds the runs: an A2A Task is the host's run.
	Store interop.RunStore
	// Subjects authenticates every request; the Subject alone decides what
	// the caller may see (OpenWOP interop.md §Isolation).
	Subjects interop.SubjectResolver
	// Policy is the A2A version policy (negotiate.A2A); its offered
	// versions are the interfaces' protocolVersion values (OpenWOP interop
	// map, a2a.card).
	Policy *negotiate.Policy
	// Auditor receives one negotiation.decided record per request.
	Auditor *negotiate.Auditor
	// Map is the interop map whose a2a rows the server follows: the
	// operations' `requires` facets, the error table, the task states
	// (mapping.Builtin() is the published one).
	Map *mapping.Map
	// JSONRPCURL is the public URL of the JSON-RPC interface, the required
	// binding, as clients reach it. Card URLs come from the configuration,
	// never from the request's Host.
	JSONRPCURL string
	// Routed are the workflows this interface routes, at least one: one
	// skill each on the public card (OpenWOP interop map, a2a.card).
	// SendMessage without a taskId starts one of them.
	Routed []interop.Workflow
}

// Options are what a [Server] can run without. The zero Options serve the
// JSON-RPC binding and the public card, with no streaming, no push and the
// limits' defaults.
type Options struct {
	// Streaming serves SendStreamingMessage and, with DurableTasks,
	// SubscribeToTask (the a2a.streaming facet); off, they answer -32004.
	Streaming bool
	// DurableTasks serves returnImmediately and SubscribeToTask (the
	// a2a.durableTasks facet): task state outlives the request.
	DurableTasks bool
	// Push serves the four push-config operations and push delivery (the
	// a2a.pushNotifications facet; OpenWOP RFC 0214; webhooks.md §Egress).
	// Nil: push is off and those operations answer -32003. Events is
	// required in it; Logger and Now default to these Options'. The
	// server renders push bodies itself, so a push shows exactly what the
	// task's stream would.
	Push *push.Options

	// HTTPJSONURL is the public base URL of the HTTP+JSON interface; empty:
	// that binding is not served (not on the card).
	HTTPJSONURL string
	// AgentCardURL is the public URL of the card (a2a.agentCardUrl).
	AgentCardURL string
	// Card is what the public card says about the host beyond what the
	// server derives (interfaces, capabilities, skills).
	Card CardConfig
	// CardSigner, when set, signs every card served — the public card,
	// the extended card, per-agent cards — over exactly what is served
	// (A2A 1.0 §8.4): each card version is signed once and its signature
	// kept. Nil: cards are served unsigned.
	CardSigner CardSigner

	// Extensions are the A2A extensions the host implements: every card
	// lists them in capabilities.extensions, and a request that names one
	// in its A2A-Extensions service parameter activates it — the server
	// hands the activated ones to the host with the message
	// (interop.Message.ActivatedExtensions) and echoes them in the
	// response's A2A-Extensions header (A2A 1.0 §3.2.6; A2A extensions
	// §Extension Activation). Others a request names are ignored. URIs are
	// absolute, without commas or whitespace, each once; none may be
	// Required, which the server does not enforce. Empty: nothing is
	// declared and no request activates anything.
	Extensions []wire.AgentExtension

	// SelectWorkflow picks the workflow for a new task when more than one
	// is a candidate: the routed workflows, or through a per-agent routing
	// value the agent's workflows the caller may start, in the agent's
	// order (the first is the agent's default). Nil: the skill id named in
	// message.metadata.skillId, and through an agent the default when the
	// message names none.
	SelectWorkflow func(msg *wire.Message, candidates []string) (string, error)

	// Inventory and Routing serve per-agent cards (OpenWOP RFC 0202 §B,
	// §C, §D.6, §D.9; interop.md §Per-agent cards). Both or neither.
	Inventory interop.AgentInventory
	Routing   *isolation.RoutingKeys
	// ExtendedCard serves GetExtendedAgentCard for the host card (the
	// caller's own view). Per-agent cards are served whenever Inventory
	// and Routing are set.
	ExtendedCard bool

	// WorkflowTTL is how long a caller's workflows (input schemas, media
	// types), read with ListWorkflows to judge messages before a run
	// exists, are cached per authorization context. 0 means one minute,
	// a negative value reads them for every message.
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
	// means 30s, a negative value no limit. A body still
	// arriving then is refused with HTTP 408 in the binding's shape. The
	// limit is a read deadline on the connection: it takes the place of
	// the http.Server's ReadTimeout while the body is read (a shorter
	// ReadTimeout stays the limit) and is lifted once it is, so a
	// response, however long, is never cut by it. A ResponseWriter
	// wrapped by middleware without an Unwrap method cannot take the
	// deadline; the body is then bounded in size only.
	BodyTimeout time.Duration
	// StreamWriteTimeout bounds each write of an event stream
	// (SendStreamingMessage, SubscribeToTask), a heartbeat included: a
	// client that stops reading is cut after it, and it replaces the
	// http.Server's WriteTimeout, which would otherwise end every stream
	// at that age. 0 means 30s, a negative value no limit.
	StreamWriteTimeout time.Duration
	// MaxBatch is the most requests one JSON-RPC batch may hold; 0 means
	// 32. A bigger batch is refused whole before any of it
	// runs.
	MaxBatch int
	// BatchConcurrency is how many requests of one JSON-RPC batch run at
	// once; 0 means 4.
	BatchConcurrency int

	// Logger receives server faults (never secrets); nil discards.
	Logger *slog.Logger
	// Now stamps task timestamps; nil means time.Now.
	Now func() time.Time
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

// Defaults of the Options limits (defaultWorkflowTTL is in workflows.go).
const (
	defaultBlockTimeout       = 30 * time.Second
	defaultMaxBodyBytes       = 4 << 20
	defaultBodyTimeout        = 30 * time.Second
	defaultStreamWriteTimeout = 30 * time.Second
	defaultMaxBatch           = 32
	defaultBatchConcurrency   = 4
)

// config is what the server runs with: the Deps, and the Options with
// their defaults applied.
type config struct {
	Deps
	Options
}

// Server serves A2A 1.0 over a host's RunStore. Build it with [New]; mount
// its handlers with [Server.JSONRPC], [Server.HTTPJSON] and
// [Server.AgentCard].
type Server struct {
	cfg  config
	m    *interopmap.Map
	errs *errorTable
	log  *slog.Logger
	now  func() time.Time
	// served is what the server serves: the card's capabilities, the
	// facets that open the operation rows (gate) and [Server.Served] all
	// read it, so none of them can claim what another does not.
	served facets.ServedA2A
	// workflows, inputModes and outputModes judge a message before a run
	// exists (workflows.go, content.go).
	workflows               *workflowCache
	inputModes, outputModes []mediaRange
	// push serves the push-config rows and delivers pushes; nil while
	// push is off.
	push *pushservice.Service
	// cardSigs signs the cards served (cardsign.go); nil without
	// Options.CardSigner.
	cardSigs *cardSignatures
	// drain ends when Drain is called (drain.go).
	drain      context.Context
	startDrain context.CancelFunc
	// streams are the open streams' watches, which Drain ends.
	streams openStreams
	// heartbeat is how long a stream may idle before a comment
	// (sseHeartbeat; tests shorten it).
	heartbeat time.Duration
}

// New validates deps and opts and returns a server. Every problem is
// reported at once.
func New(deps Deps, opts Options) (*Server, error) {
	problems := append(deps.problems(), opts.problems()...)
	if len(problems) > 0 {
		return nil, fmt.Errorf("a2a: invalid config: %w", errors.Join(problems...))
	}
	errs, err := newErrorTable((*interopmap.Map)(deps.Map))
	if err != nil {
		return nil, err
	}
	cfg := config{Deps: deps, Options: opts.withDefaults()}
	s := &Server{cfg: cfg, m: (*interopmap.Map)(deps.Map), errs: errs, log: cfg.Logger, now: cfg.Now}
	s.served = opts.Served()
	s.cardSigs = newCardSignatures(cfg.CardSigner)
	s.drain, s.startDrain = context.WithCancel(context.Background())
	s.heartbeat = sseHeartbeat
	s.initJudging()
	if cfg.Push != nil {
		p := *cfg.Push
		if p.Logger == nil {
			p.Logger = s.log
		}
		if p.Now == nil {
			p.Now = s.now
		}
		if s.push, err = pushservice.New(cfg.Store, pushservice.ProjectorFunc(s.pushEvents), p); err != nil {
			return nil, fmt.Errorf("a2a: invalid config: Push: %w", err)
		}
	}
	return s, nil
}

// problems lists what is missing or wrong in d.
func (d *Deps) problems() []error {
	var problems []error
	required := func(name string, missing bool) {
		if missing {
			problems = append(problems, fmt.Errorf("%s is required", name))
		}
	}
	required("Store", d.Store == nil)
	required("Subjects", d.Subjects == nil)
	if d.Policy == nil || d.Policy.Protocol() != negotiate.A2A {
		problems = append(problems, errors.New("Policy must be an A2A negotiate.Policy"))
	}
	required("Auditor", d.Auditor == nil)
	required("Map", d.Map == nil)
	if !httpURL(d.JSONRPCURL) {
		problems = append(problems, fmt.Errorf("JSONRPCURL %q is not an absolute http(s) URL", d.JSONRPCURL))
	}
	if len(d.Routed) == 0 {
		problems = append(problems, errors.New("Routed must name at least one workflow"))
	}
	var seen []string
	for _, w := range d.Routed {
		switch {
		case w.ID == "":
			problems = append(problems, errors.New("a routed workflow has no ID"))
		case slices.Contains(seen, w.ID):
			problems = append(problems, fmt.Errorf("workflow %q routed twice", w.ID))
		}
		seen = append(seen, w.ID)
	}
	return problems
}

// problems lists what is wrong in o.
func (o *Options) problems() []error {
	var problems []error
	if o.HTTPJSONURL != "" && !httpURL(o.HTTPJSONURL) {
		problems = append(problems, fmt.Errorf("HTTPJSONURL %q is not an absolute http(s) URL", o.HTTPJSONURL))
	}
	if o.AgentCardURL != "" && !httpURL(o.AgentCardURL) {
		problems = append(problems, fmt.Errorf("AgentCardURL %q is not an absolute http(s) URL", o.AgentCardURL))
	}
	if (o.Inventory == nil) != (o.Routing == nil) {
		problems = append(problems, errors.New("Inventory and Routing go together"))
	}
	for i, e := range o.Extensions {
		p, err := url.Parse(e.URI)
		switch {
		case err != nil || !p.IsAbs() || strings.ContainsAny(e.URI, ", \t"):
			// A2A-Extensions is a comma-separated list (A2A 1.0 §3.2.6):
			// a URI holding a comma could never be activated.
			problems = append(problems, fmt.Errorf("Extensions[%d].URI %q is not an absolute URI without commas or whitespace", i, e.URI))
		case slices.ContainsFunc(o.Extensions[:i], func(x wire.AgentExtension) bool { return x.URI == e.URI }):
			problems = append(problems, fmt.Errorf("Extensions[%d].URI %q is declared twice", i, e.URI))
		}
		if e.Required {
			// A required extension obliges the agent to refuse every
			// request that does not activate it (A2A 1.0 §3.3.4), which
			// this server does not do.
			problems = append(problems, fmt.Errorf("Extensions[%d] is Required, which the server does not enforce", i))
		}
	}
	return problems
}

// httpURL reports whether u is an absolute http(s) URL.
func httpURL(u string) bool {
	p, err := url.Parse(u)
	return err == nil && p.IsAbs() && (p.Scheme == "https" || p.Scheme == "http")
}

// withDefaults is o with every zero limit, Logger and Now replaced by its
// default.
func (o Options) withDefaults() Options {
	if o.BlockTimeout <= 0 {
		o.BlockTimeout = defaultBlockTimeout
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = defaultMaxBodyBytes
	}
	o.BodyTimeout = orDefault(o.BodyTimeout, defaultBodyTimeout)
	o.StreamWriteTimeout = orDefault(o.StreamWriteTimeout, defaultStreamWriteTimeout)
	if o.MaxBatch <= 0 {
		o.MaxBatch = defaultMaxBatch
	}
	if o.BatchConcurrency <= 0 {
		o.BatchConcurrency = defaultBatchConcurrency
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	o.Extensions = slices.Clone(o.Extensions)
	return o
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

// Served reports what a server built with these options serves, for the
// facet check of the advertisement (a host advertises no a2a facet the
// server does not back): the A2A version its bindings speak, its bindings,
// and the facets the options turn on. Per-agent cards are served with
// Inventory and Routing, the extended card with them or ExtendedCard, push
// with Push. A host declares its a2a record from it before [New], whose
// Deps.Policy comes from that record; [Server.Served] is the same answer.
func (o *Options) Served() facets.ServedA2A {
	return facets.ServedA2A{
		Versions:          []string{facets.A2AVersion},
		JSONRPC:           true,
		HTTPJSON:          o.HTTPJSONURL != "",
		Streaming:         o.Streaming,
		PushNotifications: o.Push != nil,
		DurableTasks:      o.DurableTasks,
		ExtendedCard:      o.ExtendedCard || o.Inventory != nil,
		AgentCards:        o.Inventory != nil,
	}
}

// Served reports what the server serves: [Options.Served] of the options
// it was built with.
func (s *Server) Served() facets.ServedA2A {
	served := s.served
	served.Versions = slices.Clone(served.Versions)
	return served
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
