package memstore

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/interop"
)

func suspendedOrTerminal(st interop.RunStatus) bool { return st.Terminal() || st.Suspended() }

// WaitRun returns at once for a run already settled, blocks while it is
// not, and answers exactly what GetRun reads at the settled status.
func TestWaitRunSettles(t *testing.T) {
	s := newStore(t)
	alice := subject(tenantA, "alice")
	g := newGate()
	register(t, s, tenantA, "gated", g.run)
	run := mustCreate(t, s, alice, interop.CreateRunRequest{WorkflowID: "gated"})
	<-g.started

	type result struct {
		run interop.Run
		err error
	}
	done := make(chan result, 1)
	go func() {
		r, err := s.WaitRun(testCtx(t), alice, run.ID, suspendedOrTerminal)
		done <- result{r, err}
	}()
	select {
	case r := <-done:
		t.Fatalf("WaitRun returned %v, %v while the run was running", r.run.Status, r.err)
	case <-time.After(50 * time.Millisecond):
	}
	g.release <- gateResult{out: json.RawMessage(`{"ok":true}`)}
	r := <-done
	if r.err != nil || r.run.Status != interop.StatusCompleted {
		t.Fatalf("WaitRun = %v, %v; want completed", r.run.Status, r.err)
	}
	got, err := s.GetRun(testCtx(t), alice, run.ID)
	if err != nil || !reflect.DeepEqual(got, r.run) {
		t.Fatalf("WaitRun's run differs from GetRun's:\n%+v\n%+v (%v)", r.run, got, err)
	}

	// Suspended counts as settled when the caller says so.
	appr := mustCreate(t, s, alice, interop.CreateRunRequest{WorkflowID: FixtureApproval})
	w, err := s.WaitRun(testCtx(t), alice, appr.ID, suspendedOrTerminal)
	if err != nil || w.Status != interop.StatusWaitingApproval || len(w.Interrupts) != 1 {
		t.Fatalf("WaitRun(approval) = %v with %d interrupts, %v; want waiting-approval with its interrupt", w.Status, len(w.Interrupts), err)
	}
}

// A terminal run is returned whatever settled says, and a wait whose
// context ends answers ctx.Err() and no run.
func TestWaitRunTerminalAndContext(t *testing.T) {
	s := newStore(t)
	alice := subject(tenantA, "alice")
	never := func(interop.RunStatus) bool { return false }

	done := mustCreate(t, s, alice, interop.CreateRunRequest{WorkflowID: FixtureNoop})
	r, err := s.WaitRun(testCtx(t), alice, done.ID, never)
	if err != nil || r.Status != interop.StatusCompleted {
		t.Fatalf("WaitRun(terminal, never) = %v, %v; want completed", r.Status, err)
	}

	live := mustCreate(t, s, alice, interop.CreateRunRequest{WorkflowID: FixtureCancellable})
	ctx, cancel := context.WithTimeout(testCtx(t), 30*time.Millisecond)
	defer cancel()
	r, err = s.WaitRun(ctx, alice, live.ID, never)
	if !errors.Is(err, context.DeadlineExceeded) || r.ID != "" {
		t.Fatalf("WaitRun(timed out) = %q, %v; want no run and context.DeadlineExceeded", r.ID, err)
	}
}

// What WaitRun returns is the caller's: changing every part of it,
// message metadata included, leaves the stored run as it was.
func TestWaitRunReturnsACopy(t *testing.T) {
	s := newStore(t)
	alice := subject(tenantA, "alice")
	msg := &interop.Message{
		ID: "m-1", Role: interop.RoleUser,
		Parts:    []interop.Part{{Kind: interop.PartText, Text: "go"}},
		Metadata: map[string]any{"skillId": FixtureNoop, "nested": map[string]any{"k": "v"}},
	}
	run := mustCreate(t, s, alice, interop.CreateRunRequest{WorkflowID: FixtureNoop, Message: msg})
	before, err := s.WaitRun(testCtx(t), alice, run.ID, suspendedOrTerminal)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := s.GetRun(testCtx(t), alice, run.ID)

	got, _ := s.WaitRun(testCtx(t), alice, run.ID, suspendedOrTerminal)
	m := &got.Messages[0]
	m.Metadata["skillId"] = "changed"
	m.Metadata["nested"].(map[string]any)["k"] = "changed"
	m.Metadata["added"] = true
	m.Parts[0].Text = "changed"
	got.Output[0] = 'X'
	got.Messages = append(got.Messages[:1], interop.Message{ID: "m-2"})

	after, _ := s.WaitRun(testCtx(t), alice, run.ID, suspendedOrTerminal)
	if !reflect.DeepEqual(after, want) || !reflect.DeepEqual(before, want) {
		t.Fatalf("the stored run changed through WaitRun's copy:\nbefore %+v\nafter  %+v", want, after)
	}
}
