package a2a

// Shutdown. An A2A task is the host's durable run, so a request need not
// hold the run up to answer: when the host drains, a blocking SendMessage
// answers with the Task as it is (the client reads the rest with GetTask),
// a stream ends after what it sent, and a request that arrives later is
// refused in its binding's shape. The server tells a drain from a client
// that went away, which both end with a canceled request context.

import "context"

// Drain starts the server's shutdown (call it before the HTTP server's
// Shutdown, and before cancelling request contexts):
//
//   - a SendMessage waiting for its run to settle stops waiting and answers
//     the Task in the state it is in (typically TASK_STATE_WORKING);
//   - SendStreamingMessage and SubscribeToTask streams end after the events
//     already sent, without an error event;
//   - a request that arrives afterwards on either interface is refused
//     before anything is resolved, recorded or read: JSON-RPC HTTP 503 with
//     error -32000, id null and ErrorInfo reason SERVER_ERROR, HTTP+JSON 503
//     UNAVAILABLE with the same reason.
//
// The public agent card is still served. Drain is idempotent and safe for
// concurrent use; there is no way back.
func (s *Server) Drain() { s.startDrain() }

// draining reports whether Drain was called.
func (s *Server) draining() bool { return s.drain.Err() != nil }

// untilDrain returns a context that ends with ctx or when the server
// drains, whichever is first. release frees it; call it when done.
func (s *Server) untilDrain(ctx context.Context) (dctx context.Context, release func()) {
	dctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.drain, cancel)
	return dctx, func() {
		stop()
		cancel()
	}
}
