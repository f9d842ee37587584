package memstore

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wopinterop/wopinterop/interop"
)

// richRun starts a run that has an open interrupt, two artifacts with
// several part kinds and metadata, a message and (later) an output, so that
// every slice and map of a Run is populated.
func richRun(t *testing.T, s *Store, sub interop.Subject) (interop.Run, chan<- struct{}) {
	t.Helper()
	finish := make(chan struct{})
	register(t, s, sub.Tenant, "rich", func(ctx context.Context, rc *RunContext) (json.RawMessage, error) {
		meta := map[string]any{"nested": map[string]any{"list": []any{"a", 1.0}}, "raw": json.RawMessage(`{"r":1}`)}
		for _, a := range []interop.Artifact{
			{ID: "a1", Name: "first", Metadata: meta, Parts: []interop.Part{
				interop.TextPart("hello"), interop.DataPart(json.RawMessage(`{"d":1}`)),
				{Kind: interop.PartRaw, Raw: []byte{1, 2, 3}, MediaType: "application/octet-stream", Metadata: meta},
			}},
			{ID: "a2", Parts: []interop.Part{{Kind: interop.PartURL, URL: "https://example.com/x"}}},
		} {
			if err := rc.PublishArtifact(a, false, false); err != nil {
				return nil, err
			}
		}
		go func() {
			_, _ = rc.Interrupt(ctx, interop.Interrupt{
				Kind: interop.InterruptCredential, Key: "cred", Data: json.RawMessage(`{"x":1}`),
				Actions: []string{"accept"}, Approvers: []string{"alice"},
				Credential: &interop.CredentialData{Provider: "gh", Scopes: []string{"repo"}, Reason: "r", ConnectURL: "https://c"},
			})
		}()
		select {
		case <-finish:
		case <-ctx.Done():
		}
		return json.RawMessage(`{"out":[1,2]}`), nil
	})
	msg := &interop.Message{ID: "m", Role: interop.RoleUser, Parts: []interop.Part{interop.TextPart("hi")}, Metadata: map[string]any{"k": "v"},
		ActivatedExtensions: []string{"https://ext.example/v1"}}
	run := mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: "rich", Message: msg})
	msg.Parts[0].Text = "changed by the caller after CreateRun"
	msg.Metadata["k"] = "changed"
	msg.ActivatedExtensions[0] = "changed"
	waitStatus(t, s, sub, run.ID, interop.StatusWaitingInput)
	got, err := s.GetRun(testCtx(t), sub, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Messages[0].Parts[0].Text != "hi" || got.Messages[0].Metadata["k"] != "v" || got.Messages[0].ActivatedExtensions[0] != "https://ext.example/v1" {
		t.Fatal("the store kept the caller's message memory")
	}
	return got, finish
}

// scribble changes everything reachable from r.
func scribble(r *interop.Run) {
	r.Interrupts[0].Actions[0] = "x"
	r.Interrupts[0].Approvers[0] = "x"
	r.Interrupts[0].Data[0] = 'x'
	r.Interrupts[0].Credential.Scopes[0] = "x"
	r.Interrupts[0].Credential.Provider = "x"
	r.Artifacts[0].Parts[0].Text = "x"
	r.Artifacts[0].Parts[1].Data[0] = 'x'
	r.Artifacts[0].Parts[2].Raw[0] = 9
	r.Artifacts[0].Parts[2].Metadata["nested"].(map[string]any)["list"].([]any)[0] = "x"
	r.Artifacts[0].Metadata["raw"].(json.RawMessage)[0] = 'x'
	r.Artifacts[0].Parts = append(r.Artifacts[0].Parts[:1], interop.TextPart("appended"))
	r.Artifacts[1].Parts[0].URL = "x"
	r.Messages[0].Parts[0].Text = "x"
	r.Messages[0].Metadata["k"] = "x"
	r.Messages[0].ActivatedExtensions[0] = "x"
	r.Artifacts = append(r.Artifacts[:0], interop.Artifact{ID: "x"})
	if len(r.Output) > 0 {
		r.Output[0] = 'x'
	}
}

func TestReturnedRunsAreCopies(t *testing.T) {
	s := newStore(t)
	sub := subject(tenantA, "alice")
	before, finish := richRun(t, s, sub)
	pristine, _ := s.GetRun(testCtx(t), sub, before.ID)

	reads := map[string]func() interop.Run{
		"GetRun": func() interop.Run { r, _ := s.GetRun(testCtx(t), sub, before.ID); return r },
		"ListRuns": func() interop.Run {
			p, _ := s.ListRuns(testCtx(t), sub, interop.ListRunsQuery{})
			return p.Runs[0]
		},
		"PollEvents": func() interop.Run { _, r, _ := s.PollEvents(testCtx(t), sub, before.ID, -1, time.Second); return r },
	}
	for name, read := range reads {
		t.Run(name, func(t *testing.T) {
			r := read()
			scribble(&r)
			after, _ := s.GetRun(testCtx(t), sub, before.ID)
			if diff := cmp.Diff(pristine, after); diff != "" {
				t.Fatalf("changing a returned run changed the store (-before +after):\n%s", diff)
			}
		})
	}

	// Events are copies too.
	evs, _, _ := s.PollEvents(testCtx(t), sub, before.ID, -1, time.Second)
	evs[1].Chunk.Artifact.Parts[0].Text = "x"
	evs[1].Chunk.Artifact.Metadata["raw"].(json.RawMessage)[0] = 'x'
	evs[1].Payload[0] = 'x'
	again, _, _ := s.PollEvents(testCtx(t), sub, before.ID, -1, time.Second)
	if again[1].Chunk.Artifact.Parts[0].Text != "hello" || string(again[1].Chunk.Artifact.Metadata["raw"].(json.RawMessage)) != `{"r":1}` || again[1].Payload[0] != '{' {
		t.Fatal("changing an event changed the log")
	}

	close(finish)
	events(t, s, sub, before.ID)
	done, _ := s.GetRun(testCtx(t), sub, before.ID)
	done.Output[0] = 'x'
	if again, _ := s.GetRun(testCtx(t), sub, before.ID); string(again.Output) != `{"out":[1,2]}` {
		t.Fatalf("Output shared: %s", again.Output)
	}
}

func TestListPageRunsDoNotShareMemory(t *testing.T) {
	// A page is carved from shared arenas; appending to one run's slice must
	// not write into the next run's.
	s := newStore(t)
	sub := subject(tenantA, "alice")
	for range 3 {
		events(t, s, sub, mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: FixtureNoop}).ID)
	}
	page, _ := s.ListRuns(testCtx(t), sub, interop.ListRunsQuery{})
	want, _ := s.ListRuns(testCtx(t), sub, interop.ListRunsQuery{})
	_ = append(page.Runs[0].Artifacts, interop.Artifact{ID: "spill"})
	_ = append(page.Runs[0].Artifacts[0].Parts, interop.TextPart("spill"))
	_ = append(page.Runs[0].Output, "spill"...)
	if diff := cmp.Diff(want.Runs[1:], page.Runs[1:]); diff != "" {
		t.Fatalf("append on one run changed its neighbours:\n%s", diff)
	}
}

func TestPublishArtifactChunks(t *testing.T) {
	s := newStore(t)
	sub := subject(tenantA, "alice")
	errs := make(chan error, 10)
	step := make(chan func(rc *RunContext) error)
	register(t, s, tenantA, "publisher", func(ctx context.Context, rc *RunContext) (json.RawMessage, error) {
		for {
			select {
			case f, ok := <-step:
				if !ok {
					return nil, nil
				}
				errs <- f(rc)
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	})
	run := mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: "publisher"})
	do := func(f func(rc *RunContext) error) error { step <- f; return <-errs }
	text := func(s string) []interop.Part { return []interop.Part{interop.TextPart(s)} }

	if err := do(func(rc *RunContext) error {
		return rc.PublishArtifact(interop.Artifact{ID: "doc", Name: "Doc", Parts: text("a")}, false, false)
	}); err != nil {
		t.Fatal(err)
	}
	if err := do(func(rc *RunContext) error {
		return rc.PublishArtifact(interop.Artifact{ID: "doc", Parts: text("b")}, true, true)
	}); err != nil {
		t.Fatal(err)
	}
	refusals := map[string]func(rc *RunContext) error{
		"append after last chunk": func(rc *RunContext) error {
			return rc.PublishArtifact(interop.Artifact{ID: "doc", Parts: text("c")}, true, false)
		},
		"append to unknown": func(rc *RunContext) error {
			return rc.PublishArtifact(interop.Artifact{ID: "nope", Parts: text("c")}, true, false)
		},
		"empty id": func(rc *RunContext) error { return rc.PublishArtifact(interop.Artifact{Parts: text("c")}, false, true) },
		"invalid data part": func(rc *RunContext) error {
			return rc.PublishArtifact(interop.Artifact{ID: "d", Parts: []interop.Part{interop.DataPart(json.RawMessage(`{`))}}, false, true)
		},
	}
	for name, f := range refusals {
		if err := do(f); err == nil {
			t.Fatalf("%s: accepted", name)
		}
	}
	// Replacing starts the artifact over.
	if err := do(func(rc *RunContext) error {
		return rc.PublishArtifact(interop.Artifact{ID: "doc", Name: "Doc v2", Parts: text("z")}, false, false)
	}); err != nil {
		t.Fatal(err)
	}
	var rc *RunContext
	if err := do(func(r *RunContext) error { rc = r; return nil }); err != nil {
		t.Fatal(err)
	}
	close(step)
	evs := events(t, s, sub, run.ID)

	got, _ := s.GetRun(testCtx(t), sub, run.ID)
	want := []interop.Artifact{{ID: "doc", Name: "Doc v2", Parts: text("z")}}
	if diff := cmp.Diff(want, got.Artifacts); diff != "" {
		t.Fatalf("artifacts (-want +got):\n%s", diff)
	}
	type chunk struct {
		Text         string
		Append, Last bool
	}
	var chunks []chunk
	for _, ev := range evs {
		if ev.Type == interop.EventArtifactCreated {
			chunks = append(chunks, chunk{ev.Chunk.Artifact.Parts[0].Text, ev.Chunk.Append, ev.Chunk.LastChunk})
		}
	}
	if diff := cmp.Diff([]chunk{{"a", false, false}, {"b", true, true}, {"z", false, false}}, chunks); diff != "" {
		t.Fatalf("artifact events (-want +got):\n%s", diff)
	}
	// After the run ended its handle can no longer write.
	err := rc.PublishArtifact(interop.Artifact{ID: "late", Parts: text("x")}, false, true)
	wantErrIs(t, err, interop.ErrRunTerminal)
	_, err = rc.Interrupt(testCtx(t), interop.Interrupt{Kind: interop.InterruptApproval, Key: "late"})
	wantErrIs(t, err, interop.ErrRunTerminal)
	if after, _ := s.GetRun(testCtx(t), sub, run.ID); after.LastSequence != evs[len(evs)-1].Sequence {
		t.Fatal("writes after the end changed the log")
	}
}
