package a2a

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
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

// Public URLs of the test host. Requests in these tests are sent to other
// hosts on purpose: card URLs must come from here, never from the request.
const (
	restEnvJSONRPCURL  = "https://a2a.example.test/a2a/rpc"
	restEnvHTTPJSONURL = "https://a2a.example.test/a2a/rest"
	restEnvCardURL     = "https://a2a.example.test/.well-known/agent-card.json"
	restEnvPrefix      = "/a2a/rest"
	restEnvCardPath    = "/.well-known/agent-card.json"
)

// Credentials of the test host: each key is one Subject.
var restKeys = map[string]interop.Subject{
	"key-acme":    {Tenant: "acme", Principal: "user:alice", Authenticated: true},
	"key-acme-2":  {Tenant: "acme", Principal: "user:bob", Authenticated: true},
	"key-globex":  {Tenant: "globex", Principal: "user:gina", Authenticated: true},
	"key-initech": {Tenant: "initech", Principal: "user:ian", Authenticated: true},
}

// restEnv is a host on memstore with the REST and card handlers mounted
// the way a host would mount them.
type restEnv struct {
	store   *memstore.Store
	srv     *Server
	mux     *http.ServeMux
	routing *isolation.RoutingKeys
	cfg     testConfig
}

type restEnvOption func(*testConfig)

// restNow is the clock of every golden file: timestamps in fixtures are stable.
var restNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func newRESTEnv(t testing.TB, opts ...restEnvOption) *restEnv {
	t.Helper()
	e := buildRESTEnv(t, opts...)
	t.Cleanup(func() { _ = e.store.Close() })
	return e
}

// buildRESTEnv is newRESTEnv without the cleanup: the caller closes
// e.store (the fuzz target replaces its host now and then to bound memory).
func buildRESTEnv(t testing.TB, opts ...restEnvOption) *restEnv {
	t.Helper()
	store := memstore.New(memstore.WithClock(func() time.Time { return restNow }))
	for _, tenant := range []string{"acme", "globex"} {
		if err := store.RegisterFixtures(tenant); err != nil {
			t.Fatal(err)
		}
	}
	// initech installed nothing: it may start no workflow.
	agents := map[string][]interop.Agent{
		"acme": {
			{ID: "agent-ada", Persona: "Ada", PackVersion: "2.3.1", Label: "Ada the approver",
				Workflows: []string{memstore.FixtureApproval, "not-installed", memstore.FixtureNoop}},
			{ID: "agent-bo", Persona: "Bo", PackVersion: "0.9.0", Label: "Bo label", Description: "Bo runs delays.",
				Workflows: []string{memstore.FixtureDelay}},
			{ID: "agent-idle", Persona: "Idle", PackVersion: "1.0.0", Label: "No workflows"},
			{ID: "agent-ghost", Persona: "Ghost", PackVersion: "1.0.0", Label: "Only uninstalled workflows",
				Workflows: []string{"not-installed"}},
		},
		"globex": {
			{ID: "agent-gina", Persona: "Gina", PackVersion: "5.0.0", Label: "Globex agent",
				Workflows: []string{memstore.FixtureNoop}},
		},
	}
	for tenant, list := range agents {
		for _, a := range list {
			if err := store.AddAgent(tenant, a); err != nil {
				t.Fatal(err)
			}
		}
	}
	routing, err := isolation.NewRoutingKeys(bytes.Repeat([]byte("k"), 32), "host-test-1")
	if err != nil {
		t.Fatal(err)
	}
	policy, err := negotiate.NewPolicy(negotiate.Config{
		Protocol: negotiate.A2A, Offered: []string{"1.0"}, Preferred: "1.0", Floor: "1.0",
		Now: func() time.Time { return restNow },
	})
	if err != nil {
		t.Fatal(err)
	}
	workflows, err := store.ListWorkflows(context.Background(), restKeys["key-acme"])
	if err != nil {
		t.Fatal(err)
	}
	var approval interop.Workflow
	for _, w := range workflows {
		if w.ID == memstore.FixtureApproval {
			approval = w
		}
	}
	cfg := testConfig{
		Deps: Deps{
			Store:      store,
			Subjects:   interop.SubjectResolverFunc(restBearerSubject),
			Policy:     policy,
			Auditor:    negotiate.NewAuditor(store, negotiate.AuditorOptions{Synchronous: true}),
			Map:        mapping.Builtin(),
			JSONRPCURL: restEnvJSONRPCURL,
			Routed:     []interop.Workflow{approval},
		},
		Options: Options{
			Streaming:    true,
			DurableTasks: true,
			HTTPJSONURL:  restEnvHTTPJSONURL,
			AgentCardURL: restEnvCardURL,
			Card: CardConfig{
				Name:             "Test host",
				Description:      "A host for the binding tests.",
				Version:          "7.1.0",
				Provider:         &wire.AgentProvider{Org: "Example Org", URL: "https://example.test"},
				DocumentationURL: "https://example.test/docs",
				SecuritySchemes: wire.NamedSecuritySchemes{
					"bearer": wire.HTTPAuthSecurityScheme{Scheme: "Bearer", Description: "An API key as a bearer token."},
				},
				SecurityRequirements: wire.SecurityRequirementsOptions{{"bearer": {}}},
			},
			Inventory:    store,
			Routing:      routing,
			BlockTimeout: 2 * time.Second,
			MaxBodyBytes: 64 << 10,
			Now:          func() time.Time { return restNow },
		},
	}
	for _, o := range opts {
		o(&cfg)
	}
	srv, err := New(cfg.Deps, cfg.Options)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(restEnvPrefix+"/", http.StripPrefix(restEnvPrefix, srv.HTTPJSON()))
	mux.Handle(restEnvCardPath, srv.AgentCard())
	return &restEnv{store: store, srv: srv, mux: mux, routing: routing, cfg: cfg}
}

func restBearerSubject(r *http.Request) (interop.Subject, error) {
	key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	sub, known := restKeys[key]
	if !ok || !known {
		return interop.Subject{}, interop.ErrUnauthenticated
	}
	return sub, nil
}

// restCall is one request to the test host.
type restCall struct {
	method string
	path   string // below the mount, escaped as sent
	key    string // bearer key; "" for none
	body   string
	header map[string]string
	// noVersion leaves A2A-Version out (it is 1.0 otherwise).
	noVersion bool
}

// restResult is a response as the tests read it.
type restResult struct {
	status int
	header http.Header
	body   []byte
}

func (e *restEnv) do(t testing.TB, c restCall) restResult {
	t.Helper()
	return e.doCtx(t, context.Background(), c)
}

func (e *restEnv) doCtx(t testing.TB, ctx context.Context, c restCall) restResult {
	t.Helper()
	target := c.path
	if !strings.HasPrefix(target, restEnvCardPath) {
		target = restEnvPrefix + c.path
	}
	var body io.Reader
	if c.body != "" {
		body = strings.NewReader(c.body)
	}
	// The Host differs from the configured public URLs on purpose.
	r := httptest.NewRequestWithContext(ctx, c.method, "http://internal.invalid:8080"+target, body)
	if c.body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	if !c.noVersion {
		r.Header.Set("A2A-Version", "1.0")
	}
	if c.key != "" {
		r.Header.Set("Authorization", "Bearer "+c.key)
	}
	for k, v := range c.header {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	e.mux.ServeHTTP(w, r)
	res := w.Result()
	out, _ := io.ReadAll(res.Body)
	return restResult{status: res.StatusCode, header: res.Header, body: out}
}

// restStatusJSON is a google.rpc.Status body as a client reads it.
type restStatusJSON struct {
	Error struct {
		Code    int               `json:"code"`
		Status  string            `json:"status"`
		Message string            `json:"message"`
		Details []json.RawMessage `json:"details"`
	} `json:"error"`
}

// restErrorInfoJSON is one google.rpc.ErrorInfo detail.
type restErrorInfoJSON struct {
	Type     string            `json:"@type"`
	Reason   string            `json:"reason"`
	Domain   string            `json:"domain"`
	Metadata map[string]string `json:"metadata"`
}

// restMustStatus decodes a google.rpc.Status and checks its envelope: the
// exact member set, code equal to the HTTP status, a status name, a
// message, details an array whose every element has @type and at most one
// ErrorInfo (in domain a2a-protocol.org).
func restMustStatus(t testing.TB, res restResult) (restStatusJSON, *restErrorInfoJSON) {
	t.Helper()
	if ct := res.header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("error Content-Type %q, want application/json; body %s", ct, res.body)
	}
	var outer map[string]map[string]json.RawMessage
	if err := json.Unmarshal(res.body, &outer); err != nil || len(outer) != 1 || outer["error"] == nil {
		t.Fatalf("body is not {\"error\":{...}}: %s", res.body)
	}
	for k := range outer["error"] {
		switch k {
		case "code", "status", "message", "details":
		default:
			t.Fatalf("unexpected member %q in google.rpc.Status: %s", k, res.body)
		}
	}
	var st restStatusJSON
	if err := json.Unmarshal(res.body, &st); err != nil {
		t.Fatal(err)
	}
	if st.Error.Code != res.status || st.Error.Status == "" || st.Error.Message == "" || st.Error.Details == nil {
		t.Fatalf("malformed google.rpc.Status (HTTP %d): %s", res.status, res.body)
	}
	var info *restErrorInfoJSON
	for _, d := range st.Error.Details {
		var typed struct {
			Type string `json:"@type"`
		}
		if err := json.Unmarshal(d, &typed); err != nil || typed.Type == "" {
			t.Fatalf("detail without @type: %s", d)
		}
		if typed.Type == errordetails.ErrorInfoType {
			if info != nil {
				t.Fatalf("two ErrorInfo details: %s", res.body)
			}
			info = new(restErrorInfoJSON)
			if err := json.Unmarshal(d, info); err != nil {
				t.Fatal(err)
			}
			if info.Domain != "a2a-protocol.org" {
				t.Fatalf("ErrorInfo domain %q", info.Domain)
			}
		}
	}
	return st, info
}

// restWantStatus checks an error response's HTTP status, gRPC name and
// ErrorInfo reason ("" = no ErrorInfo).
func restWantStatus(t testing.TB, res restResult, http int, grpc, reason string) restStatusJSON {
	t.Helper()
	if res.status != http {
		t.Fatalf("HTTP %d, want %d: %s", res.status, http, res.body)
	}
	st, info := restMustStatus(t, res)
	if st.Error.Status != grpc {
		t.Fatalf("status %q, want %q: %s", st.Error.Status, grpc, res.body)
	}
	got := ""
	if info != nil {
		got = info.Reason
	}
	if got != reason {
		t.Fatalf("ErrorInfo reason %q, want %q: %s", got, reason, res.body)
	}
	return st
}

var (
	restBoundIDPattern   = regexp.MustCompile(`\b(acme|globex|initech)(/|%2F|~2F)[A-Z2-7]{26}\b`)
	restContextIDPattern = regexp.MustCompile(`ctx-[A-Z2-7]{26}`)
	restTimePattern      = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`)
)

// restNormalize replaces minted ids (by order of first appearance) and
// timestamps, so a golden file pins everything else byte for byte.
func restNormalize(b []byte) []byte {
	ids := map[string]string{}
	b = restBoundIDPattern.ReplaceAllFunc(b, func(m []byte) []byte {
		sub := restBoundIDPattern.FindSubmatch(m)
		opaque := string(m[len(m)-26:])
		n, ok := ids[opaque]
		if !ok {
			n = "ID" + string(rune('A'+len(ids)))
			ids[opaque] = n
		}
		return []byte(string(sub[1]) + string(sub[2]) + "<" + n + ">")
	})
	ctxs := map[string]string{}
	b = restContextIDPattern.ReplaceAllFunc(b, func(m []byte) []byte {
		n, ok := ctxs[string(m)]
		if !ok {
			n = "ctx-<" + string(rune('A'+len(ctxs))) + ">"
			ctxs[string(m)] = n
		}
		return []byte(n)
	})
	return restTimePattern.ReplaceAll(b, []byte("<time>"))
}

// restTranscript renders a request and its response for a golden file: the
// request line and body, the status, the headers a client acts on, and the
// body bytes exactly as sent (modulo restNormalize).
func restTranscript(c restCall, res restResult) []byte {
	var b bytes.Buffer
	b.WriteString(c.method + " " + c.path + "\n")
	if c.key == "" {
		b.WriteString("(no credential)\n")
	}
	if c.noVersion {
		b.WriteString("(no A2A-Version)\n")
	}
	for _, k := range restSortedKeys(c.header) {
		b.WriteString(k + ": " + c.header[k] + "\n")
	}
	if c.body != "" {
		b.WriteString(c.body + "\n")
	}
	b.WriteString("\nHTTP " + strconv.Itoa(res.status) + " " + http.StatusText(res.status) + "\n")
	for _, k := range []string{"Content-Type", "Allow", "WWW-Authenticate", "ETag", "Cache-Control", "Vary"} {
		if v := res.header.Get(k); v != "" {
			b.WriteString(k + ": " + v + "\n")
		}
	}
	b.WriteString("\n")
	b.Write(res.body)
	if len(res.body) > 0 && res.body[len(res.body)-1] != '\n' {
		b.WriteString("\n")
	}
	return restNormalize(b.Bytes())
}

func restSortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

// restGolden compares got with testdata/<dir>/<name>.golden; -update
// rewrites it (internal/golden).
func restGolden(t testing.TB, dir, name string, got []byte) {
	t.Helper()
	golden.Check(t, dir+"/"+name+".golden", got)
}
