package a2a

// Answering a streaming method, for both bindings: the operation's events
// as a text/event-stream (A2A 1.0.1 §9.4.2; OpenWOP interop map,
// a2a.operations), each encoded by the binding and written as an unnamed
// "data:" event through the shared writer (internal/eventstream): A2A
// streams need no event names and no ids, since a client re-attaches with
// SubscribeToTask rather than Last-Event-ID. The stream starts with the
// first event, so a refusal before it is a plain error response of the
// binding; an error after it is the stream's last event, a panic in the
// sequence included (safeEvents). It ends when the sequence does or the
// client goes away (the request context ends, or a write fails — after
// Options.StreamWriteTimeout when the client stopped reading — and the
// sequence is abandoned).

import (
	"context"
	"iter"
	"net/http"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/internal/eventstream"
)

// sseHeartbeat is how long a stream may be idle before a keep-alive
// comment: short enough for common proxy idle timeouts (30–60 s), long
// enough to cost nothing.
const sseHeartbeat = 15 * time.Second

// eventFrames is a binding's encoding of an event stream.
type eventFrames interface {
	// event is the frame of one event.
	event(ev wire.Event) ([]byte, error)
	// written says the frame event returned was written (or failed to
	// be): what it held may be released.
	written()
	// failure is the frame of an error that ends a started stream.
	failure(e *Error) []byte
	// refuse answers e as a plain response: nothing was streamed.
	refuse(w http.ResponseWriter, e *Error)
}

// writeEvents answers a streaming method with the events of seq, encoded
// by frames. where names the binding's stream in logs.
func (s *Server) writeEvents(ctx context.Context, w http.ResponseWriter, where, method string, seq iter.Seq2[wire.Event, error], frames eventFrames) {
	var sw *eventstream.Writer
	fail := func(err error) {
		if ctx.Err() != nil {
			return // the client is gone; nobody reads an answer
		}
		e := s.failure(ctx, method, err)
		if sw == nil {
			frames.refuse(w, e)
			return
		}
		_ = sw.Data(frames.failure(e))
	}
	for ev, err := range s.safeEvents(ctx, where, method, seq) {
		if err == nil && ev == nil {
			err = errNoResult
		}
		if err != nil {
			fail(err)
			return
		}
		frame, err := frames.event(ev)
		if err != nil {
			fail(err)
			return
		}
		if sw == nil {
			var ok bool
			if sw, ok = eventstream.Open(w, eventstream.Options{
				WriteTimeout: s.cfg.StreamWriteTimeout,
				Heartbeat:    sseHeartbeat,
				OnPanic:      func(p any) { s.logPanic(ctx, where+" heartbeat", method, p) },
			}); !ok {
				s.log.ErrorContext(ctx, "a2a: the ResponseWriter cannot flush; streaming is impossible", "method", method)
				frames.written()
				frames.refuse(w, internalError())
				return
			}
			defer sw.Close()
		}
		err = sw.Data(frame)
		frames.written()
		if err != nil {
			return // the client is gone; leaving the loop stops the sequence
		}
	}
	if sw == nil {
		// A sequence that ended before its first event (the Task) broke
		// the operation's contract.
		fail(errNoResult)
	}
}
