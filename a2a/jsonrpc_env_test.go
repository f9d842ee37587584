package a2a

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/errordetails"

	"github.com/wopinterop/wopinterop/internal/golden"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/isolation"
	"github.com/wopinterop/wopinterop/mapping"
	"github.com/wopinterop/wopinterop/negotiate"
)

// The JSON-RPC test host. Its interface URL path is rpcPath; requests are
// sent to another Host on purpose, which the binding must never echo.
const (
	rpcPath       = "/a2a/rpc"
	rpcPublicURL  = "https://a2a.example.test/a2a/rpc"
	rpcMaxBody    = 16 << 10
	rpcKeyAcme    = "key-acme"
	rpcKeyAcme2   = "key-acme-bob"
	rpcKeyGlobex  = "key-globex"
	rpcKeyDenied  = "key-denied"
	rpcRoutingKey = "rpc-routing-secret-0123456789abcdef"
)

// rpcSubjects are the callers of the test host, by bearer key.
func rpcSubjects() map[string]interop.Subject {
	return map[string]interop.Subject{
		rpcKeyAcme:   {Tenant: "acme", Principal: "user:alice", Authenticated: true},
		rpcKeyAcme2:  {Tenant: "acme", Principal: "user:bob", Authenticated: true},
		rpcKeyGlobex: {Tenant: "globex", Principal: "user:gina", Authenticated: true},
	}
}

// rpcClock is the one time of the test host, so timestamps are stable.
var rpcClock = time.Date(2026, 11, 30, 9, 30, 0, 0, time.UTC)

// rpcEnv is a host on memstore with the JSON-RPC handler mounted at
// rpcPath, tenants acme and globex with the conformance fixtures and one
// agent each.
type rpcEnv struct {
	store   *memstore.Store
	srv     *Server
	handler http.Handler
	mux     *http.ServeMux
	routing *isolation.RoutingKeys
	// agentR are the routing values of the inventory agents, by agent id.
	agentR map[string]string
}

type rpcOption func(*testConfig)

func rpcCaps(c caps) rpcOption { return func(cfg *testConfig) { cfg.setCaps(c) } }

func newRPCEnv(t testing.TB, opts ...rpcOption) *rpcEnv {
	t.Helper()
	store := memstore.New(memstore.WithClock(func() time.Time { return rpcClock }))
	t.Cleanup(func() { _ = store.Close() })
	for _, tenant := range []string{"acme", "globex"} {
		if err := store.RegisterFixtures(tenant); err != nil {
			t.Fatal(err)
		}
	}
	agents := map[string]interop.Agent{
		"acme":   {ID: "agent-ada", Persona: "Ada", PackVersion: "2.3.1", Label: "Ada the approver", Workflows: []string{memstore.FixtureApproval, memstore.FixtureNoop}},
		"globex": {ID: "agent-gus", Persona: "Gus", PackVersion: "1.0.0", Label: "Globex agent", Workflows: []string{memstore.FixtureNoop}},
	}
	for tenant, a := range agents {
		if err := store.AddAgent(tenant, a); err != nil {
			t.Fatal(err)
		}
	}
	routing, err := isolation.NewRoutingKeys([]byte(rpcRoutingKey), "rpc-host-1")
	if err != nil {
		t.Fatal(err)
	}
	agentR := map[string]string{}
	for _, a := range agents {
		r, ok := routing.ForAgent(a)
		if !ok {
			t.Fatalf("no routing value for %s", a.ID)
		}
		agentR[a.ID] = r
	}
	policy, err := negotiate.NewPolicy(negotiate.Config{
		Protocol: negotiate.A2A, Offered: []string{"1.0"}, Preferred: "1.0", Floor: "1.0",
		Now: func() time.Time { return rpcClock },
	})
	if err != nil {
		t.Fatal(err)
	}
	subjects := rpcSubjects()
	workflows, err := store.ListWorkflows(context.Background(), subjects[rpcKeyAcme])
	if err != nil {
		t.Fatal(err)
	}
	var routed []interop.Workflow
	for _, w := range workflows {
		if w.ID == memstore.FixtureApproval || w.ID == memstore.FixtureNoop {
			routed = append(routed, w)
		}
	}
	slices.SortFunc(routed, func(a, b interop.Workflow) int { return strings.Compare(a.ID, b.ID) })
	cfg := testConfig{
		Deps: Deps{
			Store: store,
			Subjects: interop.SubjectResolverFunc(func(r *http.Request) (interop.Subject, error) {
				key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
				if ok && key == rpcKeyDenied {
					return interop.Subject{}, interop.ErrForbidden
				}
				sub, known := subjects[key]
				if !ok || !known {
					return interop.Subject{}, interop.ErrUnauthenticated
				}
				return sub, nil
			}),
			Policy:     policy,
			Auditor:    negotiate.NewAuditor(store, negotiate.AuditorOptions{Synchronous: true}),
			Map:        mapping.Builtin(),
			JSONRPCURL: rpcPublicURL,
			Routed:     routed,
		},
		Options: Options{
			Streaming:    true,
			DurableTasks: true,
			Card: CardConfig{
				Name: "RPC test host", Description: "A host for the JSON-RPC binding tests.", Version: "1.2.3",
				SecuritySchemes: wire.NamedSecuritySchemes{
					"bearer": wire.HTTPAuthSecurityScheme{Scheme: "Bearer"},
				},
				SecurityRequirements: wire.SecurityRequirementsOptions{{"bearer": {}}},
			},
			Inventory:    store,
			Routing:      routing,
			BlockTimeout: 5 * time.Second,
			MaxBodyBytes: rpcMaxBody,
			Now:          func() time.Time { return rpcClock },
		},
	}
	for _, o := range opts {
		o(&cfg)
	}
	srv, err := New(cfg.Deps, cfg.Options)
	if err != nil {
		t.Fatal(err)
	}
	h := srv.JSONRPC()
	mux := http.NewServeMux()
	mux.Handle(rpcPath, h)
	return &rpcEnv{store: store, srv: srv, handler: h, mux: mux, routing: routing, agentR: agentR}
}

// rpcCall is one HTTP request to the JSON-RPC URL.
type rpcCall struct {
	verb    string // default POST
	key     string // bearer key; "" sends no credential
	version string // A2A-Version; default "1.0", "-" sends none
	body    string
}

// rpcReply is one HTTP response.
type rpcReply struct {
	status int
	header http.Header
	body   []byte
}

func (c rpcCall) request(ctx context.Context, target string) *http.Request {
	verb := c.verb
	if verb == "" {
		verb = http.MethodPost
	}
	var body io.Reader = http.NoBody
	if c.body != "" {
		body = strings.NewReader(c.body)
	}
	r := httptest.NewRequestWithContext(ctx, verb, target, body)
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json")
	if c.key != "" {
		r.Header.Set("Authorization", "Bearer "+c.key)
	}
	switch c.version {
	case "":
		r.Header.Set("A2A-Version", "1.0")
	case "-":
	default:
		r.Header.Set("A2A-Version", c.version)
	}
	return r
}

// do serves c in memory.
func (e *rpcEnv) do(t testing.TB, c rpcCall) rpcReply {
	t.Helper()
	rec := httptest.NewRecorder()
	e.mux.ServeHTTP(rec, c.request(context.Background(), "http://wrong-host.invalid"+rpcPath))
	return rpcReply{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
}

// rpcBody builds a request object.
func rpcBody(id any, method string, params any) string {
	m := map[string]any{"jsonrpc": "2.0", "method": method}
	if id != nil {
		m["id"] = id
	}
	if params != nil {
		m["params"] = params
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // keep "<R:agent>" placeholders readable
	if err := enc.Encode(m); err != nil {
		panic(err)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// rpcMessage is a user message with one text part for skill.
func rpcMessage(id, skill, text string) map[string]any {
	return map[string]any{
		"messageId": id, "role": "ROLE_USER",
		"parts":    []any{map[string]any{"text": text}},
		"metadata": map[string]any{"skillId": skill},
	}
}

// rpcResponse is a JSON-RPC response as the tests read it.
type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *rpcErrorJSON   `json:"error"`
}

type rpcErrorJSON struct {
	Code    int              `json:"code"`
	Message string           `json:"message"`
	Data    []map[string]any `json:"data"`
}

// decodeRPC reads a single JSON-RPC response and checks its envelope.
func decodeRPC(t testing.TB, res rpcReply) rpcResponse {
	t.Helper()
	if ct := res.header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q, want application/json; body %s", ct, res.body)
	}
	var out rpcResponse
	dec := json.NewDecoder(bytes.NewReader(res.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		t.Fatalf("not a JSON-RPC response: %v: %s", err, res.body)
	}
	if out.JSONRPC != "2.0" || (out.Error == nil) == (out.Result == nil) {
		t.Fatalf("not a JSON-RPC 2.0 response: %s", res.body)
	}
	return out
}

// wantRPCError checks a JSON-RPC error response: HTTP status, code and the
// single ErrorInfo reason ("" for no data).
func wantRPCError(t testing.TB, res rpcReply, status, code int, reason string) rpcResponse {
	t.Helper()
	if res.status != status {
		t.Fatalf("HTTP %d, want %d: %s", res.status, status, res.body)
	}
	out := decodeRPC(t, res)
	if out.Error == nil {
		t.Fatalf("no error: %s", res.body)
	}
	if out.Error.Code != code {
		t.Fatalf("code %d, want %d: %s", out.Error.Code, code, res.body)
	}
	switch {
	case reason == "" && code != codeInvalidParams && len(out.Error.Data) != 0:
		t.Fatalf("data %v, want none", out.Error.Data)
	case reason != "":
		if len(out.Error.Data) != 1 {
			t.Fatalf("data has %d elements, want exactly one ErrorInfo: %s", len(out.Error.Data), res.body)
		}
		d := out.Error.Data[0]
		if d["@type"] != errordetails.ErrorInfoType || d["reason"] != reason || d["domain"] != "a2a-protocol.org" {
			t.Fatalf("ErrorInfo %v, want reason %s in domain a2a-protocol.org", d, reason)
		}
		if md, ok := d["metadata"].(map[string]any); ok {
			if _, ts := md["timestamp"]; ts {
				t.Fatalf("ErrorInfo carries a timestamp: %v", md)
			}
		}
	}
	return out
}

// rpcTask decodes a result holding a Task (bare, or as {"task":…}).
func rpcTask(t testing.TB, res rpcReply, wrapped bool) *wire.Task {
	t.Helper()
	out := decodeRPC(t, res)
	if out.Error != nil {
		t.Fatalf("error %d %s: %s", out.Error.Code, out.Error.Message, res.body)
	}
	raw := out.Result
	if wrapped {
		var w struct {
			Task json.RawMessage `json:"task"`
		}
		if err := json.Unmarshal(raw, &w); err != nil || w.Task == nil {
			t.Fatalf("result is not a SendMessageResponse with a task: %s", raw)
		}
		raw = w.Task
	}
	var task wire.Task
	if err := json.Unmarshal(raw, &task); err != nil {
		t.Fatalf("result is not a Task: %v: %s", err, raw)
	}
	return &task
}

// sendNew starts a task of skill for key and returns it.
func (e *rpcEnv) sendNew(t testing.TB, key, msgID, skill string) *wire.Task {
	t.Helper()
	res := e.do(t, rpcCall{key: key, body: rpcBody(1, methodSendMessage, map[string]any{"message": rpcMessage(msgID, skill, "hello")})})
	return rpcTask(t, res, true)
}

// completedTask returns a completed noop task of acme.
func (e *rpcEnv) completedTask(t testing.TB, msgID string) *wire.Task {
	t.Helper()
	task := e.sendNew(t, rpcKeyAcme, msgID, memstore.FixtureNoop)
	if task.Status.State != wire.TaskStateCompleted {
		t.Fatalf("noop task is %s", task.Status.State)
	}
	return task
}

// --- golden files ---

// rpcNormalizer replaces the values a run mints afresh with stable
// placeholders, numbered in order of first appearance, so a golden file
// holds exact bytes otherwise:
//
//	tenant-bound ids  acme/<26 base32>      -> acme/<id-1>, acme/<id-2>, …  (task, interrupt and
//	                                            status-message ids; message ids derived from a run id
//	                                            keep their suffix, e.g. "#failed")
//	minted contextIds ctx-<26 base32>        -> ctx-<ctx-1>, …
//	routing values    the agents' R values   -> <R:agent-id>
//	timestamps        RFC 3339 (UTC)          -> <time>
//
// The host clock is fixed, so timestamps are stable already; they are
// replaced anyway so a store that stamps with its own clock cannot make the
// files flaky.
type rpcNormalizer struct {
	ids, ctxs map[string]string
	agentR    map[string]string
}

var (
	rpcIDPattern   = regexp.MustCompile(`\b(acme|globex)/[A-Z2-7]{26}\b`)
	rpcCtxPattern  = regexp.MustCompile(`\bctx-[A-Z2-7]{26}\b`)
	rpcTimePattern = regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z`)
)

func newRPCNormalizer(agentR map[string]string) *rpcNormalizer {
	return &rpcNormalizer{ids: map[string]string{}, ctxs: map[string]string{}, agentR: agentR}
}

func (n *rpcNormalizer) apply(b []byte) []byte {
	out := rpcIDPattern.ReplaceAllFunc(b, func(m []byte) []byte {
		k := string(m)
		if v, ok := n.ids[k]; ok {
			return []byte(v)
		}
		tenant, _, _ := strings.Cut(k, "/")
		v := fmt.Sprintf("%s/<id-%d>", tenant, len(n.ids)+1)
		n.ids[k] = v
		return []byte(v)
	})
	out = rpcCtxPattern.ReplaceAllFunc(out, func(m []byte) []byte {
		k := string(m)
		if v, ok := n.ctxs[k]; ok {
			return []byte(v)
		}
		v := fmt.Sprintf("ctx-<ctx-%d>", len(n.ctxs)+1)
		n.ctxs[k] = v
		return []byte(v)
	})
	for agent, r := range n.agentR {
		out = bytes.ReplaceAll(out, []byte(r), []byte("<R:"+agent+">"))
	}
	return rpcTimePattern.ReplaceAll(out, []byte("<time>"))
}

// rpcTranscript renders one exchange: the request as sent and the response
// status, the headers a client acts on, and the body.
func rpcTranscript(c rpcCall, res rpcReply) []byte {
	var b bytes.Buffer
	verb := c.verb
	if verb == "" {
		verb = http.MethodPost
	}
	fmt.Fprintf(&b, "### request\n%s %s\n", verb, rpcPath)
	if c.key != "" {
		fmt.Fprintf(&b, "Authorization: Bearer %s\n", c.key)
	}
	switch c.version {
	case "":
		b.WriteString("A2A-Version: 1.0\n")
	case "-":
	default:
		fmt.Fprintf(&b, "A2A-Version: %s\n", c.version)
	}
	fmt.Fprintf(&b, "\n%s\n### response\nHTTP %d\n", c.body, res.status)
	for _, h := range []string{"Content-Type", "Allow", "WWW-Authenticate", "Cache-Control"} {
		if v := res.header.Get(h); v != "" {
			fmt.Fprintf(&b, "%s: %s\n", h, v)
		}
	}
	b.WriteString("\n")
	b.Write(res.body)
	if len(res.body) > 0 && res.body[len(res.body)-1] != '\n' {
		b.WriteString("\n")
	}
	return b.Bytes()
}

// rpcGolden compares got with testdata/jsonrpc/name.txt; -update rewrites
// it (internal/golden).
func rpcGolden(t testing.TB, name string, got []byte) {
	t.Helper()
	golden.Check(t, "jsonrpc/"+name+".txt", got)
}

// --- streaming over a real connection ---

// rpcStream is an event stream read from a real HTTP connection.
type rpcStream struct {
	resp *http.Response
	r    *bufio.Reader
	raw  bytes.Buffer // every byte read, for golden files
}

// openStream posts c to a test server running the env's mux.
func (e *rpcEnv) openStream(t testing.TB, ctx context.Context, srv *httptest.Server, c rpcCall) *rpcStream {
	t.Helper()
	req := c.request(ctx, srv.URL+rpcPath)
	req.RequestURI = ""
	req.Header.Set("Accept", "text/event-stream")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	return &rpcStream{resp: resp, r: bufio.NewReader(resp.Body)}
}

// next reads one event's data; io.EOF at the end of the stream. Comment
// lines (heartbeats) are skipped.
func (s *rpcStream) next() ([]byte, error) {
	var data []byte
	for {
		line, err := s.r.ReadBytes('\n')
		s.raw.Write(line)
		if err != nil {
			if err == io.EOF && len(line) == 0 && data == nil {
				return nil, io.EOF
			}
			return nil, fmt.Errorf("stream cut: %w", err)
		}
		line = bytes.TrimRight(line, "\n")
		switch {
		case len(line) == 0:
			if data != nil {
				return data, nil
			}
		case line[0] == ':':
		default:
			v, ok := bytes.CutPrefix(line, []byte("data: "))
			if !ok {
				return nil, fmt.Errorf("unexpected stream line %q", line)
			}
			data = append(data, v...)
		}
	}
}

// rpcEvent decodes a stream event: a JSON-RPC response whose result is one
// StreamResponse.
func rpcEvent(t testing.TB, data []byte, wantID string) wire.Event {
	t.Helper()
	var env rpcResponse
	if err := json.Unmarshal(data, &env); err != nil {
		t.Fatalf("event is not JSON-RPC: %v: %s", err, data)
	}
	if env.JSONRPC != "2.0" || string(env.ID) != wantID || env.Result == nil {
		t.Fatalf("event %s: want a result echoing id %s", data, wantID)
	}
	var sr wire.StreamResponse
	if err := json.Unmarshal(env.Result, &sr); err != nil {
		t.Fatalf("result is not a StreamResponse: %v: %s", err, env.Result)
	}
	return sr.Event
}
