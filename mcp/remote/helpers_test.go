package remote

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopinterop/wopinterop/egress"
	"github.com/wopinterop/wopinterop/internal/sharedspec"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/negotiate"
)

// runID is a tenant-bound run id of the upstream ids grammar.
const runID = "acme/AAAAAAAAAAAAAAAAAAAAAAAAAA"

const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

// testNow is the clock of the policy and, unless a test moves it, of the
// client.
var testNow = time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)

// sink records what the client hands the host.
type sink struct {
	mu     sync.Mutex
	runs   map[string][]interop.RunEvent
	host   []interop.HostEvent
	refuse error
}

func newSink() *sink { return &sink{runs: map[string][]interop.RunEvent{}} }

func (s *sink) AppendRunEvent(_ context.Context, runID string, ev interop.RunEvent) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refuse != nil {
		return s.refuse
	}
	s.runs[runID] = append(s.runs[runID], ev)
	return nil
}

func (s *sink) PublishHostEvent(_ context.Context, _ string, ev interop.HostEvent) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.host = append(s.host, ev)
	return nil
}

func (s *sink) events(runID string) []interop.RunEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]interop.RunEvent(nil), s.runs[runID]...)
}

// record is a decoded negotiation.decided payload.
type record struct {
	Protocol   string `json:"protocol"`
	Outcome    string `json:"outcome"`
	At         string `json:"at"`
	Version    string `json:"version"`
	Floor      string `json:"floor"`
	Requested  string `json:"requested"`
	Reason     string `json:"reason"`
	PeerDigest string `json:"peerDigest"`
}

// onlyRecord returns the one negotiation.decided record on runID's log,
// failing unless the log holds exactly that, nothing went to host events,
// and the event passes both the library's check and the upstream
// RunEventDoc schema (with the store's envelope fields filled in).
func (s *sink) onlyRecord(t *testing.T, runID string) (record, []byte) {
	t.Helper()
	evs := s.events(runID)
	if len(evs) != 1 || evs[0].Type != interop.EventNegotiationDecided {
		t.Fatalf("run log %+v, want exactly one negotiation.decided", evs)
	}
	s.mu.Lock()
	hosts := len(s.host)
	s.mu.Unlock()
	if hosts != 0 {
		t.Fatalf("%d host events, want none: the record belongs on the run's log", hosts)
	}
	// The store mints the envelope's id, sequence and timestamp.
	ev := evs[0]
	ev.EventID, ev.RunID, ev.Sequence = "evt-AAAAAAAAAAAAAAAAAAAAAAAAAA", runID, 0
	if ev.Timestamp.IsZero() {
		ev.Timestamp = testNow
	}
	if err := ev.Validate(); err != nil {
		t.Fatalf("record %s: %v", ev.Payload, err)
	}
	doc, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	if err := sharedspec.RunEventValidator(t)(doc); err != nil {
		t.Fatalf("record against the upstream schema: %v\n%s", err, doc)
	}
	var r record
	dec := json.NewDecoder(bytes.NewReader(ev.Payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("record %s: %v", ev.Payload, err)
	}
	return r, ev.Payload
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// seen is one request a server received.
type seen struct {
	httpMethod string
	method     string // the JSON-RPC method
	version    string // MCP-Protocol-Version
	header     http.Header
	body       []byte
}

// server is an MCP server on loopback: go-sdk's stateless streamable
// handler over srv (unless a test replaces the handler), recording every
// request it receives.
type server struct {
	http *httptest.Server
	mcp  *mcp.Server

	mu      sync.Mutex
	reqs    []seen
	handler http.Handler
}

type serverOpt func(*mcp.ServerOptions, *mcp.StreamableHTTPOptions)

// withVersions narrows the revisions the server speaks.
func withVersions(vs ...string) serverOpt {
	return func(o *mcp.ServerOptions, _ *mcp.StreamableHTTPOptions) { o.SupportedProtocolVersions = vs }
}

// withCache makes every cacheable result carry ttlMs and cacheScope.
func withCache(ttlMs int, scope string) serverOpt {
	return func(o *mcp.ServerOptions, _ *mcp.StreamableHTTPOptions) {
		o.SetCacheable = func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) {
			c.TTLMs, c.CacheScope = ttlMs, scope
		}
	}
}

// withJSON makes the server answer application/json instead of SSE.
func withJSON() serverOpt {
	return func(_ *mcp.ServerOptions, h *mcp.StreamableHTTPOptions) { h.JSONResponse = true }
}

func withPageSize(n int) serverOpt {
	return func(o *mcp.ServerOptions, _ *mcp.StreamableHTTPOptions) { o.PageSize = n }
}

func newServer(t testing.TB, opts ...serverOpt) *server {
	t.Helper()
	so := &mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}}
	ho := &mcp.StreamableHTTPOptions{Stateless: true}
	for _, o := range opts {
		o(so, ho)
	}
	s := &server{mcp: mcp.NewServer(&mcp.Implementation{Name: "test-server", Version: "1.0.0"}, so)}
	s.handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, ho)
	s.http = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.http.Close)
	return s
}

func (s *server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var msg struct {
		Method string `json:"method"`
	}
	_ = json.Unmarshal(body, &msg)
	s.mu.Lock()
	s.reqs = append(s.reqs, seen{httpMethod: r.Method, method: msg.Method, version: r.Header.Get("MCP-Protocol-Version"), header: r.Header.Clone(), body: body})
	h := s.handler
	s.mu.Unlock()
	r.Body = io.NopCloser(bytes.NewReader(body))
	h.ServeHTTP(w, r)
}

// setHandler replaces what answers the requests (they are still recorded).
func (s *server) setHandler(h http.Handler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handler = h
}

func (s *server) requests() []seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]seen(nil), s.reqs...)
}

// methods returns the JSON-RPC methods received, in order.
func (s *server) methods() []string {
	var out []string
	for _, r := range s.requests() {
		out = append(out, r.method)
	}
	return out
}

// count returns how many requests of method the server received.
func (s *server) count(method string) int {
	n := 0
	for _, r := range s.requests() {
		if r.method == method {
			n++
		}
	}
	return n
}

func (s *server) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = nil
}

func (s *server) endpoint() string { return s.http.URL + "/mcp" }

// addTool registers a tool answering "echo:" and its arguments.
func (s *server) addTool(tool *mcp.Tool) {
	s.mcp.AddTool(tool, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo:" + string(req.Params.Arguments)}}}, nil
	})
}

// schema is an object schema with one string property.
func schema(prop string) map[string]any {
	return map[string]any{
		"type":       "object",
		"properties": map[string]any{prop: map[string]any{"type": "string"}},
		"required":   []any{prop},
	}
}

// tool is a test tool over schema(prop), as a client decodes it (the
// schema a map, as go-sdk's client holds it).
func tool(name, prop string) *mcp.Tool {
	return &mcp.Tool{Name: name, Description: "Echoes <" + prop + "> back.", InputSchema: schema(prop)}
}

// mcpPolicy is the host's MCP policy: 2026-07-28 only.
func mcpPolicy(t testing.TB) *negotiate.Policy {
	t.Helper()
	p, err := negotiate.NewPolicy(negotiate.Config{
		Protocol: negotiate.MCP, Offered: []string{Revision}, Preferred: Revision, Floor: Revision,
		Now: func() time.Time { return testNow },
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// staticCredentials answers every reference with one credential per name.
type staticCredentials struct {
	mu     sync.Mutex
	values map[string]string // ref name → "scheme value"
	err    error
	calls  int
}

func (c *staticCredentials) Credential(_ context.Context, ref CredentialRef) (string, string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	if c.err != nil {
		return "", "", c.err
	}
	scheme, value, _ := strings.Cut(c.values[ref.Name], " ")
	return scheme, value, nil
}

func (c *staticCredentials) set(name, v string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.values[name] = v
}

// clock is a settable clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// fixture is a client over one server.
type fixture struct {
	srv    *server
	sink   *sink
	client *Client
	creds  *staticCredentials
	clock  *clock
}

type fixtureOpt func(*Deps, *Options)

func withAdmission(f func(*Admission)) fixtureOpt {
	return func(d *Deps, _ *Options) {
		for i := range d.Admissions {
			f(&d.Admissions[i])
		}
	}
}

// withCredential presents "Bearer <value>" under the reference name.
func withCredential(name, value string) fixtureOpt {
	return func(d *Deps, _ *Options) {
		d.Credentials.(*staticCredentials).set(name, "Bearer "+value)
		for i := range d.Admissions {
			d.Admissions[i].Credential = CredentialRef{Name: name, Owner: "host", Scope: "tools"}
		}
	}
}

func withOptions(f func(*Options)) fixtureOpt {
	return func(_ *Deps, o *Options) { f(o) }
}

// admission admits the tools with their digests as listed.
func admission(s *server, tools ...*mcp.Tool) Admission {
	a := Admission{Alias: "echo", Endpoint: s.endpoint(), Tenant: "acme", Principal: "user-1"}
	for _, t := range tools {
		a.Tools = append(a.Tools, AdmittedTool{Name: t.Name, Digest: ToolDigest(t)})
	}
	return a
}

func newFixture(t testing.TB, s *server, a Admission, opts ...fixtureOpt) *fixture {
	t.Helper()
	g, err := egress.NewGuard(egress.GuardOptions{AllowOrigins: []string{s.http.URL}})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{srv: s, sink: newSink(), creds: &staticCredentials{values: map[string]string{}}, clock: &clock{now: testNow}}
	d := Deps{Policy: mcpPolicy(t), Events: f.sink, Guard: g, Credentials: f.creds, Admissions: []Admission{a}, MaxRounds: 4}
	o := Options{Now: f.clock.Now}
	for _, opt := range opts {
		opt(&d, &o)
	}
	c, err := New(d, o)
	if err != nil {
		t.Fatal(err)
	}
	f.client = c
	return f
}

// connect opens a session for runID and closes it when the test ends.
func (f *fixture) connect(t *testing.T, ctx context.Context, runID, alias string) *Session {
	t.Helper()
	s, err := f.client.Connect(ctx, runID, alias)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// rpcAnswer answers every POST with status, content type and body; "$ID"
// in body is the request's id.
func rpcAnswer(status int, contentType, body string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(raw, &req)
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, strings.ReplaceAll(body, "$ID", string(req.ID)))
	})
}
