package memstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/isolation"
)

func TestFixtureLifecyclesWithoutInterrupts(t *testing.T) {
	tests := []struct {
		workflow    string
		inputs      string
		wantTypes   []interop.EventType
		wantStatus  interop.RunStatus
		wantOutput  string
		wantFailure string
	}{
		{
			workflow:   FixtureNoop,
			wantTypes:  []interop.EventType{interop.EventRunStarted, interop.EventArtifactCreated, interop.EventRunCompleted},
			wantStatus: interop.StatusCompleted,
			wantOutput: `{"ok":true}`,
		},
		{
			workflow:    FixtureFailure,
			wantTypes:   []interop.EventType{interop.EventRunStarted, interop.EventRunFailed},
			wantStatus:  interop.StatusFailed,
			wantFailure: FixtureFailureMessage,
		},
		{
			workflow:   FixtureDelay,
			inputs:     `{"delayMs":1}`,
			wantTypes:  []interop.EventType{interop.EventRunStarted, interop.EventRunCompleted},
			wantStatus: interop.StatusCompleted,
			wantOutput: `{"delayedMs":1}`,
		},
		{
			workflow:   FixtureDelay,
			wantTypes:  []interop.EventType{interop.EventRunStarted, interop.EventRunCompleted},
			wantStatus: interop.StatusCompleted,
			wantOutput: `{"delayedMs":0}`,
		},
		{
			workflow:   FixtureCancellable,
			inputs:     `{"delayMs":0}`,
			wantTypes:  []interop.EventType{interop.EventRunStarted, interop.EventRunCompleted},
			wantStatus: interop.StatusCompleted,
			wantOutput: `{"delayedMs":0}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.workflow+tc.inputs, func(t *testing.T) {
			s := newStore(t)
			sub := subject(tenantA, "alice")
			run := mustCreate(t, s, sub, interop.CreateRunRequest{
				WorkflowID: tc.workflow, Inputs: json.RawMessage(tc.inputs), Transport: interop.TransportREST,
			})
			if run.Status != interop.StatusRunning || run.LastSequence != 0 {
				t.Fatalf("created run: status %s last sequence %d, want running 0", run.Status, run.LastSequence)
			}
			evs := events(t, s, sub, run.ID)
			checkSequences(t, run.ID, evs)
			if diff := cmp.Diff(tc.wantTypes, typesOf(evs)); diff != "" {
				t.Fatalf("event types (-want +got):\n%s", diff)
			}
			last := evs[len(evs)-1]
			if last.Status != tc.wantStatus || !last.Terminal() {
				t.Fatalf("terminal event %+v, want status %s", last, tc.wantStatus)
			}
			if got := reasonOf(t, last); tc.wantFailure != "" && got != tc.wantFailure {
				t.Fatalf("run.failed message %q, want %q", got, tc.wantFailure)
			}
			checkDocs(t, evs)
			got, err := s.GetRun(testCtx(t), sub, run.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != tc.wantStatus || got.LastSequence != last.Sequence || !got.StatusAt.Equal(last.Timestamp) {
				t.Fatalf("GetRun: status %s at %v last %d; terminal event at %v seq %d", got.Status, got.StatusAt, got.LastSequence, last.Timestamp, last.Sequence)
			}
			if string(got.Output) != tc.wantOutput {
				t.Fatalf("Output = %s, want %s", got.Output, tc.wantOutput)
			}
			if got.FailureMessage != tc.wantFailure {
				t.Fatalf("FailureMessage = %q, want %q", got.FailureMessage, tc.wantFailure)
			}
		})
	}
}

func TestNoopArtifact(t *testing.T) {
	s := newStore(t)
	sub := subject(tenantA, "alice")
	run := mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: FixtureNoop})
	evs := events(t, s, sub, run.ID)
	ev := evs[1]
	if ev.Chunk == nil || ev.Chunk.Append || !ev.Chunk.LastChunk || ev.Status != interop.StatusRunning {
		t.Fatalf("artifact event = %+v, want a last, non-append chunk while running", ev)
	}
	want := []interop.Artifact{{ID: FixtureArtifactID, Name: "result", Parts: []interop.Part{interop.TextPart("conformance-noop completed")}}}
	if diff := cmp.Diff(want[0], ev.Chunk.Artifact); diff != "" {
		t.Fatalf("event artifact (-want +got):\n%s", diff)
	}
	got, _ := s.GetRun(testCtx(t), sub, run.ID)
	if diff := cmp.Diff(want, got.Artifacts); diff != "" {
		t.Fatalf("run artifacts (-want +got):\n%s", diff)
	}
}

func TestApprovalFixture(t *testing.T) {
	tests := []struct {
		name        string
		outcome     interop.ResolveOutcome
		value       string
		wantFinal   interop.EventType
		wantStatus  interop.RunStatus
		wantReason  string
		wantOutput  string
		wantFailure string
	}{
		{name: "accept", outcome: interop.OutcomeAccept, value: `{"action":"accept"}`,
			wantFinal: interop.EventRunCompleted, wantStatus: interop.StatusCompleted, wantOutput: `{"approved":true}`},
		{name: "empty outcome is accept", value: `{"action":"accept"}`,
			wantFinal: interop.EventRunCompleted, wantStatus: interop.StatusCompleted, wantOutput: `{"approved":true}`},
		{name: "member names are exact", value: `{"action":"accept","Action":"reject"}`,
			wantFinal: interop.EventRunCompleted, wantStatus: interop.StatusCompleted, wantOutput: `{"approved":true}`},
		{name: "reject", outcome: interop.OutcomeAccept, value: `{"action":"reject"}`,
			wantFinal: interop.EventRunFailed, wantStatus: interop.StatusFailed, wantReason: FixtureRejectedMessage, wantFailure: FixtureRejectedMessage},
		{name: "decline", outcome: interop.OutcomeDecline,
			wantFinal: interop.EventRunFailed, wantStatus: interop.StatusFailed, wantReason: FixtureRejectedMessage, wantFailure: FixtureRejectedMessage},
		{name: "cancel", outcome: interop.OutcomeCancel,
			wantFinal: interop.EventRunCancelled, wantStatus: interop.StatusCancelled, wantReason: "approval cancelled"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			sub := subject(tenantA, "alice")
			run := mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: FixtureApproval})
			waitStatus(t, s, sub, run.ID, interop.StatusWaitingApproval)

			suspended, err := s.GetRun(testCtx(t), sub, run.ID)
			if err != nil {
				t.Fatal(err)
			}
			in, ok := suspended.OpenInterrupt()
			if !ok || len(suspended.Interrupts) != 1 {
				t.Fatalf("suspended run has interrupts %+v", suspended.Interrupts)
			}
			if tenant, _, err := isolation.Split(in.ID); err != nil || tenant != tenantA {
				t.Fatalf("interrupt id %q is not bound to %s", in.ID, tenantA)
			}
			if in.Kind != interop.InterruptApproval || in.Key != "approval" || in.NodeID != "approve" ||
				in.Message != "Approve the request?" || !slices.Equal(in.Actions, []string{"accept", "reject"}) ||
				in.CreatedAt.IsZero() || !json.Valid(in.ResumeSchema) {
				t.Fatalf("interrupt = %+v", in)
			}

			resolved, err := s.ResolveInterrupt(testCtx(t), sub, interop.ResolveRequest{
				RunID: run.ID, InterruptID: in.ID, Outcome: tc.outcome, Value: json.RawMessage(tc.value),
			})
			if err != nil {
				t.Fatalf("ResolveInterrupt: %v", err)
			}
			if len(resolved.Interrupts) != 0 {
				t.Fatalf("resolved run still has interrupts %+v", resolved.Interrupts)
			}

			evs := events(t, s, sub, run.ID)
			checkSequences(t, run.ID, evs)
			wantTypes := []interop.EventType{interop.EventRunStarted, interop.EventNodeSuspended, interop.EventInterruptResolved, tc.wantFinal}
			if diff := cmp.Diff(wantTypes, typesOf(evs)); diff != "" {
				t.Fatalf("event types (-want +got):\n%s", diff)
			}
			wantStatuses := []interop.RunStatus{interop.StatusRunning, interop.StatusWaitingApproval, interop.StatusRunning, tc.wantStatus}
			if diff := cmp.Diff(wantStatuses, statusesOf(evs)); diff != "" {
				t.Fatalf("event statuses (-want +got):\n%s", diff)
			}
			if a, b := interruptIDOf(t, evs[1]), interruptIDOf(t, evs[2]); a != in.ID || b != in.ID {
				t.Fatalf("interrupt ids on events: %q, %q; want %q", a, b, in.ID)
			}
			if evs[1].NodeID != "approve" || evs[2].NodeID != "approve" {
				t.Fatalf("node ids on events: %q, %q; want approve", evs[1].NodeID, evs[2].NodeID)
			}
			if got := reasonOf(t, evs[3]); got != tc.wantReason {
				t.Fatalf("terminal reason %q, want %q", got, tc.wantReason)
			}
			checkDocs(t, evs)
			final, _ := s.GetRun(testCtx(t), sub, run.ID)
			if string(final.Output) != tc.wantOutput || final.FailureMessage != tc.wantFailure {
				t.Fatalf("final run output %s failure %q", final.Output, final.FailureMessage)
			}
		})
	}
}

func TestCreateRunRecordsRequest(t *testing.T) {
	s := newStore(t)
	traces := make(chan interop.TraceContext, 1)
	inputs := make(chan json.RawMessage, 1)
	register(t, s, tenantA, "probe", func(_ context.Context, rc *RunContext) (json.RawMessage, error) {
		traces <- rc.Trace()
		inputs <- rc.Inputs()
		return nil, nil
	})
	sub := inWorkspace(subject(tenantA, "alice"), "ws-1")
	msg := &interop.Message{ID: "m-1", Role: interop.RoleUser, Parts: []interop.Part{interop.TextPart("hi")}}
	trace := interop.TraceContext{TraceParent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", TraceState: "k=v"}
	run := mustCreate(t, s, sub, interop.CreateRunRequest{
		WorkflowID: "probe", Inputs: json.RawMessage(`{"x":1}`), Transport: interop.TransportA2A,
		ContextID: "ctx-1", Trace: trace, TrustBoundary: interop.TrustUntrusted, Message: msg,
	})
	if tenant, _, err := isolation.Split(run.ID); err != nil || tenant != tenantA {
		t.Fatalf("run id %q is not bound to %s", run.ID, tenantA)
	}
	want := interop.Run{
		ID: run.ID, Tenant: tenantA, Workspace: "ws-1", Principal: "alice", WorkflowID: "probe",
		Status: interop.StatusRunning, StatusAt: run.CreatedAt, CreatedAt: run.CreatedAt,
		Transport: interop.TransportA2A, ContextID: "ctx-1",
		Messages: []interop.Message{*msg}, LastSequence: 0,
	}
	if diff := cmp.Diff(want, run); diff != "" {
		t.Fatalf("created run (-want +got):\n%s", diff)
	}
	if got := <-traces; got != trace {
		t.Fatalf("workflow saw trace %+v, want %+v", got, trace)
	}
	if got := <-inputs; string(got) != `{"x":1}` {
		t.Fatalf("workflow saw inputs %s", got)
	}
	evs := events(t, s, sub, run.ID)
	if evs[0].Type != interop.EventRunStarted || evs[0].Status != interop.StatusRunning {
		t.Fatalf("first event = %+v", evs[0])
	}
	var started interop.RunStarted
	if err := evs[0].DecodePayload(&started); err != nil || started.WorkflowID != "probe" || started.Transport != interop.TransportA2A || started.Inputs != nil {
		t.Fatalf("run.started payload %s (%v)", evs[0].Payload, err)
	}
}

func TestCreateRunNilInputsAreEmptyObject(t *testing.T) {
	s := newStore(t)
	got := make(chan json.RawMessage, 1)
	register(t, s, tenantA, "probe", func(_ context.Context, rc *RunContext) (json.RawMessage, error) {
		got <- rc.Inputs()
		return nil, nil
	})
	mustCreate(t, s, subject(tenantA, "alice"), interop.CreateRunRequest{WorkflowID: "probe"})
	if in := <-got; string(in) != `{}` {
		t.Fatalf("inputs = %s, want {}", in)
	}
}

func TestCreateRunRefusalsCreateNothing(t *testing.T) {
	tests := []struct {
		name      string
		sub       interop.Subject
		workflow  string
		inputs    string
		wantField string // "" means ErrNotFound
	}{
		{name: "unknown workflow", sub: subject(tenantA, "alice"), workflow: "nope"},
		{name: "workflow of no tenant", sub: subject("", "anon"), workflow: FixtureNoop},
		{name: "tenant without workflows", sub: subject("initech", "bob"), workflow: FixtureNoop},
		{name: "negative delay", sub: subject(tenantA, "alice"), workflow: FixtureDelay, inputs: `{"delayMs":-1}`, wantField: "inputs/delayMs"},
		{name: "delay too long", sub: subject(tenantA, "alice"), workflow: FixtureDelay, inputs: `{"delayMs":600001}`, wantField: "inputs/delayMs"},
		{name: "fractional delay", sub: subject(tenantA, "alice"), workflow: FixtureCancellable, inputs: `{"delayMs":1.5}`, wantField: "inputs/delayMs"},
		{name: "string delay", sub: subject(tenantA, "alice"), workflow: FixtureDelay, inputs: `{"delayMs":"5"}`, wantField: "inputs/delayMs"},
		{name: "extra property", sub: subject(tenantA, "alice"), workflow: FixtureDelay, inputs: `{"delayMs":5,"x":1}`, wantField: "inputs"},
		{name: "not an object", sub: subject(tenantA, "alice"), workflow: FixtureNoop, inputs: `[1]`, wantField: "inputs"},
		{name: "not JSON", sub: subject(tenantA, "alice"), workflow: FixtureNoop, inputs: `{"a":`, wantField: "inputs"},
		{name: "trailing data", sub: subject(tenantA, "alice"), workflow: FixtureNoop, inputs: `{} {}`, wantField: "inputs"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			_, created, err := s.CreateRun(testCtx(t), tc.sub, interop.CreateRunRequest{
				WorkflowID: tc.workflow, Inputs: json.RawMessage(tc.inputs), IdempotencyKey: "k",
			})
			if created {
				t.Fatal("created = true on a refusal")
			}
			if tc.wantField == "" {
				wantErrIs(t, err, interop.ErrNotFound)
			} else {
				wantInputError(t, err, tc.wantField)
			}
			page, err := s.ListRuns(testCtx(t), tc.sub, interop.ListRunsQuery{})
			if err != nil || page.Total != 0 || len(page.Runs) != 0 {
				t.Fatalf("after refusal: %d runs (err %v)", page.Total, err)
			}
			// The key was not consumed by the refusal.
			if tc.wantField != "" {
				run, created, err := s.CreateRun(testCtx(t), tc.sub, interop.CreateRunRequest{WorkflowID: FixtureNoop, IdempotencyKey: "k"})
				if err != nil || !created || run.WorkflowID != FixtureNoop {
					t.Fatalf("retry with the same key: created %v err %v", created, err)
				}
			}
		})
	}
}

func TestCreateRunInputErrorReason(t *testing.T) {
	s := newStore(t)
	_, _, err := s.CreateRun(testCtx(t), subject(tenantA, "alice"), interop.CreateRunRequest{
		WorkflowID: FixtureDelay, Inputs: json.RawMessage(`{"delayMs":600001}`),
	})
	var ie *interop.InputError
	if !errors.As(err, &ie) || !strings.Contains(ie.Reason, "maximum") || strings.Contains(ie.Reason, "mem://") {
		t.Fatalf("InputError = %+v; want a reason naming the keyword and no schema URL", ie)
	}
}

func TestWorkflowOutcomes(t *testing.T) {
	tests := []struct {
		name        string
		fn          WorkflowFunc
		wantStatus  interop.RunStatus
		wantReason  string
		wantOutput  string
		wantLogged  string
		wantNotLogs string
		wantFault   bool
	}{
		{
			name:       "nil output",
			fn:         func(context.Context, *RunContext) (json.RawMessage, error) { return nil, nil },
			wantStatus: interop.StatusCompleted,
		},
		{
			name: "output",
			fn: func(context.Context, *RunContext) (json.RawMessage, error) {
				return json.RawMessage(`{"n":1}`), nil
			},
			wantStatus: interop.StatusCompleted, wantOutput: `{"n":1}`,
		},
		{
			name: "invalid output",
			fn: func(context.Context, *RunContext) (json.RawMessage, error) {
				return json.RawMessage(`{"n":`), nil
			},
			wantStatus: interop.StatusFailed, wantReason: genericFailure, wantLogged: "invalid JSON output",
		},
		{
			name: "safe failure",
			fn: func(context.Context, *RunContext) (json.RawMessage, error) {
				return nil, Fail("quota exhausted")
			},
			wantStatus: interop.StatusFailed, wantReason: "quota exhausted",
		},
		{
			name: "wrapped safe failure",
			fn: func(context.Context, *RunContext) (json.RawMessage, error) {
				return nil, errors.Join(errors.New("internal"), Fail("quota exhausted"))
			},
			wantStatus: interop.StatusFailed, wantReason: "quota exhausted",
		},
		{
			name: "host fault",
			fn: func(context.Context, *RunContext) (json.RawMessage, error) {
				return nil, fmt.Errorf("calling the model gateway: %w", Fault("the model gateway is unavailable"))
			},
			wantStatus: interop.StatusFailed, wantReason: "the model gateway is unavailable", wantFault: true,
		},
		{
			name: "raw error is hidden",
			fn: func(context.Context, *RunContext) (json.RawMessage, error) {
				return nil, errors.New("db password=hunter2 rejected")
			},
			wantStatus: interop.StatusFailed, wantReason: genericFailure, wantLogged: "hunter2",
		},
		{
			name: "panic",
			fn: func(context.Context, *RunContext) (json.RawMessage, error) {
				panic("boom in workflow")
			},
			wantStatus: interop.StatusFailed, wantReason: genericFailure, wantLogged: "boom in workflow",
		},
		{
			name: "cancel with reason",
			fn: func(context.Context, *RunContext) (json.RawMessage, error) {
				return nil, Cancel("user went away")
			},
			wantStatus: interop.StatusCancelled, wantReason: "user went away",
		},
		{
			name: "ErrCancelled",
			fn: func(context.Context, *RunContext) (json.RawMessage, error) {
				return nil, ErrCancelled
			},
			wantStatus: interop.StatusCancelled, wantReason: "cancelled by workflow",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var logs logBuffer
			s := newStore(t, WithLogger(logs.logger()))
			register(t, s, tenantA, "wf", tc.fn)
			sub := subject(tenantA, "alice")
			run := mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: "wf"})
			evs := events(t, s, sub, run.ID)
			last := evs[len(evs)-1]
			if last.Status != tc.wantStatus || reasonOf(t, last) != tc.wantReason {
				t.Fatalf("terminal event status %s reason %q; want %s %q", last.Status, reasonOf(t, last), tc.wantStatus, tc.wantReason)
			}
			got, _ := s.GetRun(testCtx(t), sub, run.ID)
			if string(got.Output) != tc.wantOutput {
				t.Fatalf("Output = %s, want %s", got.Output, tc.wantOutput)
			}
			if tc.wantStatus == interop.StatusFailed && got.FailureMessage != tc.wantReason {
				t.Fatalf("FailureMessage = %q, want %q", got.FailureMessage, tc.wantReason)
			}
			if got.Fault != tc.wantFault {
				t.Fatalf("Fault = %v, want %v", got.Fault, tc.wantFault)
			}
			if tc.wantLogged != "" && !strings.Contains(logs.String(), tc.wantLogged) {
				t.Fatalf("log does not mention %q:\n%s", tc.wantLogged, logs.String())
			}
		})
	}
}

func TestListWorkflows(t *testing.T) {
	s := New()
	defer s.Close()
	if err := s.RegisterFixtures(tenantA); err != nil {
		t.Fatal(err)
	}
	register(t, s, tenantA, "plain", func(context.Context, *RunContext) (json.RawMessage, error) { return nil, nil })
	got, err := s.ListWorkflows(testCtx(t), subject(tenantA, "alice"))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, w := range got {
		ids = append(ids, w.ID)
		if !json.Valid(w.InputSchema) {
			t.Fatalf("workflow %s has input schema %s", w.ID, w.InputSchema)
		}
	}
	want := []string{FixtureNoop, FixtureApproval, FixtureFailure, FixtureDelay, FixtureCancellable, "plain"}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Fatalf("workflow ids (-want +got):\n%s", diff)
	}
	if string(got[5].InputSchema) != `{"type":"object"}` {
		t.Fatalf("default input schema = %s", got[5].InputSchema)
	}
	other, err := s.ListWorkflows(testCtx(t), subject(tenantB, "bob"))
	if err != nil || len(other) != 0 || other == nil {
		t.Fatalf("other tenant sees %v (err %v), want an empty list", other, err)
	}
	// Copies: changing the result does not change the store.
	got[0].InputSchema[0] = 'X'
	got[0].Tags[0] = "changed"
	again, _ := s.ListWorkflows(testCtx(t), subject(tenantA, "alice"))
	if again[0].InputSchema[0] != '{' || again[0].Tags[0] != "conformance" {
		t.Fatal("ListWorkflows returned store memory")
	}
}

func TestRegisterRefusals(t *testing.T) {
	noop := func(context.Context, *RunContext) (json.RawMessage, error) { return nil, nil }
	tests := []struct {
		name   string
		tenant string
		def    WorkflowDef
	}{
		{name: "empty tenant", tenant: "", def: WorkflowDef{Workflow: interop.Workflow{ID: "w"}, Run: noop}},
		{name: "bad tenant", tenant: "a/b", def: WorkflowDef{Workflow: interop.Workflow{ID: "w"}, Run: noop}},
		{name: "empty id", tenant: tenantA, def: WorkflowDef{Run: noop}},
		{name: "nil run", tenant: tenantA, def: WorkflowDef{Workflow: interop.Workflow{ID: "w"}}},
		{name: "schema not JSON", tenant: tenantA, def: WorkflowDef{Workflow: interop.Workflow{ID: "w", InputSchema: json.RawMessage(`{`)}, Run: noop}},
		{name: "schema invalid", tenant: tenantA, def: WorkflowDef{Workflow: interop.Workflow{ID: "w", InputSchema: json.RawMessage(`{"type":12}`)}, Run: noop}},
		{name: "schema with remote ref", tenant: tenantA, def: WorkflowDef{Workflow: interop.Workflow{ID: "w", InputSchema: json.RawMessage(`{"$ref":"https://example.com/s.json"}`)}, Run: noop}},
		{name: "duplicate", tenant: tenantA, def: WorkflowDef{Workflow: interop.Workflow{ID: FixtureNoop}, Run: noop}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := New()
			defer s.Close()
			if err := s.RegisterFixtures(tenantA); err != nil {
				t.Fatal(err)
			}
			before, _ := s.ListWorkflows(testCtx(t), subject(tenantA, "x"))
			if err := s.Register(tc.tenant, tc.def); err == nil {
				t.Fatal("Register succeeded")
			}
			after, _ := s.ListWorkflows(testCtx(t), subject(tenantA, "x"))
			if len(after) != len(before) {
				t.Fatalf("refused Register changed the workflow list: %d -> %d", len(before), len(after))
			}
		})
	}
}

func TestAgents(t *testing.T) {
	s := New()
	defer s.Close()
	a := interop.Agent{ID: "triage", Persona: "Triage", Label: "Triage desk", Workflows: []string{FixtureNoop}}
	if err := s.AddAgent(tenantA, a); err != nil {
		t.Fatal(err)
	}
	a.Workflows[0] = "mutated-after-add"
	if err := s.AddAgent(tenantA, interop.Agent{ID: "triage"}); err == nil {
		t.Fatal("duplicate agent id accepted")
	}
	if err := s.AddAgent(tenantA, interop.Agent{}); err == nil {
		t.Fatal("empty agent id accepted")
	}
	if err := s.AddAgent("", interop.Agent{ID: "x"}); err == nil {
		t.Fatal("agent for the empty tenant accepted")
	}
	got, err := s.ListAgents(testCtx(t), subject(tenantA, "alice"))
	if err != nil {
		t.Fatal(err)
	}
	want := []interop.Agent{{ID: "triage", Persona: "Triage", Label: "Triage desk", Workflows: []string{FixtureNoop}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("agents (-want +got):\n%s", diff)
	}
	got[0].Workflows[0] = "changed"
	again, _ := s.ListAgents(testCtx(t), subject(tenantA, "alice"))
	if again[0].Workflows[0] != FixtureNoop {
		t.Fatal("ListAgents returned store memory")
	}
	other, err := s.ListAgents(testCtx(t), subject(tenantB, "bob"))
	if err != nil || len(other) != 0 {
		t.Fatalf("tenant B sees agents %v (err %v)", other, err)
	}
}

func TestClosedStore(t *testing.T) {
	s := newStore(t)
	sub := subject(tenantA, "alice")
	runs := make([]interop.Run, 3)
	for i := range runs {
		runs[i] = mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: FixtureCancellable})
	}
	suspended := mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: FixtureApproval})
	waitStatus(t, s, sub, suspended.ID, interop.StatusWaitingApproval)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Close waited for every workflow: all runs are terminal already,
	// without waiting on anything.
	for _, r := range append(runs, suspended) {
		got, err := s.GetRun(testCtx(t), sub, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != interop.StatusCancelled || len(got.Interrupts) != 0 {
			t.Fatalf("after Close run %s is %s with %d interrupts", r.ID, got.Status, len(got.Interrupts))
		}
		evs := events(t, s, sub, r.ID)
		if last := evs[len(evs)-1]; last.Type != interop.EventRunCancelled || reasonOf(t, last) != "store closed" {
			t.Fatalf("last event after Close = %+v", last)
		}
	}
	_, created, err := s.CreateRun(testCtx(t), sub, interop.CreateRunRequest{WorkflowID: FixtureNoop})
	if created {
		t.Fatal("created a run after Close")
	}
	wantErrIs(t, err, ErrClosed)
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestPanicDoesNotStopOtherRuns(t *testing.T) {
	var logs logBuffer
	s := newStore(t, WithLogger(logs.logger()))
	register(t, s, tenantA, "panics", func(context.Context, *RunContext) (json.RawMessage, error) {
		var m map[string]int
		m["x"] = 1 // a runtime panic, not a string one
		return nil, nil
	})
	sub := subject(tenantA, "alice")
	bad := mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: "panics"})
	good := mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: FixtureNoop})
	if last := events(t, s, sub, bad.ID); reasonOf(t, last[len(last)-1]) != genericFailure {
		t.Fatalf("panicking run ended with %+v", last[len(last)-1])
	}
	if last := events(t, s, sub, good.ID); last[len(last)-1].Status != interop.StatusCompleted {
		t.Fatalf("other run ended with %+v", last[len(last)-1])
	}
	got, _ := s.GetRun(testCtx(t), sub, bad.ID)
	if strings.Contains(got.FailureMessage, "nil map") {
		t.Fatalf("FailureMessage leaks the panic: %q", got.FailureMessage)
	}
	if !strings.Contains(logs.String(), "nil map") || !strings.Contains(logs.String(), "workflow panicked") {
		t.Fatalf("panic not logged:\n%s", logs.String())
	}
}

func TestRegisterAcceptsSelfContainedSchemas(t *testing.T) {
	noop := func(context.Context, *RunContext) (json.RawMessage, error) { return nil, nil }
	tests := []struct {
		name, schema, good, bad string
	}{
		{"draft 2020-12", `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","required":["a"]}`, `{"a":1}`, `{}`},
		{"draft-07", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","required":["a"]}`, `{"a":1}`, `{}`},
		{"local ref", `{"type":"object","$defs":{"s":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/s"}}}`, `{"a":"x"}`, `{"a":1}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := New()
			defer s.Close()
			if err := s.Register(tenantA, WorkflowDef{Workflow: interop.Workflow{ID: "w", InputSchema: json.RawMessage(tc.schema)}, Run: noop}); err != nil {
				t.Fatal(err)
			}
			sub := subject(tenantA, "alice")
			if _, _, err := s.CreateRun(testCtx(t), sub, interop.CreateRunRequest{WorkflowID: "w", Inputs: json.RawMessage(tc.good)}); err != nil {
				t.Fatalf("valid inputs refused: %v", err)
			}
			_, _, err := s.CreateRun(testCtx(t), sub, interop.CreateRunRequest{WorkflowID: "w", Inputs: json.RawMessage(tc.bad)})
			var ie *interop.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("invalid inputs: %v, want an InputError", err)
			}
			// No inputs are {}: refused alike when {} is, accepted alike
			// when it is not, and the refusal is each caller's own.
			_, _, emptyErr := s.CreateRun(testCtx(t), sub, interop.CreateRunRequest{WorkflowID: "w", Inputs: json.RawMessage(`{}`)})
			for range 2 {
				_, _, absentErr := s.CreateRun(testCtx(t), sub, interop.CreateRunRequest{WorkflowID: "w"})
				if !reflect.DeepEqual(absentErr, emptyErr) {
					t.Fatalf("absent inputs: %v; {}: %v", absentErr, emptyErr)
				}
				if absentErr != nil {
					absentErr.(*interop.InputError).Reason = "changed by a caller"
				}
			}
		})
	}
}
