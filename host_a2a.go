package wopinterop

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/a2a"
	"github.com/wopinterop/wopinterop/facets"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/isolation"
	"github.com/wopinterop/wopinterop/mapping"
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

// A2AConfig configures the A2A surface. The a2a record it advertises
// claims exactly the facets turned on here, with agentCardUrl BaseURL +
// CardPath.
type A2AConfig struct {
	// Path is the mount prefix of the interfaces (default "/a2a"): JSON-RPC
	// at Path, HTTP+JSON under Path+"/rest" when HTTPJSON is set.
	Path string
	// CardPath is where the public card is served (default
	// "/.well-known/agent-card.json").
	CardPath string
	// HTTPJSON also serves the optional HTTP+JSON binding.
	HTTPJSON bool
	// Record is what the a2a record says beyond what is served; its
	// RefreshedAt is required.
	Record Record
	// AllowDowngrade lets authenticated peers use an offered version between
	// the floor and preferred.
	AllowDowngrade bool

	// Streaming serves SendStreamingMessage and, with DurableTasks,
	// SubscribeToTask (a2a.streaming). The server streams from the run's
	// watch and keeps no task state of its own, so both hold whatever the
	// store is.
	Streaming bool
	// DurableTasks serves returnImmediately and SubscribeToTask
	// (a2a.durableTasks): task state outlives the request.
	DurableTasks bool
	// AgentCards publishes a card per agent of Config.Inventory, reached
	// through its routing value ([Host.A2ATenant]; a2a.agentCards, OpenWOP
	// interop.md §Per-agent cards). It needs Config.Inventory,
	// RoutingSecret and the agents record (Config.Agents with
	// ManifestRuntime).
	AgentCards bool
	// Push serves the push-config operations and push delivery
	// (a2a.pushNotifications; OpenWOP RFC 0214). Events defaults to
	// Config.Events, Logger and Now to Config's; the Guard decides which
	// destinations are reachable (https to public addresses, plus an
	// exact-origin allowlist for local receivers). The hostEvents record
	// then lists {a2a.push-dead-lettered, durable}.
	Push *push.Options
	// ExtendedCard serves GetExtendedAgentCard for the host card (the
	// caller's own view of it). Per-agent cards are served whenever
	// AgentCards is set.
	ExtendedCard bool

	// Card describes the host on its public card. Name and Description are
	// required; Version defaults to Config.HostVersion. Its security
	// schemes must describe exactly what Config.Subjects enforces
	// (OpenWOP interop map, a2a.card).
	Card a2a.CardConfig
	// CardSigner, when set, signs every card served: public, extended and
	// per-agent (A2A 1.0 §8.4; a2a/cardsig's Signer is one).
	CardSigner a2a.CardSigner
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
	// Extensions are the A2A extensions the host implements, declared on
	// every card and activated by a request's A2A-Extensions
	// (a2a.Options.Extensions), e.g. workunit.AgentExtension().
	Extensions []wire.AgentExtension
}

// a2aPlan is the A2A section checked: where it mounts, and the server
// options the a2a record is declared from and the server is built with.
type a2aPlan struct {
	c                  *A2AConfig
	origin             string
	path, cardPath     string
	routing            *isolation.RoutingKeys
	opts               a2a.Options
	restPrefix, rpcURL string
}

// planA2A checks cfg.A2A, reporting each problem to bad, and derives the
// server options from it.
func planA2A(cfg *Config, origin string, bad *problems) *a2aPlan {
	c := cfg.A2A
	p := &a2aPlan{c: c, origin: origin}
	var ok bool
	if p.path, ok = mountPath(c.Path, DefaultA2APath); !ok {
		bad.add("A2A.Path", "%q must be an absolute path other than / without wildcards", c.Path)
	}
	if p.cardPath, ok = mountPath(c.CardPath, DefaultCardPath); !ok {
		bad.add("A2A.CardPath", "%q must be an absolute path other than / without wildcards", c.CardPath)
	}
	p.rpcURL = origin + p.path
	if c.HTTPJSON {
		p.restPrefix = p.path + HTTPJSONSuffix
	}
	if p.cardPath == p.path || (p.restPrefix != "" && nested(p.cardPath, p.restPrefix)) {
		bad.add("A2A.CardPath", "%q overlaps the interfaces under %q", p.cardPath, p.path)
	}
	checkA2ACard(cfg, bad)
	if c.AgentCards {
		p.routing = checkAgentCards(cfg, bad)
	}
	p.opts = p.options(cfg)
	return p
}

// checkA2ACard reports what the public card and the routing lack.
func checkA2ACard(cfg *Config, bad *problems) {
	c := cfg.A2A
	if len(c.Routed) == 0 {
		bad.add("A2A.Routed", "must name at least one workflow")
	}
	if c.Card.Name == "" {
		bad.add("A2A.Card.Name", "is required (AgentCard.name)")
	}
	if c.Card.Description == "" {
		bad.add("A2A.Card.Description", "is required (AgentCard.description)")
	}
	if c.Card.Version == "" && cfg.HostVersion == "" {
		bad.add("A2A.Card.Version", "is required when HostVersion is empty (AgentCard.version)")
	}
}

// checkAgentCards reports what per-agent cards need and is missing, and
// returns the routing keys when the secret allows them.
func checkAgentCards(cfg *Config, bad *problems) *isolation.RoutingKeys {
	switch {
	case cfg.Agents == nil:
		bad.add("Agents", "is required by A2A.AgentCards: advertise the agents family with ManifestRuntime")
	case cfg.Agents.ManifestRuntime == nil:
		bad.add("Agents.ManifestRuntime", "is required by A2A.AgentCards (agents.manifestRuntime, an object)")
	}
	if cfg.Inventory == nil {
		bad.add("Inventory", "is required by A2A.AgentCards (per-agent cards come from the agent inventory)")
	}
	keys, err := isolation.NewRoutingKeys(cfg.RoutingSecret, cfg.HostVersion)
	if err != nil {
		bad.add("RoutingSecret", "is required by A2A.AgentCards: %d bytes given, at least %d needed", len(cfg.RoutingSecret), isolation.MinRoutingSecretLen)
		return nil
	}
	return keys
}

// options are the server's options: the section's, with every public URL
// from BaseURL and the paths, and Config's logger and clock.
func (p *a2aPlan) options(cfg *Config) a2a.Options {
	c := p.c
	card := c.Card
	if card.Version == "" {
		card.Version = cfg.HostVersion
	}
	o := a2a.Options{
		Streaming:          c.Streaming,
		DurableTasks:       c.DurableTasks,
		AgentCardURL:       p.origin + p.cardPath,
		Card:               card,
		CardSigner:         c.CardSigner,
		SelectWorkflow:     c.SelectWorkflow,
		ExtendedCard:       c.ExtendedCard,
		BlockTimeout:       c.BlockTimeout,
		WorkflowTTL:        c.WorkflowTTL,
		BodyTimeout:        c.BodyTimeout,
		StreamWriteTimeout: c.StreamWriteTimeout,
		MaxBatch:           c.MaxBatch,
		BatchConcurrency:   c.BatchConcurrency,
		Extensions:         c.Extensions,
		Logger:             cfg.Logger,
		Now:                cfg.Now,
	}
	if p.restPrefix != "" {
		o.HTTPJSONURL = p.origin + p.restPrefix
	}
	if c.AgentCards && cfg.Inventory != nil && p.routing != nil {
		o.Inventory, o.Routing = cfg.Inventory, p.routing
	}
	if c.Push != nil {
		po := *c.Push
		if po.Events == nil {
			po.Events = cfg.Events
		}
		o.Push = &po
	}
	return o
}

// record is the a2a record: the section's Record, claiming what served
// says the server does.
func (p *a2aPlan) record(served facets.ServedA2A) *facets.A2A {
	r := p.c.Record
	profiles := slices.Clone(r.Profiles)
	if len(profiles) == 0 {
		profiles = []string{facets.ProfileA2A10}
	}
	return &facets.A2A{
		Status: r.Status, Since: r.Since, Until: r.Until, Witness: r.Witness,
		Versions: slices.Clone(r.Versions), PreferredVersion: r.Preferred, MinimumVersion: r.Minimum,
		RefreshedAt: r.RefreshedAt, RefreshWindow: r.RefreshWindow, Profiles: profiles,
		AgentCardURL:      p.opts.AgentCardURL,
		Streaming:         served.Streaming,
		PushNotifications: served.PushNotifications,
		DurableTasks:      served.DurableTasks,
		AgentCards:        served.AgentCards,
	}
}

// hostEvents adds the push dead-letter type to he when push is on: a host
// never emits a type it does not advertise (OpenWOP events.md §Host
// events).
func (p *a2aPlan) hostEvents(he *facets.HostEvents) *facets.HostEvents {
	if p.opts.Push == nil {
		return he
	}
	if he == nil {
		he = &facets.HostEvents{}
	}
	if !slices.ContainsFunc(he.Types, func(t facets.HostEventType) bool { return t.Type == push.DeadLetterEventType }) {
		he.Types = append(he.Types, facets.HostEventType{Type: push.DeadLetterEventType, Delivery: facets.Durable})
	}
	return he
}

// build builds the server with the version policy of the validated record.
func (p *a2aPlan) build(cfg *Config, record *facets.A2A, auditor *negotiate.Auditor) (*a2a.Server, error) {
	policy, err := record.Policy(p.c.AllowDowngrade, cfg.Now)
	if err != nil {
		return nil, fmt.Errorf("wopinterop: a2a policy: %w", err)
	}
	deps := a2a.Deps{
		Store: cfg.Store, Subjects: cfg.Subjects, Policy: policy, Auditor: auditor, Map: mapping.Builtin(),
		JSONRPCURL: p.rpcURL, Routed: p.c.Routed,
	}
	srv, err := a2a.New(deps, p.opts)
	if err != nil {
		return nil, &ConfigError{Field: "A2A", Reason: "is refused by the server: " + err.Error()}
	}
	return srv, nil
}

// routes are the surface's routes: the card, JSON-RPC and, with HTTPJSON,
// the HTTP+JSON prefix itself and the subtree below it.
func (p *a2aPlan) routes(srv *a2a.Server) []Route {
	routes := []Route{
		{Pattern: p.cardPath, Handler: srv.AgentCard()},
		{Pattern: p.path, Handler: srv.JSONRPC()},
	}
	if p.restPrefix != "" {
		rest := http.StripPrefix(p.restPrefix, srv.HTTPJSON())
		// The bare prefix too: a router would otherwise answer it with a
		// redirect to prefix+"/" or a 404 of its own, which is no A2A
		// shape (OpenWOP RFC 0211 §C).
		routes = append(routes, Route{Pattern: p.restPrefix, Handler: rest}, Route{Pattern: p.restPrefix + "/", Handler: rest})
	}
	return routes
}

// nested reports whether one of the paths a and b is the other or lies
// below it.
func nested(a, b string) bool {
	return strings.HasPrefix(a+"/", b+"/") || strings.HasPrefix(b+"/", a+"/")
}
