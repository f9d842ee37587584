package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/isolation"
)

func durable(id, workspace string) interop.HostEvent {
	return interop.HostEvent{EventID: id, Type: "test.probe", Delivery: interop.DeliveryDurable, WorkspaceID: workspace, Payload: json.RawMessage(`{}`)}
}

func ephemeral(id, workspace string) interop.HostEvent {
	return interop.HostEvent{EventID: id, Type: "test.probe", Delivery: interop.DeliveryEphemeral, WorkspaceID: workspace, Payload: json.RawMessage(`{}`)}
}

func publish(t *testing.T, s *Store, tenant string, evs ...interop.HostEvent) {
	t.Helper()
	for _, ev := range evs {
		if err := s.PublishHostEvent(testCtx(t), tenant, ev); err != nil {
			t.Fatalf("PublishHostEvent(%s): %v", ev.EventID, err)
		}
	}
}

// until reads a subscription up to and including the event id end and
// returns the ids it saw before it.
func until(t *testing.T, s *Store, tenant, workspace, lastEventID, end string, publishAfterSubscribing func()) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	seq := s.SubscribeHostEvents(ctx, tenant, workspace, lastEventID)
	publishAfterSubscribing()
	got := []string{}
	for ev := range seq {
		if ev.EventID == end {
			return got
		}
		got = append(got, ev.EventID)
	}
	t.Fatalf("subscription ended before %s (got %v)", end, got)
	return nil
}

// TestHostEventsAcrossReplicas: events published on one replica reach the
// subscribers of another — ephemeral ones only those present, each only
// where its workspace allows — and a resume after Last-Event-ID replays
// durable events, never ephemeral ones.
func TestHostEventsAcrossReplicas(t *testing.T) {
	pool := migratedPool(t)
	a, b := openStore(t, pool), openStore(t, pool)
	var (
		wg                sync.WaitGroup
		inWS1, tenantWide []string
	)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	read := func(seq func(func(interop.HostEvent) bool), into *[]string) {
		wg.Go(func() {
			for ev := range seq {
				if ev.EventID == "end" {
					return
				}
				*into = append(*into, ev.EventID)
			}
		})
	}
	read(b.SubscribeHostEvents(ctx, tenantA, "ws1", ""), &inWS1)
	read(b.SubscribeHostEvents(ctx, tenantA, "", ""), &tenantWide)
	publish(t, a, tenantA, durable("d1", "ws1"), ephemeral("e1", "ws1"), durable("d2", ""), ephemeral("e2", ""),
		durable("d3", "ws2"), durable("d4", "ws1"))
	publish(t, a, tenantB, durable("foreign", ""))
	publish(t, a, tenantA, durable("end", ""))
	wg.Wait()
	if want := []string{"d1", "e1", "d2", "e2", "d4"}; !slices.Equal(inWS1, want) {
		t.Errorf("subscriber of ws1 on the other replica got %v, want %v", inWS1, want)
	}
	if want := []string{"d2", "e2"}; !slices.Equal(tenantWide, want) {
		t.Errorf("tenant-wide subscriber on the other replica got %v, want %v", tenantWide, want)
	}
	resumed := until(t, b, tenantA, "ws1", "d1", "end2", func() { publish(t, a, tenantA, durable("end2", "")) })
	if want := []string{"d2", "d4", "end"}; !slices.Equal(resumed, want) {
		t.Errorf("resume after d1 = %v, want the later durable events %v and no ephemeral one", resumed, want)
	}
}

// TestHostEventsRetention: each tenant keeps its newest durable events up
// to the count; Last-Event-ID naming an evicted one resumes like an
// unknown id.
func TestHostEventsRetention(t *testing.T) {
	s := newStore(t, WithHostEventRetention(2))
	publish(t, s, tenantA, durable("h1", ""), ephemeral("x", ""), durable("h2", ""), durable("h3", ""), durable("h4", ""))
	publish(t, s, tenantB, durable("b1", ""))
	kept, err := s.DurableHostEvents(testCtx(t), tenantA)
	if err != nil {
		t.Fatal(err)
	}
	if got := hostIDs(kept); !slices.Equal(got, []string{"h3", "h4"}) {
		t.Fatalf("retained %v, want the newest two [h3 h4]", got)
	}
	if got := until(t, s, tenantA, "", "h1", "m1", func() { publish(t, s, tenantA, durable("m1", "")) }); len(got) != 0 {
		t.Errorf("resume after an evicted id replayed %v, want nothing", got)
	}
	// m1 evicted h3: h4 and m1 are retained.
	if got := until(t, s, tenantA, "", "h4", "m2", func() { publish(t, s, tenantA, durable("m2", "")) }); !slices.Equal(got, []string{"m1"}) {
		t.Errorf("resume after h4 = %v, want [m1]", got)
	}
	if other, _ := s.DurableHostEvents(testCtx(t), tenantB); len(other) != 1 {
		t.Errorf("another tenant's events were evicted: %v", hostIDs(other))
	}
}

func hostIDs(evs []interop.HostEvent) []string {
	out := []string{}
	for _, ev := range evs {
		out = append(out, ev.EventID)
	}
	return out
}

// manualClock is a store clock a test moves.
type manualClock struct {
	mu sync.Mutex
	t  time.Time
}

func newManualClock() *manualClock {
	return &manualClock{t: time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)}
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *manualClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// TestHostEventsExpire: durable events older than the age bound and
// ephemeral ones older than a minute are purged.
func TestHostEventsExpire(t *testing.T) {
	clock := newManualClock()
	s := newStore(t, WithClock(clock.Now), WithHostEventMaxAge(time.Hour))
	publish(t, s, tenantA, durable("old", ""), ephemeral("brief", ""))
	clock.Advance(2 * time.Minute)
	publish(t, s, tenantA, durable("recent", ""))
	if _, events, err := s.purge(testCtx(t)); err != nil || events != 1 {
		t.Fatalf("purge after two minutes removed %d events (%v), want the ephemeral one", events, err)
	}
	clock.Advance(time.Hour)
	if _, events, err := s.purge(testCtx(t)); err != nil || events != 1 {
		t.Fatalf("purge after an hour removed %d events (%v), want the old durable one", events, err)
	}
	kept, _ := s.DurableHostEvents(testCtx(t), tenantA)
	if got := hostIDs(kept); !slices.Equal(got, []string{"recent"}) {
		t.Errorf("kept %v, want [recent]", got)
	}
}

// TestPublishHostEventRefusals: a malformed event is refused with the
// field named and nothing is kept.
func TestPublishHostEventRefusals(t *testing.T) {
	s := newStore(t)
	tests := []struct {
		ev    interop.HostEvent
		field string
	}{
		{interop.HostEvent{Type: "Bad Type", Delivery: interop.DeliveryDurable}, "type"},
		{interop.HostEvent{Type: "test.probe", Delivery: "sometimes"}, "delivery"},
		{interop.HostEvent{Type: "test.probe", Delivery: interop.DeliveryDurable, Payload: json.RawMessage(`[1]`)}, "payload"},
		{interop.HostEvent{Type: "test.probe", Delivery: interop.DeliveryDurable, Payload: json.RawMessage(`{"a":`)}, "payload"},
	}
	for _, tt := range tests {
		err := s.PublishHostEvent(testCtx(t), tenantA, tt.ev)
		var ie *interop.InputError
		if !errors.As(err, &ie) || ie.Field != tt.field || !errors.Is(err, interop.ErrInvalidInput) {
			t.Errorf("PublishHostEvent(%+v) = %v, want an InputError on %q", tt.ev, err, tt.field)
		}
	}
	if kept, _ := s.DurableHostEvents(testCtx(t), tenantA); len(kept) != 0 {
		t.Errorf("refused events were kept: %v", hostIDs(kept))
	}
	// Filled in: id, timestamp, payload {}.
	publish(t, s, "", interop.HostEvent{Type: "test.probe", Delivery: interop.DeliveryDurable})
	kept, _ := s.DurableHostEvents(testCtx(t), "")
	if len(kept) != 1 || !isolation.ValidOpaque(kept[0].EventID[len("hev-"):]) || kept[0].Timestamp.IsZero() || string(kept[0].Payload) != `{}` {
		t.Errorf("unauthenticated event kept as %+v, want filled in", kept)
	}
}

// TestRunRetention: a terminal run older than the retention is gone with
// its key — it reads exactly like an id never minted — while a live run of
// the same age stays.
func TestRunRetention(t *testing.T) {
	clock := newManualClock()
	s := newStore(t, WithClock(clock.Now), WithRunRetention(time.Hour))
	ctx := testCtx(t)
	sub := alice()
	done := mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: FixtureNoop, IdempotencyKey: "k"})
	waitStatus(t, s, sub, done.ID, interop.StatusCompleted)
	live := mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: FixtureApproval})
	waitStatus(t, s, sub, live.ID, interop.StatusWaitingApproval)
	clock.Advance(2 * time.Hour)
	if runs, _, err := s.purge(ctx); err != nil || runs != 1 {
		t.Fatalf("purge removed %d runs (%v), want 1", runs, err)
	}
	_, gone := s.GetRun(ctx, sub, done.ID)
	_, never := s.GetRun(ctx, sub, tenantA+"/"+isolation.NewOpaque())
	if !errors.Is(gone, interop.ErrNotFound) || gone.Error() != never.Error() {
		t.Errorf("purged run reads %v, never-minted %v; want the same ErrNotFound", gone, never)
	}
	page, err := s.ListRuns(ctx, sub, interop.ListRunsQuery{})
	if err != nil || page.Total != 1 || page.Runs[0].ID != live.ID {
		t.Errorf("ListRuns after the purge = %+v, %v; want only the live run", page, err)
	}
	again, created, err := s.CreateRun(ctx, sub, interop.CreateRunRequest{WorkflowID: FixtureNoop, IdempotencyKey: "k"})
	if err != nil || !created || again.ID == done.ID {
		t.Errorf("CreateRun with the purged run's key = %s, created %v, %v; want a new run", again.ID, created, err)
	}
}

// TestRunRoundTrip: what a run stores reads back as it was given —
// messages with every part kind, interrupts with their data, artifacts
// merged chunk by chunk.
func TestRunRoundTrip(t *testing.T) {
	s := newStore(t)
	ctx := testCtx(t)
	cred := &interop.CredentialData{Provider: "p", Scopes: []string{"a", "b"}, Reason: "missing", ConnectURL: "https://h.example/c"}
	raised := interop.Interrupt{
		Kind: interop.InterruptCredential, Key: "cred", NodeID: "n1", Message: "Connect <p> & go",
		Data: json.RawMessage(`{"provider":"p"}`), ResumeSchema: json.RawMessage(`{"type":"object"}`),
		Approvers: []string{"alice"}, Credential: cred,
	}
	if err := s.Register(tenantA, WorkflowDef{
		Workflow: interop.Workflow{ID: "rich"},
		Run: func(ctx context.Context, rc *RunContext) (json.RawMessage, error) {
			if err := rc.PublishArtifact(interop.Artifact{ID: "doc", Name: "first", Parts: []interop.Part{interop.TextPart("a")}}, false, false); err != nil {
				return nil, err
			}
			if err := rc.PublishArtifact(interop.Artifact{ID: "doc", Description: "d", Parts: []interop.Part{interop.TextPart("b")}}, true, true); err != nil {
				return nil, err
			}
			if err := rc.PublishArtifact(interop.Artifact{ID: "doc", Parts: []interop.Part{interop.TextPart("c")}}, true, true); err == nil {
				return nil, errors.New("appended after the last chunk")
			}
			_, err := rc.Interrupt(ctx, raised)
			return nil, err
		},
	}); err != nil {
		t.Fatal(err)
	}
	msg := interop.Message{
		ID: "m1", Role: interop.RoleUser,
		Parts: []interop.Part{
			interop.TextPart("hi <b>"), interop.DataPart(json.RawMessage(`{"k":[1,2]}`)),
			{Kind: interop.PartURL, URL: "https://x.example/f", MediaType: "text/plain", Filename: "f.txt"},
			{Kind: interop.PartRaw, Raw: []byte{0, 1, 2, 255}, Metadata: map[string]any{"n": 1.5, "s": "v", "o": map[string]any{"b": true}}},
		},
		Metadata:         map[string]any{"trace": "t"},
		ReferenceTaskIDs: []string{"acme/other"}, Extensions: []string{"https://ext.example/1"},
		ActivatedExtensions: []string{"https://ext.example/1"},
	}
	run := mustCreate(t, s, alice(), interop.CreateRunRequest{WorkflowID: "rich", Message: &msg})
	got := waitStatus(t, s, alice(), run.ID, interop.StatusWaitingInput)
	if diff := cmp.Diff([]interop.Message{msg}, got.Messages); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	in, _ := got.OpenInterrupt()
	want := raised
	want.ID, want.CreatedAt = in.ID, in.CreatedAt
	if diff := cmp.Diff(want, in); diff != "" {
		t.Errorf("interrupt (-want +got):\n%s", diff)
	}
	wantArtifacts := []interop.Artifact{{ID: "doc", Name: "first", Description: "d", Parts: []interop.Part{interop.TextPart("a"), interop.TextPart("b")}}}
	if diff := cmp.Diff(wantArtifacts, got.Artifacts); diff != "" {
		t.Errorf("artifacts (-want +got):\n%s", diff)
	}
	reply := interop.Message{ID: "m2", Role: interop.RoleUser, Parts: []interop.Part{interop.TextPart("ok")}}
	if _, err := s.ResolveInterrupt(ctx, bob(), interop.ResolveRequest{RunID: run.ID, InterruptID: in.ID, Value: json.RawMessage(`{}`), Message: &reply}); !errors.Is(err, interop.ErrNotEligible) {
		t.Fatalf("resolve by a non-approver = %v, want ErrNotEligible", err)
	}
	after, err := s.ResolveInterrupt(ctx, alice(), interop.ResolveRequest{RunID: run.ID, InterruptID: in.ID, Value: json.RawMessage(`{}`), Message: &reply})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]interop.Message{msg, reply}, after.Messages); diff != "" {
		t.Errorf("messages after the resolution (-want +got):\n%s", diff)
	}
	evs := events(t, s, alice(), run.ID)
	if chunk := evs[2].Chunk; chunk == nil || !chunk.Append || !chunk.LastChunk || chunk.Artifact.Parts[0].Text != "b" {
		t.Errorf("second artifact event carries chunk %+v, want the appended last chunk b", chunk)
	}
}

// TestAppendRunEventRefusals: the sink refuses what the store writes
// itself, malformed events, unknown runs and finished runs, appending
// nothing.
func TestAppendRunEventRefusals(t *testing.T) {
	s := newStore(t)
	ctx := testCtx(t)
	run := mustCreate(t, s, alice(), interop.CreateRunRequest{WorkflowID: FixtureNoop})
	done := waitStatus(t, s, alice(), run.ID, interop.StatusCompleted)
	live := mustCreate(t, s, alice(), interop.CreateRunRequest{WorkflowID: FixtureApproval})
	suspended := waitStatus(t, s, alice(), live.ID, interop.StatusWaitingApproval)
	audit, _ := interop.NewRunEvent(interop.EventNegotiationDecided, map[string]string{"protocol": "a2a", "outcome": "accepted", "at": "2026-07-28T00:00:00Z"})
	tests := []struct {
		name  string
		runID string
		ev    interop.RunEvent
		check func(error) bool
	}{
		{"lifecycle type", live.ID, interop.RunEvent{Type: interop.EventRunCompleted, Payload: json.RawMessage(`{"outputs":{}}`)}, isInput("type")},
		{"squatting type", live.ID, interop.RunEvent{Type: "run.cancelling", Payload: json.RawMessage(`{}`)}, isInput("type")},
		{"payload not an object", live.ID, interop.RunEvent{Type: "acme.noted", Payload: json.RawMessage(`[]`)}, isInput("payload")},
		{"unknown run", tenantA + "/" + isolation.NewOpaque(), audit, func(err error) bool { return errors.Is(err, interop.ErrNotFound) }},
		{"finished run", done.ID, audit, func(err error) bool { return errors.Is(err, interop.ErrRunTerminal) }},
	}
	for _, tt := range tests {
		if err := s.AppendRunEvent(ctx, tt.runID, tt.ev); !tt.check(err) {
			t.Errorf("%s: AppendRunEvent = %v", tt.name, err)
		}
	}
	for _, r := range []interop.Run{done, suspended} {
		now, _ := s.GetRun(ctx, alice(), r.ID)
		if now.LastSequence != r.LastSequence {
			t.Errorf("a refused append changed run %s: last sequence %d -> %d", r.ID, r.LastSequence, now.LastSequence)
		}
	}
	if err := s.AppendRunEvent(ctx, live.ID, audit); err != nil {
		t.Fatalf("AppendRunEvent(negotiation.decided) = %v", err)
	}
	now, _ := s.GetRun(ctx, alice(), live.ID)
	if now.LastSequence != suspended.LastSequence+1 || now.Status != interop.StatusWaitingApproval {
		t.Errorf("after an audit event: last sequence %d, status %s; want %d, unchanged", now.LastSequence, now.Status, suspended.LastSequence+1)
	}
}

func isInput(field string) func(error) bool {
	return func(err error) bool {
		var ie *interop.InputError
		return errors.As(err, &ie) && ie.Field == field
	}
}
