package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/internal/golden"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/mcp/sealed"
	"github.com/wopinterop/wopinterop/negotiate"
)

const (
	tenantA = "acme"
	tenantB = "globex"
)

// Extra workflows of tenantA (beside the conformance fixtures).
const (
	wfTaskRequired  = "task-required"
	wfTaskForbidden = "task-forbidden"
	wfAskName       = "ask-name"
	wfAskSecret     = "ask-secret"
	wfCredential    = "needs-credential"
	wfTwoSteps      = "two-steps"
	wfFault         = "host-fault"
)

// testSubjects authenticates "Authorization: Bearer tenant:principal".
// "anon" is an anonymous Subject, "anon-acme" one the host places in
// tenantA, "forbidden" ErrForbidden, "broken" a resolver fault; no header
// is ErrUnauthenticated.
var testSubjects = interop.SubjectResolverFunc(func(r *http.Request) (interop.Subject, error) {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	switch {
	case !ok:
		return interop.Subject{}, interop.ErrUnauthenticated
	case tok == "anon":
		return interop.Subject{}, nil
	case tok == "anon-acme":
		return interop.Subject{Tenant: tenantA}, nil
	case tok == "forbidden":
		return interop.Subject{}, interop.ErrForbidden
	case tok == "broken":
		return interop.Subject{}, errors.New("subject store unavailable")
	}
	tenant, principal, ok := strings.Cut(tok, ":")
	if !ok {
		return interop.Subject{}, interop.ErrUnauthenticated
	}
	return interop.Subject{Tenant: tenant, Principal: principal, Authenticated: true}, nil
})

func subject(tenant, principal string) interop.Subject {
	return interop.Subject{Tenant: tenant, Principal: principal, Authenticated: true}
}

var alice = subject(tenantA, "alice")

// clock is a settable clock for the sealer.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// testConfig is a mount's dependencies and options in one value, so that
// a test edits either with one func(*testConfig).
type testConfig struct {
	Deps
	Options
}

// env is a mount over a memstore with the conformance fixtures in tenantA
// and tenantB and the extra workflows in tenantA.
type env struct {
	t     testing.TB
	store *memstore.Store
	srv   *Server
	h     http.Handler
	clock *clock
}

func newEnv(t testing.TB, opts ...func(*testConfig)) *env {
	t.Helper()
	store := memstore.New()
	for _, tenant := range []string{tenantA, tenantB} {
		if err := store.RegisterFixtures(tenant); err != nil {
			t.Fatal(err)
		}
	}
	for _, def := range extraWorkflows() {
		if err := store.Register(tenantA, def); err != nil {
			t.Fatal(err)
		}
	}
	policy, err := negotiate.NewPolicy(negotiate.Config{Protocol: negotiate.MCP, Offered: []string{Revision}, Preferred: Revision, Floor: Revision})
	if err != nil {
		t.Fatal(err)
	}
	auditor := negotiate.NewAuditor(store, negotiate.AuditorOptions{Synchronous: true})
	clk := &clock{t: time.Now()}
	sealer, err := sealed.NewSealer(sealed.Config{Key: bytes.Repeat([]byte("k"), 32), Now: clk.now, TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig{
		Deps:    Deps{Store: store, Subjects: testSubjects, Policy: policy, Auditor: auditor, Sealer: sealer},
		Options: Options{ServerInfo: Implementation{Name: "test-host", Version: "1.0.0"}, BlockTimeout: 5 * time.Second},
	}
	for _, o := range opts {
		o(&cfg)
	}
	srv, err := New(cfg.Deps, cfg.Options)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, store: store, srv: srv, h: srv.Handler(), clock: clk}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Close(ctx); err != nil {
			t.Errorf("Server.Close: %v", err)
		}
		_ = store.Close()
	})
	return e
}

func withTasks(c *testConfig) { c.Tasks = true }

const (
	nameSchema   = `{"type":"object","properties":{"name":{"type":"string","title":"Name"}},"required":["name"]}`
	secretSchema = `{"type":"object","properties":{"apiKey":{"type":"string","writeOnly":true}},"required":["apiKey"]}`
)

func extraWorkflows() []memstore.WorkflowDef {
	noop := func(context.Context, *memstore.RunContext) (json.RawMessage, error) {
		return json.RawMessage(`{"ok":true}`), nil
	}
	wait := func(ctx context.Context, _ *memstore.RunContext) (json.RawMessage, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	ask := func(key, schema string) memstore.WorkflowFunc {
		return func(ctx context.Context, rc *memstore.RunContext) (json.RawMessage, error) {
			res, err := rc.Interrupt(ctx, interop.Interrupt{Kind: interop.InterruptClarification, Key: key, NodeID: key, Message: "What is your " + key + "?", ResumeSchema: json.RawMessage(schema)})
			if err != nil {
				return nil, err
			}
			if res.Outcome != interop.OutcomeAccept {
				return nil, memstore.Fail("no answer")
			}
			return res.Value, nil
		}
	}
	return []memstore.WorkflowDef{
		{Workflow: interop.Workflow{ID: wfTaskRequired, Name: "Task required", TaskSupport: interop.TaskRequired}, Run: noop},
		{Workflow: interop.Workflow{ID: wfTaskForbidden, Name: "Task forbidden", TaskSupport: interop.TaskForbidden}, Run: noop},
		{Workflow: interop.Workflow{ID: wfAskName, Name: "Ask name"}, Run: ask("name", nameSchema)},
		{Workflow: interop.Workflow{ID: wfAskSecret, Name: "Ask secret"}, Run: ask("apiKey", secretSchema)},
		{Workflow: interop.Workflow{ID: wfCredential, Name: "Needs credential"}, Run: func(ctx context.Context, rc *memstore.RunContext) (json.RawMessage, error) {
			cd := &interop.CredentialData{Provider: "github", Scopes: []string{"repo"}, Reason: "missing", ConnectURL: "https://host.example/connect/github"}
			data, _ := json.Marshal(cd)
			if _, err := rc.Interrupt(ctx, interop.Interrupt{Kind: interop.InterruptCredential, Key: "github", NodeID: "auth", Data: data, Credential: cd}); err != nil {
				return nil, err
			}
			return json.RawMessage(`{"connected":true}`), nil
		}},
		{Workflow: interop.Workflow{ID: wfTwoSteps, Name: "Two steps"}, Run: func(ctx context.Context, rc *memstore.RunContext) (json.RawMessage, error) {
			for _, key := range []string{"first", "second"} {
				if _, err := rc.Interrupt(ctx, interop.Interrupt{Kind: interop.InterruptClarification, Key: key, NodeID: key, Message: key, ResumeSchema: json.RawMessage(nameSchema)}); err != nil {
					return nil, err
				}
			}
			return json.RawMessage(`{"done":true}`), nil
		}},
		{Workflow: interop.Workflow{ID: "waits", Name: "Waits for cancel"}, Run: wait},
	}
}

// rpc describes one request to the mount.
type rpc struct {
	method string
	id     string         // raw JSON id; "" means 1
	params map[string]any // without _meta
	caps   string         // raw clientCapabilities; "" means {}
	as     string         // "tenant:principal"; "" means acme:alice
	// hdr overrides headers; "" deletes one.
	hdr  map[string]string
	meta string // raw _meta replacing the default one
	body string // raw body replacing the built one
}

const defaultCaps = `{"elicitation":{}}`

func (q rpc) request() *http.Request {
	id := q.id
	if id == "" {
		id = "1"
	}
	body := q.body
	if body == "" {
		meta := q.meta
		if meta == "" {
			caps := q.caps
			if caps == "" {
				caps = "{}"
			}
			meta = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `}`
		}
		params := map[string]json.RawMessage{"_meta": json.RawMessage(meta)}
		for k, v := range q.params {
			b, err := json.Marshal(v)
			if err != nil {
				panic(err)
			}
			params[k] = b
		}
		p, _ := json.Marshal(params)
		body = `{"jsonrpc":"2.0","id":` + id + `,"method":` + quote(q.method) + `,"params":` + string(p) + `}`
	}
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set(headerProtocolVersion, Revision)
	r.Header.Set(headerMethod, q.method)
	if name, ok := q.params["name"].(string); ok {
		r.Header.Set(headerName, name)
	}
	if id, ok := q.params["taskId"].(string); ok {
		r.Header.Set(headerName, id)
	}
	if uri, ok := q.params["uri"].(string); ok {
		r.Header.Set(headerName, uri)
	}
	as := q.as
	if as == "" {
		as = "acme:alice"
	}
	r.Header.Set("Authorization", "Bearer "+as)
	for k, v := range q.hdr {
		if v == "" {
			r.Header.Del(k)
			continue
		}
		r.Header.Set(k, v)
	}
	return r
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// do serves q and returns the recorder.
func (e *env) do(q rpc) *httptest.ResponseRecorder {
	e.t.Helper()
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, q.request())
	return rec
}

// response is a decoded JSON-RPC response.
type response struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

func decodeResponse(t testing.TB, rec *httptest.ResponseRecorder) response {
	t.Helper()
	var r response
	if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
		t.Fatalf("response is not JSON (%d): %v\n%s", rec.Code, err, rec.Body)
	}
	return r
}

// result returns the result object of a 200 response.
func result(t testing.TB, rec *httptest.ResponseRecorder) map[string]any {
	t.Helper()
	r := decodeResponse(t, rec)
	if rec.Code != http.StatusOK || r.Error != nil {
		t.Fatalf("want a result, got %d %s", rec.Code, rec.Body)
	}
	var m map[string]any
	if err := json.Unmarshal(r.Result, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// wantError checks an error response's status, code and (when non-empty)
// reason in data.
func wantError(t testing.TB, rec *httptest.ResponseRecorder, status, code int) response {
	t.Helper()
	r := decodeResponse(t, rec)
	if rec.Code != status || r.Error == nil || r.Error.Code != code {
		t.Fatalf("want HTTP %d code %d, got %d %s", status, code, rec.Code, rec.Body)
	}
	if r.Result != nil {
		t.Fatalf("error response carries a result: %s", rec.Body)
	}
	return r
}

func testCtx(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// runsOf lists sub's runs.
func (e *env) runsOf(sub interop.Subject) interop.RunPage {
	e.t.Helper()
	page, err := e.store.ListRuns(testCtx(e.t), sub, interop.ListRunsQuery{PageSize: 100})
	if err != nil {
		e.t.Fatal(err)
	}
	return page
}

// onlyRun returns sub's single run.
func (e *env) onlyRun(sub interop.Subject) interop.Run {
	e.t.Helper()
	page := e.runsOf(sub)
	if len(page.Runs) != 1 {
		e.t.Fatalf("want 1 run, have %d", len(page.Runs))
	}
	return page.Runs[0]
}

// waitStatus waits until runID reaches status.
func (e *env) waitStatus(sub interop.Subject, runID string, status interop.RunStatus) interop.Run {
	e.t.Helper()
	ctx := testCtx(e.t)
	for {
		run, err := e.store.GetRun(ctx, sub, runID)
		if err != nil {
			e.t.Fatal(err)
		}
		if run.Status == status {
			return run
		}
		if run.Status.Terminal() {
			e.t.Fatalf("run %s ended %s, want %s", runID, run.Status, status)
		}
		events, err := e.store.WatchRun(ctx, sub, runID, run.LastSequence)
		if err != nil {
			e.t.Fatal(err)
		}
		for range events {
			break
		}
		if ctx.Err() != nil {
			e.t.Fatalf("run %s never reached %s (is %s)", runID, status, run.Status)
		}
	}
}

// waitRuns waits until sub has n runs.
func (e *env) waitRuns(sub interop.Subject, n int) []interop.Run {
	e.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		page := e.runsOf(sub)
		if len(page.Runs) >= n {
			return page.Runs
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("want %d runs, have %d", n, len(page.Runs))
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// Golden files: testdata/<name>.golden holds the response body with run
// ids, interrupt ids, requestStates and timestamps replaced by
// placeholders. Run the tests with -update to rewrite them.
var normalizers = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`rs1\.[A-Za-z0-9_-]+`), "<requestState>"},
	{regexp.MustCompile(`(acme|globex)(~2F|/)[A-Za-z0-9._~-]{16,128}`), "$1${2}<id>"},
	{regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z`), "<time>"},
}

func normalize(b []byte) []byte {
	for _, n := range normalizers {
		b = n.re.ReplaceAll(b, []byte(n.repl))
	}
	return b
}

func checkGolden(t testing.TB, name string, got []byte) {
	t.Helper()
	golden.Check(t, name+".golden", normalize(got))
}
