package a2a

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"net/http"
	"reflect"
	"sync"
	"testing"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/mapping"
	"github.com/wopinterop/wopinterop/negotiate"
)

// Tenants of the core tests.
const (
	coreTenantA = "acme"
	coreTenantB = "globex"
)

// Probe workflows the core tests register next to the conformance
// fixtures in both tenants.
const (
	probeTrace      = "probe-trace"      // records rc.Trace(), completes
	probeInputs     = "probe-inputs"     // records rc.Inputs(), completes
	probeClarify    = "probe-clarify"    // clarification interrupt; records the value
	probeCredential = "probe-credential" // credential interrupt with provider and connectUrl
	probeCredBare   = "probe-cred-bare"  // credential interrupt without connectUrl
	probeGuarded    = "probe-guarded"    // approval only "bob" may answer
	probeChunks     = "probe-chunks"     // two chunks of one artifact, then completes
	probeGate       = "probe-gate"       // waits for a release before completing
	probeOutcome    = "probe-outcome"    // approval; records "outcome value"
)

// coreCredentialURL is the connectUrl of probeCredential.
const coreCredentialURL = "https://host.example/oauth/connect/github"

// coreRecorder keeps what probe workflows saw, by run id.
type coreRecorder struct {
	mu   sync.Mutex
	seen map[string]any
}

func (r *coreRecorder) put(runID string, v any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen[runID] = v
}

func (r *coreRecorder) get(runID string) (any, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.seen[runID]
	return v, ok
}

// coreEnv is a Server over a real memstore with tenants acme and globex.
type coreEnv struct {
	store   *memstore.Store
	srv     *Server
	rec     *coreRecorder
	release chan struct{} // closes probeGate runs
}

// testConfig is the Deps and Options of a test server in one value, so
// that one option function can set either.
type testConfig struct {
	Deps
	Options
}

// caps are the facets a test server serves beyond push (Options.Push).
type caps struct{ Streaming, DurableTasks bool }

func (c *testConfig) setCaps(k caps) { c.Streaming, c.DurableTasks = k.Streaming, k.DurableTasks }

// testConfigOf is the configuration a server runs with.
func testConfigOf(s *Server) testConfig { return testConfig{Deps: s.cfg.Deps, Options: s.cfg.Options} }

type coreOption func(*testConfig)

func withRouted(ids ...string) coreOption {
	return func(c *testConfig) {
		c.Routed = nil
		for _, id := range ids {
			c.Routed = append(c.Routed, interop.Workflow{ID: id, Name: id})
		}
	}
}

func withCaps(k caps) coreOption { return func(c *testConfig) { c.setCaps(k) } }

func withBlock(d time.Duration) coreOption { return func(c *testConfig) { c.BlockTimeout = d } }

func withStore(st interop.RunStore) coreOption { return func(c *testConfig) { c.Store = st } }

// newCoreEnv builds the environment; Routed defaults to the approval
// fixture, as the conformance suite expects.
func newCoreEnv(t testing.TB, opts ...coreOption) *coreEnv {
	t.Helper()
	store := memstore.New()
	t.Cleanup(func() { _ = store.Close() })
	env := &coreEnv{store: store, rec: &coreRecorder{seen: map[string]any{}}, release: make(chan struct{})}
	t.Cleanup(func() {
		select {
		case <-env.release:
		default:
			close(env.release)
		}
	})
	for _, tenant := range []string{coreTenantA, coreTenantB} {
		if err := store.RegisterFixtures(tenant); err != nil {
			t.Fatal(err)
		}
		for _, def := range env.probes() {
			if err := store.Register(tenant, def); err != nil {
				t.Fatal(err)
			}
		}
	}
	policy, err := negotiate.NewPolicy(negotiate.Config{Protocol: negotiate.A2A, Offered: []string{"1.0"}, Preferred: "1.0", Floor: "1.0"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig{Deps: Deps{
		Store: store,
		Subjects: interop.SubjectResolverFunc(func(*http.Request) (interop.Subject, error) {
			return interop.Subject{}, interop.ErrUnauthenticated
		}),
		Policy:     policy,
		Auditor:    negotiate.NewAuditor(store, negotiate.AuditorOptions{Synchronous: true}),
		Map:        mapping.Builtin(),
		JSONRPCURL: "https://agent.example/a2a/jsonrpc",
		Routed:     []interop.Workflow{coreFixture(t, memstore.FixtureApproval)},
	}}
	for _, o := range opts {
		o(&cfg)
	}
	srv, err := New(cfg.Deps, cfg.Options)
	if err != nil {
		t.Fatal(err)
	}
	env.srv = srv
	return env
}

// opened splits a stream into its refusal — the first and only element
// of a refused stream — and its events, as a binding reads it.
func opened(seq iter.Seq2[wire.Event, error]) (iter.Seq2[wire.Event, error], error) {
	next, stop := iter.Pull2(seq)
	ev, err, ok := next()
	if ok && ev == nil && err != nil {
		stop()
		return nil, err
	}
	return func(yield func(wire.Event, error) bool) {
		defer stop()
		for ; ok; ev, err, ok = next() {
			if !yield(ev, err) {
				return
			}
		}
	}, nil
}

// through runs method with req as a binding does: through its row of the
// operation table, the gate included.
func (e *coreEnv) through(ctx context.Context, c *call, method string, req any) (any, iter.Seq2[wire.Event, error], error) {
	op := lookupMethod([]byte(method))
	if op == nil {
		panic("no such method " + method)
	}
	return e.srv.invoke(ctx, "test", c, op, new(requests), func(dst any, _ *wire.TaskID) error {
		reflect.ValueOf(dst).Elem().Set(reflect.ValueOf(req).Elem())
		return nil
	})
}

func coreFixture(t testing.TB, id string) interop.Workflow {
	t.Helper()
	for _, def := range memstore.ConformanceFixtures() {
		if def.Workflow.ID == id {
			return def.Workflow
		}
	}
	t.Fatalf("no fixture %q", id)
	return interop.Workflow{}
}

func (env *coreEnv) probes() []memstore.WorkflowDef {
	complete := json.RawMessage(`{"ok":true}`)
	return []memstore.WorkflowDef{
		{Workflow: interop.Workflow{ID: probeTrace}, Run: func(_ context.Context, rc *memstore.RunContext) (json.RawMessage, error) {
			env.rec.put(rc.RunID(), rc.Trace())
			return complete, nil
		}},
		{Workflow: interop.Workflow{ID: probeInputs}, Run: func(_ context.Context, rc *memstore.RunContext) (json.RawMessage, error) {
			env.rec.put(rc.RunID(), string(rc.Inputs()))
			return complete, nil
		}},
		{Workflow: interop.Workflow{ID: probeClarify}, Run: func(ctx context.Context, rc *memstore.RunContext) (json.RawMessage, error) {
			res, err := rc.Interrupt(ctx, interop.Interrupt{
				Kind: interop.InterruptClarification, Key: "ask", Message: "Which branch?",
				ResumeSchema: json.RawMessage(`{"type":"object","required":["text"],"properties":{"text":{"type":"string"}}}`),
			})
			if err != nil {
				return nil, err
			}
			env.rec.put(rc.RunID(), string(res.Value))
			return complete, nil
		}},
		{Workflow: interop.Workflow{ID: probeCredential}, Run: func(ctx context.Context, rc *memstore.RunContext) (json.RawMessage, error) {
			_, err := rc.Interrupt(ctx, interop.Interrupt{
				Kind: interop.InterruptCredential, Key: "cred", Message: "Connect GitHub",
				Credential: &interop.CredentialData{Provider: "github", Scopes: []string{"repo"}, Reason: "missing", ConnectURL: coreCredentialURL},
			})
			return complete, err
		}},
		{Workflow: interop.Workflow{ID: probeCredBare}, Run: func(ctx context.Context, rc *memstore.RunContext) (json.RawMessage, error) {
			_, err := rc.Interrupt(ctx, interop.Interrupt{
				Kind: interop.InterruptCredential, Key: "cred", Message: "Connect GitHub",
				Credential: &interop.CredentialData{Provider: "github", Reason: "missing"},
			})
			return complete, err
		}},
		{Workflow: interop.Workflow{ID: probeGuarded}, Run: func(ctx context.Context, rc *memstore.RunContext) (json.RawMessage, error) {
			_, err := rc.Interrupt(ctx, interop.Interrupt{
				Kind: interop.InterruptApproval, Key: "approval", Message: "Bob must approve",
				Actions: []string{"accept", "reject"}, Approvers: []string{"bob"},
			})
			return complete, err
		}},
		{Workflow: interop.Workflow{ID: probeChunks}, Run: func(ctx context.Context, rc *memstore.RunContext) (json.RawMessage, error) {
			if err := rc.PublishArtifact(interop.Artifact{ID: "doc", Name: "doc", Parts: []interop.Part{interop.TextPart("one")}}, false, false); err != nil {
				return nil, err
			}
			if err := rc.PublishArtifact(interop.Artifact{ID: "doc", Parts: []interop.Part{interop.TextPart("two")}}, true, true); err != nil {
				return nil, err
			}
			return complete, nil
		}},
		{Workflow: interop.Workflow{ID: probeOutcome}, Run: func(ctx context.Context, rc *memstore.RunContext) (json.RawMessage, error) {
			res, err := rc.Interrupt(ctx, interop.Interrupt{
				Kind: interop.InterruptApproval, Key: "approval", Message: "Approve?",
				Actions: []string{"accept", "reject", "refine"},
			})
			if err != nil {
				return nil, err
			}
			env.rec.put(rc.RunID(), string(res.Outcome)+" "+string(res.Value))
			return complete, nil
		}},
		{Workflow: interop.Workflow{ID: probeGate}, Run: func(ctx context.Context, rc *memstore.RunContext) (json.RawMessage, error) {
			select {
			case <-env.release:
				return complete, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}},
	}
}

func coreSubject(tenant, principal string) interop.Subject {
	return interop.Subject{Tenant: tenant, Principal: principal, Authenticated: true}
}

// asCaller is the call of an authenticated caller on the host interface.
func asCaller(tenant, principal string) *call {
	return &call{subject: coreSubject(tenant, principal), version: "1.0"}
}

func coreCtx(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// userMessage is a ROLE_USER message with text parts.
func userMessage(id string, parts ...*wire.Part) *wire.Message {
	return &wire.Message{ID: id, Role: wire.MessageRoleUser, Parts: parts}
}

func textMessage(id, text string) *wire.Message {
	return userMessage(id, wire.NewTextPart(text))
}

// acceptReply is the conformance suite's accept: a data part and
// metadata.openwop.interrupt, no contextId.
func acceptReply(id string, taskID wire.TaskID, action string) *wire.Message {
	m := userMessage(id, wire.NewDataPart(map[string]any{"action": action}))
	m.TaskID = taskID
	m.Metadata = map[string]any{"openwop": map[string]any{"interrupt": map[string]any{"action": action}}}
	return m
}

func (env *coreEnv) send(t testing.TB, c *call, m *wire.Message) *wire.Task {
	t.Helper()
	task, err := env.srv.sendMessage(coreCtx(t), c, &wire.SendMessageRequest{Message: m})
	if err != nil {
		t.Fatalf("sendMessage(%s): %v", m.ID, err)
	}
	return task
}

func (env *coreEnv) run(t testing.TB, sub interop.Subject, id wire.TaskID) interop.Run {
	t.Helper()
	run, err := env.store.GetRun(coreCtx(t), sub, string(id))
	if err != nil {
		t.Fatalf("GetRun(%s): %v", id, err)
	}
	return run
}

// awaitStatus follows the run until it reaches st.
func (env *coreEnv) awaitStatus(t testing.TB, sub interop.Subject, id string, st interop.RunStatus) {
	t.Helper()
	events, err := env.store.WatchRun(coreCtx(t), sub, id, -1)
	if err != nil {
		t.Fatal(err)
	}
	for ev, err := range events {
		if err != nil {
			t.Fatalf("waiting for %s: %v", st, err)
		}
		if ev.Status == st {
			return
		}
	}
	t.Fatalf("run %s ended without reaching %s", id, st)
}

// wantError asserts err is exactly the *Error with code and field.
func wantError(t testing.TB, err error, code int, field string) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error = %v (%T), want *Error %d", err, err, code)
	}
	if e.Code != code || e.Field != field {
		t.Fatalf("error = {code %d field %q msg %q}, want code %d field %q", e.Code, e.Field, e.Message, code, field)
	}
	if e.Message == "" {
		t.Fatalf("error %d has no message", code)
	}
	return e
}

// wantRowError asserts err is the map row code with its reason.
func wantRowError(t testing.TB, env *coreEnv, err error, code int) *Error {
	t.Helper()
	e := wantError(t, err, code, "")
	row, ok := env.srv.m.A2AError(code)
	if !ok {
		t.Fatalf("no map row %d", code)
	}
	if e.Reason != row.Reason || e.GRPC != row.GRPC || e.HTTP != row.HTTP {
		t.Fatalf("error %d = %+v, want row %+v", code, e, row)
	}
	return e
}

// interruptMeta decodes Task.metadata through JSON, as a client sees it.
func interruptMeta(t testing.TB, meta map[string]any) map[string]any {
	t.Helper()
	if meta == nil {
		return nil
	}
	raw, err := json.Marshal(meta)
	if err != nil {
		t.Fatal(err)
	}
	var decoded struct {
		OpenWOP struct {
			Interrupt map[string]any `json:"interrupt"`
		} `json:"openwop"`
	}
	if err := json.Unmarshal(raw, &decoded); err != nil {
		t.Fatal(err)
	}
	return decoded.OpenWOP.Interrupt
}

func statusText(task *wire.Task) string {
	if task.Status.Message == nil || len(task.Status.Message.Parts) == 0 {
		return ""
	}
	return task.Status.Message.Parts[0].Text()
}

func sameCoreError(t testing.TB, what string, got, want error) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: %#v, want identical %#v", what, got, want)
	}
}
