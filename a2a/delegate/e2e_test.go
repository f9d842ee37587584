package delegate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"

	"github.com/wopinterop/wopinterop/internal/a2apeers"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/outbound"
)

// TestE2EDelegation drives a Client built with New through every scripted
// ending against a2a-go's a2asrv and @a2a-js/sdk's server: a completion
// with its admitted artifact, a chunked transfer assembled, an input
// request answered once by the host's decider, a rejection and a failure
// projected and reconciled. Each scenario connects on a run of its own,
// whose log holds exactly one negotiation.decided and only events that
// validate as RunEventDocs.
func TestE2EDelegation(t *testing.T) {
	for _, peer := range e2ePeers {
		t.Run(peer.name, func(t *testing.T) {
			e := newE2EClient(t, peer.start(t, a2apeers.Script{}))

			t.Run("complete", func(t *testing.T) {
				conn, runID := e.connect(t)
				tc := interop.TraceContext{TraceParent: testParent, TraceState: "vendor=1"}
				out, err := conn.Delegate(WithTraceContext(e2eCtx(t), tc), e2eStep(a2apeers.Complete))
				if err != nil {
					t.Fatalf("Delegate: %v (%+v)", err, out)
				}
				wantCompleted(t, out)
				if len(out.Artifacts) != 1 || out.Artifacts[0].ID != a2apeers.ResultID ||
					!slices.Equal(texts(out.Artifacts[0]), []string{a2apeers.CompletedText}) {
					t.Fatalf("artifacts %+v, want the one admitted result", out.Artifacts)
				}
				sends := callsOf(e.peer, "SendStreamingMessage")
				i := slices.IndexFunc(sends, func(r a2apeers.Request) bool { return r.MessageID == out.AttemptID })
				if i < 0 || sends[i].Version != "1.0" {
					t.Fatalf("the peer saw no send with messageId %q at A2A-Version 1.0", out.AttemptID)
				}
				// The run's trace context, in message.metadata.openwop
				// (OpenWOP interop.md §Trace context), as the agent read it.
				var sent struct {
					Params struct {
						Message struct {
							Metadata map[string]any `json:"metadata"`
						} `json:"message"`
					} `json:"params"`
				}
				if err := json.Unmarshal(sends[i].Body, &sent); err != nil {
					t.Fatal(err)
				}
				want := map[string]any{"skillId": a2apeers.DefaultSkills()[0].ID, "openwop": map[string]any{"traceparent": testParent, "tracestate": "vendor=1"}}
				if diff := cmp.Diff(want, sent.Params.Message.Metadata); diff != "" {
					t.Fatalf("message metadata (-want +got):\n%s", diff)
				}
				e.wantLog(t, runID, out.AttemptID)
			})

			t.Run("artifacts:3", func(t *testing.T) {
				conn, runID := e.connect(t)
				out, err := conn.Delegate(e2eCtx(t), e2eStep(a2apeers.Artifacts+":3"))
				if err != nil {
					t.Fatalf("Delegate: %v (%+v)", err, out)
				}
				wantCompleted(t, out)
				var got [][]string
				var ids []wire.ArtifactID
				for _, a := range out.Artifacts {
					ids, got = append(ids, a.ID), append(got, texts(a))
				}
				want := [][]string{}
				var wantIDs []wire.ArtifactID
				for i := 1; i <= 3; i++ {
					wantIDs = append(wantIDs, wire.ArtifactID(fmt.Sprintf(a2apeers.ArtifactIDFmt, i)))
					want = append(want, []string{fmt.Sprintf(a2apeers.ChunkFormat, i, 1), fmt.Sprintf(a2apeers.ChunkFormat, i, 2)})
				}
				if !slices.Equal(ids, wantIDs) || !cmp.Equal(got, want) {
					t.Fatalf("artifacts %v %q, want %v %q assembled from their chunks", ids, got, wantIDs, want)
				}
				e.wantLog(t, runID, out.AttemptID)
			})

			t.Run("ask-input", func(t *testing.T) {
				conn, runID := e.connect(t)
				var mu sync.Mutex
				var asked []InputRequest
				step := e2eStep(a2apeers.AskInput)
				step.Decide = func(_ context.Context, req InputRequest) (InputAnswer, error) {
					mu.Lock()
					defer mu.Unlock()
					asked = append(asked, req)
					return InputAnswer{Parts: []*wire.Part{wire.NewTextPart("eu-west")}}, nil
				}
				out, err := conn.Delegate(e2eCtx(t), step)
				if err != nil {
					t.Fatalf("Delegate: %v (%+v)", err, out)
				}
				wantCompleted(t, out)
				mu.Lock()
				defer mu.Unlock()
				if len(asked) != 1 {
					t.Fatalf("the decider was asked %d times, want once: %+v", len(asked), asked)
				}
				req := asked[0]
				if req.Round != 1 || req.TaskID != out.TaskID || req.ContextID != out.ContextID || req.AttemptID != out.AttemptID ||
					len(req.Parts) != 1 || req.Parts[0].Text() != a2apeers.QuestionText || req.PreviousAnswerFailed {
					t.Fatalf("input request %+v", req)
				}
				if len(out.Artifacts) != 1 || out.Artifacts[0].ID != a2apeers.EchoID || !slices.Equal(texts(out.Artifacts[0]), []string{"eu-west"}) {
					t.Fatalf("artifacts %+v, want the echoed answer", out.Artifacts)
				}
				answers := 0
				for _, c := range e.peer.Calls() {
					if c.MessageID == out.AttemptID+"-input-1" {
						answers++
						if c.TaskID != string(out.TaskID) {
							t.Errorf("the answer went to task %q, want %q", c.TaskID, out.TaskID)
						}
					}
				}
				if answers != 1 {
					t.Fatalf("the peer received %d answers, want exactly one", answers)
				}
				e.wantLog(t, runID, out.AttemptID)
			})

			t.Run("auth-required", func(t *testing.T) {
				conn, runID := e.connect(t)
				step := e2eStep(a2apeers.AuthRequired)
				step.Decide = func(context.Context, InputRequest) (InputAnswer, error) {
					t.Error("an authentication request reached the input decider")
					return InputAnswer{Decline: true}, nil
				}
				out, err := conn.Delegate(e2eCtx(t), step)
				if !errors.Is(err, ErrAuthRequired) || out.State != wire.TaskStateAuthRequired || out.Status != interop.StatusWaitingInput ||
					out.Subkind != SubkindAuth || out.Reconciliation != "" || out.Acceptance != "" {
					t.Fatalf("Delegate = %+v, %v; want waiting-input with the auth sub-kind, unanswered", out, err)
				}
				for _, c := range e.peer.Calls() {
					if c.TaskID == string(out.TaskID) && c.MessageID != "" {
						t.Fatalf("a message went to the task waiting on authentication: %s", c.MessageID)
					}
				}
				// The host gives up: the cancel is verified.
				if rec, err := conn.Cancel(e2eCtx(t), out); rec != outbound.RemoteCancelled || err != nil {
					t.Fatalf("Cancel = %q, %v", rec, err)
				}
				e.wantLog(t, runID, out.AttemptID)
			})

			t.Run("unknown-state", func(t *testing.T) {
				conn, runID := e.connect(t)
				out, err := conn.Delegate(e2eCtx(t), e2eStep(a2apeers.UnknownStateCommand+":300ms"))
				if err != nil {
					t.Fatalf("Delegate: %v (%+v)", err, out)
				}
				// Read as pending with a warning on the way, never as
				// completed; the completion that followed is the peer's.
				if out.Status != interop.StatusCompleted || !slices.Equal(out.Warnings, []Warning{WarningUnknownState}) ||
					out.Acceptance != AcceptancePendingVerification || len(out.Artifacts) != 1 {
					t.Fatalf("outcome %+v, want completed with the unknown-state warning", out)
				}
				e.wantLog(t, runID, out.AttemptID)
				var coerced int
				for _, ev := range e.sink.events(runID) {
					if ev.Type == EventTranslationLoss {
						var r lossRecord
						_ = json.Unmarshal(ev.Payload, &r)
						coerced += r.Coerced.UnknownStates
					}
				}
				if coerced != 1 {
					t.Fatalf("translation loss counts %d unknown states, want 1", coerced)
				}
			})

			t.Run("reject", func(t *testing.T) {
				conn, runID := e.connect(t)
				out, err := conn.Delegate(e2eCtx(t), e2eStep(a2apeers.Reject))
				if !errors.Is(err, ErrRemoteRejected) || !errors.Is(err, ErrRemoteFailed) {
					t.Fatalf("Delegate error %v, want ErrRemoteRejected", err)
				}
				if out.State != wire.TaskStateRejected || out.Status != interop.StatusFailed || out.Reason != ReasonRejectedByRemote ||
					out.Reconciliation != outbound.FailedNoEffect || out.Acceptance != "" || out.Artifacts != nil {
					t.Fatalf("outcome %+v, want failed, rejected_by_remote, failed-no-effect", out)
				}
				e.wantLog(t, runID, out.AttemptID, reconciledJSON(out))
			})

			t.Run("fail", func(t *testing.T) {
				conn, runID := e.connect(t)
				out, err := conn.Delegate(e2eCtx(t), e2eStep(a2apeers.Fail))
				if !errors.Is(err, ErrRemoteFailed) || errors.Is(err, ErrRemoteRejected) {
					t.Fatalf("Delegate error %v, want ErrRemoteFailed", err)
				}
				if out.State != wire.TaskStateFailed || out.Status != interop.StatusFailed || out.Reason != "" ||
					out.Reconciliation != outbound.FailedPossibleEffect || out.Acceptance != "" || out.Artifacts != nil {
					t.Fatalf("outcome %+v, want failed, failed-possible-effect", out)
				}
				e.wantLog(t, runID, out.AttemptID, reconciledJSON(out))
			})
		})
	}
}

// TestE2ECancel cancels delegations the scripted agents hold open. A
// delegation that outlived its deadline is cancelled with Conn.Cancel,
// and one the host gives up on (its context cancelled) is cancelled by
// Delegate itself; either way the cancel is verified by reading the task
// back: slow:30s ends remote-cancelled, cancel-races-complete (whose
// agent completes instead of cancelling) completed-before-cancel, with
// its result admitted.
func TestE2ECancel(t *testing.T) {
	for _, peer := range e2ePeers {
		t.Run(peer.name, func(t *testing.T) {
			e := newE2EClient(t, peer.start(t, a2apeers.Script{}), func(a *Admission) { a.Limits.Deadline = time.Second })
			for _, tc := range []struct {
				command string
				want    outbound.Reconciliation
			}{
				{a2apeers.Slow + ":30s", outbound.RemoteCancelled},
				{a2apeers.CancelRacesComplete, outbound.CompletedBeforeCancel},
			} {
				t.Run(tc.command+"/deadline then Cancel", func(t *testing.T) {
					conn, runID := e.connect(t)
					out, err := conn.Delegate(e2eCtx(t), e2eStep(tc.command))
					if !errors.Is(err, ErrDeadline) || out.Reconciliation != outbound.FailedPossibleEffect || out.TaskID == "" ||
						out.State != wire.TaskStateWorking {
						t.Fatalf("Delegate = %+v, %v; want the deadline, failed-possible-effect, the task working", out, err)
					}
					rec, err := conn.Cancel(e2eCtx(t), out)
					if rec != tc.want || err != nil {
						t.Fatalf("Cancel = %q, %v; want %q", rec, err, tc.want)
					}
					// The deadline's failed-possible-effect is recorded; the
					// verified cancel is not.
					e.wantLog(t, runID, out.AttemptID, reconciledJSON(out))
				})
				t.Run(tc.command+"/host cancels", func(t *testing.T) {
					conn, runID := e.connect(t)
					ctx, cancel := context.WithCancel(e2eCtx(t))
					defer cancel()
					gets := len(callsOf(e.peer, "GetTask"))
					step := e2eStep(tc.command)
					// Polling: the first GetTask proves the peer named the
					// task, so the cancel finds one to cancel.
					step.Poll = true
					type result struct {
						out *Outcome
						err error
					}
					done := make(chan result, 1)
					go func() {
						out, err := conn.Delegate(ctx, step)
						done <- result{out, err}
					}()
					waitFor(t, "the first poll", func() bool { return len(callsOf(e.peer, "GetTask")) > gets })
					cancel()
					r := <-done
					if r.out.Reconciliation != tc.want {
						t.Fatalf("Delegate = %+v, %v; want %q", r.out, r.err, tc.want)
					}
					switch tc.want {
					case outbound.RemoteCancelled:
						if !errors.Is(r.err, context.Canceled) || r.out.State != wire.TaskStateCanceled || r.out.Status != interop.StatusCancelled {
							t.Fatalf("Delegate = %+v, %v; want the task cancelled", r.out, r.err)
						}
					case outbound.CompletedBeforeCancel:
						// The result stands (admission-boundaries §18.9).
						if r.err != nil || r.out.Status != interop.StatusCompleted || r.out.Acceptance != AcceptancePendingVerification ||
							len(r.out.Artifacts) != 1 || r.out.Artifacts[0].ID != a2apeers.ResultID {
							t.Fatalf("Delegate = %+v, %v; want the completion and its result", r.out, r.err)
						}
					}
					// A verified reconciliation records nothing more.
					e.wantLog(t, runID, r.out.AttemptID)
				})
			}
		})
	}
}

// wantCompleted checks the outcome of an admitted completion: the remote
// ids correlated with one attempt, completed, pending verification.
func wantCompleted(t *testing.T, out *Outcome) {
	t.Helper()
	if out.AttemptID == "" || out.Attempts != 1 || out.TaskID == "" || out.ContextID == "" ||
		out.State != wire.TaskStateCompleted || out.Status != interop.StatusCompleted ||
		out.Acceptance != AcceptancePendingVerification || out.Reconciliation != "" || out.Reason != "" || len(out.Warnings) != 0 {
		t.Fatalf("outcome %+v, want completed, pending verification, with its ids", out)
	}
}
