package wopinterop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/a2a"
	"github.com/wopinterop/wopinterop/facets"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/isolation"
	"github.com/wopinterop/wopinterop/mapping"
	"github.com/wopinterop/wopinterop/mcp"
	"github.com/wopinterop/wopinterop/mcp/sealed"
	"github.com/wopinterop/wopinterop/negotiate"
	"github.com/wopinterop/wopinterop/push"
)

// Default mount paths of the A2A surface.
const (
	DefaultA2APath  = "/a2a"
	DefaultCardPath = "/.well-known/agent-card.json"
	// HTTPJSONSuffix is appended to A2AConfig.Path for the HTTP+JSON
	// binding: "/a2a" serves JSON-RPC and "/a2a/rest" HTTP+JSON.
	HTTPJSONSuffix = "/rest"
)

// Config is everything a host hands the library. Store, Subjects, Events and
// BaseURL are required; each protocol surface is on when its section is set.
type Config struct {
	Store    interop.RunStore
	Subjects interop.SubjectResolver
	// Events receives negotiation.decided records and, when A2A.Push is
	// set, push dead letters (host events of type a2a.push-dead-lettered).
	Events interop.EventSink
	// Inventory enables per-agent A2A cards (A2A.Facet.AgentCards);
	// optional otherwise.
	Inventory interop.AgentInventory

	// BaseURL is the host's public origin ("https://host.example"). Every
	// URL the library publishes (cards, interfaces) is built from it, never
	// from a request's Host header.
	BaseURL string
	// HostVersion identifies the host build. Per-agent routing values are
	// stable per agent and host version, and the public card's version
	// defaults to it.
	HostVersion string
	// RoutingSecret (≥ 32 bytes of high-entropy configuration) derives
	// per-agent routing values; required when A2A.Facet.AgentCards is set.
	// Every replica must share it: a value minted by one replica resolves
	// on all of them, and a changed secret changes every value.
	RoutingSecret []byte

	// A2A mounts the A2A 1.0 surface when non-nil.
	A2A *A2AConfig
	// MCP mounts the MCP 2026-07-28 server when non-nil.
	MCP *MCPConfig
	// HostEvents is the host's own hostEvents record (its own host-event
	// types, status, witness); nil lets the library write a default one.
	// Either way {negotiation.decided, durable} is listed whenever an
	// inbound surface is advertised (OpenWOP RFC 0242 §B.3).
	HostEvents *facets.HostEvents
	// Agents is the host's agents discovery record: its agent-manifest
	// runtime, whose inventory is Inventory (GET /agents). It is required
	// with A2A.Facet.AgentCards, with ManifestRuntime set (an object, {} at
	// least), because per-agent cards are published from that inventory
	// (OpenWOP interop §Per-agent cards). Nil advertises no agents family.
	// Status and Since default like the other records, Witness to
	// witnessable-gated.
	Agents *facets.Agents

	// Logger receives faults (never secrets); nil discards.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now. It stamps records and tasks and
	// is the "today" against which A2A.Facet.RefreshedAt is checked.
	Now func() time.Time
	// SynchronousAudit makes a failing EventSink fail the request instead of
	// being retried in the background, where a record the sink never takes
	// is dropped and counted (see negotiate.AuditorOptions, AuditStats).
	SynchronousAudit bool
}

// A2AConfig configures the A2A surface.
type A2AConfig struct {
	// Path is the mount prefix of the interfaces (default "/a2a"): JSON-RPC
	// at Path, HTTP+JSON under Path+"/rest" when HTTPJSON is set.
	Path string
	// CardPath is where the public card is served (default
	// "/.well-known/agent-card.json").
	CardPath string
	// Facet is the a2a facet the host advertises. Versions, preferred and
	// floor default to A2A 1.0 and Profiles to ["a2a-1.0"]; RefreshedAt is
	// required (the day the host last re-checked upstream, at most 90 days
	// ago). AgentCardURL is filled in from BaseURL and CardPath. Streaming,
	// DurableTasks and AgentCards are claims the library backs;
	// PushNotifications is backed when Push is set and refused otherwise.
	Facet facets.A2A
	// Push serves the push-config operations and push delivery (OpenWOP
	// RFC 0214) when Facet.PushNotifications is claimed; the two go
	// together. Events defaults to Config.Events, Logger and Now to
	// Config's; the Guard decides which destinations are reachable (https
	// to public addresses, plus an exact-origin allowlist for local
	// receivers). The hostEvents record then lists
	// {a2a.push-dead-lettered, durable}.
	Push *push.Options
	// AllowDowngrade lets authenticated peers use an offered version between
	// the floor and preferred.
	AllowDowngrade bool
	// HTTPJSON also serves the optional HTTP+JSON binding.
	HTTPJSON bool
	// ExtendedCard serves GetExtendedAgentCard for the host card (the
	// caller's own view of it). Per-agent cards are served whenever
	// Facet.AgentCards is set.
	ExtendedCard bool
	// Card describes the host on its public card. Name and Description are
	// required; Version defaults to Config.HostVersion. Its security
	// schemes must describe exactly what Config.Subjects enforces
	// (OpenWOP interop map, a2a.card).
	Card a2a.CardConfig
	// Routed are the workflows the interfaces route: one skill each on the
	// public card (OpenWOP interop map, a2a.card). At least one.
	Routed []interop.Workflow
	// SelectWorkflow picks the workflow of a new task when more than one
	// is routed; nil means message.metadata.skillId names it.
	SelectWorkflow func(msg *wire.Message, candidates []string) (string, error)
	// BlockTimeout bounds a blocking SendMessage (default 30s).
	BlockTimeout time.Duration
	// WorkflowTTL is how long a caller's workflows (input schemas and
	// media types, which judge a message before any run exists) are cached
	// per authorization context (default one minute; negative:
	// read for every message). Host.InvalidateWorkflows drops them.
	WorkflowTTL time.Duration
	// BodyTimeout bounds how long a request body may take to arrive
	// (default 30s; negative: no limit); a slower one
	// is refused with HTTP 408. A shorter http.Server.ReadTimeout stays
	// the limit.
	BodyTimeout time.Duration
	// StreamWriteTimeout bounds each write of an event stream (default
	// 30s; negative: no limit): a client that
	// stops reading is cut after it, and it replaces the http.Server's
	// WriteTimeout, which would end every stream at that age.
	StreamWriteTimeout time.Duration
	// MaxBatch and BatchConcurrency bound a JSON-RPC batch: at most
	// MaxBatch requests (default 32; a bigger batch is
	// refused whole), run BatchConcurrency at a time (default
	// 4).
	MaxBatch         int
	BatchConcurrency int
}

// ErrInvalidConfig is wrapped by every [ConfigError].
var ErrInvalidConfig = errors.New("wopinterop: invalid config")

// ConfigError is one problem with one Config field. [New] joins one per
// problem (errors.Join), so a host sees everything wrong at once; a facet
// claim the configuration does not back is a *facets.FieldError in the
// same join.
type ConfigError struct {
	// Field is the Go path of the field at fault, e.g. "A2A.Routed".
	Field string
	// Reason says what is wrong with it.
	Reason string
}

func (e *ConfigError) Error() string { return "wopinterop: " + e.Field + " " + e.Reason }

// Unwrap makes errors.Is(err, ErrInvalidConfig) true.
func (e *ConfigError) Unwrap() error { return ErrInvalidConfig }

// DefaultMCPPath is where the MCP mount goes unless MCPConfig.Path says
// otherwise.
const DefaultMCPPath = "/mcp"

// MCPConfig configures the MCP surface.
type MCPConfig struct {
	// Path is the mount path (default "/mcp"); it is also the
	// mcp.serverUrls[0] the host advertises.
	Path string
	// Facet is the mcp facet the host advertises. Revisions, preferred and
	// floor default to 2026-07-28, the features to the ones the profile
	// requires (plus "extensions" when Server.Tasks is on); RefreshedAt is
	// required. ServerURLs and ServerMount are filled in from Path.
	Facet facets.MCP
	// AllowDowngrade lets authenticated peers use an offered revision
	// between the floor and preferred.
	AllowDowngrade bool
	// SealKey (≥ 32 bytes) seals MRTR requestState values; PreviousSealKeys
	// still open values sealed before a rotation. Ledger makes their
	// single use hold across replicas (nil: in-memory, one replica).
	SealKey          []byte
	PreviousSealKeys [][]byte
	Ledger           sealed.Ledger
	// Server carries the mount's own options (ServerInfo, AllowedOrigins,
	// AllowAnonymous, Tasks, timeouts, optional prompts/resources/native
	// tools …); its dependencies come from Config. The rounds ceiling is
	// the advertised Facet.MRTR.MaxRounds: Server.MaxRounds may be left
	// zero and, when set, must equal it.
	Server mcp.Options
}

// Host is the composed library: the advertisement, the audit trail and the
// mounted surfaces. Build it with [New], call [Host.Mount], and Close it on
// shutdown, before the store its surfaces read.
type Host struct {
	cfg      Config
	ad       *facets.Advertisement
	auditor  *negotiate.Auditor
	routing  *isolation.RoutingKeys
	a2a      *a2a.Server
	a2aPath  string
	cardPath string
	mcp      *mcp.Server
	mcpPath  string
}

// New validates cfg, declares the facets it can back, and builds the
// surfaces. Every problem is reported at once, each naming its field: a
// [*ConfigError] for a Config field, a [*facets.FieldError] for a facet
// claim ("a2a.pushNotifications is claimed but not served"). A host never
// starts half-working.
func New(cfg Config) (*Host, error) {
	var problems []error
	bad := func(field, format string, args ...any) {
		problems = append(problems, &ConfigError{Field: field, Reason: fmt.Sprintf(format, args...)})
	}
	if cfg.Store == nil {
		bad("Store", "is required")
	}
	if cfg.Subjects == nil {
		bad("Subjects", "is required")
	}
	if cfg.Events == nil {
		bad("Events", "is required")
	}
	if base, err := url.Parse(cfg.BaseURL); err != nil || (base.Scheme != "http" && base.Scheme != "https") ||
		base.Host == "" || base.User != nil || (base.Path != "" && base.Path != "/") || base.RawQuery != "" || base.Fragment != "" {
		bad("BaseURL", "%q must be an absolute http(s) origin such as https://host.example", cfg.BaseURL)
	}

	h := &Host{cfg: cfg}
	origin := strings.TrimSuffix(cfg.BaseURL, "/")
	decl := facets.Declaration{HostEvents: cfg.HostEvents.Clone(), Agents: cfg.Agents.Clone()}
	served := facets.Served{}
	if c := cfg.A2A; c != nil {
		var ok bool
		if h.a2aPath, ok = mountPath(c.Path, DefaultA2APath); !ok {
			bad("A2A.Path", "%q must be an absolute path other than / without wildcards", c.Path)
		}
		if h.cardPath, ok = mountPath(c.CardPath, DefaultCardPath); !ok {
			bad("A2A.CardPath", "%q must be an absolute path other than / without wildcards", c.CardPath)
		}
		if h.cardPath == h.a2aPath || (c.HTTPJSON && strings.HasPrefix(h.cardPath+"/", h.a2aPath+HTTPJSONSuffix+"/")) {
			bad("A2A.CardPath", "%q overlaps the interfaces under %q", h.cardPath, h.a2aPath)
		}
		if len(c.Routed) == 0 {
			bad("A2A.Routed", "must name at least one workflow")
		}
		if c.Card.Name == "" {
			bad("A2A.Card.Name", "is required (AgentCard.name)")
		}
		if c.Card.Description == "" {
			bad("A2A.Card.Description", "is required (AgentCard.description)")
		}
		if c.Card.Version == "" && cfg.HostVersion == "" {
			bad("A2A.Card.Version", "is required when HostVersion is empty (AgentCard.version)")
		}
		f := c.Facet
		f.AgentCardURL = origin + h.cardPath
		if len(f.Profiles) == 0 {
			f.Profiles = []string{facets.ProfileA2A10}
		}
		if f.AgentCards {
			switch {
			case cfg.Agents == nil:
				bad("Agents", "is required by A2A.Facet.AgentCards: advertise the agents family with ManifestRuntime")
			case cfg.Agents.ManifestRuntime == nil:
				bad("Agents.ManifestRuntime", "is required by A2A.Facet.AgentCards (agents.manifestRuntime, an object)")
			}
			if cfg.Inventory == nil {
				bad("Inventory", "is required by A2A.Facet.AgentCards (per-agent cards come from the agent inventory)")
			}
			keys, err := isolation.NewRoutingKeys(cfg.RoutingSecret, cfg.HostVersion)
			if err != nil {
				bad("RoutingSecret", "is required by A2A.Facet.AgentCards: %d bytes given, at least %d needed", len(cfg.RoutingSecret), isolation.MinRoutingSecretLen)
			}
			h.routing = keys
		}
		decl.A2A = &f
		if c.Push != nil && !f.PushNotifications {
			bad("A2A.Push", "is set but A2A.Facet.PushNotifications is not claimed")
		}
		if c.Push != nil && f.PushNotifications {
			// Dead letters are host events of this type; a host never
			// emits a type it does not advertise (OpenWOP events.md §Host events).
			if decl.HostEvents == nil {
				decl.HostEvents = &facets.HostEvents{}
			}
			if !slices.ContainsFunc(decl.HostEvents.Types, func(t facets.HostEventType) bool { return t.Type == push.DeadLetterEventType }) {
				decl.HostEvents.Types = append(decl.HostEvents.Types, facets.HostEventType{Type: push.DeadLetterEventType, Delivery: facets.Durable})
			}
		}
		agentCards := f.AgentCards && cfg.Inventory != nil && h.routing != nil
		served.A2A = facets.ServedA2A{
			Versions: []string{facets.A2AVersion},
			JSONRPC:  true,
			HTTPJSON: c.HTTPJSON,
			// The server streams from the run's watch and keeps no task
			// state of its own, so both hold whatever the store is.
			Streaming:    true,
			DurableTasks: true,
			ExtendedCard: c.ExtendedCard || agentCards,
			AgentCards:   agentCards,
			// Push configs and delivery are the push package's, wired
			// below whenever Push is given.
			PushNotifications: c.Push != nil,
		}
	}
	if c := cfg.MCP; c != nil {
		var ok bool
		if h.mcpPath, ok = mountPath(c.Path, DefaultMCPPath); !ok {
			bad("MCP.Path", "%q must be an absolute path other than / without wildcards", c.Path)
		}
		if cfg.A2A != nil && (h.mcpPath == h.a2aPath || h.mcpPath == h.cardPath ||
			strings.HasPrefix(h.mcpPath+"/", h.a2aPath+"/") || strings.HasPrefix(h.a2aPath+"/", h.mcpPath+"/")) {
			bad("MCP.Path", "%q overlaps the A2A surface", h.mcpPath)
		}
		if len(c.SealKey) < sealed.MinKeyLen {
			bad("MCP.SealKey", "%d bytes given, at least %d needed to seal requestState", len(c.SealKey), sealed.MinKeyLen)
		}
		f := c.Facet
		f.ServerURLs = []string{origin + h.mcpPath}
		f.ServerMount = &facets.ServerMount{Transports: []string{facets.TransportStreamableHTTP}}
		if len(f.Profiles) == 0 {
			f.Profiles = []string{facets.ProfileMCP2026}
		}
		if len(f.Features) == 0 {
			f.Features = []string{"server-discover", "mrtr", "cacheable-lists"}
			if c.Server.Tasks {
				f.Features = append(f.Features, "extensions")
			}
		}
		if f.MRTR == nil {
			f.MRTR = &facets.MRTR{MaxRounds: mcp.DefaultMaxRounds}
		}
		if c.Server.MaxRounds != 0 && c.Server.MaxRounds != f.MRTR.MaxRounds {
			bad("MCP.Server.MaxRounds", "%d disagrees with the advertised mcp.mrtr.maxRounds %d (MCP.Facet.MRTR)", c.Server.MaxRounds, f.MRTR.MaxRounds)
		}
		decl.MCP = &f
		ms := c.Server.Served()
		served.MCP = facets.ServedMCP{
			Revisions:      ms.Revisions,
			Mount:          true,
			Transports:     ms.Transports,
			Discover:       ms.Discover,
			MRTR:           ms.MRTR,
			CacheableLists: ms.CacheableLists,
			Extensions:     ms.Extensions,
		}
	}
	if len(problems) > 0 {
		return nil, errors.Join(problems...)
	}

	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	v, err := facets.NewValidator(facets.Options{})
	if err != nil {
		return nil, fmt.Errorf("wopinterop: %w", err)
	}
	if h.ad, err = v.Declare(now(), decl, served); err != nil {
		return nil, err // joined *facets.FieldError values, each naming its field
	}

	h.auditor = negotiate.NewAuditor(cfg.Events, negotiate.AuditorOptions{Logger: cfg.Logger, Synchronous: cfg.SynchronousAudit})
	if c := cfg.A2A; c != nil {
		f := h.ad.A2A()
		policy, err := f.Policy(c.AllowDowngrade, cfg.Now)
		if err != nil {
			return nil, fmt.Errorf("wopinterop: a2a policy: %w", err)
		}
		card := c.Card
		if card.Version == "" {
			card.Version = cfg.HostVersion
		}
		deps := a2a.Deps{
			Store: cfg.Store, Subjects: cfg.Subjects, Policy: policy, Auditor: h.auditor, Map: mapping.Builtin(),
			JSONRPCURL: origin + h.a2aPath, Routed: c.Routed,
		}
		ac := a2a.Options{
			Streaming:      f.Streaming,
			DurableTasks:   f.DurableTasks,
			AgentCardURL:   f.AgentCardURL,
			Card:           card,
			SelectWorkflow: c.SelectWorkflow,
			ExtendedCard:   c.ExtendedCard,
			BlockTimeout:   c.BlockTimeout,
			WorkflowTTL:    c.WorkflowTTL,
			Logger:         cfg.Logger,
			Now:            cfg.Now,
		}
		ac.BodyTimeout, ac.StreamWriteTimeout = c.BodyTimeout, c.StreamWriteTimeout
		ac.MaxBatch, ac.BatchConcurrency = c.MaxBatch, c.BatchConcurrency
		if c.HTTPJSON {
			ac.HTTPJSONURL = origin + h.a2aPath + HTTPJSONSuffix
		}
		if f.AgentCards {
			ac.Inventory, ac.Routing = cfg.Inventory, h.routing
		}
		if c.Push != nil && f.PushNotifications {
			opts := *c.Push
			if opts.Events == nil {
				opts.Events = cfg.Events
			}
			ac.Push = &opts
		}
		if h.a2a, err = a2a.New(deps, ac); err != nil {
			return nil, fmt.Errorf("wopinterop: %w", err)
		}
		if err := h.a2a.Start(context.Background()); err != nil {
			return nil, fmt.Errorf("wopinterop: a2a push delivery: %w", err)
		}
	}
	if c := cfg.MCP; c != nil {
		f := h.ad.MCP()
		policy, err := f.Policy(c.AllowDowngrade, cfg.Now)
		if err != nil {
			return nil, fmt.Errorf("wopinterop: mcp policy: %w", err)
		}
		sealer, err := sealed.NewSealer(sealed.Config{Key: c.SealKey, PreviousKeys: c.PreviousSealKeys, Ledger: c.Ledger, Now: cfg.Now})
		if err != nil {
			return nil, fmt.Errorf("wopinterop: mcp requestState sealer: %w", err)
		}
		mc := c.Server
		mc.MaxRounds = f.MRTR.MaxRounds
		if mc.Logger == nil {
			mc.Logger = cfg.Logger
		}
		if mc.Now == nil {
			mc.Now = cfg.Now
		}
		deps := mcp.Deps{Store: cfg.Store, Subjects: cfg.Subjects, Policy: policy, Auditor: h.auditor, Sealer: sealer}
		if h.mcp, err = mcp.New(deps, mc); err != nil {
			return nil, fmt.Errorf("wopinterop: %w", err)
		}
	}
	h.auditor.Start()
	return h, nil
}

// mountPath cleans a configured mount path: "" is def, the result is
// absolute, clean, not "/" (which would swallow the host's own routes), and
// free of the characters ServeMux patterns give meaning to.
func mountPath(p, def string) (string, bool) {
	if p == "" {
		return def, true
	}
	if !strings.HasPrefix(p, "/") || strings.ContainsAny(p, "{}% \t\r\n?#") {
		return p, false
	}
	p = path.Clean(p)
	return p, p != "/"
}

// Mount registers every configured surface on mux: the public agent card
// at A2A.CardPath, the JSON-RPC interface at A2A.Path and, with HTTPJSON,
// the HTTP+JSON interface at A2A.Path+"/rest" and below. Each pattern is
// method-less, so a wrong verb is answered by the surface in its binding's
// shape rather than by the mux. Like any ServeMux registration it panics
// when a pattern is already taken; mount once per mux.
func (h *Host) Mount(mux *http.ServeMux) {
	if h.mcp != nil {
		mux.Handle(h.mcpPath, h.mcp.Handler())
	}
	if h.a2a == nil {
		return
	}
	mux.Handle(h.cardPath, h.a2a.AgentCard())
	mux.Handle(h.a2aPath, h.a2a.JSONRPC())
	if h.cfg.A2A.HTTPJSON {
		prefix := h.a2aPath + HTTPJSONSuffix
		rest := http.StripPrefix(prefix, h.a2a.HTTPJSON())
		// The bare prefix too: otherwise the mux would answer it with a
		// redirect to prefix+"/", which is no A2A shape (OpenWOP RFC 0211 §C).
		mux.Handle(prefix, rest)
		mux.Handle(prefix+"/", rest)
	}
}

// Records returns the v2 discovery records the host embeds in its
// GET /.well-known/openwop document: "a2a" when A2A is configured, "mcp"
// when MCP is, "agents" when Config.Agents is set, and "hostEvents"
// listing {negotiation.decided, durable} whenever an inbound surface is
// (OpenWOP interop.md §The facets; RFC 0242 §B.3). The map is the caller's copy.
func (h *Host) Records() map[string]json.RawMessage { return h.ad.Records() }

// Advertisement is the validated facet declaration.
func (h *Host) Advertisement() *facets.Advertisement { return h.ad }

// A2ATenant is the a2aTenant routing value a host puts on the GET /agents
// entry of agent a: set only with per-agent cards on and for an agent
// with at least one routed workflow (OpenWOP RFC 0202 §B). The value grants nothing;
// it is resolved only among the caller's own agents, after authentication.
func (h *Host) A2ATenant(a interop.Agent) (string, bool) {
	if h.routing == nil {
		return "", false
	}
	return h.routing.ForAgent(a)
}

// MCPServer is the mounted MCP server, or nil without an MCP section.
func (h *Host) MCPServer() *mcp.Server { return h.mcp }

// A2AServer is the mounted A2A server, or nil without an A2A section, for
// a host that wants to mount its handlers itself.
func (h *Host) A2AServer() *a2a.Server { return h.a2a }

// InvalidateWorkflows tells the surfaces that tenant's workflows changed
// (added, removed, a new input schema or media types): the A2A surface's
// cached workflows and the MCP tool lists of that tenant are dropped at
// once instead of when their TTLs run out. An empty tenant drops every
// tenant's.
func (h *Host) InvalidateWorkflows(tenant string) {
	if h.a2a != nil {
		h.a2a.InvalidateWorkflows(tenant)
	}
	if h.mcp != nil {
		h.mcp.InvalidateTools(tenant)
	}
}

// AuditStats reports what the audit trail did with the negotiation.decided
// records handed to it: delivered, retried, and dropped because the
// EventSink kept failing or the queue was full. Export Dropped as a metric
// and alert on it; it stays zero with SynchronousAudit.
func (h *Host) AuditStats() negotiate.AuditStats { return h.auditor.Stats() }

// Drain starts a graceful shutdown of the mounted surfaces: every A2A or
// MCP request still waiting on a run answers now in its protocol's shape
// (an A2A SendMessage with the Task as it is, an MCP tools/call with a
// CreateTaskResult when it declared the Tasks extension, else a -32603
// error after cancelling the run it owned), streams end, and requests
// arriving afterwards are refused with HTTP 503 in the protocol's shape.
// Call it when shutdown begins — from http.Server.RegisterOnShutdown —
// and keep the requests' contexts the clients' until then: a host that
// cancels them at shutdown makes every in-flight MCP call look like a
// client that went away. Drain is idempotent and safe for concurrent use;
// Close still follows once the HTTP server has drained.
func (h *Host) Drain() {
	if h.a2a != nil {
		h.a2a.Drain()
	}
	if h.mcp != nil {
		h.mcp.Drain()
	}
}

// Close stops push delivery (draining the queued pushes), delivers the
// audit records still queued and stops the auditor, or returns ctx.Err()
// when ctx ends first. Call it after the HTTP server has drained and
// before closing the store and event sink. It is idempotent.
func (h *Host) Close(ctx context.Context) error {
	var errs []error
	if h.mcp != nil {
		// Ends listen streams and waits for the mount's background work.
		errs = append(errs, h.mcp.Close(ctx))
	}
	if h.a2a != nil {
		// Push delivery first: its dead letters still reach the sink.
		errs = append(errs, h.a2a.Close(ctx))
	}
	errs = append(errs, h.auditor.Close(ctx))
	return errors.Join(errs...)
}
