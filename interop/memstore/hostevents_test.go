package memstore

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/isolation"
)

func durable(typ, id string) interop.HostEvent {
	return interop.HostEvent{EventID: id, Type: typ, Delivery: interop.DeliveryDurable, Payload: json.RawMessage(`{}`)}
}

func ephemeral(typ string) interop.HostEvent {
	return interop.HostEvent{Type: typ, Delivery: interop.DeliveryEphemeral, Payload: json.RawMessage(`{}`)}
}

func publish(t *testing.T, s *Store, tenant string, evs ...interop.HostEvent) {
	t.Helper()
	for _, ev := range evs {
		if err := s.PublishHostEvent(testCtx(t), tenant, ev); err != nil {
			t.Fatalf("PublishHostEvent(%s): %v", ev.Type, err)
		}
	}
}

const markerPrefix = "hev-marker-"

// subscription ranges over a host-event feed on its own goroutine.
type subscription struct {
	events chan interop.HostEvent
	done   chan struct{}
	cancel context.CancelFunc
}

func subscribe(t *testing.T, s *Store, tenant, workspace, lastEventID string) *subscription {
	t.Helper()
	ctx, cancel := context.WithCancel(testCtx(t))
	sub := &subscription{events: make(chan interop.HostEvent, 100), done: make(chan struct{}), cancel: cancel}
	seq := s.SubscribeHostEvents(ctx, tenant, workspace, lastEventID)
	go func() {
		defer close(sub.done)
		for ev := range seq {
			sub.events <- ev
		}
	}()
	t.Cleanup(func() { cancel(); <-sub.done })
	return sub
}

// next returns the next event's id (or type for ephemeral events).
func (sub *subscription) next(t *testing.T) string {
	t.Helper()
	select {
	case ev := <-sub.events:
		if ev.Delivery == interop.DeliveryEphemeral {
			return ev.Type
		}
		return ev.EventID
	case <-time.After(5 * time.Second):
		t.Fatal("no host event arrived")
		return ""
	}
}

// quiet asserts that nothing (more) is delivered. It first publishes a
// marker durable event visible to every subscriber of tenant and waits for
// it, so that "nothing" is decided after the feed caught up, not by timing.
func (sub *subscription) quiet(t *testing.T, s *Store, tenant string) {
	t.Helper()
	marker := markerPrefix + isolation.NewOpaque()
	publish(t, s, tenant, durable("test.marker", marker))
	for {
		got := sub.next(t)
		if got == marker {
			return
		}
		if !strings.HasPrefix(got, markerPrefix) { // other checks' markers are fine
			t.Fatalf("unexpected host event %q before the marker", got)
		}
	}
}

func TestHostEventsLiveDeliveryInPublicationOrder(t *testing.T) {
	s := newStore(t)
	sub := subscribe(t, s, tenantA, "", "")
	publish(t, s, tenantA,
		durable("test.one", "d1"),
		ephemeral("test.blink"),
		durable("test.two", "d2"),
		ephemeral("test.blank"),
	)
	var got []string
	for range 4 {
		got = append(got, sub.next(t))
	}
	if diff := cmp.Diff([]string{"d1", "test.blink", "d2", "test.blank"}, got); diff != "" {
		t.Fatalf("delivery order (-want +got):\n%s", diff)
	}
}

func TestHostEventsTenantIsolation(t *testing.T) {
	s := newStore(t)
	subA := subscribe(t, s, tenantA, "", "")
	subB := subscribe(t, s, tenantB, "", "")
	publish(t, s, tenantA, durable("test.a", "a1"), ephemeral("test.a-blink"))
	publish(t, s, tenantB, durable("test.b", "b1"))
	if got := subA.next(t); got != "a1" {
		t.Fatalf("A got %s", got)
	}
	if got := subA.next(t); got != "test.a-blink" {
		t.Fatalf("A got %s", got)
	}
	if got := subB.next(t); got != "b1" {
		t.Fatalf("B got %s", got)
	}
	subA.quiet(t, s, tenantA)
	subB.quiet(t, s, tenantB)
}

func TestHostEventsWorkspaceFilter(t *testing.T) {
	s := newStore(t)
	ws1 := subscribe(t, s, tenantA, "ws-1", "")
	ws2 := subscribe(t, s, tenantA, "ws-2", "")
	whole := subscribe(t, s, tenantA, "", "")
	inWS := func(ev interop.HostEvent, ws string) interop.HostEvent { ev.WorkspaceID = ws; return ev }
	publish(t, s, tenantA,
		inWS(durable("test.x", "in-ws1"), "ws-1"),
		inWS(durable("test.x", "in-ws2"), "ws-2"),
		durable("test.x", "tenant-wide"),
		inWS(ephemeral("test.ws1-blink"), "ws-1"),
	)
	tests := []struct {
		name string
		sub  *subscription
		want []string
	}{
		{"ws-1", ws1, []string{"in-ws1", "tenant-wide", "test.ws1-blink"}},
		{"ws-2", ws2, []string{"in-ws2", "tenant-wide"}},
		// A tenant-wide subscriber is not in any workspace: events naming one
		// are not for it.
		{"whole tenant", whole, []string{"tenant-wide"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for range tc.want {
				got = append(got, tc.sub.next(t))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("delivered (-want +got):\n%s", diff)
			}
			tc.sub.quiet(t, s, tenantA)
		})
	}
}

func TestHostEventsLastEventIDResume(t *testing.T) {
	tests := []struct {
		name        string
		lastEventID string
		want        []string // before the live event
	}{
		{name: "resume after e1", lastEventID: "e1", want: []string{"e2", "e3"}},
		{name: "resume after the newest", lastEventID: "e3"},
		{name: "empty: only new events", lastEventID: ""},
		{name: "unknown id: only new events", lastEventID: "hev-never-issued"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			publish(t, s, tenantA, durable("test.x", "e1"), durable("test.x", "e2"), ephemeral("test.gone"), durable("test.x", "e3"))
			sub := subscribe(t, s, tenantA, "", tc.lastEventID)
			live := "live"
			publish(t, s, tenantA, durable("test.live", live))
			var got []string
			for range len(tc.want) + 1 {
				got = append(got, sub.next(t))
			}
			want := append(tc.want, live)
			// The ephemeral event was published before this subscription and
			// is never redelivered.
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("delivered (-want +got):\n%s", diff)
			}
			sub.quiet(t, s, tenantA)
		})
	}
}

func TestHostEventsEphemeralNeverRedelivered(t *testing.T) {
	s := newStore(t)
	first := subscribe(t, s, tenantA, "", "")
	publish(t, s, tenantA, durable("test.x", "before"), ephemeral("test.blink"), durable("test.x", "after"))
	for _, want := range []string{"before", "test.blink", "after"} {
		if got := first.next(t); got != want {
			t.Fatalf("first subscriber got %s, want %s", got, want)
		}
	}
	first.cancel()
	// Reconnecting from before the ephemeral event replays the durable
	// events only.
	again := subscribe(t, s, tenantA, "", "before")
	if got := again.next(t); got != "after" {
		t.Fatalf("reconnect got %s, want after", got)
	}
	again.quiet(t, s, tenantA)
	for _, ev := range s.DurableHostEvents(tenantA) {
		if ev.Delivery != interop.DeliveryDurable {
			t.Fatalf("an ephemeral event was stored: %+v", ev)
		}
	}
}

func TestHostEventsRetention(t *testing.T) {
	s := newStore(t, WithHostEventRetention(3))
	for _, id := range []string{"e1", "e2", "e3", "e4", "e5"} {
		publish(t, s, tenantA, durable("test.x", id))
	}
	var kept []string
	for _, ev := range s.DurableHostEvents(tenantA) {
		kept = append(kept, ev.EventID)
	}
	if diff := cmp.Diff([]string{"e3", "e4", "e5"}, kept); diff != "" {
		t.Fatalf("retained (-want +got):\n%s", diff)
	}
	// e3 is retained: resumable. e1 was evicted: treated as unknown.
	sub := subscribe(t, s, tenantA, "", "e3")
	if a, b := sub.next(t), sub.next(t); a != "e4" || b != "e5" {
		t.Fatalf("resume after e3 got %s, %s", a, b)
	}
	sub.quiet(t, s, tenantA)
	evicted := subscribe(t, s, tenantA, "", "e1")
	evicted.quiet(t, s, tenantA)
}

func TestHostEventsSlowSubscriberSkipsEvictedEvents(t *testing.T) {
	s := newStore(t, WithHostEventRetention(2))
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	seq := s.SubscribeHostEvents(ctx, tenantA, "", "")
	publish(t, s, tenantA, durable("test.x", "e1"), durable("test.x", "e2"), durable("test.x", "e3"))
	var got []string
	for ev := range seq {
		got = append(got, ev.EventID)
		if len(got) == 2 {
			break
		}
	}
	if diff := cmp.Diff([]string{"e2", "e3"}, got); diff != "" {
		t.Fatalf("slow subscriber (-want +got):\n%s", diff)
	}
	// The sequence may be ranged once.
	for ev := range seq {
		t.Fatalf("second range yielded %+v", ev)
	}
}

func TestHostEventsEmptyTenant(t *testing.T) {
	s := newStore(t)
	ctx, cancel := context.WithCancel(testCtx(t))
	ended := make(chan int)
	go func() {
		n := 0
		for range s.SubscribeHostEvents(ctx, "", "", "") {
			n++
		}
		ended <- n
	}()
	publish(t, s, "", durable("negotiation.decided", "anon-1"), ephemeral("test.blink"))
	kept := s.DurableHostEvents("")
	if len(kept) != 1 || kept[0].EventID != "anon-1" {
		t.Fatalf("empty-tenant durable events kept: %+v", kept)
	}
	cancel()
	if n := <-ended; n != 0 {
		t.Fatalf("empty-tenant subscriber received %d events", n)
	}
}

func TestPublishHostEventFillsAndValidates(t *testing.T) {
	at := time.Date(2026, 7, 28, 9, 30, 0, 0, time.UTC)
	s := newStore(t, WithClock(func() time.Time { return at }))
	payload := json.RawMessage(`{"k":"v"}`)
	publish(t, s, tenantA, interop.HostEvent{Type: "negotiation.decided", Delivery: interop.DeliveryDurable, Payload: payload})
	publish(t, s, tenantA, interop.HostEvent{Type: "test.no-payload", Delivery: interop.DeliveryDurable})
	payload[1] = 'X'
	got := s.DurableHostEvents(tenantA)
	if len(got) != 2 {
		t.Fatalf("%d events kept", len(got))
	}
	ev := got[0]
	if !strings.HasPrefix(ev.EventID, "hev-") || !isolation.ValidOpaque(strings.TrimPrefix(ev.EventID, "hev-")) {
		t.Fatalf("EventID = %q", ev.EventID)
	}
	if !ev.Timestamp.Equal(at) || string(ev.Payload) != `{"k":"v"}` {
		t.Fatalf("event = %+v", ev)
	}
	if string(got[1].Payload) != `{}` {
		t.Fatalf("nil payload stored as %s", got[1].Payload)
	}
	given := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	publish(t, s, tenantA, interop.HostEvent{EventID: "mine", Type: "test.x", Delivery: interop.DeliveryDurable, Timestamp: given})
	if last := s.DurableHostEvents(tenantA)[2]; last.EventID != "mine" || !last.Timestamp.Equal(given) {
		t.Fatalf("given id/timestamp replaced: %+v", last)
	}

	tests := []struct {
		name  string
		ev    interop.HostEvent
		field string
	}{
		{"no type", interop.HostEvent{Delivery: interop.DeliveryDurable}, "type"},
		{"bad type", interop.HostEvent{Type: "NoDot", Delivery: interop.DeliveryDurable}, "type"},
		{"no delivery", interop.HostEvent{Type: "test.x"}, "delivery"},
		{"bad delivery", interop.HostEvent{Type: "test.x", Delivery: "sometimes"}, "delivery"},
		{"array payload", interop.HostEvent{Type: "test.x", Delivery: interop.DeliveryDurable, Payload: json.RawMessage(`[1]`)}, "payload"},
		{"invalid payload", interop.HostEvent{Type: "test.x", Delivery: interop.DeliveryDurable, Payload: json.RawMessage(`{"a":`)}, "payload"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(s.DurableHostEvents(tenantA))
			wantInputError(t, s.PublishHostEvent(testCtx(t), tenantA, tc.ev), tc.field)
			if after := len(s.DurableHostEvents(tenantA)); after != before {
				t.Fatal("refused event was stored")
			}
		})
	}
}

func TestHostEventSubscriptionReleasedWithContext(t *testing.T) {
	s := newStore(t)
	ctx, cancel := context.WithCancel(testCtx(t))
	_ = s.SubscribeHostEvents(ctx, tenantA, "", "") // never ranged over
	count := func() int {
		tn := s.tenant(tenantA)
		tn.mu.RLock()
		defer tn.mu.RUnlock()
		return len(tn.host.subs)
	}
	if count() != 1 {
		t.Fatalf("%d subscribers registered, want 1", count())
	}
	cancel()
	deadline := time.Now().Add(5 * time.Second)
	for count() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("subscription not released after ctx was cancelled")
		}
		time.Sleep(time.Millisecond)
	}
}

// FuzzHostEventType: the hand-written check of the host-event type
// grammar accepts exactly what the schema's pattern does.
func FuzzHostEventType(f *testing.F) {
	pattern := regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*\.[a-z][a-z0-9]*(-[a-z0-9]+)*$`)
	for _, s := range []string{
		"negotiation.decided", "a.b", "a-1.b-2-c", "", ".", "a.", ".b", "a..b", "a.b.c", "A.b", "1a.b",
		"a-.b", "a--b.c", "a.b-", "-a.b", "a.b\n", "a.b\x00", "é.b", "a_b.c", "a.b c",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, typ string) {
		if got, want := validHostEventType(typ), pattern.MatchString(typ); got != want {
			t.Fatalf("validHostEventType(%q) = %v, the pattern says %v", typ, got, want)
		}
	})
}
