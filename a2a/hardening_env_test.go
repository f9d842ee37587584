package a2a

// The host of the hardening tests: both bindings and the card on one mux,
// served over real connections (httptest.Server), over memstore with the
// conformance fixtures and two probes, a captured log, and stores,
// resolvers and inventories that fail or panic on demand.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/isolation"
	"github.com/wopinterop/wopinterop/mapping"
	"github.com/wopinterop/wopinterop/negotiate"
)

// Probes of the hardening host.
const (
	probeHold  = "probe-hold"  // works until the env's hold is released
	probeFlood = "probe-flood" // publishes floodChunks chunks of floodChunkSize bytes
)

const (
	floodChunks    = 400
	floodChunkSize = 8 << 10
)

// hardSecret is what a panicking host component panics with: it must
// never reach a log or a response.
const hardSecret = "sk-hardening-secret-6f1e"

// hardKeyPanic is a bearer key the test resolver panics on.
const hardKeyPanic = "key-panic"

// hardEnv is the hardening host.
type hardEnv struct {
	store   *memstore.Store
	srv     *Server
	mux     *http.ServeMux
	logs    *logCapture
	routing *isolation.RoutingKeys
	// agentR is the routing value of acme's agent.
	agentR string
	hold   chan struct{}
}

type hardOption func(*testConfig)

func newHardEnv(t testing.TB, opts ...hardOption) *hardEnv {
	t.Helper()
	store := memstore.New()
	t.Cleanup(func() { _ = store.Close() })
	e := &hardEnv{store: store, logs: &logCapture{}, hold: make(chan struct{})}
	t.Cleanup(e.releaseHold)
	chunk := strings.Repeat("x", floodChunkSize)
	for _, tenant := range []string{"acme", "globex"} {
		if err := store.RegisterFixtures(tenant); err != nil {
			t.Fatal(err)
		}
		for _, def := range []memstore.WorkflowDef{
			{Workflow: interop.Workflow{ID: probeHold}, Run: func(ctx context.Context, _ *memstore.RunContext) (json.RawMessage, error) {
				select {
				case <-e.hold:
					return json.RawMessage(`{"held":true}`), nil
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}},
			{Workflow: interop.Workflow{ID: probeFlood}, Run: func(_ context.Context, rc *memstore.RunContext) (json.RawMessage, error) {
				for i := range floodChunks {
					if err := rc.PublishArtifact(interop.Artifact{ID: "flood", Parts: []interop.Part{interop.TextPart(chunk)}}, i > 0, i == floodChunks-1); err != nil {
						return nil, err
					}
				}
				return json.RawMessage(`{}`), nil
			}},
		} {
			if err := store.Register(tenant, def); err != nil {
				t.Fatal(err)
			}
		}
	}
	agent := interop.Agent{ID: "agent-ada", Persona: "Ada", PackVersion: "1.0.0", Label: "Ada", Workflows: []string{memstore.FixtureNoop}}
	if err := store.AddAgent("acme", agent); err != nil {
		t.Fatal(err)
	}
	routing, err := isolation.NewRoutingKeys(bytes.Repeat([]byte("h"), 32), "hardening-1")
	if err != nil {
		t.Fatal(err)
	}
	e.routing = routing
	e.agentR, _ = routing.ForAgent(agent)
	policy, err := negotiate.NewPolicy(negotiate.Config{Protocol: negotiate.A2A, Offered: []string{"1.0"}, Preferred: "1.0", Floor: "1.0"})
	if err != nil {
		t.Fatal(err)
	}
	var routed []interop.Workflow
	for _, id := range []string{memstore.FixtureNoop, memstore.FixtureApproval, probeHold, probeFlood} {
		routed = append(routed, interop.Workflow{ID: id, Name: id})
	}
	cfg := testConfig{
		Deps: Deps{
			Store: store,
			Subjects: interop.SubjectResolverFunc(func(r *http.Request) (interop.Subject, error) {
				if r.Header.Get("Authorization") == "Bearer "+hardKeyPanic {
					panic(hardSecret)
				}
				return restBearerSubject(r)
			}),
			Policy:     policy,
			Auditor:    negotiate.NewAuditor(store, negotiate.AuditorOptions{Synchronous: true}),
			Map:        mapping.Builtin(),
			JSONRPCURL: restEnvJSONRPCURL,
			Routed:     routed,
		},
		Options: Options{
			Streaming:    true,
			DurableTasks: true,
			HTTPJSONURL:  restEnvHTTPJSONURL,
			AgentCardURL: restEnvCardURL,
			Card:         CardConfig{Name: "Hardening host", Description: "A host for the hardening tests."},
			Inventory:    store,
			Routing:      routing,
			BlockTimeout: 5 * time.Second,
			Logger:       slog.New(slog.NewJSONHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		},
	}
	for _, o := range opts {
		o(&cfg)
	}
	srv, err := New(cfg.Deps, cfg.Options)
	if err != nil {
		t.Fatal(err)
	}
	e.srv = srv
	e.mux = http.NewServeMux()
	e.mux.Handle(rpcPath, srv.JSONRPC())
	e.mux.Handle(restEnvPrefix+"/", http.StripPrefix(restEnvPrefix, srv.HTTPJSON()))
	e.mux.Handle(restEnvCardPath, srv.AgentCard())
	return e
}

func (e *hardEnv) releaseHold() {
	select {
	case <-e.hold:
	default:
		close(e.hold)
	}
}

// serve starts a real server of the env's mux. setup, when not nil,
// adjusts the http.Server (timeouts), wrap wraps the mux and listen the
// listener.
func (e *hardEnv) serve(t testing.TB, setup func(*http.Server), wrap func(http.Handler) http.Handler, listen func(net.Listener) net.Listener) *httptest.Server {
	t.Helper()
	var h http.Handler = e.mux
	if wrap != nil {
		h = wrap(h)
	}
	hs := httptest.NewUnstartedServer(h)
	if listen != nil {
		hs.Listener = listen(hs.Listener)
	}
	// net/http logs what a handler lets escape; the tests read the env's
	// log instead.
	hs.Config.ErrorLog = nil
	if setup != nil {
		setup(hs.Config)
	}
	hs.Start()
	t.Cleanup(hs.Close)
	return hs
}

// hardCall is one request to a served env.
type hardCall struct {
	method string // default POST
	path   string // rpcPath, or below restEnvPrefix with the prefix
	key    string
	body   string
}

// hardReply is a response as read whole.
type hardReply struct {
	status int
	header http.Header
	body   []byte
	err    error // the connection failed instead
}

func (c hardCall) do(t testing.TB, hs *httptest.Server) hardReply {
	t.Helper()
	method := c.method
	if method == "" {
		method = http.MethodPost
	}
	var body io.Reader = http.NoBody
	if c.body != "" {
		body = strings.NewReader(c.body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, hs.URL+c.path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Content-Type", "application/json")
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	res, err := hs.Client().Do(req)
	if err != nil {
		return hardReply{err: err}
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return hardReply{status: res.StatusCode, header: res.Header, body: b, err: err}
}

// transcript renders an exchange for a golden file: what was sent, then
// the status, the headers a client acts on and the body.
func (r hardReply) transcript(request string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "### request\n%s\n### response\nHTTP %d\n", request, r.status)
	for _, h := range []string{"Content-Type", "WWW-Authenticate"} {
		if v := r.header.Get(h); v != "" {
			fmt.Fprintf(&b, "%s: %s\n", h, v)
		}
	}
	fmt.Fprintf(&b, "\n%s\n", r.body)
	return b.Bytes()
}

// rpcOf reads a reply as one JSON-RPC response.
func (r hardReply) rpc(t testing.TB) rpcReply {
	t.Helper()
	if r.err != nil {
		t.Fatalf("no response: %v", r.err)
	}
	return rpcReply{status: r.status, header: r.header, body: r.body}
}

// rest reads a reply as an HTTP+JSON response.
func (r hardReply) rest(t testing.TB) restResult {
	t.Helper()
	if r.err != nil {
		t.Fatalf("no response: %v", r.err)
	}
	return restResult{status: r.status, header: r.header, body: r.body}
}

// events reads an SSE body's data lines, one per event.
func sseData(body []byte) [][]byte {
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if v, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: ")); ok {
			out = append(out, bytes.Clone(v))
		}
	}
	return out
}

// sendBody is a SendMessage params object for skill.
func hardSend(msgID, skill string) map[string]any {
	return map[string]any{"message": rpcMessage(msgID, skill, "go")}
}

// restHardSend is the HTTP+JSON body of the same.
func restHardSend(msgID, skill string) string {
	b, _ := json.Marshal(hardSend(msgID, skill))
	return string(b)
}

// runsOf counts the runs of a tenant's caller.
func (e *hardEnv) runsOf(t testing.TB, key string) int {
	t.Helper()
	page, err := e.store.ListRuns(context.Background(), restKeys[key], interop.ListRunsQuery{PageSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	return page.Total
}

// logCapture keeps the server's JSON log lines.
type logCapture struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logCapture) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logCapture) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// records returns the log records at level, decoded.
func (l *logCapture) records(t testing.TB, level string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.Lines(l.String()) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec["level"] == level {
			out = append(out, rec)
		}
	}
	return out
}

// wantOnePanicLogged asserts that exactly one error was logged, a
// recovered panic, and that the log holds no secret.
func (l *logCapture) wantOnePanicLogged(t testing.TB) map[string]any {
	t.Helper()
	errs := l.records(t, "ERROR")
	if len(errs) != 1 || errs[0]["msg"] != "a2a: recovered from a panic" {
		t.Fatalf("error records %v, want exactly one recovered panic", errs)
	}
	if s := l.String(); strings.Contains(s, hardSecret) || strings.Contains(s, "key-acme") {
		t.Fatalf("the log holds a secret: %s", s)
	}
	if st, _ := errs[0]["stack"].(string); !strings.Contains(st, "panic") {
		t.Fatalf("no stack in %v", errs[0])
	}
	return errs[0]
}

// panicStore is a RunStore that panics (with hardSecret) in one method;
// "WatchRun" opens the watch and panics once it is ranged over.
type panicStore struct {
	interop.RunStore
	method string
}

func (p panicStore) maybe(method string) {
	if p.method == method {
		panic(errors.New(hardSecret))
	}
}

func (p panicStore) GetRun(ctx context.Context, sub interop.Subject, id string) (interop.Run, error) {
	p.maybe("GetRun")
	return p.RunStore.GetRun(ctx, sub, id)
}

func (p panicStore) CreateRun(ctx context.Context, sub interop.Subject, req interop.CreateRunRequest) (interop.Run, bool, error) {
	p.maybe("CreateRun")
	return p.RunStore.CreateRun(ctx, sub, req)
}

func (p panicStore) ListRuns(ctx context.Context, sub interop.Subject, q interop.ListRunsQuery) (interop.RunPage, error) {
	p.maybe("ListRuns")
	return p.RunStore.ListRuns(ctx, sub, q)
}

func (p panicStore) WatchRun(ctx context.Context, sub interop.Subject, id string, after int64) (iter.Seq2[interop.RunEvent, error], error) {
	seq, err := p.RunStore.WatchRun(ctx, sub, id, after)
	if err != nil || p.method != "WatchRun" {
		return seq, err
	}
	return func(yield func(interop.RunEvent, error) bool) {
		panic(hardSecret)
	}, nil
}

// panicInventory panics listing agents; failInventory fails.
type panicInventory struct{}

func (panicInventory) ListAgents(context.Context, interop.Subject) ([]interop.Agent, error) {
	panic(hardSecret)
}

type failInventory struct{}

func (failInventory) ListAgents(context.Context, interop.Subject) ([]interop.Agent, error) {
	return nil, errors.New("inventory database unreachable")
}

// smallBuffers makes every accepted connection's send buffer small, so a
// client that stops reading blocks the server's writes after a few KiB.
func smallBuffers(l net.Listener) net.Listener { return smallBufferListener{l} }

type smallBufferListener struct{ net.Listener }

func (l smallBufferListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(4 << 10)
	}
	return c, err
}

// handlerDone wraps h to report each request's end.
func handlerDone(done chan<- string) func(http.Handler) http.Handler {
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() { done <- r.URL.Path }()
			h.ServeHTTP(w, r)
		})
	}
}

// wireTask decodes a Task from JSON.
func wireTask(t testing.TB, raw []byte) *wire.Task {
	t.Helper()
	var task wire.Task
	if err := json.Unmarshal(raw, &task); err != nil {
		t.Fatalf("not a Task: %v: %s", err, raw)
	}
	return &task
}
