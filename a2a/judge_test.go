package a2a

// A message is judged before any run exists: its inputs against the
// workflow's input schema (-32602 naming the value), its parts' media
// types and its acceptedOutputModes against the workflow's modes (-32005).
// A refused message creates no run and changes no run.

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
)

// viewStore is memstore with what ListWorkflows shows replaced per tenant:
// the store runs what it registered, the surface judges by what the caller
// is shown. It counts ListWorkflows and CreateRun calls.
type viewStore struct {
	*memstore.Store
	mu      sync.Mutex
	view    map[string][]interop.Workflow // by tenant; absent: the store's own
	listErr error
	lists   int
	creates int
}

func (v *viewStore) ListWorkflows(ctx context.Context, sub interop.Subject) ([]interop.Workflow, error) {
	v.mu.Lock()
	v.lists++
	view, ok := v.view[sub.Tenant]
	err := v.listErr
	v.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if ok {
		return slices.Clone(view), nil
	}
	return v.Store.ListWorkflows(ctx, sub)
}

func (v *viewStore) CreateRun(ctx context.Context, sub interop.Subject, req interop.CreateRunRequest) (interop.Run, bool, error) {
	v.mu.Lock()
	v.creates++
	v.mu.Unlock()
	return v.Store.CreateRun(ctx, sub, req)
}

func (v *viewStore) show(tenant string, wfs ...interop.Workflow) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.view[tenant] = wfs
}

func (v *viewStore) counts() (lists, creates int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.lists, v.creates
}

// probeLenient has no input schema of its own in the store, so the store
// accepts any object: a refusal can only come from the surface.
const probeLenient = "probe-lenient"

// Schemas the two tenants are shown for probeLenient: the same id, opposite
// types.
const (
	schemaIntN    = `{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`
	schemaStringN = `{"type":"object","properties":{"n":{"type":"string"}},"required":["n"]}`
)

// newViewEnv is a core env over a viewStore routing probeLenient, shown to
// acme with schemaIntN and to globex with schemaStringN.
func newViewEnv(t *testing.T, opts ...coreOption) (*coreEnv, *viewStore) {
	t.Helper()
	base := newCoreEnv(t)
	for _, tenant := range []string{coreTenantA, coreTenantB} {
		if err := base.store.Register(tenant, memstore.WorkflowDef{
			Workflow: interop.Workflow{ID: probeLenient},
			Run: func(_ context.Context, rc *memstore.RunContext) (json.RawMessage, error) {
				base.rec.put(rc.RunID(), string(rc.Inputs()))
				return json.RawMessage(`{"ok":true}`), nil
			},
		}); err != nil {
			t.Fatal(err)
		}
	}
	vs := &viewStore{Store: base.store, view: map[string][]interop.Workflow{}}
	vs.show(coreTenantA, interop.Workflow{ID: probeLenient, InputSchema: json.RawMessage(schemaIntN)})
	vs.show(coreTenantB, interop.Workflow{ID: probeLenient, InputSchema: json.RawMessage(schemaStringN)})
	env := newCoreEnv(t, append([]coreOption{withRouted(probeLenient), withStore(vs)}, opts...)...)
	env.store, env.rec = base.store, base.rec
	return env, vs
}

func dataMessage(id string, v any) *wire.Message {
	return userMessage(id, wire.NewDataPart(v))
}

// wantNoRuns asserts sub's tenant holds no run at all.
func wantNoRuns(t *testing.T, env *coreEnv, sub interop.Subject) {
	t.Helper()
	page, err := env.store.ListRuns(coreCtx(t), sub, interop.ListRunsQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if page.Total != 0 {
		t.Fatalf("%d runs exist, want none", page.Total)
	}
}

func TestInputsValidatedBeforeAnyRun(t *testing.T) {
	env, vs := newViewEnv(t)
	acme, globex := asCaller(coreTenantA, "alice"), asCaller(coreTenantB, "gina")
	ctx := coreCtx(t)
	send := func(c *call, m *wire.Message) error {
		_, err := env.srv.sendMessage(ctx, c, &wire.SendMessageRequest{Message: m})
		return err
	}

	// Refused by the surface, though the store would have run it.
	e := wantError(t, send(acme, dataMessage("m-1", map[string]any{"n": "one"})), -32602, "message.parts[0].data/n")
	if e.Message != "the task's inputs do not match the skill's input schema: got string, want integer" {
		t.Errorf("message %q", e.Message)
	}
	m := userMessage("m-2", wire.NewTextPart("no inputs"))
	wantError(t, send(acme, m), -32602, "message.parts")
	m = userMessage("m-3", wire.NewTextPart("t"), wire.NewDataPart(map[string]any{"n": 1.5}))
	wantError(t, send(acme, m), -32602, "message.parts[1].data/n")
	if _, creates := vs.counts(); creates != 0 {
		t.Fatalf("%d CreateRun calls for refused messages", creates)
	}
	wantNoRuns(t, env, acme.subject)

	// Each tenant is judged by its own workflow's schema, whatever the
	// other tenant's is and in whichever order they come.
	if err := send(acme, dataMessage("m-4", map[string]any{"n": 1})); err != nil {
		t.Fatal(err)
	}
	wantError(t, send(globex, dataMessage("m-5", map[string]any{"n": 1})), -32602, "message.parts[0].data/n")
	if err := send(globex, dataMessage("m-6", map[string]any{"n": "one"})); err != nil {
		t.Fatal(err)
	}
	wantError(t, send(acme, dataMessage("m-7", map[string]any{"n": "one"})), -32602, "message.parts[0].data/n")
	if _, creates := vs.counts(); creates != 2 {
		t.Fatalf("%d CreateRun calls, want the two accepted messages", creates)
	}

	// A schema the surface cannot use leaves the skill unstartable rather
	// than started unchecked.
	vs.show(coreTenantA, interop.Workflow{ID: probeLenient, InputSchema: json.RawMessage(`{"$ref":"https://schemas.example/x.json"}`)})
	env.srv.InvalidateWorkflows(coreTenantA)
	e = wantError(t, send(acme, dataMessage("m-8", map[string]any{"n": 1})), -32602, "")
	if e.Message != "the requested skill is not available" {
		t.Errorf("message %q", e.Message)
	}
	// So does a workflow the caller is not shown.
	vs.show(coreTenantA)
	env.srv.InvalidateWorkflows(coreTenantA)
	wantError(t, send(acme, dataMessage("m-9", map[string]any{"n": 1})), -32602, "")
	if _, creates := vs.counts(); creates != 2 {
		t.Fatalf("%d CreateRun calls, want still two", creates)
	}

	// A store that fails to list is a fault, and nothing is created.
	vs.mu.Lock()
	vs.listErr = errors.New("db down: secret=x")
	vs.mu.Unlock()
	env.srv.InvalidateWorkflows("")
	wantError(t, send(acme, dataMessage("m-10", map[string]any{"n": 1})), codeInternal, "")
	if _, creates := vs.counts(); creates != 2 {
		t.Fatalf("%d CreateRun calls, want still two", creates)
	}
}

func TestWorkflowCache(t *testing.T) {
	clock := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	env, vs := newViewEnv(t, func(c *testConfig) { c.Now = now })
	ctx := coreCtx(t)
	alice, bob := asCaller(coreTenantA, "alice"), asCaller(coreTenantA, "bob")
	send := func(c *call, id string, n any) error {
		_, err := env.srv.sendMessage(ctx, c, &wire.SendMessageRequest{Message: dataMessage(id, map[string]any{"n": n})})
		return err
	}
	wantLists := func(want int) {
		t.Helper()
		if lists, _ := vs.counts(); lists != want {
			t.Fatalf("%d ListWorkflows calls, want %d", lists, want)
		}
	}

	for i := range 3 {
		if err := send(alice, "m-a"+string(rune('0'+i)), 1); err != nil {
			t.Fatal(err)
		}
	}
	wantLists(1)
	// Another principal is another authorization context.
	if err := send(bob, "m-b", 1); err != nil {
		t.Fatal(err)
	}
	wantLists(2)

	// A changed schema applies after InvalidateWorkflows...
	vs.show(coreTenantA, interop.Workflow{ID: probeLenient, InputSchema: json.RawMessage(schemaStringN)})
	if err := send(alice, "m-c", 1); err != nil {
		t.Fatalf("cached schema: %v", err)
	}
	env.srv.InvalidateWorkflows(coreTenantA)
	wantError(t, send(alice, "m-d", 1), -32602, "message.parts[0].data/n")
	wantLists(3)
	// ...which leaves other tenants' sets alone...
	globex := asCaller(coreTenantB, "gina")
	if err := send(globex, "m-g1", "x"); err != nil {
		t.Fatal(err)
	}
	env.srv.InvalidateWorkflows(coreTenantA)
	if err := send(globex, "m-g2", "x"); err != nil {
		t.Fatal(err)
	}
	wantLists(4)
	// ...or once the TTL has passed.
	vs.show(coreTenantA, interop.Workflow{ID: probeLenient, InputSchema: json.RawMessage(schemaIntN)})
	mu.Lock()
	clock = clock.Add(defaultWorkflowTTL)
	mu.Unlock()
	if err := send(alice, "m-e", 1); err != nil {
		t.Fatal(err)
	}
	wantLists(5)

	// A workflow missing from a cached set is read again before the
	// message is refused.
	if err := send(alice, "m-f", 1); err != nil {
		t.Fatal(err)
	}
	wantLists(5)
	w, err := env.srv.workflow(ctx, alice.subject, "added-later")
	if !errors.Is(err, errWorkflowUnknown) || w != nil {
		t.Fatalf("unknown workflow: %v %v", w, err)
	}
	wantLists(6)
	vs.show(coreTenantA, interop.Workflow{ID: probeLenient, InputSchema: json.RawMessage(schemaIntN)}, interop.Workflow{ID: "added-later"})
	if w, err := env.srv.workflow(ctx, alice.subject, "added-later"); err != nil || w.id != "added-later" {
		t.Fatalf("added workflow: %v %v", w, err)
	}
	wantLists(7)

	// A negative TTL reads the store for every message.
	env2, vs2 := newViewEnv(t, func(c *testConfig) { c.WorkflowTTL = -1 })
	for i := range 2 {
		if _, err := env2.srv.sendMessage(ctx, alice, &wire.SendMessageRequest{Message: dataMessage("m-n"+string(rune('0'+i)), map[string]any{"n": 1})}); err != nil {
			t.Fatal(err)
		}
	}
	if lists, _ := vs2.counts(); lists != 2 {
		t.Fatalf("%d ListWorkflows calls without a cache, want 2", lists)
	}
}

// Probe workflows with media types.
const (
	probeJSONOnly = "probe-json-only" // accepts and produces application/json
	probeAnyIn    = "probe-any-in"    // accepts */*, produces text/*
)

func newModesEnv(t *testing.T, opts ...coreOption) *coreEnv {
	t.Helper()
	env := newCoreEnv(t, append([]coreOption{withRouted(probeJSONOnly, probeAnyIn, memstore.FixtureApproval)}, opts...)...)
	done := func(context.Context, *memstore.RunContext) (json.RawMessage, error) {
		return json.RawMessage(`{"ok":true}`), nil
	}
	for _, wf := range []interop.Workflow{
		{ID: probeJSONOnly, InputModes: []string{"application/json"}, OutputModes: []string{"application/json"}},
		{ID: probeAnyIn, InputModes: []string{"*/*"}, OutputModes: []string{"text/*"}},
	} {
		if err := env.store.Register(coreTenantA, memstore.WorkflowDef{Workflow: wf, Run: done}); err != nil {
			t.Fatal(err)
		}
	}
	return env
}

func TestContentTypes(t *testing.T) {
	env := newModesEnv(t)
	c := asCaller(coreTenantA, "alice")
	ctx := coreCtx(t)
	n := 0
	send := func(skill string, accepted []string, parts ...*wire.Part) error {
		n++
		m := userMessage("m-"+skill+"-"+string(rune('a'+n)), parts...)
		m.Metadata = map[string]any{"skillId": skill}
		req := &wire.SendMessageRequest{Message: m}
		if accepted != nil {
			req.Config = &wire.SendMessageConfig{AcceptedOutputModes: accepted}
		}
		_, err := env.srv.sendMessage(ctx, c, req)
		return err
	}
	typed := func(p *wire.Part, mt string) *wire.Part { p.MediaType = mt; return p }
	data := func() *wire.Part { return wire.NewDataPart(map[string]any{"k": 1}) }
	text := func() *wire.Part { return wire.NewTextPart("hi") }
	file := func() *wire.Part { return &wire.Part{Content: wire.URL("https://files.example/x")} }
	raw := func() *wire.Part { return wire.NewRawPart([]byte{1, 2}) }

	refused := []struct {
		name     string
		skill    string
		accepted []string
		parts    []*wire.Part
		message  string
	}{
		{"text part, JSON-only skill", probeJSONOnly, nil, []*wire.Part{data(), text()}, "the skill does not accept the media type of message.parts[1]"},
		{"typed text part, JSON-only skill", probeJSONOnly, nil, []*wire.Part{typed(data(), "text/plain")}, "the skill does not accept the media type of message.parts[0]"},
		{"url of unstated type, default modes", memstore.FixtureApproval, nil, []*wire.Part{text(), file()}, "the skill does not accept the media type of message.parts[1]"},
		{"raw of unstated type, default modes", memstore.FixtureApproval, nil, []*wire.Part{raw()}, "the skill does not accept the media type of message.parts[0]"},
		{"image, default modes", memstore.FixtureApproval, nil, []*wire.Part{typed(text(), "image/png")}, "the skill does not accept the media type of message.parts[0]"},
		{"malformed media type", probeAnyIn, nil, []*wire.Part{typed(text(), "png")}, "the skill does not accept the media type of message.parts[0]"},
		{"wildcard type only", probeAnyIn, nil, []*wire.Part{typed(text(), "*/plain")}, "the skill does not accept the media type of message.parts[0]"},
		{"output the skill cannot produce", probeJSONOnly, []string{"text/plain", "image/*"}, []*wire.Part{data()}, "the skill produces none of the media types in configuration.acceptedOutputModes"},
		{"output modes that do not parse", probeJSONOnly, []string{"json"}, []*wire.Part{data()}, "the skill produces none of the media types in configuration.acceptedOutputModes"},
		{"text output, text skill asked for JSON", probeAnyIn, []string{"application/json"}, []*wire.Part{text()}, "the skill produces none of the media types in configuration.acceptedOutputModes"},
	}
	for _, tc := range refused {
		e := wantRowError(t, env, send(tc.skill, tc.accepted, tc.parts...), -32005)
		if e.Message != tc.message || e.Reason != "CONTENT_TYPE_NOT_SUPPORTED" {
			t.Errorf("%s: %q (%s), want %q", tc.name, e.Message, e.Reason, tc.message)
		}
	}
	wantNoRuns(t, env, c.subject)

	accepted := []struct {
		name     string
		skill    string
		accepted []string
		parts    []*wire.Part
	}{
		{"data part, JSON-only skill", probeJSONOnly, nil, []*wire.Part{data()}},
		{"case and parameters", probeJSONOnly, nil, []*wire.Part{typed(data(), "Application/JSON ; charset=utf-8")}},
		{"text and data, default modes", memstore.FixtureApproval, nil, []*wire.Part{text(), typed(text(), "text/plain;charset=UTF-8"), data()}},
		{"anything, */* skill", probeAnyIn, nil, []*wire.Part{file(), raw(), typed(text(), "image/png"), text()}},
		{"accepted output, exact", probeJSONOnly, []string{"image/png", "application/json"}, []*wire.Part{data()}},
		{"accepted output, case", probeJSONOnly, []string{"APPLICATION/JSON"}, []*wire.Part{data()}},
		{"accepted output, range", probeAnyIn, []string{"text/markdown"}, []*wire.Part{text()}},
		{"accepted output, */*", probeJSONOnly, []string{"*/*"}, []*wire.Part{data()}},
		{"accepted output, type/*", probeJSONOnly, []string{"application/*"}, []*wire.Part{data()}},
		{"no accepted output modes", probeJSONOnly, []string{}, []*wire.Part{data()}},
	}
	for _, tc := range accepted {
		if err := send(tc.skill, tc.accepted, tc.parts...); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}

	// A message to a task is judged by the task's workflow, and a refusal
	// changes nothing on the run.
	first := env.send(t, c, func() *wire.Message {
		m := textMessage("m-approval", "approve")
		m.Metadata = map[string]any{"skillId": memstore.FixtureApproval}
		return m
	}())
	before := env.run(t, c.subject, first.ID)
	reply := acceptReply("m-reply", first.ID, "accept")
	reply.Parts = append(reply.Parts, &wire.Part{Content: wire.URL("https://files.example/y"), MediaType: "application/pdf"})
	_, err := env.srv.sendMessage(ctx, c, &wire.SendMessageRequest{Message: reply})
	wantRowError(t, env, err, -32005)
	_, err = env.srv.sendMessage(ctx, c, &wire.SendMessageRequest{Message: acceptReply("m-reply-2", first.ID, "accept"),
		Config: &wire.SendMessageConfig{AcceptedOutputModes: []string{"image/png"}}})
	wantRowError(t, env, err, -32005)
	assertRunUnchanged(t, env, c.subject, before)
	if task := env.send(t, c, acceptReply("m-reply-3", first.ID, "accept")); task.Status.State != wire.TaskStateCompleted {
		t.Fatalf("the accepted reply left the task %s", task.Status.State)
	}

	// The card's defaults apply to a workflow that names no modes.
	env2 := newModesEnv(t, func(cfg *testConfig) { cfg.Card.DefaultInputModes = []string{"application/json"} })
	m := textMessage("m-text", "hi")
	m.Metadata = map[string]any{"skillId": memstore.FixtureApproval}
	_, err = env2.srv.sendMessage(ctx, c, &wire.SendMessageRequest{Message: m})
	wantRowError(t, env2, err, -32005)
}

// TestContentTypeJudgedByDefaultsForAnApprover: an approver who may not start
// the task's workflow is judged by the card's defaults.
func TestContentTypeJudgedByDefaultsForAnApprover(t *testing.T) {
	env, vs := newViewEnv(t, withRouted(probeGuarded))
	vs.show(coreTenantA, interop.Workflow{ID: probeGuarded, InputModes: []string{"image/png"}})
	alice := asCaller(coreTenantA, "alice")
	first := env.send(t, alice, userMessage("m-1", &wire.Part{Content: wire.Text("go"), MediaType: "image/png"}))
	// bob is shown no workflow at all, but may answer the interrupt.
	vs.show(coreTenantA)
	bob := asCaller(coreTenantA, "bob")
	before := env.run(t, alice.subject, first.ID)
	reply := acceptReply("m-2", first.ID, "accept")
	reply.Parts[0].MediaType = "image/png"
	_, err := env.srv.sendMessage(coreCtx(t), bob, &wire.SendMessageRequest{Message: reply})
	wantRowError(t, env, err, -32005)
	assertRunUnchanged(t, env, alice.subject, before)
	if task := env.send(t, bob, acceptReply("m-3", first.ID, "accept")); task.Status.State != wire.TaskStateCompleted {
		t.Fatalf("bob's answer left the task %s", task.Status.State)
	}
}

func TestParseMediaRange(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want mediaRange
		ok   bool
	}{
		{"text/plain", mediaRange{"text", "plain"}, true},
		{"Text/HTML; charset=UTF-8", mediaRange{"text", "html"}, true},
		{"  application/vnd.api+json  ", mediaRange{"application", "vnd.api+json"}, true},
		{"*/*", mediaRange{"*", "*"}, true},
		{"image/*", mediaRange{"image", "*"}, true},
		{"*/png", mediaRange{}, false},
		{"text", mediaRange{}, false},
		{"text/", mediaRange{}, false},
		{"/plain", mediaRange{}, false},
		{"text/pl ain", mediaRange{}, false},
		{"text/plain/x", mediaRange{}, false},
		{"", mediaRange{}, false},
	} {
		got, ok := parseMediaRange(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseMediaRange(%q) = %v %v, want %v %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"text/plain", "text/plain", true},
		{"text/plain", "text/*", true},
		{"*/*", "image/png", true},
		{"text/plain", "text/html", false},
		{"image/*", "text/*", false},
	} {
		a, _ := parseMediaRange(tc.a)
		b, _ := parseMediaRange(tc.b)
		if a.covers(b) != tc.want || b.covers(a) != tc.want {
			t.Errorf("%s covers %s = %v, want %v both ways", tc.a, tc.b, a.covers(b), tc.want)
		}
	}
}

// TestJudgeGolden pins the refusals on both bindings: the whole body.
func TestJudgeGolden(t *testing.T) {
	withDelay := func(c *testConfig) {
		c.Routed = append(c.Routed, interop.Workflow{ID: memstore.FixtureDelay, Name: "delay"})
	}
	const (
		badInputs = `{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"wait"},{"data":{"delayMs":"soon"}}],"metadata":{"skillId":"conformance-delay"}}`
		image     = `{"messageId":"m-2","role":"ROLE_USER","parts":[{"text":"look"},{"url":"https://files.example/cat.png","mediaType":"image/png"}],"metadata":{"skillId":"conformance-noop"}}`
		textOnly  = `{"messageId":"m-3","role":"ROLE_USER","parts":[{"text":"go"}],"metadata":{"skillId":"conformance-noop"}}`
		imageOut  = `,"configuration":{"acceptedOutputModes":["image/png","image/webp"]}`
	)
	t.Run("JSON-RPC", func(t *testing.T) {
		e := newRPCEnv(t, withDelay)
		for _, tc := range []struct {
			name, params string
			code         int
			reason       string
		}{
			{"error_invalid_params_inputs", `{"message":` + badInputs + `}`, -32602, ""},
			{"error_content_type_part", `{"message":` + image + `}`, -32005, "CONTENT_TYPE_NOT_SUPPORTED"},
			{"error_content_type_accepted_output", `{"message":` + textOnly + imageOut + `}`, -32005, "CONTENT_TYPE_NOT_SUPPORTED"},
		} {
			c := acme(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":` + tc.params + `}`)
			res := e.do(t, c)
			out := wantRPCError(t, res, 200, tc.code, tc.reason)
			if tc.code == -32602 && (len(out.Error.Data) != 1 || out.Error.Data[0]["@type"] != badRequestType ||
				!strings.Contains(string(res.body), `"field":"message.parts[1].data/delayMs"`)) {
				t.Errorf("%s: want a BadRequest naming the value: %s", tc.name, res.body)
			}
			rpcGolden(t, tc.name, newRPCNormalizer(e.agentR).apply(rpcTranscript(c, res)))
		}
		page, err := e.store.ListRuns(context.Background(), rpcSubjects()[rpcKeyAcme], interop.ListRunsQuery{})
		if err != nil || page.Total != 0 {
			t.Fatalf("%d runs (%v), want none", page.Total, err)
		}
	})
	t.Run("HTTP+JSON", func(t *testing.T) {
		e := newRESTEnv(t, withDelay, func(c *testConfig) {
			c.Routed = append(c.Routed, interop.Workflow{ID: memstore.FixtureNoop, Name: "noop"})
		})
		for _, tc := range []struct {
			name, body string
			status     int
			grpc       string
			reason     string
		}{
			{"error-send-inputs", `{"message":` + badInputs + `}`, http.StatusBadRequest, "INVALID_ARGUMENT", ""},
			{"error-send-content-type-part", `{"message":` + image + `}`, 0, "", "CONTENT_TYPE_NOT_SUPPORTED"},
			{"error-send-content-type-accepted-output", `{"message":` + textOnly + imageOut + `}`, 0, "", "CONTENT_TYPE_NOT_SUPPORTED"},
		} {
			c := restCall{method: http.MethodPost, path: "/message:send", key: "key-acme", body: tc.body}
			res := e.do(t, c)
			if tc.reason != "" {
				row, _ := e.srv.m.A2AError(-32005)
				restWantStatus(t, res, row.HTTP, row.GRPC, tc.reason)
			} else {
				restWantStatus(t, res, tc.status, tc.grpc, "")
			}
			restGolden(t, "rest", tc.name, restTranscript(c, res))
		}
		page, err := e.store.ListRuns(context.Background(), restKeys["key-acme"], interop.ListRunsQuery{})
		if err != nil || page.Total != 0 {
			t.Fatalf("%d runs (%v), want none", page.Total, err)
		}
	})
}

// TestCardSkillModes: a skill advertises its workflow's media types; a
// workflow without them leaves the card's defaults to speak.
func TestCardSkillModes(t *testing.T) {
	e := newRESTEnv(t, func(c *testConfig) {
		c.Routed = append(c.Routed, interop.Workflow{
			ID: "probe-modes", Name: "Modes", Description: "Takes images, answers in JSON.",
			InputModes: []string{"image/png", "image/*"}, OutputModes: []string{"application/json"},
		})
	})
	res := cardFetch(t, e, "", nil, true)
	var card wire.AgentCard
	if err := json.Unmarshal(res.body, &card); err != nil {
		t.Fatal(err)
	}
	if len(card.Skills) != 2 || card.Skills[0].InputModes != nil || card.Skills[0].OutputModes != nil ||
		!slices.Equal(card.Skills[1].InputModes, []string{"image/png", "image/*"}) || !slices.Equal(card.Skills[1].OutputModes, []string{"application/json"}) {
		t.Fatalf("skills %+v", card.Skills)
	}
	restGolden(t, "cards", "public-skill-modes", restTranscript(restCall{method: http.MethodGet, path: restEnvCardPath}, res))
}
