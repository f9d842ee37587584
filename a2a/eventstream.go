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
	o := &eventWriter{s: s, ctx: ctx, w: w, where: where, method: method, frames: frames}
	defer o.close()
	s.safeEvents(ctx, where, method, seq)(o.yield)
	if o.sw == nil && !o.stopped {
		// A sequence that ended before its first event (the Task) broke
		// the operation's contract.
		o.fail(errNoResult)
	}
}

// eventWriter is the state of one writeEvents. Its methods, not closures
// of writeEvents, do the work, so that the frame an open stream waits
// beneath stays small and what the stream holds is one small struct.
type eventWriter struct {
	s             *Server
	ctx           context.Context
	w             http.ResponseWriter
	where, method string
	frames        eventFrames
	sw            *eventstream.Writer // nil until the first event
	stopped       bool                // the stream ended before the sequence did
}

// yield writes one element of the sequence; it reports whether the stream
// goes on.
func (o *eventWriter) yield(ev wire.Event, err error) bool {
	if err == nil && ev == nil {
		err = errNoResult
	}
	if err != nil {
		o.fail(err)
		return o.stop()
	}
	frame, err := o.frames.event(ev)
	if err != nil {
		o.fail(err)
		return o.stop()
	}
	if o.sw == nil && !o.open() {
		return o.stop()
	}
	err = o.sw.Data(frame)
	o.frames.written()
	if err != nil {
		return o.stop() // the client is gone; stopping the sequence ends the stream
	}
	return true
}

func (o *eventWriter) stop() bool {
	o.stopped = true
	return false
}

// open starts the event stream with its first event at hand. When w cannot
// flush it answers the internal error instead and reports false.
func (o *eventWriter) open() bool {
	sw, ok := eventstream.Open(o.w, eventstream.Options{
		WriteTimeout: o.s.cfg.StreamWriteTimeout,
		Heartbeat:    o.s.heartbeat,
		OnPanic:      o.heartbeatPanicked,
	})
	if !ok {
		o.s.log.ErrorContext(o.ctx, "a2a: the ResponseWriter cannot flush; streaming is impossible", "method", o.method)
		o.frames.written()
		o.frames.refuse(o.w, internalError())
		return false
	}
	o.sw = sw
	return true
}

func (o *eventWriter) heartbeatPanicked(p any) {
	o.s.logPanic(o.ctx, o.where+" heartbeat", o.method, p)
}

// fail answers err: a plain error response before the stream started, its
// last event after.
func (o *eventWriter) fail(err error) {
	if o.ctx.Err() != nil {
		return // the client is gone; nobody reads an answer
	}
	e := o.s.failure(o.ctx, o.method, err)
	if o.sw == nil {
		o.frames.refuse(o.w, e)
		return
	}
	_ = o.sw.Data(o.frames.failure(e))
}

func (o *eventWriter) close() {
	if o.sw != nil {
		o.sw.Close()
	}
}
