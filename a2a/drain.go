package a2a

// Shutdown. An A2A task is the host's durable run, so a request need not
// hold the run up to answer: when the host drains, a blocking SendMessage
// answers with the Task as it is (the client reads the rest with GetTask),
// a stream ends after what it sent, and a request that arrives later is
// refused in its binding's shape. The server tells a drain from a client
// that went away, which both end with a canceled request context.

import (
	"context"
	"sync"
)

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
func (s *Server) Drain() {
	s.startDrain()
	s.streams.end()
}

// draining reports whether Drain was called.
func (s *Server) draining() bool { return s.drain.Err() != nil }

// openStreams are the watches of a server's open streams, each canceled
// when the server drains. The list costs a stream two pointers; a watch
// context that also ended with the server's drain context would cost it a
// context of its own and an entry among the drain context's children.
type openStreams struct {
	mu      sync.Mutex
	head    *streamLink
	drained bool
}

// streamLink is an open stream's place in openStreams: cancel ends its
// watch.
type streamLink struct {
	prev, next *streamLink
	cancel     context.CancelFunc
}

// add lists l, or reports false, listing nothing, once the server drains.
func (o *openStreams) add(l *streamLink) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.drained {
		return false
	}
	l.next = o.head
	if o.head != nil {
		o.head.prev = l
	}
	o.head = l
	return true
}

// remove unlists l, listed by add, and cancels its watch.
func (o *openStreams) remove(l *streamLink) {
	o.mu.Lock()
	if l.prev != nil {
		l.prev.next = l.next
	} else if o.head == l {
		o.head = l.next
	}
	if l.next != nil {
		l.next.prev = l.prev
	}
	l.prev, l.next = nil, nil
	o.mu.Unlock()
	l.cancel()
}

// end cancels every listed watch; add refuses every watch after it.
func (o *openStreams) end() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.drained = true
	for l := o.head; l != nil; l = l.next {
		l.cancel()
	}
}
