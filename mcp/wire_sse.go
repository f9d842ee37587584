package mcp

// The binding's event streams: an answer sent as Server-Sent Events (a
// subscriptions/listen stream, a native tool call's progress and result),
// each message a JSON-RPC message framed as "event: message" (MCP
// 2026-07-28 streamable HTTP transport), written through the shared
// writer (internal/eventstream), which gives each message its own write
// deadline and an idle listen stream its keep-alive comments.

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/wopinterop/wopinterop/internal/eventstream"
	"github.com/wopinterop/wopinterop/mcp/internal/mount"
)

// contentTypeSSE is the media type of an SSE answer.
const contentTypeSSE = eventstream.ContentType

// keepAliveInterval is how long a listen stream may be idle before a
// comment keeps intermediaries from closing it.
const keepAliveInterval = 25 * time.Second

// sseEvent names every SSE message of the mount.
const sseEvent = "message"

// stream writes the SSE messages of one answer: a listen stream, or a
// native tool call's progress and result.
type stream struct {
	// sw is nil when the ResponseWriter cannot flush: nothing can be
	// streamed, and every send reports failure.
	sw    *eventstream.Writer
	subID json.RawMessage
}

// openStream answers with an SSE stream (200, text/event-stream) and
// returns its writer; keepAlive > 0 writes a comment after that much
// idleness. A stream lives long: no read deadline may end it, and the
// server's WriteTimeout, which would end it at that age, is replaced by a
// deadline per message (internal/eventstream). The binding closes it once
// the answer is written.
func (s *Server) openStream(w http.ResponseWriter, subID json.RawMessage, keepAlive time.Duration) *stream {
	sw, ok := eventstream.Open(w, s.streamOptions(keepAlive))
	if !ok {
		s.log.Error("mcp: the ResponseWriter cannot flush; an SSE answer is impossible")
		return &stream{subID: subID}
	}
	return &stream{sw: sw, subID: subID}
}

// streamOn is the writer of an SSE answer already under way on w.
func (s *Server) streamOn(w http.ResponseWriter) *stream {
	return &stream{sw: eventstream.Attach(w, s.streamOptions(0))}
}

func (s *Server) streamOptions(keepAlive time.Duration) eventstream.Options {
	return eventstream.Options{
		WriteTimeout: s.opts.StreamWriteTimeout,
		Heartbeat:    keepAlive,
		Comment:      " keep-alive",
		OnPanic:      func(p any) { s.logPanic(s.life, "stream keep-alive", p) },
	}
}

// close ends the stream's writes (its keep-alive included).
func (st *stream) close() {
	if st.sw != nil {
		st.sw.Close()
	}
}

// send writes one JSON-RPC notification as an SSE message.
func (st *stream) send(method string, params any) bool {
	p, err := mount.Marshal(params)
	if err != nil {
		return false
	}
	return st.notify(method, p)
}

// notify writes one JSON-RPC notification with encoded params as an SSE
// message.
func (st *stream) notify(method string, params []byte) bool {
	return st.sendRaw(appendNotification(nil, method, params))
}

// sendError writes one JSON-RPC error response as an SSE message.
func (st *stream) sendError(id json.RawMessage, e *Error) bool {
	return st.sendRaw(appendError(nil, id, e))
}

// sendRaw writes one already encoded JSON-RPC message as an SSE message.
// A client that stopped reading makes it fail after StreamWriteTimeout,
// and net/http then cancels the request's context: the stream ends as for
// a disconnect.
func (st *stream) sendRaw(msg []byte) bool {
	return st.sw != nil && st.sw.Event(sseEvent, msg) == nil
}

// cancelled ends the stream with notifications/cancelled naming the
// listen request.
func (st *stream) cancelled(listenID json.RawMessage, reason string) {
	st.send(methodNotifyCancelled, struct {
		Meta      notificationMeta `json:"_meta"`
		RequestID json.RawMessage  `json:"requestId"`
		Reason    string           `json:"reason"`
	}{notificationMeta{SubscriptionID: st.subID}, listenID, reason})
}
