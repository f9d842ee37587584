package a2a

// Containing panics. The server calls host code on every request — the
// SubjectResolver, the RunStore, the AgentInventory, SelectWorkflow — and
// a panic in it, or in the server, must not drop the connection without an
// answer and without a trace (OpenWOP RFC 0211 §C: every answer on an
// interface URL is in the binding's shape). So:
//
//   - prepare, each JSON-RPC request (each element of a batch on its own)
//     and the opening of a stream recover a panic into the internal error
//     -32603 (HTTP+JSON 500 INTERNAL), answered with the request's id;
//   - a panic while a stream runs ends the stream with that error as its
//     last event (safeEvents);
//   - each handler recovers whatever is left: it answers the internal
//     error when nothing was written yet, and otherwise aborts the
//     response (http.ErrAbortHandler), so that a client never takes a cut
//     body for a whole one;
//   - every goroutine the server starts recovers too.
//
// Each panic is logged once, at error level, with where it happened and
// the stack. Its value is logged only when it is a Go runtime error: a
// host's panic value may hold anything, a credential included, and the
// request body is never logged.

import (
	"context"
	"fmt"
	"iter"
	"net/http"
	"runtime"
	"runtime/debug"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
)

// logPanic logs a recovered panic: where it happened (a binding's
// request, stream or goroutine), the A2A method when known, the panic's
// type and the stack.
func (s *Server) logPanic(ctx context.Context, where, method string, p any) {
	attrs := []any{"where", where, "method", method, "panicType", fmt.Sprintf("%T", p)}
	if re, ok := p.(runtime.Error); ok {
		attrs = append(attrs, "panic", re.Error())
	}
	attrs = append(attrs, "stack", string(debug.Stack()))
	s.log.ErrorContext(ctx, "a2a: recovered from a panic", attrs...)
}

// recoverInto, deferred, turns a panic of the function that deferred it
// into the internal error in *errp, logged once. http.ErrAbortHandler is
// net/http's own way to abort a response and is passed on.
func (s *Server) recoverInto(ctx context.Context, where, method string, errp *error) {
	if p := recover(); p != nil {
		s.contain(ctx, where, method, p)
		*errp = internalError()
	}
}

// contain logs a recovered panic p, unless it is http.ErrAbortHandler,
// net/http's own way to abort a response, which goes on.
func (s *Server) contain(ctx context.Context, where, method string, p any) {
	if p == http.ErrAbortHandler {
		panic(p)
	}
	s.logPanic(ctx, where, method, p)
}

// recoverResponse, deferred by a handler, answers a panic that nothing
// closer recovered: answer writes the internal error when the response has
// not started; otherwise the response is aborted.
func (s *Server) recoverResponse(ctx context.Context, where string, w *trackedWriter, answer func()) {
	p := recover()
	if p == nil {
		return
	}
	if p != http.ErrAbortHandler {
		s.logPanic(ctx, where, "", p)
	}
	if p == http.ErrAbortHandler || w.started {
		panic(http.ErrAbortHandler)
	}
	answer()
}

// trackedWriter is the ResponseWriter a handler answers through: it
// records whether the response has started, so that a recovered panic
// knows whether it can still be answered. Unwrap keeps
// http.ResponseController (flushes, deadlines) working through it.
type trackedWriter struct {
	http.ResponseWriter
	started bool
}

func (t *trackedWriter) WriteHeader(code int) {
	t.started = true
	t.ResponseWriter.WriteHeader(code)
}

func (t *trackedWriter) Write(b []byte) (int, error) {
	t.started = true
	return t.ResponseWriter.Write(b)
}

func (t *trackedWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }

// safeEvents is seq with a panic inside it — in the run's watch, a store
// read, the projection — turned into a final internal error, logged once.
// A panic of the consumer (in yield) is not seq's and goes on unchanged.
func (s *Server) safeEvents(ctx context.Context, where, method string, seq iter.Seq2[wire.Event, error]) iter.Seq2[wire.Event, error] {
	g := &guardedEvents{s: s, ctx: ctx, where: where, method: method, seq: seq}
	return g.all
}

// guardedEvents is the state of one safeEvents sequence. Its frames are
// small on purpose: an open stream's goroutine waits beneath them for as
// long as the task is idle, and the runtime shrinks that goroutine's stack
// back only when little of it is in use.
type guardedEvents struct {
	s              *Server
	ctx            context.Context
	where, method  string
	seq            iter.Seq2[wire.Event, error]
	yield          func(wire.Event, error) bool
	inYield, ended bool // ended: the consumer stopped the sequence
}

// all is the sequence; it is ranged over once.
func (g *guardedEvents) all(yield func(wire.Event, error) bool) {
	g.yield = yield
	defer g.recover()
	g.seq(g.pass)
}

func (g *guardedEvents) pass(ev wire.Event, err error) bool {
	g.inYield = true
	more := g.yield(ev, err)
	g.inYield = false
	g.ended = !more
	return more
}

func (g *guardedEvents) recover() {
	if g.inYield {
		return // the consumer's panic, on its way up
	}
	p := recover()
	if p == nil {
		return
	}
	g.s.contain(g.ctx, g.where, g.method, p)
	if !g.ended {
		g.yield(nil, internalError())
	}
}
