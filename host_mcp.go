package wopinterop

import (
	"fmt"
	"slices"

	"github.com/wopinterop/wopinterop/egress"
	"github.com/wopinterop/wopinterop/facets"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/mcp"
	"github.com/wopinterop/wopinterop/mcp/remote"
	"github.com/wopinterop/wopinterop/mcp/sealed"
	"github.com/wopinterop/wopinterop/negotiate"
)

// DefaultMCPPath is where the MCP server goes unless MCPConfig.Path says
// otherwise.
const DefaultMCPPath = "/mcp"

// MCPConfig configures the MCP server. The mcp record it advertises names
// it as serverUrls[0] (BaseURL + Path) and claims exactly what Server
// serves: its transport, the features server-discover, mrtr and
// cacheable-lists (and extensions with Server.Tasks), and
// mrtr.maxRounds = Server.MaxRounds.
type MCPConfig struct {
	// Path is the mount path (default "/mcp").
	Path string
	// Record is what the mcp record says beyond what is served; its
	// RefreshedAt is required.
	Record Record
	// AllowDowngrade lets authenticated peers use an offered revision
	// between the floor and preferred.
	AllowDowngrade bool
	// SealKey (≥ 32 bytes) seals MRTR requestState values; PreviousSealKeys
	// still open values sealed before a rotation. Ledger makes their
	// single use hold across replicas (nil: in-memory, one replica).
	SealKey          []byte
	PreviousSealKeys [][]byte
	Ledger           sealed.Ledger
	// Server is the server's own options (ServerInfo, AllowedOrigins,
	// AllowAnonymous, Tasks, MaxRounds, timeouts, the optional extension
	// points of mcp/ext …); nil Logger and Now are Config's.
	Server mcp.Options
	// Client, when set, builds the host's MCP client (package mcp/remote)
	// for the host to expose to its workflows, and the mcp record claims
	// client: true (OpenWOP RFC 0204). See [MCPClientConfig] and
	// [Host.MCPClient].
	Client *MCPClientConfig
}

// MCPClientConfig is the host's MCP client: the servers it admits and how
// it reaches them. [New] builds it with what the mcp record advertises —
// the record's version policy (never below its floor) and its
// mrtr.maxRounds as the client's round ceiling — and Config.Events as
// the sink of its records, appended synchronously so that a run's
// negotiation record is on its log before the run can end. The host hands
// [Host.MCPClient]'s ToolCaller to its workflows (memstore:
// WorkflowDef.ToolCaller); that is what the client facet promises.
type MCPClientConfig struct {
	// Guard is the egress guard every request to a server passes (package
	// egress). Required.
	Guard *egress.Guard
	// Credentials resolves the admissions' credential references; nil
	// when none names one.
	Credentials remote.Credentials
	// Admissions are the servers admitted at start; the client's Admit
	// adds more.
	Admissions []remote.Admission
	// Options tune the client; nil Logger and Now are Config's.
	Options remote.Options
}

// mcpSurface is Config.MCP's server and what [Host.NewMCP] shares with
// the servers it builds.
type mcpSurface struct {
	srv    *mcp.Server
	policy *negotiate.Policy
	sealer *sealed.Sealer
	client *remote.Client // nil without MCPConfig.Client
}

// mcpPlan is the MCP section checked: where it mounts, and the server
// options the mcp record is declared from and the server is built with.
type mcpPlan struct {
	c      *MCPConfig
	origin string
	path   string
	opts   mcp.Options
}

// planMCP checks cfg.MCP, reporting each problem to bad; a2a is the A2A
// section's plan, nil without one, whose paths the server must keep clear
// of.
func planMCP(cfg *Config, origin string, a *a2aPlan, bad *problems) *mcpPlan {
	c := cfg.MCP
	p := &mcpPlan{c: c, origin: origin, opts: withHostDefaults(c.Server, cfg)}
	var ok bool
	if p.path, ok = mountPath(c.Path, DefaultMCPPath); !ok {
		bad.add("MCP.Path", "%q must be an absolute path other than / without wildcards", c.Path)
	}
	if a != nil && (nested(p.path, a.path) || p.path == a.cardPath) {
		bad.add("MCP.Path", "%q overlaps the A2A surface", p.path)
	}
	if len(c.SealKey) < sealed.MinKeyLen {
		bad.add("MCP.SealKey", "%d bytes given, at least %d needed to seal requestState", len(c.SealKey), sealed.MinKeyLen)
	}
	if c.Client != nil && c.Client.Guard == nil {
		bad.add("MCP.Client.Guard", "is required: every request of the MCP client passes the egress guard")
	}
	return p
}

// served is what the section serves: the server's options' report, and
// the client when one is configured.
func (p *mcpPlan) served() facets.ServedMCP {
	s := p.opts.Served()
	s.Client = p.c.Client != nil
	return s
}

// withHostDefaults is opts with Config's logger and clock where it has
// none.
func withHostDefaults(opts mcp.Options, cfg *Config) mcp.Options {
	if opts.Logger == nil {
		opts.Logger = cfg.Logger
	}
	if opts.Now == nil {
		opts.Now = cfg.Now
	}
	return opts
}

// record is the mcp record: the section's Record, claiming what served
// says the server does.
func (p *mcpPlan) record(served facets.ServedMCP) *facets.MCP {
	r := p.c.Record
	profiles := slices.Clone(r.Profiles)
	if len(profiles) == 0 {
		profiles = []string{facets.ProfileMCP2026}
	}
	rounds := p.opts.MaxRounds
	if rounds == 0 {
		rounds = mcp.DefaultMaxRounds
	}
	return &facets.MCP{
		Status: r.Status, Since: r.Since, Until: r.Until, Witness: r.Witness,
		Revisions: slices.Clone(r.Versions), PreferredVersion: r.Preferred, MinimumRevision: r.Minimum,
		RefreshedAt: r.RefreshedAt, RefreshWindow: r.RefreshWindow, Profiles: profiles,
		Features:    features(served),
		ServerURLs:  []string{p.origin + p.path},
		ServerMount: &facets.ServerMount{Transports: slices.Clone(served.Transports)},
		MRTR:        &facets.MRTR{MaxRounds: rounds},
		Client:      served.Client,
	}
}

// features are the mcp.features ids served (OpenWOP interop map,
// mcp.features), in the map's order.
func features(s facets.ServedMCP) []string {
	var ids []string
	for _, f := range []struct {
		id     string
		served bool
	}{
		{"server-discover", s.Discover},
		{"mrtr", s.MRTR},
		{"cacheable-lists", s.CacheableLists},
		{"extensions", len(s.Extensions) > 0},
	} {
		if f.served {
			ids = append(ids, f.id)
		}
	}
	return ids
}

// build builds the server with the version policy of the validated record
// and a requestState sealer over the section's keys.
func (p *mcpPlan) build(cfg *Config, record *facets.MCP, auditor *negotiate.Auditor) (*mcpSurface, error) {
	policy, err := record.Policy(p.c.AllowDowngrade, cfg.Now)
	if err != nil {
		return nil, fmt.Errorf("wopinterop: mcp policy: %w", err)
	}
	sealer, err := sealed.NewSealer(sealed.Config{Key: p.c.SealKey, PreviousKeys: p.c.PreviousSealKeys, Ledger: p.c.Ledger, Now: cfg.Now})
	if err != nil {
		return nil, fmt.Errorf("wopinterop: mcp requestState sealer: %w", err)
	}
	s := &mcpSurface{policy: policy, sealer: sealer}
	deps := mcp.Deps{Store: cfg.Store, Subjects: cfg.Subjects, Policy: policy, Auditor: auditor, Sealer: sealer}
	if s.srv, err = mcp.New(deps, p.opts); err != nil {
		return nil, &ConfigError{Field: "MCP.Server", Reason: "is refused by the server: " + err.Error()}
	}
	if c := p.c.Client; c != nil {
		opts := c.Options
		if opts.Logger == nil {
			opts.Logger = cfg.Logger
		}
		if opts.Now == nil {
			opts.Now = cfg.Now
		}
		// No Auditor: the client's own synchronous one over Events.
		s.client, err = remote.New(remote.Deps{
			Policy: policy, Events: cfg.Events, Guard: c.Guard, Credentials: c.Credentials,
			Admissions: c.Admissions, MaxRounds: record.MRTR.MaxRounds,
		}, opts)
		if err != nil {
			return nil, &ConfigError{Field: "MCP.Client", Reason: "is refused by the client: " + err.Error()}
		}
	}
	return s, nil
}

// MCPClient is the host's MCP client, built from MCPConfig.Client with the
// mcp record's version policy and round ceiling; nil without one. Hand its
// ToolCaller to the workflows that may call the admitted servers' tools.
func (h *Host) MCPClient() *remote.Client {
	if h.mcp == nil {
		return nil
	}
	return h.mcp.client
}

// NewMCP builds one more MCP server, for callers subjects resolves: the
// host's store, its audit trail (each request's negotiation.decided
// record reaches Config.Events, as a host event of the caller's tenant),
// its requestState keys and ledger, and the version policy of its mcp
// record; nil opts.Logger and opts.Now are Config's. Mount the returned
// Route beside [Host.Routes], which does not list it; it is not in the
// mcp record either, which names Config.MCP's server alone. The host
// drains and closes the server with its own surfaces and drops its tool
// lists on InvalidateWorkflows.
//
// NewMCP needs Config.MCP, whose keys and policy it shares. path must be
// a mount path (absolute, not "/", no wildcards) clear of every other
// route of the host. Call it before serving; it refuses once the host is
// closed, and a server built after Drain starts drained.
func (h *Host) NewMCP(path string, subjects interop.SubjectResolver, opts mcp.Options) (Route, error) {
	if h.mcp == nil {
		return Route{}, fmt.Errorf("%w: NewMCP needs Config.MCP, whose requestState keys and version policy the server shares", ErrInvalidConfig)
	}
	p, ok := mountPath(path, "")
	if !ok || p == "" {
		return Route{}, fmt.Errorf("%w: NewMCP path %q must be an absolute path other than / without wildcards", ErrInvalidConfig, path)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return Route{}, fmt.Errorf("wopinterop: NewMCP: the host is closed")
	}
	for _, taken := range append(h.basePaths(), h.morePaths...) {
		if nested(p, taken) {
			return Route{}, fmt.Errorf("%w: NewMCP path %q overlaps the host's route %q", ErrInvalidConfig, p, taken)
		}
	}
	deps := mcp.Deps{Store: h.cfg.Store, Subjects: subjects, Policy: h.mcp.policy, Auditor: h.auditor, Sealer: h.mcp.sealer}
	srv, err := mcp.New(deps, withHostDefaults(opts, &h.cfg))
	if err != nil {
		return Route{}, fmt.Errorf("wopinterop: NewMCP: %w", err)
	}
	if h.drained {
		srv.Drain()
	}
	h.more, h.morePaths = append(h.more, srv), append(h.morePaths, p)
	return Route{Pattern: p, Handler: srv.Handler()}, nil
}
