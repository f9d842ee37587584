package ext

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/internal/golden"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/mcp"
	"github.com/wopinterop/wopinterop/mcp/sealed"
	"github.com/wopinterop/wopinterop/negotiate"
)

const (
	tenantA   = "acme"
	wfAskName = "ask-name"
	// Codes the tests expect beside the extension's own.
	codeHeaderMismatch = -32020
	codeMethodNotFound = -32601
	tasksCaps          = `{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}`
	nameSchema         = `{"type":"object","properties":{"name":{"type":"string","title":"Name"}},"required":["name"]}`
	secretSchema       = `{"type":"object","properties":{"apiKey":{"type":"string","writeOnly":true}},"required":["apiKey"]}`
)

var alice = interop.Subject{Tenant: tenantA, Principal: "alice", Authenticated: true}

// testSubjects authenticates "Authorization: Bearer tenant:principal".
var testSubjects = interop.SubjectResolverFunc(func(r *http.Request) (interop.Subject, error) {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	tenant, principal, found := strings.Cut(tok, ":")
	if !ok || !found {
		return interop.Subject{}, interop.ErrUnauthenticated
	}
	return interop.Subject{Tenant: tenant, Principal: principal, Authenticated: true}, nil
})

// env is a mount over a memstore — the conformance fixtures and the
// workflows the mcp package's tests add, so that tools/list is the one the
// goldens pin — with an extension built from the test host.
type env struct {
	t     testing.TB
	store *memstore.Store
	srv   *mcp.Server
	h     http.Handler
	x     *extension
}

// options are a mount's options and its extension points, edited by each
// test.
type options struct {
	mcp.Options
	ext Config
}

func newEnv(t testing.TB, opts ...func(*options)) *env {
	t.Helper()
	store := memstore.New()
	if err := store.RegisterFixtures(tenantA); err != nil {
		t.Fatal(err)
	}
	for _, def := range extraWorkflows() {
		if err := store.Register(tenantA, def); err != nil {
			t.Fatal(err)
		}
	}
	policy, err := negotiate.NewPolicy(negotiate.Config{Protocol: negotiate.MCP, Offered: []string{mcp.Revision}, Preferred: mcp.Revision, Floor: mcp.Revision})
	if err != nil {
		t.Fatal(err)
	}
	sealer, err := sealed.NewSealer(sealed.Config{Key: bytes.Repeat([]byte("k"), 32), TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	o := options{Options: mcp.Options{ServerInfo: mcp.Implementation{Name: "test-host", Version: "1.0.0"}, BlockTimeout: 5 * time.Second}}
	for _, f := range opts {
		f(&o)
	}
	x, err := New(o.ext)
	if err != nil {
		t.Fatal(err)
	}
	o.Extension = x
	deps := mcp.Deps{Store: store, Subjects: testSubjects, Policy: policy, Sealer: sealer,
		Auditor: negotiate.NewAuditor(store, negotiate.AuditorOptions{Synchronous: true})}
	srv, err := mcp.New(deps, o.Options)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Close(ctx); err != nil {
			t.Errorf("Server.Close: %v", err)
		}
		_ = store.Close()
	})
	return &env{t: t, store: store, srv: srv, h: srv.Handler(), x: x.(*extension)}
}

// withHost plugs h into every extension point.
func withHost(h *testHost) func(*options) {
	return func(o *options) {
		o.ext = Config{Tools: h, Prompts: h, Resources: h, Completions: h, ResourceSchemes: []string{"test", "HTTPS"}}
	}
}

func withTasks(o *options) { o.Tasks = true }

// extraWorkflows are the workflows the mcp package's tests register beside
// the conformance fixtures.
func extraWorkflows() []memstore.WorkflowDef {
	noop := func(context.Context, *memstore.RunContext) (json.RawMessage, error) {
		return json.RawMessage(`{"ok":true}`), nil
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
	wait := func(ctx context.Context, _ *memstore.RunContext) (json.RawMessage, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return []memstore.WorkflowDef{
		{Workflow: interop.Workflow{ID: "task-required", Name: "Task required", TaskSupport: interop.TaskRequired}, Run: noop},
		{Workflow: interop.Workflow{ID: "task-forbidden", Name: "Task forbidden", TaskSupport: interop.TaskForbidden}, Run: noop},
		{Workflow: interop.Workflow{ID: wfAskName, Name: "Ask name"}, Run: ask("name", nameSchema)},
		{Workflow: interop.Workflow{ID: "ask-secret", Name: "Ask secret"}, Run: ask("apiKey", secretSchema)},
		{Workflow: interop.Workflow{ID: "needs-credential", Name: "Needs credential"}, Run: noop},
		{Workflow: interop.Workflow{ID: "two-steps", Name: "Two steps"}, Run: noop},
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
	hdr    map[string]string
	meta   string // raw _meta replacing the default one
	body   string // raw body replacing the built one
}

func (q rpc) request() *http.Request {
	id, caps, as := cmpOr(q.id, "1"), cmpOr(q.caps, "{}"), cmpOr(q.as, "acme:alice")
	body := q.body
	if body == "" {
		meta := cmpOr(q.meta, `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":`+caps+`}`)
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
	r.Header.Set("MCP-Protocol-Version", mcp.Revision)
	r.Header.Set("Mcp-Method", q.method)
	for _, member := range []string{"name", "taskId", "uri"} {
		if v, ok := q.params[member].(string); ok {
			r.Header.Set("Mcp-Name", v)
		}
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

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

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

// result returns the result object of a 200 response.
func result(t testing.TB, rec *httptest.ResponseRecorder) map[string]any {
	t.Helper()
	var r response
	if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil || rec.Code != http.StatusOK || r.Error != nil {
		t.Fatalf("want a result, got %d %s", rec.Code, rec.Body)
	}
	var m map[string]any
	if err := json.Unmarshal(r.Result, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// wantError checks an error response's status and code.
func wantError(t testing.TB, rec *httptest.ResponseRecorder, status, code int) response {
	t.Helper()
	var r response
	if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil || rec.Code != status || r.Error == nil || r.Error.Code != code || r.Result != nil {
		t.Fatalf("want HTTP %d code %d, got %d %s", status, code, rec.Code, rec.Body)
	}
	return r
}

// inputRequiredResult decodes an InputRequiredResult.
type inputRequiredResult struct {
	ResultType    string `json:"resultType"`
	InputRequests map[string]struct {
		Method string `json:"method"`
		Params struct {
			Mode string `json:"mode"`
		} `json:"params"`
	} `json:"inputRequests"`
	RequestState string `json:"requestState"`
}

// key returns the single inputRequests key.
func (ir inputRequiredResult) key(t testing.TB) string {
	t.Helper()
	if len(ir.InputRequests) != 1 {
		t.Fatalf("want one input request, have %d", len(ir.InputRequests))
	}
	for k := range ir.InputRequests {
		return k
	}
	return ""
}

func asInputRequired(t testing.TB, body []byte) inputRequiredResult {
	t.Helper()
	var r struct {
		Result inputRequiredResult `json:"result"`
	}
	if err := json.Unmarshal(body, &r); err != nil || r.Result.ResultType != "input_required" || r.Result.RequestState == "" {
		t.Fatalf("want an InputRequiredResult with requestState, got %s", body)
	}
	return r.Result
}

func (e *env) ask(t testing.TB, q rpc) inputRequiredResult {
	t.Helper()
	return asInputRequired(t, e.do(q).Body.Bytes())
}

func retryWith(q rpc, state string, responses map[string]any) rpc {
	params := map[string]any{"requestState": state}
	for k, v := range q.params {
		params[k] = v
	}
	if responses != nil {
		params["inputResponses"] = responses
	}
	q.params, q.id = params, "2"
	return q
}

func toolResult(t testing.TB, res map[string]any) (text string, isError bool) {
	t.Helper()
	if res["resultType"] != "complete" {
		t.Fatalf("resultType = %v: %v", res["resultType"], res)
	}
	return res["content"].([]any)[0].(map[string]any)["text"].(string), res["isError"].(bool)
}

// onlyRun returns sub's single run.
func (e *env) onlyRun(sub interop.Subject) interop.Run {
	e.t.Helper()
	page, err := e.store.ListRuns(context.Background(), sub, interop.ListRunsQuery{PageSize: 100})
	if err != nil || len(page.Runs) != 1 {
		e.t.Fatalf("want 1 run, have %d (%v)", len(page.Runs), err)
	}
	return page.Runs[0]
}

// sseMessages reads the JSON messages of an SSE body.
func sseMessages(t testing.TB, body string) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(data), &m); err != nil {
			t.Fatalf("SSE data is not JSON: %s", data)
		}
		out = append(out, m)
	}
	return out
}

// Golden files: testdata/<name>.golden holds a response with run ids,
// interrupt ids and requestStates replaced by placeholders. Run the tests
// with -update (internal/golden's switch) to rewrite them.
var normalizers = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`rs1\.[A-Za-z0-9_-]+`), "<requestState>"},
	{regexp.MustCompile(`(acme|globex)(~2F|/)[A-Za-z0-9._~-]{16,128}`), "$1${2}<id>"},
}

func checkGolden(t testing.TB, name string, got []byte) {
	t.Helper()
	for _, n := range normalizers {
		got = n.re.ReplaceAll(got, []byte(n.repl))
	}
	golden.Check(t, name+".golden", got)
}
