package negotiate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/internal/sharedspec"
	"github.com/wopinterop/wopinterop/interop"
)

// recordingSink is an EventSink that keeps what it receives.
type recordingSink struct {
	mu        sync.Mutex
	runEvents map[string][]interop.RunEvent
	host      []hostEvent
	fail      error
	block     chan struct{}
}

type hostEvent struct {
	tenant string
	ev     interop.HostEvent
}

func newSink() *recordingSink { return &recordingSink{runEvents: map[string][]interop.RunEvent{}} }

func (s *recordingSink) AppendRunEvent(_ context.Context, runID string, ev interop.RunEvent) error {
	if s.block != nil {
		<-s.block
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	s.runEvents[runID] = append(s.runEvents[runID], ev)
	return nil
}

func (s *recordingSink) PublishHostEvent(_ context.Context, tenant string, ev interop.HostEvent) error {
	if s.block != nil {
		<-s.block
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	s.host = append(s.host, hostEvent{tenant, ev})
	return nil
}

func (s *recordingSink) counts() (run, host int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, evs := range s.runEvents {
		run += len(evs)
	}
	return run, len(s.host)
}

func TestAuditorRoutesRecords(t *testing.T) {
	sink := newSink()
	a := NewAuditor(sink, AuditorOptions{})
	a.Start()
	p := a2aPolicy(t, true)
	ctx := context.Background()
	inRun := p.Inbound("1.0", Peer{Authenticated: true})
	runless := p.Inbound("0.2", Peer{Authenticated: true})
	anon := p.Inbound("", Peer{})
	for _, r := range []struct {
		d Decision
		s Scope
	}{
		{inRun, Scope{RunID: "acme/RUN0000000000000000000", Tenant: "acme"}},
		{runless, Scope{Tenant: "acme", Workspace: "ws-1"}},
		{anon, Scope{}},
	} {
		if err := a.Record(ctx, r.d, r.s); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	evs := sink.runEvents["acme/RUN0000000000000000000"]
	if len(evs) != 1 || evs[0].Type != interop.EventNegotiationDecided || string(evs[0].Payload) != string(inRun.Record()) {
		t.Fatalf("run events = %+v", evs)
	}
	if len(sink.host) != 2 {
		t.Fatalf("host events = %+v", sink.host)
	}
	h := sink.host[0]
	if h.tenant != "acme" || h.ev.Type != EventType || h.ev.Delivery != interop.DeliveryDurable || h.ev.WorkspaceID != "ws-1" ||
		string(h.ev.Payload) != string(runless.Record()) || !h.ev.Timestamp.Equal(runless.At) || len(h.ev.EventID) < 20 {
		t.Fatalf("host event = %+v", h)
	}
	if sink.host[1].tenant != "" {
		t.Fatalf("unauthenticated record went to tenant %q", sink.host[1].tenant)
	}
	if sink.host[0].ev.EventID == sink.host[1].ev.EventID {
		t.Fatal("event ids repeat")
	}
}

// TestHostEventValidatesAgainstUpstreamSchema checks the durable host event
// against host-event.schema.json. The stored copy refers to ids.schema.json
// and channel-presence-payload.schema.json, which shared/spec does not hold;
// minimal stand-ins are supplied for them.
func TestHostEventValidatesAgainstUpstreamSchema(t *testing.T) {
	base := "https://openwop.dev/spec/v2/"
	s := sharedspec.Schema(t, "openwop-v2/schemas/v2/host-event.schema.json", map[string]any{
		base + "ids.schema.json":                      sharedspec.JSON(t, `{"$defs":{"eventId":{"type":"string","minLength":1},"workspaceId":{"type":"string","minLength":1}}}`),
		base + "channel-presence-payload.schema.json": sharedspec.JSON(t, `{"type":"object"}`),
	}, nil)
	sink := newSink()
	a := NewAuditor(sink, AuditorOptions{Synchronous: true})
	for _, d := range allDecisions(t) {
		if err := a.Record(context.Background(), d, Scope{Tenant: "acme", Workspace: "ws-1"}); err != nil {
			t.Fatal(err)
		}
	}
	validatePayload := schemaFor(t)
	for _, h := range sink.host {
		doc, err := json.Marshal(h.ev)
		if err != nil {
			t.Fatal(err)
		}
		sharedspec.Validate(t, s, doc)
		validatePayload(h.ev.Payload)
	}
	if len(sink.host) != len(allDecisions(t)) {
		t.Fatalf("%d host events for %d decisions", len(sink.host), len(allDecisions(t)))
	}
}

func TestSynchronousAuditorReturnsSinkError(t *testing.T) {
	sink := newSink()
	sink.fail = errors.New("disk full")
	a := NewAuditor(sink, AuditorOptions{Synchronous: true})
	err := a.Record(context.Background(), a2aPolicy(t, true).Inbound("", Peer{}), Scope{Tenant: "acme"})
	if !errors.Is(err, sink.fail) {
		t.Fatalf("err = %v", err)
	}
}

// TestAuditorLosesNothing: concurrent records with a small queue and a
// slow but working sink all arrive when Record may wait for room, including
// those recorded after Close.
func TestAuditorLosesNothing(t *testing.T) {
	sink := newSink()
	sink.block = make(chan struct{})
	a := NewAuditor(sink, AuditorOptions{QueueSize: 2, EnqueueWait: time.Minute})
	a.Start()
	p := a2aPolicy(t, true)
	const n = 200
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			scope := Scope{Tenant: "acme"}
			if i%2 == 0 {
				scope.RunID = "acme/RUN0000000000000000000"
			}
			if err := a.Record(context.Background(), p.Inbound("1.0", Peer{Authenticated: true}), scope); err != nil {
				t.Error(err)
			}
		}()
	}
	time.Sleep(10 * time.Millisecond) // let the queue fill while the sink blocks
	close(sink.block)
	wg.Wait()
	if err := a.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := a.Record(context.Background(), p.Inbound("", Peer{}), Scope{}); err != nil {
		t.Fatal(err)
	}
	run, host := sink.counts()
	if run != n/2 || host != n/2+1 {
		t.Fatalf("delivered run=%d host=%d, want %d and %d", run, host, n/2, n/2+1)
	}
	if st := a.Stats(); st != (AuditStats{Delivered: n}) {
		t.Fatalf("stats = %+v, want %d delivered and nothing else", st, n)
	}
}

func TestRecordHonoursContextWhenQueueFull(t *testing.T) {
	sink := newSink()
	sink.block = make(chan struct{})
	a := NewAuditor(sink, AuditorOptions{QueueSize: 1, EnqueueWait: time.Minute})
	a.Start()
	defer func() {
		close(sink.block)
		if err := a.Close(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	d := a2aPolicy(t, true).Inbound("", Peer{})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	var err error
	for range 5 {
		if err = a.Record(ctx, d, Scope{}); err != nil {
			break
		}
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want deadline exceeded once the queue is full", err)
	}
	if st := a.Stats(); st.Dropped != 1 {
		t.Fatalf("stats = %+v, want the abandoned record counted as dropped", st)
	}
}

type discardSink struct{}

func (discardSink) AppendRunEvent(context.Context, string, interop.RunEvent) error    { return nil }
func (discardSink) PublishHostEvent(context.Context, string, interop.HostEvent) error { return nil }

// terminalSink refuses run events as a store does once a run has ended.
type terminalSink struct{ *recordingSink }

func (terminalSink) AppendRunEvent(context.Context, string, interop.RunEvent) error {
	return fmt.Errorf("append: %w", interop.ErrRunTerminal)
}

func TestRecordOnFinishedRunBecomesHostEvent(t *testing.T) {
	sink := terminalSink{newSink()}
	a := NewAuditor(sink, AuditorOptions{Synchronous: true})
	d := a2aPolicy(t, true).Inbound("1.0", Peer{Authenticated: true})
	if err := a.Record(context.Background(), d, Scope{RunID: "acme/RUN0000000000000000000", Tenant: "acme"}); err != nil {
		t.Fatal(err)
	}
	if len(sink.host) != 1 || sink.host[0].tenant != "acme" || string(sink.host[0].ev.Payload) != string(d.Record()) {
		t.Fatalf("host events = %+v", sink.host)
	}
}

// Runless records get host-event ids that are unique within an auditor and
// across auditors sharing a sink, and well-formed (OpenWOP
// ids.schema.json#/$defs/eventId).
func TestAuditorEventIDsUniqueAndWellFormed(t *testing.T) {
	eventID := regexp.MustCompile(`^[A-Za-z0-9._~-]{16,128}$`)
	sink := newSink()
	d := a2aPolicy(t, true).Inbound("1.0", Peer{Authenticated: true})
	for range 2 {
		a := NewAuditor(sink, AuditorOptions{Synchronous: true})
		for range 100 {
			if err := a.Record(context.Background(), d, Scope{Tenant: "acme"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	seen := map[string]bool{}
	for _, h := range sink.host {
		id := h.ev.EventID
		if !eventID.MatchString(id) || !strings.HasPrefix(id, "hev-") || seen[id] {
			t.Fatalf("event id %q: malformed or repeated", id)
		}
		seen[id] = true
	}
	if len(seen) != 200 {
		t.Fatalf("%d ids, want 200", len(seen))
	}
}
