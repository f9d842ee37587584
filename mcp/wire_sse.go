package mcp

// The binding's event streams: an answer sent as Server-Sent Events (a
// subscriptions/listen stream, a native tool call's progress and result),
// each message a JSON-RPC message framed as "event: message" (MCP
// 2026-07-28 streamable HTTP transport), each with its own write deadline.

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/wopinterop/wopinterop/mcp/internal/mount"
)

// contentTypeSSE is the media type of an SSE answer.
const contentTypeSSE = "text/event-stream"

// stream writes the SSE messages of one answer: a listen stream, or a
// native tool call's progress and result.
type stream struct {
	w     http.ResponseWriter
	rc    *http.ResponseController
	subID json.RawMessage
	// timeout is the write deadline of each message (StreamWriteTimeout).
	timeout time.Duration
	// h2: the deadline is cleared after each message (stream.write).
	h2 bool
}

// openStream answers r with an SSE stream (200, text/event-stream) and
// returns its writer. A stream lives long. No read deadline may end it:
// net/http lifts the server's ReadTimeout once a body is read to its end,
// which the mount always does, and openStream lifts any deadline again
// rather than depend on that. The server's WriteTimeout, which would end
// the stream at that age, is replaced by a deadline per message
// (stream.write).
func (s *Server) openStream(w http.ResponseWriter, r *http.Request, subID json.RawMessage) *stream {
	h := w.Header()
	h.Set("Content-Type", contentTypeSSE)
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	st := s.streamOn(w, r, subID)
	_ = st.rc.SetReadDeadline(time.Time{})
	w.WriteHeader(http.StatusOK)
	return st
}

// streamOn is the writer of an SSE answer to r already under way on w.
func (s *Server) streamOn(w http.ResponseWriter, r *http.Request, subID json.RawMessage) *stream {
	return &stream{w: w, rc: http.NewResponseController(w), subID: subID, timeout: s.opts.StreamWriteTimeout, h2: r.ProtoMajor >= 2}
}

// write sends b and flushes it within the stream's write deadline. A
// client that stopped reading makes it fail, and net/http then cancels the
// request's context: the stream ends as for a disconnect. On HTTP/1.x the
// deadline stays after the message, harmless (the next one sets its own
// first) and still bounding the answer's last bytes; an HTTP/2 deadline
// resets the stream when it passes, even an idle one, so there it is
// cleared until the next message.
func (st *stream) write(b []byte) bool {
	_ = st.rc.SetWriteDeadline(time.Now().Add(st.timeout))
	_, err := st.w.Write(b)
	if err == nil {
		err = st.rc.Flush()
	}
	if st.h2 {
		_ = st.rc.SetWriteDeadline(time.Time{})
	}
	return err == nil
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
	b := appendNotification([]byte(sseMessage), method, params)
	return st.write(append(b, "\n\n"...))
}

// sendError writes one JSON-RPC error response as an SSE message.
func (st *stream) sendError(id json.RawMessage, e *Error) bool {
	return st.sendRaw(appendError(nil, id, e))
}

// sendRaw writes one already encoded JSON-RPC message as an SSE message.
func (st *stream) sendRaw(msg []byte) bool {
	b := append([]byte(sseMessage), msg...)
	return st.write(append(b, "\n\n"...))
}

// sseMessage starts every SSE message of the mount.
const sseMessage = "event: message\ndata: "

func (st *stream) comment() bool { return st.write([]byte(": keep-alive\n\n")) }

// cancelled ends the stream with notifications/cancelled naming the
// listen request.
func (st *stream) cancelled(listenID json.RawMessage, reason string) {
	st.send(methodNotifyCancelled, struct {
		Meta      notificationMeta `json:"_meta"`
		RequestID json.RawMessage  `json:"requestId"`
		Reason    string           `json:"reason"`
	}{notificationMeta{SubscriptionID: st.subID}, listenID, reason})
}
