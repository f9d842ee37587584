package hostapp

import (
	"context"
	"errors"
	"iter"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/wopinterop/wopinterop"
	"github.com/wopinterop/wopinterop/a2a"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/mcp/sealed"
)

// Store is what the host needs from its store: the interop contract
// (runs, agent inventory, the event sink the audit records go to) plus
// memstore's event poll and host-event subscription. It is an interface so
// tests can wrap the real store to inject faults, and so that a [Backend]
// can keep the host's state elsewhere.
type Store interface {
	interop.RunStore
	interop.AgentInventory
	interop.EventSink
	PollEvents(ctx context.Context, sub interop.Subject, runID string, after int64, timeout time.Duration) ([]interop.RunEvent, interop.Run, error)
	SubscribeHostEvents(ctx context.Context, tenant, workspace, lastEventID string) iter.Seq[interop.HostEvent]
}

// hostStore is the name the host's files use for [Store].
type hostStore = Store

// config is everything newHandler needs. Zero optional fields get the
// defaults noted on them.
type config struct {
	// Store holds runs, events, host events and agents. Required.
	Store hostStore
	// Auth turns a request's credential into a Subject. Required.
	Auth interop.SubjectResolver
	// BaseURL is the absolute public origin used in links
	// ("http://127.0.0.1:8080"). Required.
	BaseURL string
	// Logger receives faults (never credentials). Default: discard.
	Logger *slog.Logger
	// Version is discovery's implementation.version. Default: "0.0.0-dev".
	Version string
	// MaxBodyBytes bounds request bodies. Default: 1 MiB.
	MaxBodyBytes int64
	// BodyTimeout bounds how long a REST request body may take to arrive
	// once the handler reads it (internal/httpbody); a body that misses it
	// is refused with 400 validation_error and its connection closed.
	// main also gives the http.Server a ReadTimeout from it (see
	// setServerTimeouts). Default: 30 s.
	BodyTimeout time.Duration
	// EventWriteTimeout bounds the write of one frame (an event or a
	// keep-alive) of GET /host/events: a client that stops reading is
	// dropped instead of holding the stream. Default: 10 s.
	EventWriteTimeout time.Duration
	// Heartbeat is the SSE keep-alive period. Default: 15 s.
	Heartbeat time.Duration
	// Drain, when done, starts the graceful shutdown: it ends open event
	// streams and long polls, and drains the A2A and MCP surfaces
	// (wopinterop.Host.Drain), whose waiting requests then answer in their
	// protocols' shapes and whose later requests get 503. Default: never.
	Drain context.Context
	// RoutingSecret derives the per-agent A2A routing values (a2aTenant).
	// Default: a fresh random secret, so the values change with every
	// process.
	RoutingSecret []byte
	// SealKey (at least 32 bytes) seals the requestState values of MCP
	// multi-round tool calls. Default: a fresh random key, so a round
	// pending across a restart cannot be continued.
	SealKey []byte
	// Ledger records the requestState values consumed, so each opens once.
	// Default: the in-memory ledger, right for one process; replicas
	// share one (OpenWOP interop map, mcp.mrtr: single use).
	Ledger sealed.Ledger
	// Push holds the push notification stores. Default: the in-memory
	// stores of one process; replicas share them (Opened.Push).
	Push *PushStores
	// Now is the clock of the A2A and MCP surfaces and of the refreshedAt
	// check. Default: time.Now.
	Now func() time.Time
	// PushAllow are exact origins (scheme://host[:port]) A2A push
	// deliveries may reach although they are plain http or on a loopback
	// or private address: local receivers. Every other destination must be
	// https to a public address.
	PushAllow []string
	// Seams serves the conformance seams (seams.go) and advertises
	// conformance.seamsProfile. Test-only: never on a host real users
	// reach. It needs Minter.
	Seams bool
	// Minter mints the credentials of the mint seam; the demo's bearer
	// keys. Used only with Seams.
	Minter credentialMinter
	// CardSigner signs every A2A agent card served (-card-signing-key).
	// Default: cards are unsigned.
	CardSigner a2a.CardSigner
	// PeerAllow are exact origins (scheme://host[:port]) remote A2A agents
	// may be reached at although they are plain http or on a loopback or
	// private address (-peer-allow): local agents, for the delegate-remote
	// workflow and the a2a seam. Every other agent must be https to a
	// public address.
	PeerAllow []string
	// Agents are the remote A2A agents admitted at start (-a2a-agent); the
	// delegate-remote workflow calls them. newHandler reads each card and
	// pins every skill on it by its current digest.
	Agents []agentSpec
	// PeerBearer is the bearer token presented to remote A2A agents
	// (-a2a-bearer-file). Empty: the Agents are sent no credential, and
	// the a2a seam, when a call asks for an authenticated exchange,
	// presents a token drawn per process.
	PeerBearer string
	// MCPServers are the MCP servers admitted at start (-mcp-server), every
	// tool each lists then pinned by its current digest; the
	// conformance-mcp-client workflow calls them.
	MCPServers []mcpServerSpec
	// Workflows registers the workflows the host adds in every tenant of
	// Tenants: the seams' hidden ones (with Seams), delegate-remote (with
	// Agents) and conformance-mcp-client. With Workflows the host builds
	// its MCP client and the mcp record claims client: true; it is
	// required with Seams, Agents or MCPServers.
	Workflows workflowRegistry
	Tenants   []string
}

// workflowRegistry is where newHandler registers its workflows: the
// memstore.Store.
type workflowRegistry interface {
	Register(tenant string, def memstore.WorkflowDef) error
}

const (
	implementationName = "wopinterop example host"
	defaultVersion     = "0.0.0-dev"
	defaultMaxBody     = 1 << 20
	defaultBodyTimeout = 30 * time.Second
	defaultEventWrite  = 10 * time.Second
	defaultHeartbeat   = 15 * time.Second
	protocolVersion    = "2.0"
)

type server struct {
	interop *wopinterop.Host
	// notServedOnRun answers a method /runs/{runId} does not serve.
	notServedOnRun http.Handler
	store          hostStore
	auth           interop.SubjectResolver
	links          links
	log            *slog.Logger
	maxBody        int64
	bodyTimeout    time.Duration
	eventWrite     time.Duration
	heartbeat      time.Duration
	drain          context.Context
	discovery      discoveryDocument
	seams          bool
	minter         credentialMinter
	// runs is the store under hidingStore: the a2a seam starts its hidden
	// workflow there.
	runs hostStore
	// delegation is the host's A2A client side; nil unless Seams or
	// Agents.
	delegation *delegation
	// tools is the host's MCP client side; nil without Workflows.
	tools *toolCalls
}

// handler is the host's http.Handler and what its Close must release.
type handler struct {
	http.Handler
	interop *wopinterop.Host
}

// Close ends the MCP listen streams (of /mcp and /mcp-conformance), stops
// push delivery and drains the audit records the A2A and MCP surfaces
// still queue for the store (OpenWOP interop.md §The audit event; RFC 0242
// §B). Call it after the HTTP server has drained and before the store is
// closed.
func (h *handler) Close(ctx context.Context) error {
	return h.interop.Close(ctx)
}

// newHandler builds the host's http.Handler from cfg: the OpenWOP REST
// subset, the A2A surface and the MCP server on one mux.
func newHandler(cfg config) (*handler, error) {
	if cfg.Store == nil || cfg.Auth == nil {
		return nil, errors.New("host: config needs a Store and an Auth resolver")
	}
	if cfg.Seams && cfg.Minter == nil {
		return nil, errors.New("host: the conformance seams need a Minter")
	}
	delegates := cfg.Seams || len(cfg.Agents) > 0
	if (delegates || len(cfg.MCPServers) > 0) && (cfg.Workflows == nil || len(cfg.Tenants) == 0) {
		return nil, errors.New("host: the seams, -a2a-agent and -mcp-server need a workflow registry and the tenants")
	}
	// Every surface resolves callers through the recorder, so the request
	// log names the tenant whichever surface authenticated it.
	cfg.Auth = tenantRecorder{cfg.Auth}
	runs := cfg.Store
	if cfg.Seams {
		cfg.Store = hide(cfg.Store, seamWorkflowID, mcpSeamWorkflowID)
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("host: BaseURL must be an absolute http(s) origin")
	}
	s := &server{
		store:       cfg.Store,
		auth:        cfg.Auth,
		links:       links{base: strings.TrimSuffix(cfg.BaseURL, "/")},
		log:         cfg.Logger,
		maxBody:     cfg.MaxBodyBytes,
		bodyTimeout: cfg.BodyTimeout,
		eventWrite:  cfg.EventWriteTimeout,
		heartbeat:   cfg.Heartbeat,
		drain:       cfg.Drain,
		seams:       cfg.Seams,
		minter:      cfg.Minter,
		runs:        runs,
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.maxBody <= 0 {
		s.maxBody = defaultMaxBody
	}
	if s.bodyTimeout <= 0 {
		s.bodyTimeout = defaultBodyTimeout
	}
	if s.eventWrite <= 0 {
		s.eventWrite = defaultEventWrite
	}
	if s.heartbeat <= 0 {
		s.heartbeat = defaultHeartbeat
	}
	if s.drain == nil {
		s.drain = context.Background()
	}
	version := cfg.Version
	if version == "" {
		version = defaultVersion
	}
	secret := cfg.RoutingSecret
	if secret == nil {
		secret = randomRoutingSecret()
	}
	sealKey := cfg.SealKey
	if sealKey == nil {
		sealKey = randomSealKey()
	}
	if s.interop, err = newInterop(cfg, s.links.base, version, secret, sealKey); err != nil {
		return nil, err
	}
	if s.discovery, err = newDiscoveryDocument(version, s.links.base, cfg.Seams, s.interop.Records()); err != nil {
		_ = s.interop.Close(context.Background())
		return nil, err
	}

	if delegates {
		if s.delegation, err = s.startDelegation(cfg); err != nil {
			_ = s.interop.Close(context.Background())
			return nil, err
		}
	}
	if client := s.interop.MCPClient(); client != nil {
		if s.tools, err = s.startMCPClient(cfg, client); err != nil {
			_ = s.interop.Close(context.Background())
			return nil, err
		}
	}

	conformance, err := conformanceRoute(s.interop, version)
	if err != nil {
		_ = s.interop.Close(context.Background())
		return nil, err
	}

	mux := http.NewServeMux()
	s.mountREST(mux)
	mountInterop(mux, append(s.interop.Routes(), conformance))
	// The library's surfaces drain themselves, in their protocols' shapes.
	context.AfterFunc(s.drain, s.interop.Drain)
	return &handler{Handler: s.logged(mux), interop: s.interop}, nil
}

// mountREST registers the OpenWOP REST subset. Each path also gets a
// method-less fallback so that a method it does not serve is answered in
// the error envelope (404 not_found with Allow) rather than by the mux's
// plain-text 405.
func (s *server) mountREST(mux *http.ServeMux) {
	type route struct {
		method, path string
		h            http.Handler
	}
	routes := []route{
		{"GET", "/.well-known/openwop", http.HandlerFunc(s.getDiscovery)},
		{"POST", "/runs", s.authed(s.createRun)},
		{"GET", "/runs", s.authed(s.listRuns)},
		{"GET", "/runs/{runId}", s.authed(s.getRun)},
		{"POST", "/runs/{runId}/cancel", s.authed(s.cancelRun)},
		{"GET", "/runs/{runId}/interrupts/{interruptId}", s.authed(s.getInterrupt)},
		{"POST", "/runs/{runId}/interrupts/{interruptId}", s.authed(s.resolveInterrupt)},
		{"GET", "/runs/{runId}/events/poll", s.authed(s.pollEvents)},
		{"GET", "/host/events", s.authed(s.hostEvents)},
		{"GET", "/agents", s.authed(s.listAgents)},
	}
	if s.seams { // test only: unknown routes (404) unless -conformance-seams
		routes = append(routes, route{"POST", mintPath, s.authed(s.mintCredential)},
			route{"POST", a2aInvokePath, s.authed(s.invokeA2A)},
			route{"POST", mcpInvokePath, s.authed(s.invokeMCP)})
	}
	allow := map[string][]string{}
	var paths []string
	for _, rt := range routes {
		mux.Handle(rt.method+" "+rt.path, s.versioned(rt.h))
		if _, seen := allow[rt.path]; !seen {
			paths = append(paths, rt.path)
		}
		allow[rt.path] = append(allow[rt.path], rt.method)
	}
	for _, p := range paths {
		mux.Handle(p, s.versioned(s.methodNotServed(allow[p])))
	}
	// POST /runs/{runId}:cancel is cancelRun in the colon form one suite
	// leg uses (the segment is "{runId}:cancel"). It is outside the table
	// so that POST stays out of a plain run path's Allow.
	s.notServedOnRun = s.methodNotServed(allow["/runs/{runId}"])
	mux.Handle(colonCancelPattern, s.versioned(s.colonCancel(s.authed(s.cancelRun))))
	mux.Handle("/", s.versioned(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, interop.ErrNotFound)
	})))
}

// versioned applies the OpenWOP-Version request header (versioning.md
// §1.3) and names the contract on every response (§1.4).
func (s *server) versioned(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("OpenWOP-Version", protocolVersion)
		if err := checkVersionHeader(r.Header.Values("OpenWOP-Version")); err != nil {
			s.writeError(w, r, err)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// authed resolves the Subject before h runs. The host serves no anonymous
// callers, so a resolver answer without an authenticated tenant is refused
// like a missing credential.
func (s *server) authed(h func(http.ResponseWriter, *http.Request, interop.Subject)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sub, err := s.auth.ResolveSubject(r)
		if err == nil && (!sub.Authenticated || sub.Tenant == "") {
			err = interop.ErrUnauthenticated
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		h(w, r, sub)
	})
}

func (s *server) methodNotServed(methods []string) http.Handler {
	allow := strings.Join(methods, ", ")
	if strings.Contains(allow, "GET") {
		allow += ", HEAD"
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allow)
		s.writeError(w, r, &apiError{
			Status:  http.StatusNotFound,
			Code:    codeNotFound,
			Message: "this path does not serve the request method",
		})
	})
}

// respond writes v as JSON with status.
func (s *server) respond(w http.ResponseWriter, r *http.Request, status int, v any) {
	body, err := encodeJSON(v)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeBody(w, status, body)
}

// streamContext is the context of a long-lived response: it ends when the
// client goes away or when the host drains.
func (s *server) streamContext(r *http.Request) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(r.Context())
	stop := context.AfterFunc(s.drain, cancel)
	return ctx, func() { stop(); cancel() }
}
