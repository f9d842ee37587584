package memstore

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/internal/fixture"
	"github.com/wopinterop/wopinterop/interop"
)

const testConnectURL = "https://host.example/connect/synthetic"

// interruptStore is newStore with the interrupt fixtures in tenantA.
func interruptStore(t *testing.T) *Store {
	t.Helper()
	s := newStore(t)
	if err := s.RegisterInterruptFixtures(tenantA, InterruptFixtureOptions{ConnectURL: testConnectURL}); err != nil {
		t.Fatal(err)
	}
	return s
}

// runUntil reads the run until its status is st. It reads snapshots, not
// events, so it holds whatever the event log looks like.
func runUntil(t *testing.T, s *Store, sub interop.Subject, id string, st interop.RunStatus) interop.Run {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		run, err := s.GetRun(testCtx(t), sub, id)
		if err != nil {
			t.Fatal(err)
		}
		if run.Status == st {
			return run
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s is %s, never reached %s", id, run.Status, st)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func resolveOnly(t *testing.T, s *Store, sub interop.Subject, run interop.Run, outcome interop.ResolveOutcome, value string) (interop.Run, error) {
	t.Helper()
	in, ok := run.OpenInterrupt()
	if !ok {
		t.Fatalf("run %s has no open interrupt", run.ID)
	}
	req := interop.ResolveRequest{RunID: run.ID, InterruptID: in.ID, Outcome: outcome}
	if value != "" {
		req.Value = json.RawMessage(value)
	}
	return s.ResolveInterrupt(testCtx(t), sub, req)
}

func TestInterruptFixturesConnectURL(t *testing.T) {
	for _, ok := range []string{
		"https://host.example/connect/synthetic",
		"https://host.example:8443/oauth/start",
		"http://127.0.0.1:8080/connect/synthetic",
		"http://[::1]:8080/connect/synthetic",
		"http://localhost/connect",
	} {
		if _, err := InterruptFixtures(InterruptFixtureOptions{ConnectURL: ok}); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{
		"/connect/synthetic",
		"http://host.example/connect",        // plain http off loopback
		"ftp://host.example/connect",         // not http(s)
		"https://host.example/connect?tok=1", // a query could carry a token
		"https://host.example/connect?",
		"https://host.example/connect#frag",
		"https://user:pw@host.example/connect",
		"https:///connect",
	} {
		defs, err := InterruptFixtures(InterruptFixtureOptions{ConnectURL: bad})
		if err == nil || defs != nil {
			t.Errorf("%q accepted", bad)
		}
		if err := New().RegisterInterruptFixtures(tenantA, InterruptFixtureOptions{ConnectURL: bad}); err == nil {
			t.Errorf("RegisterInterruptFixtures accepted %q", bad)
		}
	}
}

func TestInterruptFixturesListed(t *testing.T) {
	s := interruptStore(t)
	wfs, err := s.ListWorkflows(testCtx(t), subject(tenantA, "alice"))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, w := range wfs {
		ids = append(ids, w.ID)
	}
	want := []string{FixtureNoop, FixtureApproval, FixtureFailure, FixtureDelay, FixtureCancellable,
		FixtureApprovalApprovers, FixtureCredential, FixtureClarification, FixtureClarificationNested, FixtureClarificationSensitive}
	if !slices.Equal(ids, want) {
		t.Errorf("workflows %v, want %v", ids, want)
	}
	// Registering twice in one tenant is a duplicate, not a silent no-op.
	if err := s.RegisterInterruptFixtures(tenantA, InterruptFixtureOptions{ConnectURL: testConnectURL}); err == nil {
		t.Error("second registration accepted")
	}
	// Without a connectUrl there is no credential interrupt to offer.
	defs, err := InterruptFixtures(InterruptFixtureOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range defs {
		if d.Workflow.ID == FixtureCredential {
			t.Error("conformance-credential without a connectUrl")
		}
	}
	if len(defs) != 4 {
		t.Errorf("%d fixtures without a connectUrl, want 4", len(defs))
	}
}

func TestSecureOrigin(t *testing.T) {
	for origin, want := range map[string]bool{
		"https://host.example": true, "http://127.0.0.1:8080": true, "http://[::1]:1": true, "http://localhost:80": true,
		"http://0.0.0.0:8080": false, "http://192.168.1.4": false, "http://host.example": false, "ftp://host.example": false, "": false, "https://": false,
	} {
		if got := SecureOrigin(origin); got != want {
			t.Errorf("SecureOrigin(%q) = %v, want %v", origin, got, want)
		}
	}
}

// Only the listed principal resolves conformance-approval-approvers; a
// refusal leaves the interrupt open (OpenWOP interrupt §Approver
// enforcement).
func TestApprovalApproversFixture(t *testing.T) {
	s := interruptStore(t)
	owner := subject(tenantA, "key:acme")
	run := mustCreate(t, s, owner, interop.CreateRunRequest{WorkflowID: FixtureApprovalApprovers})
	waiting := runUntil(t, s, owner, run.ID, interop.StatusWaitingApproval)
	in, _ := waiting.OpenInterrupt()
	if !slices.Equal(in.Approvers, []string{ListedApprover}) || in.NodeID != "gate" || in.Kind != interop.InterruptApproval {
		t.Fatalf("interrupt %+v", in)
	}
	if _, err := resolveOnly(t, s, owner, waiting, interop.OutcomeAccept, `{"action":"accept"}`); !errors.Is(err, interop.ErrNotEligible) {
		t.Fatalf("the run's own creator resolved it: %v", err)
	}
	again := runUntil(t, s, owner, run.ID, interop.StatusWaitingApproval)
	if again.LastSequence != waiting.LastSequence || len(again.Interrupts) != 1 {
		t.Errorf("a refused resolve changed the run: %+v", again)
	}
	listed := subject(tenantA, ListedApprover)
	if _, err := resolveOnly(t, s, listed, again, interop.OutcomeAccept, `{"action":"accept"}`); err != nil {
		t.Fatalf("the listed approver was refused: %v", err)
	}
	done := runUntil(t, s, owner, run.ID, interop.StatusCompleted)
	if string(done.Output) != `{"approved":true}` {
		t.Errorf("output %s", done.Output)
	}
}

// conformance-credential asks for the synthetic provider at the host's
// connectUrl; "authorized" is refused while no credential resolves, and
// "declined" fails the run (RFC 0199 §C.2–§C.4).
func TestCredentialFixture(t *testing.T) {
	s := interruptStore(t)
	sub := subject(tenantA, "alice")
	run := mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: FixtureCredential})
	waiting := runUntil(t, s, sub, run.ID, interop.StatusWaitingInput)
	in, _ := waiting.OpenInterrupt()
	want := interop.CredentialData{Provider: CredentialProvider, Scopes: []string{CredentialScope}, Reason: "missing", ConnectURL: testConnectURL}
	if in.Kind != interop.InterruptCredential || in.NodeID != "use-credential" || in.Credential == nil ||
		in.Credential.Provider != want.Provider || !slices.Equal(in.Credential.Scopes, want.Scopes) ||
		in.Credential.Reason != want.Reason || in.Credential.ConnectURL != want.ConnectURL {
		t.Fatalf("interrupt %+v credential %+v", in, in.Credential)
	}
	var data interop.CredentialData
	if err := json.Unmarshal(in.Data, &data); err != nil || data.ConnectURL != testConnectURL || data.Provider != CredentialProvider {
		t.Errorf("data %s", in.Data)
	}

	for _, bad := range []string{`{"outcome":"authorized"}`, `{"outcome":"granted"}`, `{"outcome":"declined","token":"x"}`, `{}`} {
		_, err := resolveOnly(t, s, sub, waiting, interop.OutcomeAccept, bad)
		var ie *interop.InputError
		if !errors.As(err, &ie) || !strings.HasPrefix(ie.Field, "resumeValue") {
			t.Errorf("%s: %v, want an InputError on resumeValue", bad, err)
		}
	}
	// The refusal of "authorized" names the resume value itself.
	_, err := resolveOnly(t, s, sub, waiting, interop.OutcomeAccept, `{"outcome":"authorized"}`)
	if ie := (*interop.InputError)(nil); !errors.As(err, &ie) || ie.Field != "resumeValue" {
		t.Errorf("authorized: %v", err)
	}
	if still := runUntil(t, s, sub, run.ID, interop.StatusWaitingInput); still.LastSequence != waiting.LastSequence {
		t.Error("a refused resolution changed the run")
	}
	if _, err := resolveOnly(t, s, sub, waiting, interop.OutcomeAccept, `{"outcome":"declined"}`); err != nil {
		t.Fatal(err)
	}
	if failed := runUntil(t, s, sub, run.ID, interop.StatusFailed); failed.FailureMessage != FixtureCredentialDeclinedMessage || failed.FailureCode != "connector_auth_declined" {
		t.Errorf("failure %q", failed.FailureMessage)
	}

	// The decline outcome (an MCP client's decline) fails it the same way;
	// cancel cancels it.
	for outcome, st := range map[interop.ResolveOutcome]interop.RunStatus{interop.OutcomeDecline: interop.StatusFailed, interop.OutcomeCancel: interop.StatusCancelled} {
		r := mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: FixtureCredential})
		if _, err := resolveOnly(t, s, sub, runUntil(t, s, sub, r.ID, interop.StatusWaitingInput), outcome, ""); err != nil {
			t.Fatal(err)
		}
		runUntil(t, s, sub, r.ID, st)
	}
}

func TestClarificationFixtures(t *testing.T) {
	s := interruptStore(t)
	sub := subject(tenantA, "alice")
	answers := clarificationAnswers(t)
	if got, want := len(answers), 3; got != want {
		t.Fatalf("%d clarification fixtures answered, want %d", got, want)
	}
	for _, a := range answers {
		tt := struct{ id, bad, good, output, secret string }{a.Workflow, string(a.Refused), string(a.Answer), string(a.Output), a.Secret}
		t.Run(tt.id, func(t *testing.T) {
			run := mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: tt.id})
			waiting := runUntil(t, s, sub, run.ID, interop.StatusWaitingInput)
			in, _ := waiting.OpenInterrupt()
			if in.Kind != interop.InterruptClarification || in.Key != "clarification" || in.Message == "" || len(in.ResumeSchema) == 0 {
				t.Fatalf("interrupt %+v", in)
			}
			if _, err := resolveOnly(t, s, sub, waiting, interop.OutcomeAccept, tt.bad); !errors.Is(err, interop.ErrInvalidInput) {
				t.Fatalf("%s accepted: %v", tt.bad, err)
			}
			if _, err := resolveOnly(t, s, sub, waiting, interop.OutcomeAccept, tt.good); err != nil {
				t.Fatal(err)
			}
			done := runUntil(t, s, sub, run.ID, interop.StatusCompleted)
			if string(done.Output) != tt.output {
				t.Errorf("output %s, want %s", done.Output, tt.output)
			}
			// The secret is kept nowhere the run shows: not in the output,
			// the snapshot or the event log.
			if tt.secret != "" {
				snap, _ := json.Marshal(done)
				evs, _ := json.Marshal(events(t, s, sub, run.ID))
				if strings.Contains(string(snap)+string(evs), tt.secret) {
					t.Error("the passphrase is kept on the run")
				}
			}

			for outcome, st := range map[interop.ResolveOutcome]interop.RunStatus{interop.OutcomeDecline: interop.StatusFailed, interop.OutcomeCancel: interop.StatusCancelled} {
				r := mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: tt.id})
				if _, err := resolveOnly(t, s, sub, runUntil(t, s, sub, r.ID, interop.StatusWaitingInput), outcome, ""); err != nil {
					t.Fatal(err)
				}
				end := runUntil(t, s, sub, r.ID, st)
				if st == interop.StatusFailed && end.FailureMessage != FixtureClarificationDeclinedMessage {
					t.Errorf("decline: %q", end.FailureMessage)
				}
			}
		})
	}
}

// clarificationAnswer is one row of the shared fixture
// testdata/fixtures/clarification-answers.json: for each clarification
// fixture an answer its resume schema refuses, one it accepts, the run
// output that answer produces, and the secret no run may keep.
type clarificationAnswer struct {
	Workflow string          `json:"workflow"`
	Refused  json.RawMessage `json:"refused"`
	Answer   json.RawMessage `json:"answer"`
	Output   json.RawMessage `json:"output"`
	Secret   string          `json:"secret"`
}

func clarificationAnswers(t *testing.T) []clarificationAnswer {
	t.Helper()
	var rows []clarificationAnswer
	fixture.JSON(t, "fixtures/clarification-answers.json", &rows)
	for _, r := range rows {
		if !slices.Contains([]string{FixtureClarification, FixtureClarificationNested, FixtureClarificationSensitive}, r.Workflow) {
			t.Fatalf("clarification-answers.json names %q, not a clarification fixture", r.Workflow)
		}
	}
	return rows
}
