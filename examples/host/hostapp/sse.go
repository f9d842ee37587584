package hostapp

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/wopinterop/wopinterop/internal/eventstream"
	"github.com/wopinterop/wopinterop/interop"
)

// maxLastEventID bounds the Last-Event-ID a client may send; a longer one
// cannot be an id this host issued and is treated as absent.
const maxLastEventID = 256

// hostEvents serves GET /host/events: the caller's tenant's host events as
// SSE (OpenWOP events.md §Host events). Durable events after Last-Event-ID are replayed when
// still retained; the stream then follows new events, with a keep-alive
// comment after every heartbeat of idleness, until the client goes away
// or the host drains.
//
// The stream lives as long as the client reads it: each frame gets its
// own write deadline of EventWriteTimeout, where an http.Server
// WriteTimeout would be one deadline for the whole response, so a client
// that stops reading is dropped at its next frame instead of holding the
// handler. (The server's ReadTimeout does not cut it: net/http clears the
// read deadline once the request has no body left to read.)
func (s *server) hostEvents(w http.ResponseWriter, r *http.Request, sub interop.Subject) {
	if r.Method == http.MethodHead {
		eventstream.SetHeaders(w.Header())
		return // the headers are the whole answer; do not hold a stream open
	}
	lastID := r.Header.Get("Last-Event-ID")
	if len(lastID) > maxLastEventID || strings.ContainsAny(lastID, "\r\n") {
		lastID = ""
	}
	ctx, cancel := s.streamContext(r)
	defer cancel()
	// Subscribe before the 200 goes out, so that every event published
	// after the client saw the response headers reaches it.
	feed := s.store.SubscribeHostEvents(ctx, sub.Tenant, sub.Workspace, lastID)

	// The shared writer (internal/eventstream) gives each frame its own
	// write deadline and writes the keep-alive comments while the feed
	// blocks between events, so the feed is read right here.
	sw, ok := eventstream.Open(w, eventstream.Options{
		WriteTimeout: s.eventWrite,
		Heartbeat:    s.heartbeat,
		Comment:      " keep-alive",
		OnPanic: func(p any) {
			s.log.ErrorContext(ctx, "host events keep-alive panicked", "panicType", fmt.Sprintf("%T", p))
		},
	})
	if !ok {
		return
	}
	defer sw.Close()
	for ev := range feed {
		err := writeSSE(sw, ev)
		if errors.Is(err, errUnframeable) {
			s.log.WarnContext(ctx, "dropped a host event that cannot be framed", "type", strings.ToValidUTF8(ev.Type, "?"))
			continue
		}
		if err != nil {
			return // the client is gone
		}
	}
}
