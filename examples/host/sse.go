package main

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/wopinterop/wopinterop/interop"
)

// maxLastEventID bounds the Last-Event-ID a client may send; a longer one
// cannot be an id this host issued and is treated as absent.
const maxLastEventID = 256

// hostEvents serves GET /host/events: the caller's tenant's host events as
// SSE (OpenWOP events.md §Host events). Durable events after Last-Event-ID are replayed when
// still retained; the stream then follows new events, with a keep-alive
// comment every heartbeat, until the client goes away or the host drains.
//
// The stream lives as long as the client reads it: each frame gets its
// own write deadline of EventWriteTimeout, where an http.Server
// WriteTimeout would be one deadline for the whole response, so a client
// that stops reading is dropped at its next frame instead of holding the
// handler. (The server's ReadTimeout does not cut it: net/http clears the
// read deadline once the request has no body left to read.)
func (s *server) hostEvents(w http.ResponseWriter, r *http.Request, sub interop.Subject) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	if r.Method == http.MethodHead {
		return // the headers are the whole answer; do not hold a stream open
	}
	rc := http.NewResponseController(w)
	lastID := r.Header.Get("Last-Event-ID")
	if len(lastID) > maxLastEventID || strings.ContainsAny(lastID, "\r\n") {
		lastID = ""
	}
	ctx, cancel := s.streamContext(r)
	// Subscribe before the 200 goes out, so that every event published
	// after the client saw the response headers reaches it.
	feed := s.store.SubscribeHostEvents(ctx, sub.Tenant, sub.Workspace, lastID)

	// The feed blocks between events, so a pump goroutine forwards it to
	// this loop, which interleaves heartbeats. The handler owns the pump:
	// it cancels it and waits for it before returning.
	events := make(chan interop.HostEvent)
	var pump sync.WaitGroup
	pump.Go(func() {
		defer close(events)
		for ev := range feed {
			select {
			case events <- ev:
			case <-ctx.Done():
				return
			}
		}
	})
	defer func() { cancel(); pump.Wait() }()

	// frameDeadline bounds the next write; a writer without deadlines
	// (tests' recorders) writes without one.
	frameDeadline := func() { _ = rc.SetWriteDeadline(time.Now().Add(s.eventWrite)) }
	frameDeadline()
	w.WriteHeader(http.StatusOK)
	if rc.Flush() != nil {
		return
	}
	tick := time.NewTicker(s.heartbeat)
	defer tick.Stop()
	for {
		var err error
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-events:
			if !ok {
				return
			}
			frameDeadline()
			err = writeSSE(w, ev)
			if errors.Is(err, errUnframeable) {
				s.log.WarnContext(ctx, "dropped a host event that cannot be framed", "type", strings.ToValidUTF8(ev.Type, "?"))
				continue
			}
		case <-tick.C:
			frameDeadline()
			_, err = io.WriteString(w, ": keep-alive\n\n")
		}
		if err == nil {
			err = rc.Flush()
		}
		if err != nil {
			return // the client is gone
		}
	}
}
