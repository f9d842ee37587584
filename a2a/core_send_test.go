package a2a

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/internal/tracecontext"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/isolation"
)

func TestCoreSendMessageBlocksUntilInputRequired(t *testing.T) {
	env := newCoreEnv(t)
	c := asCaller(coreTenantA, "alice")
	task := env.send(t, c, textMessage("m-1", "please approve"))

	if tenant, _, err := isolation.Split(string(task.ID)); err != nil || tenant != coreTenantA {
		t.Fatalf("Task.id = %q, want a bound acme id", task.ID)
	}
	if !strings.HasPrefix(task.ContextID, "ctx-") || len(task.ContextID) <= len("ctx-") {
		t.Fatalf("contextId = %q, want a minted ctx-…", task.ContextID)
	}
	if task.Status.State != wire.TaskStateInputRequired {
		t.Fatalf("state = %s, want INPUT_REQUIRED", task.Status.State)
	}
	run := env.run(t, c.subject, task.ID)
	if run.ContextID != task.ContextID || run.Transport != interop.TransportA2A {
		t.Fatalf("run contextId %q transport %q, want %q a2a", run.ContextID, run.Transport, task.ContextID)
	}
	open, ok := run.OpenInterrupt()
	if !ok {
		t.Fatal("run has no open interrupt")
	}
	meta := interruptMeta(t, task.Metadata)
	if meta["kind"] != "approval" || meta["id"] != open.ID || !reflectEqualJSON(meta["actions"], []any{"accept", "reject"}) || len(meta) != 3 {
		t.Fatalf("metadata.openwop.interrupt = %v", meta)
	}
	if got := statusText(task); got != "Approve the request?" {
		t.Fatalf("status message = %q", got)
	}
	if task.Status.Message.Role != wire.MessageRoleAgent || task.Status.Timestamp == nil || !task.Status.Timestamp.Equal(run.StatusAt) {
		t.Fatalf("status = %+v, want an agent message stamped %v", task.Status, run.StatusAt)
	}
	if len(task.History) != 1 || task.History[0].ID != "m-1" || task.History[0].Role != wire.MessageRoleUser || task.History[0].Parts[0].Text() != "please approve" {
		t.Fatalf("history = %+v", task.History)
	}
}

func reflectEqualJSON(got any, want []any) bool {
	g, ok := got.([]any)
	return ok && slices.Equal(g, want)
}

func TestCoreSendMessageCompletesNoop(t *testing.T) {
	env := newCoreEnv(t, withRouted(memstore.FixtureNoop))
	c := asCaller(coreTenantA, "alice")
	m := textMessage("m-1", "go")
	m.ContextID = "client-context-7"
	task := env.send(t, c, m)
	if task.Status.State != wire.TaskStateCompleted {
		t.Fatalf("state = %s", task.Status.State)
	}
	if task.ContextID != "client-context-7" {
		t.Fatalf("contextId = %q, want the client's", task.ContextID)
	}
	if len(task.Artifacts) != 1 || task.Artifacts[0].ID != memstore.FixtureArtifactID || task.Artifacts[0].Parts[0].Text() != "conformance-noop completed" {
		t.Fatalf("artifacts = %+v", task.Artifacts)
	}
	if task.Metadata != nil || task.Status.Message != nil {
		t.Fatalf("completed task carries metadata %v / status message %+v", task.Metadata, task.Status.Message)
	}
}

func TestCoreSendMessageFailureCarriesSafeMessage(t *testing.T) {
	env := newCoreEnv(t, withRouted(memstore.FixtureFailure))
	task := env.send(t, asCaller(coreTenantA, "alice"), textMessage("m-1", "fail"))
	if task.Status.State != wire.TaskStateFailed || statusText(task) != memstore.FixtureFailureMessage {
		t.Fatalf("status = %s %q", task.Status.State, statusText(task))
	}
}

func TestCoreSendMessageIsIdempotentPerMessageID(t *testing.T) {
	env := newCoreEnv(t, withRouted(memstore.FixtureNoop))
	alice := asCaller(coreTenantA, "alice")
	first := env.send(t, alice, textMessage("m-same", "go"))
	again := env.send(t, alice, textMessage("m-same", "go"))
	if again.ID != first.ID || again.ContextID != first.ContextID {
		t.Fatalf("repeat answered %s/%s, want %s/%s", again.ID, again.ContextID, first.ID, first.ContextID)
	}
	// Another principal's identical messageId is its own task.
	bob := env.send(t, asCaller(coreTenantA, "bob"), textMessage("m-same", "go"))
	if bob.ID == first.ID {
		t.Fatal("another principal's messageId reused alice's task")
	}

	const n = 32
	ids := make([]wire.TaskID, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			task, err := env.srv.sendMessage(context.Background(), alice, &wire.SendMessageRequest{Message: textMessage("m-race", "go")})
			if err != nil {
				t.Errorf("goroutine %d: %v", i, err)
				return
			}
			ids[i] = task.ID
		}()
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] {
			t.Fatalf("concurrent repeats answered %s and %s", ids[0], id)
		}
	}
	page, err := env.store.ListRuns(coreCtx(t), alice.subject, interop.ListRunsQuery{})
	if err != nil {
		t.Fatal(err)
	}
	// m-same, bob's m-same (same tenant, listed) and one m-race run.
	if page.Total != 3 {
		t.Fatalf("runs in acme = %d, want 3", page.Total)
	}
}

func TestCoreSendMessageValidation(t *testing.T) {
	env := newCoreEnv(t, withRouted(memstore.FixtureNoop))
	c := asCaller(coreTenantA, "alice")
	hist := -1
	cases := []struct {
		name  string
		req   *wire.SendMessageRequest
		code  int
		field string
	}{
		{"no message", &wire.SendMessageRequest{}, -32602, "message"},
		{"no messageId", &wire.SendMessageRequest{Message: textMessage("", "x")}, -32602, "message.messageId"},
		{"unspecified role", &wire.SendMessageRequest{Message: &wire.Message{ID: "m", Parts: wire.ContentParts{wire.NewTextPart("x")}}}, -32602, "message.role"},
		{"bogus role", &wire.SendMessageRequest{Message: &wire.Message{ID: "m", Role: "ROLE_ROOT", Parts: wire.ContentParts{wire.NewTextPart("x")}}}, -32602, "message.role"},
		{"no parts", &wire.SendMessageRequest{Message: userMessage("m")}, -32602, "message.parts"},
		{"nil part", &wire.SendMessageRequest{Message: userMessage("m", wire.NewTextPart("x"), nil)}, -32602, "message.parts[1]"},
		{"empty part", &wire.SendMessageRequest{Message: userMessage("m", &wire.Part{})}, -32602, "message.parts[0]"},
		{"empty url", &wire.SendMessageRequest{Message: userMessage("m", &wire.Part{Content: wire.URL("")})}, -32602, "message.parts[0]"},
		{"negative historyLength", &wire.SendMessageRequest{Message: textMessage("m", "x"), Config: &wire.SendMessageConfig{HistoryLength: &hist}}, -32602, "configuration.historyLength"},
		{"inline push config", &wire.SendMessageRequest{Message: textMessage("m", "x"), Config: &wire.SendMessageConfig{PushConfig: &wire.PushConfig{URL: "https://peer.example/hook"}}}, -32003, ""},
		{"returnImmediately without durable tasks", &wire.SendMessageRequest{Message: textMessage("m", "x"), Config: &wire.SendMessageConfig{ReturnImmediately: true}}, -32004, ""},
		{"first data part not an object", &wire.SendMessageRequest{Message: userMessage("m", wire.NewTextPart("x"), wire.NewDataPart([]any{1}))}, -32602, "message.parts[1].data"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := env.srv.sendMessage(coreCtx(t), c, tc.req)
			if tc.code == -32602 {
				wantError(t, err, tc.code, tc.field)
			} else {
				wantRowError(t, env, err, tc.code)
			}
		})
	}
	page, err := env.store.ListRuns(coreCtx(t), c.subject, interop.ListRunsQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if page.Total != 0 {
		t.Fatalf("refused messages created %d runs", page.Total)
	}
}

func TestCoreSendMessageReturnImmediately(t *testing.T) {
	env := newCoreEnv(t, withRouted(memstore.FixtureCancellable), withCaps(caps{DurableTasks: true}))
	c := asCaller(coreTenantA, "alice")
	start := time.Now()
	task, err := env.srv.sendMessage(coreCtx(t), c, &wire.SendMessageRequest{
		Message: textMessage("m-1", "go"),
		Config:  &wire.SendMessageConfig{ReturnImmediately: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	if task.Status.State != wire.TaskStateWorking {
		t.Fatalf("state = %s, want WORKING", task.Status.State)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("returnImmediately waited for the run")
	}
}

func TestCoreSendMessageStopsWaitingAtBlockTimeout(t *testing.T) {
	env := newCoreEnv(t, withRouted(memstore.FixtureCancellable), withBlock(30*time.Millisecond))
	task := env.send(t, asCaller(coreTenantA, "alice"), textMessage("m-1", "go"))
	if task.Status.State != wire.TaskStateWorking {
		t.Fatalf("state = %s, want WORKING after the block timeout", task.Status.State)
	}
}

func TestCoreSendMessageWorkflowSelection(t *testing.T) {
	routed := withRouted(memstore.FixtureNoop, memstore.FixtureFailure)
	withSkill := func(id, skill string) *wire.Message {
		m := textMessage(id, "go")
		if skill != "" {
			m.Metadata = map[string]any{"skillId": skill}
		}
		return m
	}
	t.Run("skillId picks", func(t *testing.T) {
		env := newCoreEnv(t, routed)
		task := env.send(t, asCaller(coreTenantA, "alice"), withSkill("m-1", memstore.FixtureFailure))
		if task.Status.State != wire.TaskStateFailed {
			t.Fatalf("state = %s, want the failure fixture's FAILED", task.Status.State)
		}
	})
	t.Run("missing or unrouted skillId", func(t *testing.T) {
		env := newCoreEnv(t, routed)
		for _, skill := range []string{"", memstore.FixtureApproval, "nope"} {
			_, err := env.srv.sendMessage(coreCtx(t), asCaller(coreTenantA, "alice"), &wire.SendMessageRequest{Message: withSkill("m-"+skill, skill)})
			wantError(t, err, -32602, "message.metadata.skillId")
		}
	})
	t.Run("SelectWorkflow picks", func(t *testing.T) {
		var offered []string
		env := newCoreEnv(t, routed, func(c *testConfig) {
			c.SelectWorkflow = func(_ *wire.Message, candidates []string) (string, error) {
				offered = candidates
				return memstore.FixtureNoop, nil
			}
		})
		task := env.send(t, asCaller(coreTenantA, "alice"), withSkill("m-1", memstore.FixtureFailure))
		if task.Status.State != wire.TaskStateCompleted || !slices.Equal(offered, []string{memstore.FixtureNoop, memstore.FixtureFailure}) {
			t.Fatalf("state %s, candidates %v", task.Status.State, offered)
		}
	})
	t.Run("SelectWorkflow refuses", func(t *testing.T) {
		own := &Error{Code: -32005, Message: "content type not supported"}
		for _, tc := range []struct {
			err   error
			check func(error)
		}{
			{errors.New("host text that must not leak"), func(err error) { wantError(t, err, -32602, "message.metadata.skillId") }},
			{own, func(err error) { sameCoreError(t, "host *Error", err, own) }},
		} {
			env := newCoreEnv(t, routed, func(c *testConfig) {
				c.SelectWorkflow = func(*wire.Message, []string) (string, error) { return "", tc.err }
			})
			_, err := env.srv.sendMessage(coreCtx(t), asCaller(coreTenantA, "alice"), &wire.SendMessageRequest{Message: withSkill("m-1", "")})
			tc.check(err)
			if e := asError(err); strings.Contains(e.Message, "leak") {
				t.Fatalf("message leaked the host error: %q", e.Message)
			}
		}
	})
	t.Run("routed but not startable", func(t *testing.T) {
		env := newCoreEnv(t, withRouted("not-registered"))
		_, err := env.srv.sendMessage(coreCtx(t), asCaller(coreTenantA, "alice"), &wire.SendMessageRequest{Message: textMessage("m-1", "go")})
		wantError(t, err, -32602, "")
	})
}

// Through an agent, skillId selects among the agent's workflows the caller
// may start, and a message without one starts the agent's default: the
// first of them (OpenWOP interop.md §Per-agent cards).
func TestCoreSendMessageAgentWorkflows(t *testing.T) {
	env := newCoreEnv(t)
	cases := []struct {
		name      string
		workflows []string
		skill     any // message.metadata.skillId; nil: absent
		state     wire.TaskState
		field     string // -32602 field when refused
	}{
		{"one startable of two", []string{"not-registered", memstore.FixtureNoop}, nil, wire.TaskStateCompleted, ""},
		{"none startable", []string{"not-registered"}, nil, "", ""},
		{"two startable, no skillId: the first", []string{memstore.FixtureNoop, memstore.FixtureFailure}, nil, wire.TaskStateCompleted, ""},
		{"two startable, no skillId: the first, in the agent's order", []string{memstore.FixtureFailure, memstore.FixtureNoop}, nil, wire.TaskStateFailed, ""},
		{"first not startable: the first startable", []string{"not-registered", memstore.FixtureFailure, memstore.FixtureNoop}, nil, wire.TaskStateFailed, ""},
		{"two startable, skillId", []string{memstore.FixtureNoop, memstore.FixtureFailure}, memstore.FixtureFailure, wire.TaskStateFailed, ""},
		{"skillId outside the agent", []string{memstore.FixtureNoop, memstore.FixtureFailure}, memstore.FixtureApproval, "", skillIDField},
		{"one startable, skillId outside the agent", []string{memstore.FixtureNoop}, memstore.FixtureApproval, "", skillIDField},
		{"skillId not startable", []string{memstore.FixtureNoop, "not-registered"}, "not-registered", "", skillIDField},
		{"skillId not a string", []string{memstore.FixtureNoop, memstore.FixtureFailure}, 7, "", skillIDField},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := asCaller(coreTenantA, "alice")
			c.agent = &interop.Agent{ID: "agent-1", Workflows: tc.workflows}
			m := textMessage("m-agent-"+string(rune('a'+i)), "go")
			if tc.skill != nil {
				m.Metadata = map[string]any{"skillId": tc.skill}
			}
			task, err := env.srv.sendMessage(coreCtx(t), c, &wire.SendMessageRequest{Message: m})
			if tc.state == "" {
				wantError(t, err, -32602, tc.field)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if task.Status.State != tc.state {
				t.Fatalf("state = %s, want %s", task.Status.State, tc.state)
			}
		})
	}
}

// SelectWorkflow still picks among an agent's workflows, offered in the
// agent's order with the default first.
func TestCoreSendMessageAgentSelectWorkflow(t *testing.T) {
	var offered []string
	env := newCoreEnv(t, func(c *testConfig) {
		c.SelectWorkflow = func(_ *wire.Message, candidates []string) (string, error) {
			offered = candidates
			return candidates[len(candidates)-1], nil
		}
	})
	c := asCaller(coreTenantA, "alice")
	c.agent = &interop.Agent{ID: "agent-1", Workflows: []string{memstore.FixtureNoop, "not-registered", memstore.FixtureFailure}}
	task := env.send(t, c, textMessage("m-select", "go"))
	if task.Status.State != wire.TaskStateFailed || !slices.Equal(offered, []string{memstore.FixtureNoop, memstore.FixtureFailure}) {
		t.Fatalf("state %s, offered %v", task.Status.State, offered)
	}
}

func TestCoreSendMessageInputs(t *testing.T) {
	env := newCoreEnv(t, withRouted(probeInputs))
	c := asCaller(coreTenantA, "alice")
	cases := []struct {
		name  string
		parts []*wire.Part
		want  string
	}{
		{"no data part", []*wire.Part{wire.NewTextPart("hi")}, `{}`},
		{"first data part", []*wire.Part{wire.NewTextPart("hi"), wire.NewDataPart(map[string]any{"n": 1}), wire.NewDataPart(map[string]any{"n": 2})}, `{"n":1}`},
	}
	for i, tc := range cases {
		task := env.send(t, c, userMessage("m-in-"+string(rune('a'+i)), tc.parts...))
		got, _ := env.rec.get(string(task.ID))
		if got != tc.want {
			t.Errorf("%s: inputs %v, want %s", tc.name, got, tc.want)
		}
	}

	// The inputs are validated against the workflow's schema before the
	// store is asked, naming the value in the request.
	env2 := newCoreEnv(t, withRouted(memstore.FixtureDelay))
	_, err := env2.srv.sendMessage(coreCtx(t), c, &wire.SendMessageRequest{Message: userMessage("m-bad", wire.NewDataPart(map[string]any{"delayMs": "soon"}))})
	wantError(t, err, -32602, "message.parts[0].data/delayMs")
}

func TestCoreSendMessageTraceContext(t *testing.T) {
	const (
		header  = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
		inMsg   = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
		zeroTID = "00-00000000000000000000000000000000-b7ad6b7169203331-01"
		zeroPID = "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01"
		verFF   = "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
		upper   = "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01"
		short   = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b716920333-01"
	)
	env := newCoreEnv(t, withRouted(probeTrace))
	cases := []struct {
		name               string
		header, state      string
		metaParent, metaSt any
		wantParent, wantSt string
	}{
		{"header only", header, "h=1", nil, nil, header, "h=1"},
		{"metadata wins", header, "h=1", inMsg, "m=1", inMsg, "m=1"},
		{"metadata without tracestate", header, "h=1", inMsg, nil, inMsg, ""},
		{"malformed metadata ignored", header, "h=1", short, "m=1", header, "h=1"},
		{"zero trace id ignored", header, "", zeroTID, nil, header, ""},
		{"zero parent id ignored", header, "", zeroPID, nil, header, ""},
		{"version ff ignored", header, "", verFF, nil, header, ""},
		{"upper-case hex ignored", header, "", upper, nil, header, ""},
		{"non-string ignored", header, "", 42, nil, header, ""},
		{"malformed header, no metadata", "garbage", "h=1", nil, nil, "", ""},
		{"nothing", "", "", nil, nil, "", ""},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/a2a/jsonrpc", nil)
			if tc.header != "" {
				r.Header.Set("traceparent", tc.header)
			}
			if tc.state != "" {
				r.Header.Set("tracestate", tc.state)
			}
			c := asCaller(coreTenantA, "alice")
			c.trace = tracecontext.FromHeaders(r.Header)
			m := textMessage("m-trace-"+string(rune('a'+i)), "go")
			if tc.metaParent != nil {
				ow := map[string]any{"traceparent": tc.metaParent}
				if tc.metaSt != nil {
					ow["tracestate"] = tc.metaSt
				}
				m.Metadata = map[string]any{"openwop": ow}
			}
			task := env.send(t, c, m)
			got, ok := env.rec.get(string(task.ID))
			want := interop.TraceContext{TraceParent: tc.wantParent, TraceState: tc.wantSt}
			if !ok || got != want {
				t.Fatalf("run trace = %+v, want %+v", got, want)
			}
		})
	}
}

func TestCoreTraceFromHeaders(t *testing.T) {
	const valid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	cases := []struct {
		name    string
		parents []string
		states  []string
		want    interop.TraceContext
	}{
		{"valid", []string{valid}, []string{"a=1"}, interop.TraceContext{TraceParent: valid, TraceState: "a=1"}},
		{"repeated tracestate joins", []string{valid}, []string{"a=1", "b=2"}, interop.TraceContext{TraceParent: valid, TraceState: "a=1,b=2"}},
		{"repeated traceparent ignored", []string{valid, valid}, nil, interop.TraceContext{}},
		{"tracestate without traceparent dropped", nil, []string{"a=1"}, interop.TraceContext{}},
		{"control byte in tracestate dropped", []string{valid}, []string{"a=\x01"}, interop.TraceContext{TraceParent: valid}},
		{"oversized tracestate dropped", []string{valid}, []string{strings.Repeat("a", tracecontext.MaxState+1)}, interop.TraceContext{TraceParent: valid}},
		{"wrong separators", []string{strings.ReplaceAll(valid, "-", "_")}, nil, interop.TraceContext{}},
	}
	for _, tc := range cases {
		r := httptest.NewRequest("GET", "/", nil)
		for _, v := range tc.parents {
			r.Header.Add("traceparent", v)
		}
		for _, v := range tc.states {
			r.Header.Add("tracestate", v)
		}
		if got := tracecontext.FromHeaders(r.Header); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestCorePrepareCarriesTraceContext(t *testing.T) {
	const valid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	env := newCoreEnv(t, func(c *testConfig) {
		c.Subjects = interop.SubjectResolverFunc(func(*http.Request) (interop.Subject, error) {
			return coreSubject(coreTenantA, "alice"), nil
		})
	})
	for _, tc := range []struct{ header, want string }{{valid, valid}, {"00-bad", ""}} {
		r := httptest.NewRequest("POST", "/a2a/jsonrpc", nil)
		r.Header.Set("A2A-Version", "1.0")
		r.Header.Set("traceparent", tc.header)
		r.Header.Set("tracestate", "k=v")
		c, err := env.srv.prepare(r)
		if err != nil {
			t.Fatal(err)
		}
		want := interop.TraceContext{}
		if tc.want != "" {
			want = interop.TraceContext{TraceParent: tc.want, TraceState: "k=v"}
		}
		if c.trace != want {
			t.Fatalf("call trace = %+v, want %+v", c.trace, want)
		}
	}
}
