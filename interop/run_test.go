package interop

import (
	"errors"
	"testing"
)

func TestStatusSets(t *testing.T) {
	want := map[RunStatus]struct{ terminal, suspended bool }{
		StatusPending:         {false, false},
		StatusRunning:         {false, false},
		StatusPaused:          {false, false},
		StatusWaitingApproval: {false, true},
		StatusWaitingInput:    {false, true},
		StatusWaitingExternal: {false, true},
		StatusCompleted:       {true, false},
		StatusFailed:          {true, false},
		StatusCancelling:      {false, false},
		StatusCancelled:       {true, false},
	}
	all := AllStatuses()
	if len(all) != 10 || len(want) != 10 {
		t.Fatalf("AllStatuses has %d statuses, want the ten of RunSnapshot.status", len(all))
	}
	for _, s := range all {
		w, ok := want[s]
		if !ok || !s.Valid() {
			t.Errorf("%q listed but not a known status", s)
			continue
		}
		if s.Terminal() != w.terminal || s.Suspended() != w.suspended {
			t.Errorf("%q: terminal=%v suspended=%v, want %v %v", s, s.Terminal(), s.Suspended(), w.terminal, w.suspended)
		}
	}
	for _, bad := range []RunStatus{"", "canceled", "Completed", "waiting"} {
		if bad.Valid() || bad.Terminal() || bad.Suspended() {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestInterruptKindStatus(t *testing.T) {
	cases := map[InterruptKind]RunStatus{
		InterruptApproval:      StatusWaitingApproval,
		InterruptClarification: StatusWaitingInput,
		InterruptCredential:    StatusWaitingInput,
		InterruptExternalEvent: StatusWaitingExternal,
		"custom":               "",
	}
	for k, want := range cases {
		if got := k.SuspendedStatus(); got != want {
			t.Errorf("%s suspends as %q, want %q", k, got, want)
		}
	}
}

func TestInputErrorIsInvalidInput(t *testing.T) {
	err := error(&InputError{Field: "inputs/delayMs", Reason: "must be >= 0"})
	if !errors.Is(err, ErrInvalidInput) {
		t.Fatal("InputError does not match ErrInvalidInput")
	}
	if got := err.Error(); got != "invalid input: inputs/delayMs: must be >= 0" {
		t.Fatalf("Error() = %q", got)
	}
	if got := (&InputError{Reason: "bad"}).Error(); got != "invalid input: bad" {
		t.Fatalf("Error() = %q", got)
	}
	var ie *InputError
	if !errors.As(errors.Join(errors.New("x"), err), &ie) || ie.Field != "inputs/delayMs" {
		t.Fatal("InputError not recoverable with errors.As")
	}
}

func TestRunEventTerminal(t *testing.T) {
	for _, typ := range []EventType{EventRunCompleted, EventRunFailed, EventRunCancelled} {
		if !(RunEvent{Type: typ}).Terminal() {
			t.Errorf("%s not terminal", typ)
		}
	}
	for _, typ := range []EventType{EventRunStarted, EventArtifactCreated, EventNodeSuspended, EventNegotiationDecided} {
		if (RunEvent{Type: typ}).Terminal() {
			t.Errorf("%s terminal", typ)
		}
	}
}

func TestZeroSubjectIsAnonymous(t *testing.T) {
	var s Subject
	if s.Authenticated {
		t.Fatal("zero Subject is authenticated")
	}
	s.Scopes = []string{"runs:read"}
	if !s.HasScope("runs:read") || s.HasScope("runs:write") {
		t.Fatal("HasScope")
	}
}

func TestOpenInterrupt(t *testing.T) {
	r := Run{}
	if _, ok := r.OpenInterrupt(); ok {
		t.Fatal("open interrupt on a run without any")
	}
	r.Interrupts = []Interrupt{{ID: "acme/I1", Kind: InterruptApproval}}
	if in, ok := r.OpenInterrupt(); !ok || in.ID != "acme/I1" {
		t.Fatal("OpenInterrupt")
	}
}
