package delegate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
	"testing"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/outbound"
)

const (
	testParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	testState  = "vendor=opaque"
)

func TestDelegateStreamsToCompletion(t *testing.T) {
	r := &fakeRemote{stream: streamOf(
		ev(task(wire.TaskStateSubmitted)),
		ev(statusEvent(wire.TaskStateWorking, nil)),
		ev(artifactEvent(textArtifact("a1", "summary"), false, true)),
		ev(statusEvent(wire.TaskStateCompleted, nil)),
	)}
	c, sink := testConn(r)
	ctx := WithTraceContext(t.Context(), interop.TraceContext{TraceParent: testParent, TraceState: testState})
	step := testStep()
	step.Parts = []*wire.Part{wire.NewTextPart("be brief")}

	out, err := c.Delegate(ctx, step)
	if err != nil {
		t.Fatalf("Delegate: %v", err)
	}
	want := &Outcome{
		AttemptID: out.AttemptID, Attempts: 1, TaskID: testTask, ContextID: testContext,
		State: wire.TaskStateCompleted, Status: interop.StatusCompleted,
		Artifacts:  []*wire.Artifact{textArtifact("a1", "summary")},
		Acceptance: AcceptancePendingVerification,
	}
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("Outcome (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(out.AttemptID, "att_") {
		t.Errorf("AttemptID = %q, want an outbound attempt id", out.AttemptID)
	}

	sends, gets, cancels, subs := r.counts()
	if sends != 1 || gets != 0 || cancels != 0 || subs != 0 || !r.streamed[0] {
		t.Fatalf("calls: sends=%d (streamed %v) gets=%d cancels=%d subscribes=%d, want one streamed send", sends, r.streamed, gets, cancels, subs)
	}
	req := r.sent(0)
	if req.Tenant != testTenant || req.Config != nil {
		t.Errorf("request tenant %q config %+v, want the conn's tenant and no configuration", req.Tenant, req.Config)
	}
	got, _ := json.Marshal(req.Message)
	wantMsg := `{"messageId":"` + out.AttemptID + `","metadata":{"openwop":{"traceparent":"` + testParent + `","tracestate":"` + testState + `"},"skillId":"summarise"},"parts":[{"data":{"text":"hello"}},{"text":"be brief"}],"role":"ROLE_USER"}`
	if string(got) != wantMsg {
		t.Errorf("message\n got %s\nwant %s", got, wantMsg)
	}
	if n := len(sink.events); n != 0 {
		t.Errorf("%d run events for a lossless completion, want none: %+v", n, sink.events)
	}
}

func TestDelegateWithoutTraceSendsNoOpenWOPMetadata(t *testing.T) {
	r := &fakeRemote{stream: streamOf(ev(task(wire.TaskStateCompleted)))}
	c, _ := testConn(r)
	ctx := WithTraceContext(t.Context(), interop.TraceContext{TraceParent: "not-a-traceparent"})
	if _, err := c.Delegate(ctx, testStep()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"skillId": stepSkill}, r.sent(0).Message.Metadata); diff != "" {
		t.Errorf("metadata (-want +got):\n%s", diff)
	}
}

func TestDelegatePollsWhenTheConnectionCannotStream(t *testing.T) {
	for _, tc := range []struct {
		name      string
		streaming bool
		poll      bool
	}{
		{"no streaming", false, false},
		{"step prefers polling", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &fakeRemote{
				send: func(context.Context, int, *wire.SendMessageRequest) (wire.SendMessageResult, error) {
					return task(wire.TaskStateSubmitted), nil
				},
				get: func(_ context.Context, n int, _ *wire.GetTaskRequest) (*wire.Task, error) {
					if n < 3 {
						return task(wire.TaskStateWorking), nil
					}
					return task(wire.TaskStateCompleted, textArtifact("a1", "done")), nil
				},
			}
			c, _ := testConn(r)
			c.Streaming = tc.streaming
			step := testStep()
			step.Poll = tc.poll
			out, err := c.Delegate(t.Context(), step)
			if err != nil {
				t.Fatalf("Delegate: %v", err)
			}
			if out.Status != interop.StatusCompleted || len(out.Artifacts) != 1 || out.Acceptance != AcceptancePendingVerification {
				t.Fatalf("outcome %+v, want completed with one admitted artifact", out)
			}
			sends, gets, _, subs := r.counts()
			if sends != 1 || r.streamed[0] || gets != 3 || subs != 0 {
				t.Fatalf("sends=%d streamed=%v gets=%d subscribes=%d, want 1 plain send and 3 polls", sends, r.streamed, gets, subs)
			}
			if cfg := r.sent(0).Config; cfg == nil || !cfg.ReturnImmediately {
				t.Errorf("send configuration %+v, want returnImmediately", cfg)
			}
			g := r.gets[0]
			if g.ID != testTask || g.Tenant != testTenant || g.HistoryLength == nil || *g.HistoryLength != 0 {
				t.Errorf("GetTask request %+v, want the task, the tenant and historyLength 0", g)
			}
		})
	}
}

func TestDelegateRefusesAStepTheAdmissionDoesNotCover(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Step)
		want *StepError
	}{
		{"skill not admitted", func(s *Step) { s.Skill = "exfiltrate" },
			&StepError{Field: "skill", Reason: "not an admitted skill of this agent"}},
		{"class not admitted", func(s *Step) { s.DataClass = "confidential" },
			&StepError{Field: "dataClass", Reason: "data-release class not admitted for this agent"}},
		{"no class", func(s *Step) { s.DataClass = "" },
			&StepError{Field: "dataClass", Reason: "data-release class not admitted for this agent"}},
		{"inputs not JSON", func(s *Step) { s.Inputs = json.RawMessage(`{"a":`) },
			&StepError{Field: "inputs", Reason: "not a JSON value"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &fakeRemote{stream: streamOf(ev(task(wire.TaskStateCompleted)))}
			c, sink := testConn(r)
			step := testStep()
			tc.edit(&step)
			out, err := c.Delegate(t.Context(), step)
			if out != nil {
				t.Errorf("Outcome %+v for a refused step, want nil", out)
			}
			var se *StepError
			if !errors.As(err, &se) || !errors.Is(err, ErrStepRefused) {
				t.Fatalf("error %v, want a *StepError matching ErrStepRefused", err)
			}
			if diff := cmp.Diff(tc.want, se); diff != "" {
				t.Errorf("StepError (-want +got):\n%s", diff)
			}
			if err.Error() != "delegate: step "+tc.want.Field+" refused: "+tc.want.Reason {
				t.Errorf("message %q", err.Error())
			}
			if sends, _, _, _ := r.counts(); sends != 0 || len(sink.events) != 0 {
				t.Errorf("sends=%d events=%d, want nothing sent or recorded", sends, len(sink.events))
			}
		})
	}
}

// TestProjectionRows is the reverse projection, row by row (OpenWOP interop
// map, a2a.taskStateReverse).
func TestProjectionRows(t *testing.T) {
	c, _ := testConn(&fakeRemote{})
	for _, tc := range []struct {
		wire    wire.TaskState
		status  interop.RunStatus
		subkind string
		reason  string
		warning Warning
	}{
		{wire.TaskStateSubmitted, interop.StatusPending, "", "", ""},
		{wire.TaskStateWorking, interop.StatusRunning, "", "", ""},
		{wire.TaskStateInputRequired, interop.StatusWaitingInput, "", "", ""},
		{wire.TaskStateAuthRequired, interop.StatusWaitingInput, SubkindAuth, "", ""},
		{wire.TaskStateCompleted, interop.StatusCompleted, "", "", ""},
		{wire.TaskStateFailed, interop.StatusFailed, "", "", ""},
		{wire.TaskStateCanceled, interop.StatusCancelled, "", "", ""},
		{wire.TaskStateRejected, interop.StatusFailed, "", ReasonRejectedByRemote, ""},
		{wire.TaskStateUnspecified, interop.StatusPending, "", "", WarningUnspecifiedState},
		{"TASK_STATE_PAUSED", interop.StatusPending, "", "", WarningUnknownState},
		{"completed", interop.StatusPending, "", "", WarningUnknownState},
	} {
		t.Run(string(tc.wire), func(t *testing.T) {
			status, subkind, reason := c.project(tc.wire)
			if status != tc.status || subkind != tc.subkind || reason != tc.reason {
				t.Errorf("project = (%q, %q, %q), want (%q, %q, %q)", status, subkind, reason, tc.status, tc.subkind, tc.reason)
			}
			if w := c.warning(tc.wire); w != tc.warning {
				t.Errorf("warning = %q, want %q", w, tc.warning)
			}
		})
	}
}

func TestRejectedIsFailedByRemoteWithNoEffect(t *testing.T) {
	r := &fakeRemote{stream: streamOf(ev(task(wire.TaskStateSubmitted)), ev(statusEvent(wire.TaskStateRejected, agentText("no"))))}
	c, sink := testConn(r, func(a *Admission) { a.Limits.Attempts = 3 })
	out, err := c.Delegate(t.Context(), testStep())
	if !errors.Is(err, ErrRemoteRejected) || !errors.Is(err, ErrRemoteFailed) {
		t.Fatalf("error %v, want ErrRemoteRejected and ErrRemoteFailed", err)
	}
	want := &Outcome{
		AttemptID: out.AttemptID, Attempts: 1, TaskID: testTask, ContextID: testContext,
		State: wire.TaskStateRejected, Status: interop.StatusFailed, Reason: ReasonRejectedByRemote,
		Reconciliation: outbound.FailedNoEffect,
	}
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("Outcome (-want +got):\n%s", diff)
	}
	if sends, _, _, _ := r.counts(); sends != 1 {
		t.Errorf("sends = %d, want 1: a rejection is final", sends)
	}
	if got := sink.payloads(t, EventReconciled); len(got) != 1 || got[0]["reconciliation"] != "failed-no-effect" || got[0]["status"] != "failed" {
		t.Errorf("reconciliation records %v", got)
	}
}

func TestUnknownStateIsPendingWithAWarningNeverCompleted(t *testing.T) {
	r := &fakeRemote{
		send: func(context.Context, int, *wire.SendMessageRequest) (wire.SendMessageResult, error) {
			return task("TASK_STATE_DONE_MAYBE"), nil
		},
		get: getReturns(task("TASK_STATE_DONE_MAYBE")),
	}
	c, sink := testConn(r, func(a *Admission) { a.Limits.Deadline = 300 * time.Millisecond })
	c.Streaming = false
	out, err := c.Delegate(t.Context(), testStep())
	if !errors.Is(err, ErrDeadline) {
		t.Fatalf("error %v, want ErrDeadline: an unknown state is never settled", err)
	}
	if out.Status != interop.StatusPending || out.Acceptance != "" || out.Artifacts != nil {
		t.Errorf("outcome %+v, want pending and nothing accepted", out)
	}
	if diff := cmp.Diff([]Warning{WarningUnknownState}, out.Warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	if out.Reconciliation != outbound.FailedPossibleEffect {
		t.Errorf("reconciliation %q, want failed-possible-effect", out.Reconciliation)
	}
	loss := sink.payloads(t, EventTranslationLoss)
	if len(loss) != 1 || !cmp.Equal(loss[0]["coerced"], map[string]any{"unknownStates": 1.0}) {
		t.Errorf("loss records %v, want one with coerced.unknownStates 1 however often the state was polled", loss)
	}
}

func TestUnspecifiedStateIsReadAsPendingWithAWarning(t *testing.T) {
	r := &fakeRemote{
		stream: streamOf(ev(task(wire.TaskStateUnspecified))),
		subscribe: func(_ context.Context, n int, _ *wire.SubscribeToTaskRequest) iter.Seq2[wire.Event, error] {
			return seqOf(ev(task(wire.TaskStateCompleted)))
		},
	}
	c, _ := testConn(r)
	out, err := c.Delegate(t.Context(), testStep())
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != interop.StatusCompleted || !cmp.Equal(out.Warnings, []Warning{WarningUnspecifiedState}) {
		t.Errorf("outcome %+v, want completed after reading unspecified as pending, with its warning", out)
	}
}

// inputScript is a peer that asks one question on the first stream and
// completes on the answer's stream.
func inputScript(question *wire.Message) *fakeRemote {
	return &fakeRemote{stream: func(_ context.Context, n int, _ *wire.SendMessageRequest) iter.Seq2[wire.Event, error] {
		if n == 1 {
			return seqOf(ev(task(wire.TaskStateSubmitted)), ev(statusEvent(wire.TaskStateInputRequired, question)))
		}
		return seqOf(ev(statusEvent(wire.TaskStateWorking, nil)),
			ev(artifactEvent(textArtifact("a1", "answered"), false, true)),
			ev(statusEvent(wire.TaskStateCompleted, nil)))
	}}
}

func TestInputRequestIsAnsweredOnlyByTheDecider(t *testing.T) {
	question := agentText("which region?")
	question.Parts[0].Metadata = map[string]any{"hint": "x"}
	question.Metadata = map[string]any{"k": 1}
	r := inputScript(question)
	c, sink := testConn(r)
	var seen []InputRequest
	step := testStep()
	step.Decide = func(_ context.Context, req InputRequest) (InputAnswer, error) {
		seen = append(seen, req)
		req.Parts[0].Content = wire.Text("mutated by the host")
		return InputAnswer{Parts: []*wire.Part{wire.NewTextPart("eu-west")}}, nil
	}
	out, err := c.Delegate(t.Context(), step)
	if err != nil {
		t.Fatalf("Delegate: %v", err)
	}
	if out.Status != interop.StatusCompleted || len(out.Artifacts) != 1 {
		t.Fatalf("outcome %+v, want completed", out)
	}
	if len(seen) != 1 {
		t.Fatalf("decider called %d times, want once", len(seen))
	}
	wantReq := InputRequest{AttemptID: out.AttemptID, TaskID: testTask, ContextID: testContext, Round: 1,
		Parts: []*wire.Part{{Content: wire.Text("mutated by the host")}}}
	if diff := cmp.Diff(wantReq, seen[0]); diff != "" {
		t.Errorf("InputRequest (-want +got):\n%s", diff)
	}
	if question.Parts[0].Text() != "which region?" {
		t.Errorf("the host's view aliased the peer's message: %q", question.Parts[0].Text())
	}
	if sends, _, cancels, _ := r.counts(); sends != 2 || cancels != 0 {
		t.Fatalf("sends=%d cancels=%d, want the step and exactly one answer", sends, cancels)
	}
	ans := r.sent(1)
	got, _ := json.Marshal(ans)
	want := `{"tenant":"tenant-a","message":{"messageId":"` + out.AttemptID + `-input-1","contextId":"ctx-1","parts":[{"text":"eu-west"}],"role":"ROLE_USER","taskId":"task-1"}}`
	if string(got) != want {
		t.Errorf("answer\n got %s\nwant %s", got, want)
	}
	loss := sink.payloads(t, EventTranslationLoss)
	if len(loss) != 1 || !cmp.Equal(loss[0]["dropped"], map[string]any{"metadataKeys": 2.0}) {
		t.Errorf("loss records %v, want the request's two metadata keys counted", loss)
	}
}

func TestInputRequestWithoutAnswerCancelsTheRemoteTask(t *testing.T) {
	declines := func(context.Context, InputRequest) (InputAnswer, error) { return InputAnswer{Decline: true}, nil }
	fails := func(context.Context, InputRequest) (InputAnswer, error) {
		return InputAnswer{}, errors.New("host down")
	}
	empty := func(context.Context, InputRequest) (InputAnswer, error) { return InputAnswer{}, nil }
	for _, tc := range []struct {
		name        string
		decide      InputDecider
		mayRequest  bool
		wantDecided bool
		wantMsg     string
	}{
		{"no decider", nil, true, false, "the step has no input decider"},
		{"admission forbids input", declines, false, false, "the admission does not let this agent request input"},
		{"decider declines", declines, true, true, "the decider declined"},
		{"decider fails", fails, true, true, "the decider failed: host down"},
		{"empty answer", empty, true, true, "the decider declined"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := inputScript(agentText("which region?"))
			r.cancel = func(context.Context, int, *wire.CancelTaskRequest) (*wire.Task, error) {
				return task(wire.TaskStateCanceled), nil
			}
			r.get = getReturns(task(wire.TaskStateCanceled))
			c, sink := testConn(r, func(a *Admission) { a.MayRequestInput = tc.mayRequest })
			decided := false
			step := testStep()
			if tc.decide != nil {
				step.Decide = func(ctx context.Context, req InputRequest) (InputAnswer, error) {
					decided = true
					return tc.decide(ctx, req)
				}
			}
			out, err := c.Delegate(t.Context(), step)
			if !errors.Is(err, ErrInputRefused) || err.Error() != ErrInputRefused.Error()+": "+tc.wantMsg {
				t.Fatalf("error %v, want ErrInputRefused: %s", err, tc.wantMsg)
			}
			if decided != tc.wantDecided {
				t.Errorf("decider called = %v, want %v", decided, tc.wantDecided)
			}
			if sends, gets, cancels, _ := r.counts(); sends != 1 || cancels != 1 || gets != 1 {
				t.Fatalf("sends=%d cancels=%d gets=%d, want no reply, one cancel and its read-back", sends, cancels, gets)
			}
			if out.Reconciliation != outbound.RemoteCancelled || out.Status != interop.StatusCancelled {
				t.Errorf("outcome %+v, want remote-cancelled", out)
			}
			if c := r.cancels[0]; c.ID != testTask || c.Tenant != testTenant {
				t.Errorf("cancel request %+v", c)
			}
			if n := len(sink.ofType(EventReconciled)); n != 0 {
				t.Errorf("%d reconciliation records for a verified cancel, want none", n)
			}
		})
	}
}

func TestAuthRequiredIsSurfacedAndNeverAnswered(t *testing.T) {
	r := &fakeRemote{stream: streamOf(ev(task(wire.TaskStateSubmitted)), ev(statusEvent(wire.TaskStateAuthRequired, agentText("sign in"))))}
	c, _ := testConn(r)
	step := testStep()
	step.Decide = func(context.Context, InputRequest) (InputAnswer, error) {
		t.Error("decider called for an authentication request")
		return InputAnswer{Parts: []*wire.Part{wire.NewTextPart("token")}}, nil
	}
	out, err := c.Delegate(t.Context(), step)
	if !errors.Is(err, ErrAuthRequired) {
		t.Fatalf("error %v, want ErrAuthRequired", err)
	}
	want := &Outcome{
		AttemptID: out.AttemptID, Attempts: 1, TaskID: testTask, ContextID: testContext,
		State: wire.TaskStateAuthRequired, Status: interop.StatusWaitingInput, Subkind: SubkindAuth,
	}
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("Outcome (-want +got):\n%s", diff)
	}
	if sends, _, cancels, _ := r.counts(); sends != 1 || cancels != 0 {
		t.Errorf("sends=%d cancels=%d, want nothing sent after the request and no cancel", sends, cancels)
	}
}

func TestDirectMessageReplyCompletes(t *testing.T) {
	reply := agentText("hi")
	r := &fakeRemote{stream: streamOf(ev(reply))}
	c, _ := testConn(r)
	out, err := c.Delegate(t.Context(), testStep())
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != interop.StatusCompleted || out.Reply != reply || out.Acceptance != AcceptancePendingVerification || out.TaskID != "" {
		t.Errorf("outcome %+v, want a completed exchange carrying the reply", out)
	}
}

func TestEventsAboutAnotherTaskAreInvalidResponses(t *testing.T) {
	other := statusEvent(wire.TaskStateCompleted, nil)
	other.TaskID = "task-2"
	r := &fakeRemote{
		stream: streamOf(ev(task(wire.TaskStateWorking)), ev(other)),
		cancel: func(context.Context, int, *wire.CancelTaskRequest) (*wire.Task, error) { return nil, nil },
		get:    getReturns(task(wire.TaskStateCanceled)),
	}
	c, _ := testConn(r)
	out, err := c.Delegate(t.Context(), testStep())
	if !errors.Is(err, wire.ErrInvalidAgentResponse) || !strings.Contains(err.Error(), "an event about another task") {
		t.Fatalf("error %v, want InvalidAgentResponse", err)
	}
	if out.State != wire.TaskStateCanceled || out.Status != interop.StatusFailed || out.Reconciliation != outbound.RemoteCancelled {
		t.Errorf("outcome %+v, want the task cancelled and reconciled", out)
	}
}

func TestEveryInputRequestGetsAFreshDecision(t *testing.T) {
	r := &fakeRemote{stream: func(_ context.Context, n int, _ *wire.SendMessageRequest) iter.Seq2[wire.Event, error] {
		switch n {
		case 1:
			return seqOf(ev(task(wire.TaskStateSubmitted)), ev(statusEvent(wire.TaskStateInputRequired, agentText("region?"))))
		case 2:
			return seqOf(ev(statusEvent(wire.TaskStateWorking, nil)), ev(statusEvent(wire.TaskStateInputRequired, agentText("size?"))))
		}
		return seqOf(ev(statusEvent(wire.TaskStateCompleted, nil)))
	}}
	c, _ := testConn(r)
	var rounds []int
	var questions []string
	step := testStep()
	step.Decide = func(_ context.Context, req InputRequest) (InputAnswer, error) {
		rounds, questions = append(rounds, req.Round), append(questions, req.Parts[0].Text())
		return InputAnswer{Parts: []*wire.Part{wire.NewTextPart("answer")}}, nil
	}
	out, err := c.Delegate(t.Context(), step)
	if err != nil || out.Status != interop.StatusCompleted {
		t.Fatalf("Delegate = %+v, %v", out, err)
	}
	if !cmp.Equal(rounds, []int{1, 2}) || !cmp.Equal(questions, []string{"region?", "size?"}) {
		t.Errorf("decisions for rounds %v questions %v, want one per request", rounds, questions)
	}
	if sends, _, _, _ := r.counts(); sends != 3 || r.sent(2).Message.ID != out.AttemptID+"-input-2" {
		t.Errorf("sends = %d, want the step and two answers", sends)
	}
}

// askingTask is a polled task waiting on the question with message id qid.
func askingTask(qid string) *wire.Task {
	t := task(wire.TaskStateInputRequired)
	t.Status.Message = &wire.Message{ID: qid, Role: wire.MessageRoleAgent, Parts: []*wire.Part{wire.NewTextPart("region?")}}
	return t
}

func TestAStaleInputRequestIsNotAnsweredTwice(t *testing.T) {
	r := &fakeRemote{
		send: func(_ context.Context, n int, _ *wire.SendMessageRequest) (wire.SendMessageResult, error) {
			return askingTask("q1"), nil // the answer's response still shows the question
		},
		get: func(_ context.Context, n int, _ *wire.GetTaskRequest) (*wire.Task, error) {
			if n == 1 {
				return askingTask("q1"), nil
			}
			return task(wire.TaskStateCompleted), nil
		},
	}
	c, _ := testConn(r)
	c.Streaming = false
	decisions := 0
	step := testStep()
	step.Decide = func(context.Context, InputRequest) (InputAnswer, error) {
		decisions++
		return InputAnswer{Parts: []*wire.Part{wire.NewTextPart("eu")}}, nil
	}
	out, err := c.Delegate(t.Context(), step)
	if err != nil || out.Status != interop.StatusCompleted {
		t.Fatalf("Delegate = %+v, %v", out, err)
	}
	if sends, _, _, _ := r.counts(); decisions != 1 || sends != 2 {
		t.Errorf("decisions=%d sends=%d, want one answer to one request", decisions, sends)
	}
}

func TestAFailedAnswerGoesBackToTheHost(t *testing.T) {
	for _, tc := range []struct {
		name          string
		afterFailure  *wire.Task
		wantDecisions []bool // PreviousAnswerFailed of each decision
		wantSends     int
	}{
		{"the request is still open", askingTask("q1"), []bool{false, true}, 3},
		{"the answer had arrived", task(wire.TaskStateWorking), []bool{false}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &fakeRemote{
				send: func(_ context.Context, n int, _ *wire.SendMessageRequest) (wire.SendMessageResult, error) {
					switch n {
					case 1:
						return askingTask("q1"), nil
					case 2:
						return nil, peerError(wire.ErrInternalError) // fate unknown
					}
					return task(wire.TaskStateCompleted), nil
				},
				get: func(_ context.Context, n int, _ *wire.GetTaskRequest) (*wire.Task, error) {
					if n == 1 {
						return tc.afterFailure, nil
					}
					return task(wire.TaskStateCompleted), nil
				},
			}
			c, _ := testConn(r)
			c.Streaming = false
			var decisions []bool
			step := testStep()
			step.Decide = func(_ context.Context, req InputRequest) (InputAnswer, error) {
				decisions = append(decisions, req.PreviousAnswerFailed)
				if req.Round != len(decisions) {
					t.Errorf("round %d for decision %d", req.Round, len(decisions))
				}
				return InputAnswer{Parts: []*wire.Part{wire.NewTextPart("eu")}}, nil
			}
			out, err := c.Delegate(t.Context(), step)
			if err != nil || out.Status != interop.StatusCompleted {
				t.Fatalf("Delegate = %+v, %v", out, err)
			}
			if !cmp.Equal(decisions, tc.wantDecisions) {
				t.Errorf("decisions %v, want %v", decisions, tc.wantDecisions)
			}
			sends, _, _, _ := r.counts()
			if sends != tc.wantSends {
				t.Fatalf("sends = %d, want %d", sends, tc.wantSends)
			}
			for i := 1; i < sends; i++ {
				if id, want := r.sent(i).Message.ID, fmt.Sprintf("%s-input-%d", out.AttemptID, i); id != want {
					t.Errorf("answer %d id %q, want %q: a failed answer is never re-sent as is", i, id, want)
				}
			}
		})
	}
}

func TestASettledStreamIsReadToItsEnd(t *testing.T) {
	t.Run("the peer closes it", func(t *testing.T) {
		ended := false
		r := &fakeRemote{stream: func(context.Context, int, *wire.SendMessageRequest) iter.Seq2[wire.Event, error] {
			return func(yield func(wire.Event, error) bool) {
				if yield(task(wire.TaskStateCompleted), nil) && yield(statusEvent(wire.TaskStateFailed, nil), nil) {
					ended = true // the consumer kept reading: the connection can be reused
				}
			}
		}}
		c, _ := testConn(r)
		out, err := c.Delegate(t.Context(), testStep())
		if err != nil || out.State != wire.TaskStateCompleted {
			t.Fatalf("Delegate = %+v, %v; want completed, what follows the terminal event unapplied", out, err)
		}
		if !ended {
			t.Error("the stream was abandoned before its end")
		}
	})
	t.Run("the peer keeps it open", func(t *testing.T) {
		r := &fakeRemote{stream: func(ctx context.Context, _ int, _ *wire.SendMessageRequest) iter.Seq2[wire.Event, error] {
			return blockUntilDone(ctx, ev(task(wire.TaskStateCompleted)))
		}}
		c, _ := testConn(r)
		start := time.Now()
		if _, err := c.Delegate(t.Context(), testStep()); err != nil {
			t.Fatal(err)
		}
		// Without the bound the stream is read until the test ends; the
		// margin over drainGrace absorbs a loaded CI machine.
		if elapsed := time.Since(start); elapsed > 10*time.Second {
			t.Errorf("took %v: reading on after the terminal event must stop after %v", elapsed, drainGrace)
		}
	})
}
