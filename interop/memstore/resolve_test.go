package memstore

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wopinterop/wopinterop/interop"
)

// suspendOn registers a workflow that raises spec and reports the
// resolution it got, then starts a run of it and waits until it suspends.
func suspendOn(t *testing.T, s *Store, sub interop.Subject, spec interop.Interrupt) (run interop.Run, in interop.Interrupt, got <-chan Resolution) {
	t.Helper()
	ch := make(chan Resolution, 1)
	id := "wf-" + string(spec.Kind) + "-" + t.Name()
	register(t, s, sub.Tenant, id, func(ctx context.Context, rc *RunContext) (json.RawMessage, error) {
		res, err := rc.Interrupt(ctx, spec)
		if err != nil {
			return nil, err
		}
		ch <- res
		return nil, nil
	})
	run = mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: id})
	waitStatus(t, s, sub, run.ID, spec.Kind.SuspendedStatus())
	run, err := s.GetRun(testCtx(t), sub, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	in, ok := run.OpenInterrupt()
	if !ok {
		t.Fatal("run has no open interrupt")
	}
	return run, in, ch
}

func TestInterruptKindsSuspendWithTheirStatus(t *testing.T) {
	tests := []struct {
		kind interop.InterruptKind
		want interop.RunStatus
	}{
		{interop.InterruptApproval, interop.StatusWaitingApproval},
		{interop.InterruptClarification, interop.StatusWaitingInput},
		{interop.InterruptCredential, interop.StatusWaitingInput},
		{interop.InterruptExternalEvent, interop.StatusWaitingExternal},
	}
	for _, tc := range tests {
		t.Run(string(tc.kind), func(t *testing.T) {
			s := newStore(t)
			sub := subject(tenantA, "alice")
			run, in, got := suspendOn(t, s, sub, interop.Interrupt{Kind: tc.kind, Key: "k", Data: json.RawMessage(`{"q":1}`)})
			if run.Status != tc.want || in.Kind != tc.kind || string(in.Data) != `{"q":1}` {
				t.Fatalf("run %s, interrupt %+v", run.Status, in)
			}
			if _, err := s.ResolveInterrupt(testCtx(t), sub, interop.ResolveRequest{RunID: run.ID, InterruptID: in.ID, Value: json.RawMessage(`{"a":"b"}`)}); err != nil {
				t.Fatal(err)
			}
			res := <-got
			want := Resolution{Outcome: interop.OutcomeAccept, Value: json.RawMessage(`{"a":"b"}`), Resolver: sub}
			if diff := cmp.Diff(want, res); diff != "" {
				t.Fatalf("resolution (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResolveAtMostOnceUnderConcurrency(t *testing.T) {
	s := newStore(t)
	sub := subject(tenantA, "alice")
	run := mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: FixtureApproval})
	waitStatus(t, s, sub, run.ID, interop.StatusWaitingApproval)
	got, _ := s.GetRun(testCtx(t), sub, run.ID)
	in, _ := got.OpenInterrupt()

	const callers = 64
	errs := make([]error, callers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			<-start
			_, errs[i] = s.ResolveInterrupt(testCtx(t), sub, interop.ResolveRequest{
				RunID: run.ID, InterruptID: in.ID, Value: json.RawMessage(`{"action":"accept"}`),
			})
		})
	}
	close(start)
	wg.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, interop.ErrAlreadyResolved):
			t.Fatalf("losing resolve: %v, want ErrAlreadyResolved", err)
		}
	}
	if ok != 1 {
		t.Fatalf("%d resolves succeeded, want exactly 1", ok)
	}
	evs := events(t, s, sub, run.ID)
	resolved := 0
	for _, ev := range evs {
		if ev.Type == interop.EventInterruptResolved {
			resolved++
		}
	}
	if resolved != 1 || evs[len(evs)-1].Type != interop.EventRunCompleted {
		t.Fatalf("events %v: want one interrupt.resolved and completion", typesOf(evs))
	}
	// Later attempts, after the run ended, still say already resolved.
	_, err := s.ResolveInterrupt(testCtx(t), sub, interop.ResolveRequest{RunID: run.ID, InterruptID: in.ID, Value: json.RawMessage(`{"action":"accept"}`)})
	wantErrIs(t, err, interop.ErrAlreadyResolved)
}

func TestResolveRefusalsChangeNothing(t *testing.T) {
	approvalSpec := interop.Interrupt{
		Kind: interop.InterruptApproval, Key: "approve", Actions: []string{"accept", "refine"},
		Approvers:    []string{"alice", "dave"},
		ResumeSchema: json.RawMessage(`{"type":"object","properties":{"action":{"type":"string"},"note":{"type":"string","maxLength":5}},"required":["action"]}`),
	}
	clarifySpec := interop.Interrupt{
		Kind: interop.InterruptClarification, Key: "ask",
		ResumeSchema: json.RawMessage(`{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"],"additionalProperties":false}`),
	}
	tests := []struct {
		name      string
		spec      interop.Interrupt
		resolver  string
		req       func(runID, interruptID string) interop.ResolveRequest
		wantErr   error
		wantField string
	}{
		{
			name: "not an approver", spec: approvalSpec, resolver: "mallory",
			req: func(r, i string) interop.ResolveRequest {
				return interop.ResolveRequest{RunID: r, InterruptID: i, Value: json.RawMessage(`{"action":"accept"}`)}
			},
			wantErr: interop.ErrNotEligible,
		},
		{
			name: "unknown interrupt id", spec: approvalSpec, resolver: "alice",
			req: func(r, _ string) interop.ResolveRequest {
				return interop.ResolveRequest{RunID: r, InterruptID: tenantA + "/AAAAAAAAAAAAAAAAAAAAAAAAAA", Value: json.RawMessage(`{"action":"accept"}`)}
			},
			wantErr: interop.ErrNotFound,
		},
		{
			name: "empty interrupt id", spec: approvalSpec, resolver: "alice",
			req: func(r, _ string) interop.ResolveRequest {
				return interop.ResolveRequest{RunID: r, Value: json.RawMessage(`{"action":"accept"}`)}
			},
			wantErr: interop.ErrNotFound,
		},
		{
			name: "action not offered", spec: approvalSpec, resolver: "alice",
			req: func(r, i string) interop.ResolveRequest {
				return interop.ResolveRequest{RunID: r, InterruptID: i, Value: json.RawMessage(`{"action":"ask"}`)}
			},
			wantField: "resumeValue",
		},
		{
			name: "decline when reject is not offered", spec: approvalSpec, resolver: "alice",
			req: func(r, i string) interop.ResolveRequest {
				return interop.ResolveRequest{RunID: r, InterruptID: i, Outcome: interop.OutcomeDecline}
			},
			wantField: "resumeValue",
		},
		{
			name: "approval value not an object", spec: approvalSpec, resolver: "alice",
			req: func(r, i string) interop.ResolveRequest {
				return interop.ResolveRequest{RunID: r, InterruptID: i, Value: json.RawMessage(`"accept"`)}
			},
			wantField: "resumeValue",
		},
		{
			name: "approval action not a string", spec: approvalSpec, resolver: "alice",
			req: func(r, i string) interop.ResolveRequest {
				return interop.ResolveRequest{RunID: r, InterruptID: i, Value: json.RawMessage(`{"action":1}`)}
			},
			wantField: "resumeValue",
		},
		{
			name: "approval without value", spec: approvalSpec, resolver: "alice",
			req: func(r, i string) interop.ResolveRequest {
				return interop.ResolveRequest{RunID: r, InterruptID: i}
			},
			wantField: "resumeValue",
		},
		{
			name: "resume schema violated", spec: approvalSpec, resolver: "dave",
			req: func(r, i string) interop.ResolveRequest {
				return interop.ResolveRequest{RunID: r, InterruptID: i, Value: json.RawMessage(`{"action":"accept","note":"too long"}`)}
			},
			wantField: "resumeValue/note",
		},
		{
			name: "clarification schema violated", spec: clarifySpec, resolver: "anyone",
			req: func(r, i string) interop.ResolveRequest {
				return interop.ResolveRequest{RunID: r, InterruptID: i, Value: json.RawMessage(`{"answer":3}`)}
			},
			wantField: "resumeValue/answer",
		},
		{
			name: "clarification value missing", spec: clarifySpec, resolver: "anyone",
			req: func(r, i string) interop.ResolveRequest {
				return interop.ResolveRequest{RunID: r, InterruptID: i}
			},
			wantField: "resumeValue",
		},
		{
			name: "value not JSON", spec: clarifySpec, resolver: "anyone",
			req: func(r, i string) interop.ResolveRequest {
				return interop.ResolveRequest{RunID: r, InterruptID: i, Value: json.RawMessage(`{"answer":`)}
			},
			wantField: "resumeValue",
		},
		{
			name: "unknown outcome", spec: clarifySpec, resolver: "anyone",
			req: func(r, i string) interop.ResolveRequest {
				return interop.ResolveRequest{RunID: r, InterruptID: i, Outcome: "maybe", Value: json.RawMessage(`{"answer":"x"}`)}
			},
			wantField: "outcome",
		},
		{
			name: "message with invalid data part", spec: clarifySpec, resolver: "anyone",
			req: func(r, i string) interop.ResolveRequest {
				return interop.ResolveRequest{RunID: r, InterruptID: i, Value: json.RawMessage(`{"answer":"x"}`),
					Message: &interop.Message{ID: "m", Parts: []interop.Part{interop.DataPart(json.RawMessage(`{`))}}}
			},
			wantField: "message",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			owner := subject(tenantA, "alice")
			run, in, _ := suspendOn(t, s, owner, tc.spec)
			_, err := s.ResolveInterrupt(testCtx(t), subject(tenantA, tc.resolver), tc.req(run.ID, in.ID))
			if tc.wantField != "" {
				wantInputError(t, err, tc.wantField)
			} else {
				wantErrIs(t, err, tc.wantErr)
			}
			after, _ := s.GetRun(testCtx(t), owner, run.ID)
			if diff := cmp.Diff(run, after); diff != "" {
				t.Fatalf("refused resolve changed the run (-before +after):\n%s", diff)
			}
		})
	}
}

func TestResolveAcceptsValidAnswers(t *testing.T) {
	spec := interop.Interrupt{
		Kind: interop.InterruptApproval, Key: "approve", Actions: []string{"accept", "reject"},
		Approvers: []string{"alice"},
	}
	tests := []struct {
		name      string
		req       interop.ResolveRequest
		wantValue string
		wantOut   interop.ResolveOutcome
	}{
		{name: "accept", req: interop.ResolveRequest{Value: json.RawMessage(`{"action":"accept","comment":"ok"}`)},
			wantValue: `{"action":"accept","comment":"ok"}`, wantOut: interop.OutcomeAccept},
		{name: "decline becomes reject", req: interop.ResolveRequest{Outcome: interop.OutcomeDecline, Value: json.RawMessage(`{"action":"accept"}`)},
			wantValue: `{"action":"reject"}`, wantOut: interop.OutcomeDecline},
		{name: "cancel carries no value", req: interop.ResolveRequest{Outcome: interop.OutcomeCancel, Value: json.RawMessage(`{"action":"nonsense"}`)},
			wantOut: interop.OutcomeCancel},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			sub := subject(tenantA, "alice")
			run, in, got := suspendOn(t, s, sub, spec)
			req := tc.req
			req.RunID, req.InterruptID = run.ID, in.ID
			req.Message = &interop.Message{ID: "m-2", Role: interop.RoleUser, Parts: []interop.Part{interop.TextPart("go")}}
			resolved, err := s.ResolveInterrupt(testCtx(t), sub, req)
			if err != nil {
				t.Fatal(err)
			}
			if resolved.Status != interop.StatusRunning || len(resolved.Interrupts) != 0 || resolved.LastSequence != run.LastSequence+1 {
				t.Fatalf("resolved run: %s, %d interrupts, last %d", resolved.Status, len(resolved.Interrupts), resolved.LastSequence)
			}
			// The message joined the run in the same step as the resolution.
			if len(resolved.Messages) != 1 || resolved.Messages[0].ID != "m-2" {
				t.Fatalf("messages after resolve: %+v", resolved.Messages)
			}
			res := <-got
			if res.Outcome != tc.wantOut || string(res.Value) != tc.wantValue || res.Resolver.Principal != "alice" {
				t.Fatalf("resolution = %+v", res)
			}
		})
	}
}

func TestResolveOnTerminalOrCancellingRun(t *testing.T) {
	s := newStore(t)
	sub := subject(tenantA, "alice")
	run := mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: FixtureApproval})
	waitStatus(t, s, sub, run.ID, interop.StatusWaitingApproval)
	got, _ := s.GetRun(testCtx(t), sub, run.ID)
	in, _ := got.OpenInterrupt()
	if _, err := s.CancelRun(testCtx(t), sub, run.ID, "stop"); err != nil {
		t.Fatal(err)
	}
	resolve := func() error {
		_, err := s.ResolveInterrupt(testCtx(t), sub, interop.ResolveRequest{RunID: run.ID, InterruptID: in.ID, Value: json.RawMessage(`{"action":"accept"}`)})
		return err
	}
	// Whether the workflow has returned yet or not (cancelling or
	// cancelled), the answer is the same.
	wantErrIs(t, resolve(), interop.ErrRunTerminal)
	evs := events(t, s, sub, run.ID)
	wantErrIs(t, resolve(), interop.ErrRunTerminal)
	after, _ := s.GetRun(testCtx(t), sub, run.ID)
	if after.LastSequence != evs[len(evs)-1].Sequence {
		t.Fatal("refused resolve appended an event")
	}
}

func TestInterruptWithdrawnWhenWorkflowStopsWaiting(t *testing.T) {
	s := newStore(t)
	sub := subject(tenantA, "alice")
	gaveUp := make(chan error, 1)
	proceed := make(chan struct{})
	register(t, s, tenantA, "impatient", func(ctx context.Context, rc *RunContext) (json.RawMessage, error) {
		wctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		defer cancel()
		_, err := rc.Interrupt(wctx, interop.Interrupt{Kind: interop.InterruptClarification, Key: "q"})
		gaveUp <- err
		<-proceed
		return nil, nil
	})
	run := mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: "impatient"})
	ev := waitFor(t, s, sub, run.ID, func(ev interop.RunEvent) bool { return ev.Type == interop.EventNodeSuspended })
	if err := <-gaveUp; !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Interrupt returned %v, want the deadline", err)
	}
	withdrawn := waitFor(t, s, sub, run.ID, func(ev interop.RunEvent) bool { return ev.Type == interop.EventInterruptResolved })
	if interruptIDOf(t, withdrawn) != interruptIDOf(t, ev) || reasonOf(t, withdrawn) != "withdrawn" || withdrawn.Status != interop.StatusRunning || withdrawn.NodeID != "q" {
		t.Fatalf("withdrawal event = %+v", withdrawn)
	}
	checkDocs(t, []interop.RunEvent{ev, withdrawn})
	got, _ := s.GetRun(testCtx(t), sub, run.ID)
	if got.Status != interop.StatusRunning || len(got.Interrupts) != 0 {
		t.Fatalf("after withdrawal: %s with %d interrupts", got.Status, len(got.Interrupts))
	}
	_, err := s.ResolveInterrupt(testCtx(t), sub, interop.ResolveRequest{RunID: run.ID, InterruptID: interruptIDOf(t, ev), Value: json.RawMessage(`{}`)})
	wantErrIs(t, err, interop.ErrAlreadyResolved)
	close(proceed)
	events(t, s, sub, run.ID)
}

func TestInterruptRefusesBadSpecs(t *testing.T) {
	tests := []struct {
		name  string
		specs []interop.Interrupt // all but the last succeed
	}{
		{name: "kind that does not suspend", specs: []interop.Interrupt{{Kind: "custom", Key: "k"}}},
		{name: "empty key", specs: []interop.Interrupt{{Kind: interop.InterruptApproval}}},
		{name: "key is no node id", specs: []interop.Interrupt{{Kind: interop.InterruptApproval, Key: "ask the user"}}},
		{name: "bad node id", specs: []interop.Interrupt{{Kind: interop.InterruptApproval, Key: "k", NodeID: "a/b"}}},
		{name: "resume schema invalid", specs: []interop.Interrupt{{Kind: interop.InterruptApproval, Key: "k", ResumeSchema: json.RawMessage(`{"type":"nope"}`)}}},
		{name: "key invoked twice", specs: []interop.Interrupt{
			{Kind: interop.InterruptClarification, Key: "k"},
			{Kind: interop.InterruptClarification, Key: "k"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			sub := subject(tenantA, "alice")
			errs := make(chan error, 1)
			register(t, s, tenantA, "wf", func(ctx context.Context, rc *RunContext) (json.RawMessage, error) {
				for i, spec := range tc.specs {
					_, err := rc.Interrupt(ctx, spec)
					if i == len(tc.specs)-1 {
						errs <- err
						return nil, nil
					}
					if err != nil {
						errs <- err
						return nil, err
					}
				}
				return nil, nil
			})
			run := mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: "wf"})
			// Resolve the ones that must succeed.
			for range tc.specs[:len(tc.specs)-1] {
				ev := waitFor(t, s, sub, run.ID, func(ev interop.RunEvent) bool { return ev.Type == interop.EventNodeSuspended })
				if _, err := s.ResolveInterrupt(testCtx(t), sub, interop.ResolveRequest{RunID: run.ID, InterruptID: interruptIDOf(t, ev)}); err != nil {
					t.Fatal(err)
				}
			}
			if err := <-errs; err == nil {
				t.Fatal("Interrupt accepted a bad spec")
			}
			evs := events(t, s, sub, run.ID)
			suspended := 0
			for _, ev := range evs {
				if ev.Type == interop.EventNodeSuspended {
					suspended++
				}
			}
			if suspended != len(tc.specs)-1 {
				t.Fatalf("%d node.suspended events, want %d", suspended, len(tc.specs)-1)
			}
		})
	}
}
