package wopinterop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/wopinterop/wopinterop/a2a"
	"github.com/wopinterop/wopinterop/facets"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/isolation"
	"github.com/wopinterop/wopinterop/mcp"
	"github.com/wopinterop/wopinterop/negotiate"
)

// Config is everything a host hands the library. Store, Subjects, Events and
// BaseURL are required; each protocol surface is on when its section is set.
type Config struct {
	Store    interop.RunStore
	Subjects interop.SubjectResolver
	// Events receives negotiation.decided records and, when A2A.Push is
	// set, push dead letters (host events of type a2a.push-dead-lettered).
	Events interop.EventSink
	// Inventory serves per-agent A2A cards (A2A.AgentCards); optional
	// otherwise.
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
	// per-agent routing values; required with A2A.AgentCards.
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
	// with A2A.AgentCards, with ManifestRuntime set (an object, {} at
	// least), because per-agent cards are published from that inventory
	// (OpenWOP interop §Per-agent cards). Nil advertises no agents family.
	// Status and Since default like the other records, Witness to
	// witnessable-gated.
	Agents *facets.Agents

	// Logger receives faults (never secrets); nil discards.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now. It stamps records and tasks and
	// is the "today" against which each Record.RefreshedAt is checked.
	Now func() time.Time
	// SynchronousAudit makes a failing EventSink fail the request instead of
	// being retried in the background, where a record the sink never takes
	// is dropped and counted (see negotiate.AuditorOptions, AuditStats).
	SynchronousAudit bool
}

// Record is what a host itself decides in the a2a or mcp discovery record
// it advertises (OpenWOP interop.md §The facets): the family's lifecycle,
// the versions it offers and the day it last re-checked them upstream.
// The rest of the record — the capability facets, agentCardUrl,
// serverUrls, serverMount, features, mrtr.maxRounds — [New] writes from
// what the section mounts, so the record claims exactly what is served.
type Record struct {
	// Status, Since, Until and Witness are the family's lifecycle; empty
	// Status, Since and Witness are stable, "2.0" and seam-gated.
	Status  facets.Status
	Since   string
	Until   string
	Witness facets.Witness
	// Versions are the A2A versions ("1.0") or MCP revisions
	// ("2026-07-28") offered, Preferred is the one used when a peer names
	// none and Minimum the floor (minimumVersion, or minimumRevision for
	// MCP). Empty: the one version the surface speaks, for all three.
	Versions  []string
	Preferred string
	Minimum   string
	// RefreshedAt is required: the day the host last re-checked Versions
	// against upstream. The record goes stale RefreshWindow later (zero:
	// 90 days, the most allowed; OpenWOP interop.md §The refresh SLA), and
	// New refuses a stale one.
	RefreshedAt   facets.Date
	RefreshWindow time.Duration
	// Profiles are the conformance profiles claimed; empty: the surface's
	// own ("a2a-1.0", "mcp-2026-07-28").
	Profiles []string
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

// problems collects ConfigErrors, so New reports every one at once.
type problems []error

// add records that field is wrong, the reason formatted as by fmt.Sprintf.
func (p *problems) add(field, format string, args ...any) {
	*p = append(*p, &ConfigError{Field: field, Reason: fmt.Sprintf(format, args...)})
}

// Host is the composed library: the advertisement, the audit trail and the
// surfaces. Build it with [New], mount [Host.Routes] (or call
// [Host.Mount]), and Close it on shutdown, before the store its surfaces
// read.
type Host struct {
	cfg     Config
	ad      *facets.Advertisement
	auditor *negotiate.Auditor
	routing *isolation.RoutingKeys
	a2a     *a2a.Server
	mcp     *mcpSurface
	routes  []Route

	// mu guards more, the servers NewMCP built, and the lifecycle flags
	// that decide how a later one starts.
	mu              sync.Mutex
	more            []*mcp.Server
	morePaths       []string
	drained, closed bool
}

// New validates cfg, declares the facets it can back, and builds the
// surfaces. Every problem is reported at once, each naming its field: a
// [*ConfigError] for a Config field, a [*facets.FieldError] for what the
// advertisement may not say ("a2a.refreshedAt … older than 90 days").
// What the surfaces' own packages refuse in their options (a2a.New,
// mcp.New: a workflow routed twice, an MCP ServerInfo without a name)
// follows once the rest is valid, as a *ConfigError naming the section. A
// host never starts half-working.
//
// Each surface reports what it serves (a2a.Options.Served,
// mcp.Options.Served): New declares the records from that, then derives
// each surface's version policy from its validated record, then builds
// the surface from the very options it asked.
func New(cfg Config) (*Host, error) {
	var bad problems
	checkRequired(&cfg, &bad)
	origin := strings.TrimSuffix(cfg.BaseURL, "/")
	decl := facets.Declaration{HostEvents: cfg.HostEvents.Clone(), Agents: cfg.Agents.Clone()}
	var served facets.Served
	var a2aSide *a2aPlan
	var mcpSide *mcpPlan
	if cfg.A2A != nil {
		a2aSide = planA2A(&cfg, origin, &bad)
		served.A2A = a2aSide.opts.Served()
		decl.A2A = a2aSide.record(served.A2A)
		decl.HostEvents = a2aSide.hostEvents(decl.HostEvents)
	}
	if cfg.MCP != nil {
		mcpSide = planMCP(&cfg, origin, a2aSide, &bad)
		served.MCP = mcpSide.served()
		decl.MCP = mcpSide.record(served.MCP)
	}
	if len(bad) > 0 {
		return nil, errors.Join(bad...)
	}

	ad, err := declare(cfg.Now, decl, served)
	if err != nil {
		return nil, err
	}
	h := &Host{cfg: cfg, ad: ad}
	h.auditor = negotiate.NewAuditor(cfg.Events, negotiate.AuditorOptions{Logger: cfg.Logger, Synchronous: cfg.SynchronousAudit})
	if a2aSide != nil {
		if h.a2a, err = a2aSide.build(&cfg, ad.A2A(), h.auditor); err != nil {
			return nil, err
		}
		h.routing = a2aSide.routing
		h.routes = a2aSide.routes(h.a2a)
	}
	if mcpSide != nil {
		if h.mcp, err = mcpSide.build(&cfg, ad.MCP(), h.auditor); err != nil {
			return nil, err
		}
		h.routes = append(h.routes, Route{Pattern: mcpSide.path, Handler: h.mcp.srv.Handler()})
	}
	// Nothing runs until every surface is built: a refused one leaves
	// no push delivery or audit queue behind.
	if h.a2a != nil {
		if err := h.a2a.Start(context.Background()); err != nil {
			return nil, fmt.Errorf("wopinterop: a2a push delivery: %w", err)
		}
	}
	h.auditor.Start()
	return h, nil
}

// checkRequired reports the Config fields every host must set.
func checkRequired(cfg *Config, bad *problems) {
	if cfg.Store == nil {
		bad.add("Store", "is required")
	}
	if cfg.Subjects == nil {
		bad.add("Subjects", "is required")
	}
	if cfg.Events == nil {
		bad.add("Events", "is required")
	}
	if base, err := url.Parse(cfg.BaseURL); err != nil || (base.Scheme != "http" && base.Scheme != "https") ||
		base.Host == "" || base.User != nil || (base.Path != "" && base.Path != "/") || base.RawQuery != "" || base.Fragment != "" {
		bad.add("BaseURL", "%q must be an absolute http(s) origin such as https://host.example", cfg.BaseURL)
	}
}

// declare validates the records against what is served, as of now.
func declare(now func() time.Time, decl facets.Declaration, served facets.Served) (*facets.Advertisement, error) {
	if now == nil {
		now = time.Now
	}
	v, err := facets.NewValidator(facets.Options{})
	if err != nil {
		return nil, fmt.Errorf("wopinterop: %w", err)
	}
	return v.Declare(now(), decl, served) // joined *facets.FieldError values, each naming its field
}

// Records returns the v2 discovery records the host embeds in its
// GET /.well-known/openwop: "a2a" when A2A is configured, "mcp" when MCP
// is (naming Config.MCP's server only, not those of [Host.NewMCP]),
// "agents" when Config.Agents is set, and "hostEvents" listing
// {negotiation.decided, durable} whenever an inbound surface is (OpenWOP
// interop.md §The facets; RFC 0242 §B.3). The map is the caller's copy.
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

// mcpServers is every MCP server of the host: Config.MCP's and those
// NewMCP built.
func (h *Host) mcpServers() []*mcp.Server {
	h.mu.Lock()
	defer h.mu.Unlock()
	var all []*mcp.Server
	if h.mcp != nil {
		all = append(all, h.mcp.srv)
	}
	return append(all, h.more...)
}

// InvalidateWorkflows tells the surfaces that tenant's workflows changed
// (added, removed, a new input schema or media types): the A2A surface's
// cached workflows and the tool lists of that tenant on every MCP server
// are dropped at once instead of when their TTLs run out. An empty
// tenant drops every tenant's.
func (h *Host) InvalidateWorkflows(tenant string) {
	if h.a2a != nil {
		h.a2a.InvalidateWorkflows(tenant)
	}
	for _, s := range h.mcpServers() {
		s.InvalidateTools(tenant)
	}
}

// AuditStats reports what the audit trail did with the negotiation.decided
// records handed to it: delivered, retried, and dropped because the
// EventSink kept failing or the queue was full. Export Dropped as a metric
// and alert on it; it stays zero with SynchronousAudit.
func (h *Host) AuditStats() negotiate.AuditStats { return h.auditor.Stats() }

// Drain starts a graceful shutdown of the surfaces, the MCP servers of
// [Host.NewMCP] included: every A2A or MCP request still waiting on a run
// answers now in its protocol's shape (an A2A SendMessage with the Task as
// it is, an MCP tools/call with a CreateTaskResult when it declared the
// Tasks extension, else a -32603 error after cancelling the run it owned),
// streams end, and requests arriving afterwards are refused with HTTP 503
// in the protocol's shape. Call it when shutdown begins — from
// http.Server.RegisterOnShutdown — and keep the requests' contexts the
// clients' until then: a host that cancels them at shutdown makes every
// in-flight MCP call look like a client that went away. Drain is
// idempotent and safe for concurrent use; Close still follows once the
// HTTP server has drained.
func (h *Host) Drain() {
	h.mu.Lock()
	h.drained = true
	h.mu.Unlock()
	if h.a2a != nil {
		h.a2a.Drain()
	}
	for _, s := range h.mcpServers() {
		s.Drain()
	}
}

// Close ends the MCP servers' listen streams, stops push delivery
// (draining the queued pushes), delivers the audit records still queued
// and stops the auditor, or returns ctx.Err() when ctx ends first. Call
// it after the HTTP server has drained and before closing the store and
// event sink. It is idempotent.
func (h *Host) Close(ctx context.Context) error {
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	var errs []error
	for _, s := range h.mcpServers() {
		// Ends listen streams and waits for the server's background work.
		errs = append(errs, s.Close(ctx))
	}
	if h.a2a != nil {
		// Push delivery first: its dead letters still reach the sink.
		errs = append(errs, h.a2a.Close(ctx))
	}
	errs = append(errs, h.auditor.Close(ctx))
	return errors.Join(errs...)
}
