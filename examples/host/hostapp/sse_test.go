package hostapp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/internal/golden"
	"github.com/wopinterop/wopinterop/interop"
)

// sseFrame is one parsed SSE frame; Comment holds a ":" line's text.
type sseFrame struct {
	Event, ID, Data, Comment string
	HasID                    bool
}

// sseStream is an open GET /host/events.
type sseStream struct {
	t      *testing.T
	resp   *http.Response
	frames chan sseFrame
	cancel context.CancelFunc
}

func (h *testHost) openSSE(key, lastEventID string) *sseStream {
	h.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	hr, _ := http.NewRequestWithContext(ctx, "GET", h.url+"/host/events", nil)
	hr.Header.Set("Authorization", "Bearer "+key)
	if lastEventID != "" {
		hr.Header.Set("Last-Event-ID", lastEventID)
	}
	resp, err := h.client.Do(hr)
	if err != nil {
		cancel()
		h.t.Fatal(err)
	}
	s := &sseStream{t: h.t, resp: resp, frames: make(chan sseFrame, 64), cancel: cancel}
	go func() {
		defer close(s.frames)
		sc := bufio.NewScanner(resp.Body)
		var f sseFrame
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				s.frames <- f
				f = sseFrame{}
			case strings.HasPrefix(line, ":"):
				f.Comment = strings.TrimSpace(line[1:])
			case strings.HasPrefix(line, "event: "):
				f.Event = line[len("event: "):]
			case strings.HasPrefix(line, "id: "):
				f.ID, f.HasID = line[len("id: "):], true
			case strings.HasPrefix(line, "data: "):
				f.Data = line[len("data: "):]
			}
		}
	}()
	h.t.Cleanup(s.close)
	return s
}

func (s *sseStream) close() { s.cancel(); s.resp.Body.Close() }

// next returns the next non-comment frame, failing after a timeout.
func (s *sseStream) next() sseFrame {
	s.t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case f, ok := <-s.frames:
			if !ok {
				s.t.Fatal("stream ended")
			}
			if f.Comment != "" && f.Event == "" {
				continue
			}
			return f
		case <-timeout:
			s.t.Fatal("no frame within 5s")
		}
	}
}

// none fails if a non-comment frame arrives within d.
func (s *sseStream) none(d time.Duration) {
	s.t.Helper()
	timeout := time.After(d)
	for {
		select {
		case f, ok := <-s.frames:
			if ok && f.Event != "" {
				s.t.Fatalf("unexpected frame %+v", f)
			}
			if !ok {
				return
			}
		case <-timeout:
			return
		}
	}
}

func publish(t *testing.T, h *testHost, tenant, typ string, d interop.Delivery, payload string) interop.HostEvent {
	t.Helper()
	ev := interop.HostEvent{
		EventID:  "hev-" + typ + "-" + tenant + "-" + string(d),
		Type:     typ,
		Delivery: d,
		Payload:  json.RawMessage(payload),
	}
	if err := h.store.PublishHostEvent(context.Background(), tenant, ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

func TestHostEventsStream(t *testing.T) {
	h := newTestHost(t)
	acme := h.openSSE(acmeKey, "")
	globex := h.openSSE(globexKey, "")
	if ct := acme.resp.Header.Get("Content-Type"); acme.resp.StatusCode != 200 || ct != "text/event-stream" {
		t.Fatalf("status %d, Content-Type %q", acme.resp.StatusCode, ct)
	}
	if acme.resp.Header.Get("OpenWOP-Version") != "2.0" || acme.resp.Header.Get("Cache-Control") != "no-cache" {
		t.Errorf("headers = %v", acme.resp.Header)
	}

	durable := publish(t, h, "acme", "demo.thing-happened", interop.DeliveryDurable, `{"n":1}`)
	ephemeral := publish(t, h, "acme", "demo.presence", interop.DeliveryEphemeral, `{}`)
	other := publish(t, h, "globex", "demo.thing-happened", interop.DeliveryDurable, `{"n":2}`)

	f := acme.next()
	if f.Event != durable.Type || !f.HasID || f.ID != durable.EventID {
		t.Errorf("durable frame = %+v", f)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(f.Data), &got); err != nil {
		t.Fatal(err)
	}
	if got["eventId"] != durable.EventID || got["delivery"] != "durable" || got["type"] != durable.Type {
		t.Errorf("data = %s", f.Data)
	}
	for _, k := range []string{"runId", "sequence"} {
		if _, ok := got[k]; ok {
			t.Errorf("host event carries %q (OpenWOP host-event.schema.json): %s", k, f.Data)
		}
	}
	if f := acme.next(); f.Event != ephemeral.Type || f.HasID {
		t.Errorf("ephemeral frame = %+v, want no id line", f)
	}
	// Tenant isolation: globex sees its event only, acme never sees it.
	if f := globex.next(); f.ID != other.EventID {
		t.Errorf("globex got %+v, want its own event", f)
	}
	globex.none(100 * time.Millisecond)
	acme.none(100 * time.Millisecond)
}

func TestHostEventsResume(t *testing.T) {
	h := newTestHost(t)
	first := publish(t, h, "acme", "demo.first", interop.DeliveryDurable, `{}`)
	second := publish(t, h, "acme", "demo.second", interop.DeliveryDurable, `{}`)

	// Last-Event-ID replays the durable events after it.
	s := h.openSSE(acmeKey, first.EventID)
	if f := s.next(); f.ID != second.EventID {
		t.Errorf("resumed with %+v, want %s", f, second.EventID)
	}
	s.none(50 * time.Millisecond)

	// Without it, only new events come; globex's Last-Event-ID naming
	// acme's event yields nothing of acme's.
	fresh := h.openSSE(acmeKey, "")
	fresh.none(50 * time.Millisecond)
	g := h.openSSE(globexKey, first.EventID)
	g.none(100 * time.Millisecond)
}

func TestHostEventsHeartbeatAndDrain(t *testing.T) {
	h := newTestHost(t, func(c *config) { c.Heartbeat = 20 * time.Millisecond })
	s := h.openSSE(acmeKey, "")
	select {
	case f := <-s.frames:
		if f.Comment != "keep-alive" || f.Event != "" {
			t.Errorf("first frame = %+v, want a keep-alive comment", f)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no heartbeat")
	}
	h.drain()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case _, ok := <-s.frames:
			if !ok {
				return // the stream ended
			}
		case <-deadline:
			t.Fatal("the stream outlived the drain")
		}
	}
}

func TestHostEventsRefusals(t *testing.T) {
	h := newTestHost(t)
	r := h.get("/host/events", "")
	wantError(t, r, http.StatusUnauthorized, codeUnauthenticated)
	if r.Header.Get("WWW-Authenticate") != "Bearer" {
		t.Errorf("WWW-Authenticate = %q", r.Header.Get("WWW-Authenticate"))
	}
	wantError(t, h.do(req{Method: "POST", Path: "/host/events", Key: acmeKey}), http.StatusNotFound, codeNotFound)

	// HEAD answers the stream's headers and does not hold the request open.
	head := h.do(req{Method: "HEAD", Path: "/host/events", Key: acmeKey})
	if head.Status != http.StatusOK || head.Header.Get("Content-Type") != "text/event-stream" {
		t.Errorf("HEAD = %d %v", head.Status, head.Header)
	}
}

func TestWriteSSEGolden(t *testing.T) {
	at := time.Date(2026, 10, 5, 12, 0, 0, 0, time.FixedZone("x", 3600))
	var b bytes.Buffer
	for _, ev := range []interop.HostEvent{
		{EventID: "hev-1", Type: "example.thing-happened", Timestamp: at, Delivery: interop.DeliveryDurable, WorkspaceID: "ws-1", Payload: json.RawMessage(`{"thingId":"t-1"}`)},
		{EventID: "hev-2", Type: "channel.presence", Timestamp: at, Delivery: interop.DeliveryEphemeral},
	} {
		if err := writeSSE(&b, ev); err != nil {
			t.Fatal(err)
		}
	}
	golden.Check(t, "host-events.sse", b.Bytes())

	for _, ev := range []interop.HostEvent{
		{EventID: "a\nb", Type: "x.y", Delivery: interop.DeliveryDurable},
		{EventID: "a", Type: "x.y\r", Delivery: interop.DeliveryDurable},
	} {
		var w bytes.Buffer
		if err := writeSSE(&w, ev); err != errUnframeable || w.Len() != 0 {
			t.Errorf("writeSSE(%q, %q) = %v, wrote %q", ev.Type, ev.EventID, err, w.String())
		}
	}
}

// goldenBase stands in the golden files for the base URL of the host under
// test, whose port changes with every run.
const goldenBase = "http://HOST"
