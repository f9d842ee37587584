package memstore

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/wopinterop/wopinterop/interop"
)

// scriptedCaller is an interop.ToolCaller that asks the host the
// requests of its script, one by one, and completes with what was
// answered.
type scriptedCaller struct {
	asks []interop.ToolInputRequest

	mu      sync.Mutex
	calls   []interop.ToolCall
	answers []interop.ToolInputAnswer
	errs    []error
}

func (c *scriptedCaller) CallTool(ctx context.Context, call interop.ToolCall) (interop.ToolResult, error) {
	c.mu.Lock()
	c.calls = append(c.calls, call)
	c.mu.Unlock()
	for _, q := range c.asks {
		if call.Input == nil {
			return interop.ToolResult{}, errors.New("input needed but not declared")
		}
		a, err := call.Input.Ask(ctx, q)
		c.mu.Lock()
		c.answers, c.errs = append(c.answers, a), append(c.errs, err)
		c.mu.Unlock()
		if err != nil {
			return interop.ToolResult{}, err
		}
	}
	return interop.ToolResult{AttemptID: "att_1", Content: []interop.ToolContent{{Type: "text", Text: "done"}}}, nil
}

func (c *scriptedCaller) seen() ([]interop.ToolCall, []interop.ToolInputAnswer, []error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.calls), slices.Clone(c.answers), slices.Clone(c.errs)
}

// registerCaller registers a workflow that makes one tool call through tc
// and completes with its result.
func registerCaller(t *testing.T, s *Store, id string, tc interop.ToolCaller) {
	t.Helper()
	err := s.Register(tenantA, WorkflowDef{
		Workflow: interop.Workflow{ID: id},
		Run: func(ctx context.Context, rc *RunContext) (json.RawMessage, error) {
			res, err := rc.CallTool(ctx, "docs", "search", json.RawMessage(`{"q":"x"}`))
			if err != nil {
				return nil, Fail("call failed: " + err.Error())
			}
			return json.Marshal(res)
		},
		ToolCaller: tc,
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCallToolHandsTheRun: the ToolCaller gets the run's id and trace,
// the server alias, the tool and the arguments as given, with form and
// URL elicitation declared; its result is the workflow's.
func TestCallToolHandsTheRun(t *testing.T) {
	s := newStore(t)
	tc := &scriptedCaller{}
	registerCaller(t, s, "caller", tc)
	sub := subject(tenantA, "alice")
	trace := interop.TraceContext{TraceParent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", TraceState: "k=v"}
	run := mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: "caller", Trace: trace})
	evs := events(t, s, sub, run.ID)
	last := evs[len(evs)-1]
	if last.Type != interop.EventRunCompleted || string(payloadOf(t, last)["outputs"]) != `{"attemptId":"att_1","isError":false,"content":[{"type":"text","text":"done"}]}` {
		t.Fatalf("run ends with %s %s", last.Type, last.Payload)
	}
	calls, _, _ := tc.seen()
	if len(calls) != 1 {
		t.Fatalf("%d calls", len(calls))
	}
	c := calls[0]
	if c.RunID != run.ID || c.Server != "docs" || c.Tool != "search" || string(c.Arguments) != `{"q":"x"}` || c.Trace != trace ||
		c.Input == nil || !c.Input.Form || !c.Input.URL || c.Input.Ask == nil {
		t.Fatalf("call %+v", c)
	}
}

// TestCallToolWithoutCaller: a workflow registered without a ToolCaller
// gets ErrNoToolCaller, whatever another workflow of the tenant has.
func TestCallToolWithoutCaller(t *testing.T) {
	s := newStore(t)
	registerCaller(t, s, "with", &scriptedCaller{})
	var got error
	register(t, s, tenantA, "without", func(ctx context.Context, rc *RunContext) (json.RawMessage, error) {
		_, got = rc.CallTool(ctx, "docs", "search", nil)
		return nil, nil
	})
	sub := subject(tenantA, "alice")
	run := mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: "without"})
	events(t, s, sub, run.ID)
	if !errors.Is(got, ErrNoToolCaller) {
		t.Fatalf("err = %v, want ErrNoToolCaller", got)
	}
}

// TestCallToolInputThroughInterrupts: every input request suspends the
// run on its own clarification interrupt, quoting the server, with the
// form's schema as resume schema (a value outside it is refused and
// nothing is answered), and the user's resolution is the answer: the form
// accepted with the value, a URL request accepted without content, a
// decline and a cancel sent as such.
func TestCallToolInputThroughInterrupts(t *testing.T) {
	s := newStore(t)
	schema := json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)
	tc := &scriptedCaller{asks: []interop.ToolInputRequest{
		{Round: 1, ID: "who", Mode: "form", Message: "Your name?", Schema: schema},
		{Round: 2, ID: "auth", Mode: "url", Message: "Authorize", URL: "https://server.example/authorize"},
		{Round: 3, ID: "again", Mode: "form", Message: "Again?"},
		{Round: 4, ID: "more", Mode: "form", Message: "More?"},
	}}
	registerCaller(t, s, "caller", tc)
	sub := subject(tenantA, "alice")
	run := mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: "caller"})
	resolve := func(key string, outcome interop.ResolveOutcome, value string) interop.Interrupt {
		t.Helper()
		ev := waitFor(t, s, sub, run.ID, func(ev interop.RunEvent) bool {
			return ev.Type == interop.EventNodeSuspended && suspendedKey(t, ev) == key
		})
		got, err := s.GetRun(testCtx(t), sub, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != interop.StatusWaitingInput || len(got.Interrupts) != 1 || got.Interrupts[0].ID != interruptIDOf(t, ev) {
			t.Fatalf("run %s with interrupts %+v", got.Status, got.Interrupts)
		}
		in := got.Interrupts[0]
		if _, err := s.ResolveInterrupt(testCtx(t), sub, interop.ResolveRequest{RunID: run.ID, InterruptID: in.ID, Outcome: outcome, Value: json.RawMessage(value)}); err != nil {
			t.Fatalf("resolve %s: %v", key, err)
		}
		return in
	}
	// A value the form's schema refuses changes nothing.
	first := waitFor(t, s, sub, run.ID, func(ev interop.RunEvent) bool { return ev.Type == interop.EventNodeSuspended })
	_, err := s.ResolveInterrupt(testCtx(t), sub, interop.ResolveRequest{RunID: run.ID, InterruptID: interruptIDOf(t, first), Value: json.RawMessage(`{"name":7}`)})
	wantInputError(t, err, "resumeValue/name")

	in := resolve(ToolInputKeyPrefix+"1", interop.OutcomeAccept, `{"name":"Ada"}`)
	if in.Kind != interop.InterruptClarification || in.NodeID != ToolInputNodeID || in.Message != "The MCP server asks: Your name?" || string(in.ResumeSchema) != string(schema) {
		t.Fatalf("form interrupt %+v", in)
	}
	in = resolve(ToolInputKeyPrefix+"2", interop.OutcomeAccept, `{}`)
	if in.Message != "The MCP server asks: Authorize Complete it at https://server.example/authorize, then accept." || len(in.ResumeSchema) != 0 {
		t.Fatalf("url interrupt %+v", in)
	}
	resolve(ToolInputKeyPrefix+"3", interop.OutcomeDecline, "")
	resolve(ToolInputKeyPrefix+"4", interop.OutcomeCancel, "")

	evs := events(t, s, sub, run.ID)
	if last := evs[len(evs)-1]; last.Type != interop.EventRunCompleted {
		t.Fatalf("run ends with %s %s", last.Type, last.Payload)
	}
	_, answers, errs := tc.seen()
	want := []interop.ToolInputAnswer{
		{Action: interop.InputAccept, Content: json.RawMessage(`{"name":"Ada"}`)},
		{Action: interop.InputAccept},
		{Action: interop.InputDecline},
		{Action: interop.InputCancel},
	}
	if len(answers) != len(want) {
		t.Fatalf("answers %+v", answers)
	}
	for i := range want {
		if errs[i] != nil || answers[i].Action != want[i].Action || string(answers[i].Content) != string(want[i].Content) {
			t.Errorf("answer %d: %+v (%v), want %+v", i, answers[i], errs[i], want[i])
		}
	}
	checkDocs(t, evs)
}

// TestCallToolInputCancelledRun: cancelling the run while it waits on a
// tool's input request ends the call without an answer and the run
// cancelled.
func TestCallToolInputCancelledRun(t *testing.T) {
	s := newStore(t)
	tc := &scriptedCaller{asks: []interop.ToolInputRequest{{Round: 1, ID: "who", Mode: "form", Message: "Your name?"}}}
	registerCaller(t, s, "caller", tc)
	sub := subject(tenantA, "alice")
	run := mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: "caller"})
	waitStatus(t, s, sub, run.ID, interop.StatusWaitingInput)
	if _, err := s.CancelRun(testCtx(t), sub, run.ID, "stop"); err != nil {
		t.Fatal(err)
	}
	evs := events(t, s, sub, run.ID)
	if last := evs[len(evs)-1]; last.Type != interop.EventRunCancelled {
		t.Fatalf("run ends with %s", last.Type)
	}
	_, answers, errs := tc.seen()
	if len(errs) != 1 || errs[0] == nil || answers[0].Action != "" {
		t.Fatalf("answers %+v errors %v, want the one request unanswered", answers, errs)
	}
}

// suspendedKey is a node.suspended event's key.
func suspendedKey(t *testing.T, ev interop.RunEvent) string {
	t.Helper()
	var p struct {
		Key string `json:"key"`
	}
	if err := json.Unmarshal(ev.Payload, &p); err != nil {
		t.Fatal(err)
	}
	return p.Key
}
