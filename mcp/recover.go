package mcp

// Panics. A panic in code the mount calls — the host's RunStore,
// SubjectResolver or extension points, or the mount itself — is a bug,
// and must neither take the host's process down nor leave a client
// without an answer:
//
//   - a request recovers in serveHTTP: it is answered HTTP 500 with a
//     JSON-RPC -32603 "Internal error" naming the request id when known,
//     in MCP's shape (JSON-RPC 2.0 §5.1); an SSE answer already under way
//     (a listen or progress stream) gets that error response as its last
//     event instead; a JSON answer already written stays as it is. A run
//     the request owned is cancelled as for any request that ends without
//     handing it over (inflight.go);
//   - a native tool's CallTool recovers in mcp/ext, so its progress
//     stream is closed to the host before the error is sent;
//   - every goroutine the mount starts (listen watchers, the task input
//     guard, disconnect watches) recovers with recoverIn and ends only the
//     work it did: one listen stream ends with the error response, one
//     task's input is no longer guarded, one cancellation is not made.
//
// Each panic is logged once at error level with where it happened, its
// value and the stack, never the request's content or credentials.

import (
	"context"
	"net/http"
	"runtime/debug"
)

// recoverRequest, deferred by serveHTTP, answers a request whose handler
// panicked. http.ErrAbortHandler is net/http's way to abort a response
// on purpose and is passed on.
func (s *Server) recoverRequest(x *exchange) {
	v := recover()
	if v == nil {
		return
	}
	if v == http.ErrAbortHandler {
		panic(v)
	}
	s.logPanic(x.call.r.Context(), "request", v)
	s.writePanicked(x)
}

// recoverIn, deferred directly by a goroutine the mount starts, stops a
// panic there: the panic is logged and degrade, when set, ends the work the
// goroutine did.
func (s *Server) recoverIn(where string, degrade func()) {
	v := recover()
	if v == nil {
		return
	}
	s.logPanic(s.life, where, v)
	if degrade != nil {
		degrade()
	}
}

// logPanic logs a recovered panic once, at error level.
func (s *Server) logPanic(ctx context.Context, where string, v any) {
	s.log.ErrorContext(ctx, "mcp: recovered from a panic", "in", where, "panic", v, "stack", string(debug.Stack()))
}
