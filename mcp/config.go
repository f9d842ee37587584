package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/wopinterop/wopinterop/facets"
	"github.com/wopinterop/wopinterop/internal/interopmap"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/mapping"
	"github.com/wopinterop/wopinterop/mcp/internal/mount"
	"github.com/wopinterop/wopinterop/mcp/sealed"
	"github.com/wopinterop/wopinterop/negotiate"
)

// Revision is the MCP revision this mount speaks. A policy offering any
// other revision is refused by [New]: the mount has no legacy
// (initialize-era) dispatch, so advertising one would promise what it does
// not serve.
const Revision = "2026-07-28"

// TasksExtension is the id of the MCP Tasks extension the mount can serve.
const TasksExtension = "io.modelcontextprotocol/tasks"

// Implementation is the serverInfo the mount reports in every result's
// _meta (self-reported; clients must not authorize on it; OpenWOP interop map, mcp.meta).
type Implementation struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Deps are the collaborators a mount cannot run without; [New] refuses a
// missing one. A host that mounts MCP through the root package has them
// filled in from its own configuration.
type Deps struct {
	Store    interop.RunStore
	Subjects interop.SubjectResolver
	// Policy is the MCP version policy (negotiate.MCP). Its offered
	// revisions are server/discover's supportedVersions, exactly and in
	// order (OpenWOP interop map, mcp.methods); each must be [Revision].
	Policy *negotiate.Policy
	// Auditor receives one negotiation.decided record per request that
	// reaches version selection, as a host event of the caller's tenant.
	Auditor *negotiate.Auditor
	// Sealer seals and opens MRTR requestState values (OpenWOP interop map, mcp.mrtr).
	Sealer *sealed.Sealer
}

// Options are the mount's own settings. ServerInfo is required; every
// other field has a documented default, which its zero value selects.
type Options struct {
	// ServerInfo is the serverInfo every result's _meta carries; Name and
	// Version are required.
	ServerInfo Implementation
	// Map is the interop map; nil means mapping.Builtin().
	Map *mapping.Map

	// AllowedOrigins are the browser origins ("https://app.example") that
	// may call the mount. A request carrying any other Origin header is
	// refused with 403, so the default (none) refuses every browser and is
	// safe against DNS rebinding; requests without Origin (non-browser
	// clients) are unaffected. "*" allows every origin.
	AllowedOrigins []string
	// AllowOwnLoopbackOrigin, on a connection that arrived on a loopback
	// address, also allows the browser Origin of that very socket: a page
	// this host serves itself, as a local development host's own UI, or
	// the official MCP conformance suite's DNS-rebinding check, does. Own
	// means the connection's scheme, the listener's port (from the
	// connection, never from the Host header) and as host the listener's
	// IP literal — http://127.0.0.1:PORT on 127.0.0.1:PORT, http://[::1]:PORT
	// on [::1]:PORT — or localhost on either of those two. A page from
	// another port or another loopback address is another server and stays
	// refused unless listed in AllowedOrigins (the MCP Inspector's UI at
	// http://localhost:6274, say); so does every Origin on a listener that
	// is not loopback. The loopback Host check applies either way. Off by
	// default.
	AllowOwnLoopbackOrigin bool
	// AllowAnonymous lets a request the SubjectResolver answers with an
	// unauthenticated Subject through (only where the host advertises
	// an anonymous actor; OpenWOP interop map, mcp.authorization). Otherwise such a request is 401.
	// An anonymous Subject identifies no caller, so the mount caches
	// nothing for it and ties its notifications/cancelled to the
	// connection of the call they name (see the package documentation).
	AllowAnonymous bool
	// WWWAuthenticate is the challenge sent with a 401; "" means "Bearer".
	WWWAuthenticate string

	// Tasks serves the io.modelcontextprotocol/tasks extension: it is
	// listed in server/discover, tools/call may answer CreateTaskResult to
	// a request that declared it, and tasks/get|update|cancel and task
	// notifications on subscriptions/listen are served (OpenWOP interop.md §MCP tasks and cancellation).
	Tasks bool

	// MaxRounds is mcp.mrtr.maxRounds: how many MRTR retries one
	// invocation may make (OpenWOP interop.md §The MCP round ceiling); 0 means 8, otherwise 1–16.
	MaxRounds int
	// ListTTL is the ttlMs of server/discover and tools/list and how long a
	// caller's tool list is cached; 0 means one minute, a negative value
	// disables the cache and reports ttlMs 0.
	ListTTL time.Duration
	// BlockTimeout bounds how long a tools/call (or MRTR retry) waits for
	// its run to finish or ask for input. When it elapses the run is
	// cancelled with reason "mcp-request-timeout" and the call answers a
	// CallToolResult with isError true, unless the request declared the
	// tasks extension, which gets a task instead. 0 means 30 seconds.
	BlockTimeout time.Duration
	// TaskWait is how long a tools/call that declared the tasks extension
	// waits for a terminal result before answering CreateTaskResult; 0
	// answers with the task as soon as the run exists (unless it already
	// finished).
	TaskWait time.Duration
	// TaskTTL is a task's ttlMs; 0 sends null (unlimited). When set it must
	// not be shorter than the host's run retention (OpenWOP interop map, mcp.tasks.fields): the mount
	// cannot check that, the host must.
	TaskTTL time.Duration
	// PollInterval is a task's pollIntervalMs; 0 omits it.
	PollInterval time.Duration
	// InterruptURL, when set, returns a host-owned page that lets the same
	// Subject resolve an interrupt whose input cannot be asked in form mode
	// (OpenWOP interop map, mcp.mrtr; RFC 0199 §D.2); "" means there is none. Credential interrupts use their
	// connectUrl instead.
	InterruptURL func(ctx context.Context, s interop.Subject, run interop.Run, in interop.Interrupt) string

	// Extension serves what the host offers beside its workflows (tools
	// that are not workflows, prompts, resources, completions); package
	// mcp/ext builds it from the host's extension points. Nil serves and
	// advertises none of them.
	Extension Extension

	// MaxBodyBytes bounds request bodies; 0 means 4 MiB. A body is read
	// into memory as its bytes arrive, whatever length it declares.
	MaxBodyBytes int64
	// BodyTimeout bounds how long a request body may take to arrive once
	// the request is authenticated: a body still arriving then (a client
	// trickling it in) is refused with HTTP 408 and a JSON-RPC -32600, and
	// the connection is closed. 0 means 30 seconds. The http.Server's own
	// ReadTimeout, when shorter, still applies to the body; once the body
	// is read neither applies any longer, so a long answer (a call waiting
	// for its run, a listen or progress stream) is never cut by a read
	// deadline.
	BodyTimeout time.Duration
	// StreamWriteTimeout bounds each event of an SSE answer (a
	// subscriptions/listen stream, a native tool call's progress): a client
	// that stops reading for that long is cut off, which ends the stream
	// as a disconnect would. It replaces the http.Server's WriteTimeout for
	// the stream, which would otherwise end every stream at that age. 0
	// means 30 seconds.
	StreamWriteTimeout time.Duration
	// Logger receives server faults (never secrets or request content); nil
	// discards.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Defaults of [Options].
const (
	DefaultMaxRounds          = 8
	DefaultListTTL            = time.Minute
	DefaultBlockTimeout       = 30 * time.Second
	DefaultMaxBodyBytes       = 4 << 20
	DefaultBodyTimeout        = 30 * time.Second
	DefaultStreamWriteTimeout = 30 * time.Second
)

// Server serves the MCP 2026-07-28 streamable-HTTP mount over a host's
// RunStore. Build it with [New] and mount [Server.Handler]. On shutdown
// call [Server.Drain] as the HTTP server starts draining (e.g. from
// http.Server.RegisterOnShutdown), so every open request answers at once,
// then [Server.Close] once the HTTP server has drained.
type Server struct {
	deps    Deps
	opts    Options
	m       *interopmap.Map
	log     *slog.Logger
	now     func() time.Time
	origins map[string]bool
	anyOrig bool
	// ext is what Options.Extension serves.
	ext mount.Capabilities
	// serverInfo is the encoded ServerInfo every result's _meta carries.
	serverInfo []byte

	tools    *toolCache
	schemas  *schemaCache
	inflight *inflightCalls
	replies  replyBuffers
	bodies   bodyBuffers

	// life is cancelled by Close; background work (listen streams,
	// disconnect cancellations) is counted in work so Close can wait.
	life   context.Context
	stop   context.CancelFunc
	workMu sync.Mutex // orders work.Add against Close
	work   sync.WaitGroup

	// drain is cancelled by Drain.
	drain      context.Context
	startDrain context.CancelFunc
}

// New validates deps and opts and returns a server. Every problem is
// reported at once.
func New(deps Deps, opts Options) (*Server, error) {
	problems := deps.check()
	problems = append(problems, opts.check()...)
	m := (*interopmap.Map)(opts.Map)
	if m == nil {
		m = (*interopmap.Map)(mapping.Builtin())
	}
	if opts.Tasks && !m.HasMCPTasks() {
		problems = append(problems, errors.New("Tasks needs an interop map with the mcp.tasks rows"))
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("mcp: invalid config: %w", errors.Join(problems...))
	}
	opts.setDefaults()
	life, stop := context.WithCancel(context.Background())
	s := &Server{
		deps: deps, opts: opts, m: m, log: opts.Logger, now: opts.Now,
		schemas:  newSchemaCache(),
		inflight: newInflightCalls(),
		life:     life, stop: stop,
	}
	s.origins, s.anyOrig = originSet(opts.AllowedOrigins)
	if opts.Extension != nil {
		s.ext = opts.Extension.Capabilities()
	}
	s.drain, s.startDrain = context.WithCancel(context.Background())
	s.serverInfo, _ = mount.Marshal(opts.ServerInfo) // two strings: cannot fail
	s.tools = newToolCache(s)
	return s, nil
}

// check reports every missing or unusable dependency.
func (d *Deps) check() []error {
	var problems []error
	if d.Store == nil {
		problems = append(problems, errors.New("Store is required"))
	}
	if d.Subjects == nil {
		problems = append(problems, errors.New("Subjects is required"))
	}
	if d.Policy == nil || d.Policy.Protocol() != negotiate.MCP {
		problems = append(problems, errors.New("Policy must be an MCP negotiate.Policy"))
	} else {
		for _, v := range d.Policy.Offered() {
			if v != Revision {
				problems = append(problems, fmt.Errorf("Policy offers revision %q; this mount serves only %s", v, Revision))
			}
		}
	}
	if d.Auditor == nil {
		problems = append(problems, errors.New("Auditor is required"))
	}
	if d.Sealer == nil {
		problems = append(problems, errors.New("Sealer is required"))
	}
	return problems
}

// check reports every option outside its range.
func (o *Options) check() []error {
	var problems []error
	if o.ServerInfo.Name == "" || o.ServerInfo.Version == "" {
		problems = append(problems, errors.New("ServerInfo needs Name and Version"))
	}
	if o.MaxRounds != 0 && (o.MaxRounds < 1 || o.MaxRounds > 16) {
		problems = append(problems, fmt.Errorf("MaxRounds %d is outside 1–16", o.MaxRounds))
	}
	for name, d := range map[string]time.Duration{"BlockTimeout": o.BlockTimeout, "TaskWait": o.TaskWait, "TaskTTL": o.TaskTTL, "PollInterval": o.PollInterval, "BodyTimeout": o.BodyTimeout, "StreamWriteTimeout": o.StreamWriteTimeout} {
		if d < 0 {
			problems = append(problems, fmt.Errorf("%s must not be negative", name))
		}
	}
	if o.MaxBodyBytes < 0 {
		problems = append(problems, errors.New("MaxBodyBytes must not be negative"))
	}
	if slices.Contains(o.AllowedOrigins, "") {
		problems = append(problems, errors.New("AllowedOrigins has an empty entry"))
	}
	return problems
}

// setDefaults gives every zero option its default.
func (o *Options) setDefaults() {
	if o.MaxRounds == 0 {
		o.MaxRounds = DefaultMaxRounds
	}
	if o.ListTTL == 0 {
		o.ListTTL = DefaultListTTL
	}
	if o.BlockTimeout == 0 {
		o.BlockTimeout = DefaultBlockTimeout
	}
	if o.MaxBodyBytes == 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.BodyTimeout == 0 {
		o.BodyTimeout = DefaultBodyTimeout
	}
	if o.StreamWriteTimeout == 0 {
		o.StreamWriteTimeout = DefaultStreamWriteTimeout
	}
	if o.WWWAuthenticate == "" {
		o.WWWAuthenticate = "Bearer"
	}
	o.AllowedOrigins = slices.Clone(o.AllowedOrigins)
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// originSet is the allowlist as a set, and whether it allows every origin.
func originSet(origins []string) (set map[string]bool, all bool) {
	set = map[string]bool{}
	for _, o := range origins {
		if o == "*" {
			all = true
			continue
		}
		set[o] = true
	}
	return set, all
}

// Handler returns the mount's http.Handler. It serves POST on whatever path
// it is mounted at (it never looks at the URL path), so it can be mounted
// under any prefix.
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serveHTTP) }

// Drain starts the mount's shutdown: every request it is serving answers
// now, and every later one is refused, so that a graceful HTTP shutdown
// is not held up and no client is left with an empty response.
//
//   - A tools/call (or MRTR retry) waiting on its run stops waiting and
//     answers what the run's state calls for at that moment: a finished
//     run its result and a suspended one its input_required round, as
//     usual. A run still working is answered with CreateTaskResult when the
//     request declared the Tasks extension (the run continues; the client
//     follows it with tasks/get). Otherwise the answer is HTTP 503 with a
//     JSON-RPC -32603 "Server shutting down: the tool call was cancelled"
//     naming the request id; as that answer does not hand the run to the
//     client, the request still owns it and cancels it first, reason
//     "mcp-request-cancelled" (OpenWOP interop §MCP tasks and
//     cancellation).
//   - A subscriptions/listen stream ends as Close ends it, with a final
//     notifications/cancelled.
//   - Every request that arrives after Drain, notifications included, is
//     refused before its body is read: HTTP 503 with a JSON-RPC -32603
//     "Server shutting down" and no id. 503 is the HTTP answer for a
//     server that cannot serve now (RFC 9110 §15.6.4); the MCP
//     streamable-HTTP transport only asks that a request's answer be a
//     JSON-RPC message in application/json, which it is.
//
// A native tool call runs the host's own code and ends when CallTool
// returns. The drain is told apart from a client going away only if the
// requests' contexts stay the clients': a host that cancels them at
// shutdown turns every in-flight call into a disconnect, whose run is
// cancelled with no answer. Drain is idempotent and safe to call
// concurrently with requests and with Close.
func (s *Server) Drain() { s.startDrain() }

// draining reports whether Drain was called.
func (s *Server) draining() bool { return s.drain.Err() != nil }

// Close ends every open subscriptions/listen stream (each gets a final
// notifications/cancelled, the only one the host ever sends; OpenWOP interop.md §MCP tasks and cancellation)
// and waits for background work the mount started, or returns ctx.Err().
// Other requests arriving after Close are still served unless Drain was
// called; a listen request is refused with -32603 (HTTP 503). Close is
// idempotent.
func (s *Server) Close(ctx context.Context) error {
	s.workMu.Lock()
	s.stop()
	s.workMu.Unlock()
	done := make(chan struct{})
	go func() {
		s.work.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Served reports what a mount built with these options serves, for the
// host's mcp record (a host advertises nothing the mount does not back):
// a streamable-HTTP mount of [Revision] backing the map features
// server-discover, mrtr and cacheable-lists (OpenWOP interop map,
// mcp.features), and the extensions server/discover lists. A host
// declares its record from it before [New], whose Deps.Policy comes from
// that record; [Server.Served] is the same answer.
func (o *Options) Served() facets.ServedMCP {
	return facets.ServedMCP{
		Revisions:      []string{Revision},
		Mount:          true,
		Transports:     []string{facets.TransportStreamableHTTP},
		Extensions:     extensions(o.Tasks),
		Discover:       true,
		MRTR:           true,
		CacheableLists: true,
	}
}

// Served reports what this server serves: [Options.Served] of the options
// it was built with.
func (s *Server) Served() facets.ServedMCP { return s.opts.Served() }

// extensions lists the extension ids served, in a fixed order.
func extensions(tasks bool) []string {
	if tasks {
		return []string{TasksExtension}
	}
	return []string{}
}

// listTTLMs is the ttlMs of cacheable results.
func (s *Server) listTTLMs() int64 {
	if s.opts.ListTTL < 0 {
		return 0
	}
	return s.opts.ListTTL.Milliseconds()
}
