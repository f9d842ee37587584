package mcp

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/wopinterop/wopinterop/interop"
)

// Cancel reasons the mount gives cancelRun.
const (
	// ReasonRequestCancelled: the client went away (or sent
	// notifications/cancelled) before the whole response was sent
	// (OpenWOP interop.md §MCP tasks and cancellation).
	ReasonRequestCancelled = "mcp-request-cancelled"
	// ReasonRequestTimeout: a blocking call without the tasks extension hit
	// BlockTimeout; the run had no other owner.
	ReasonRequestTimeout = "mcp-request-timeout"
	// ReasonTaskCancelled: tasks/cancel.
	ReasonTaskCancelled = "mcp-task-cancelled"
	// ReasonMissingElicitation and ReasonMissingFormElicitation: the run
	// suspended on input the tools/call that started (or continued) it
	// declared no capability for — no elicitation at all, or no form mode
	// for a form — so nobody holding the call could ever answer it. The
	// call was refused with -32021, or, had it become a task, tasks/get
	// reports the task failed with that -32021 (tasks.go).
	ReasonMissingElicitation     = "mcp-missing-capability-elicitation"
	ReasonMissingFormElicitation = "mcp-missing-capability-elicitation-form"
)

// missingCapabilityReason is the cancel reason for a run stopped because
// its request lacked required (a requiredCapabilities object).
func missingCapabilityReason(required string) string {
	if required == requiredElicitationForm {
		return ReasonMissingFormElicitation
	}
	return ReasonMissingElicitation
}

// requiredByReason is the requiredCapabilities object of a run cancelled
// with reason, or "" when the reason is not a missing capability.
func requiredByReason(reason string) string {
	switch reason {
	case ReasonMissingElicitation:
		return requiredElicitation
	case ReasonMissingFormElicitation:
		return requiredElicitationForm
	}
	return ""
}

// cancelTimeout bounds a cancelRun issued on the client's behalf after the
// request context is gone.
const cancelTimeout = 10 * time.Second

// flight is a request that owns a run: from the moment it starts or
// continues the run until its whole response is sent (OpenWOP interop.md §MCP tasks and cancellation). Until
// then a disconnect, or a notifications/cancelled naming the request,
// cancels the run; afterwards nothing does (OpenWOP interop.md §MCP tasks and cancellation).
type flight struct {
	s *Server
	// sub is the request's Subject (its call's, which never changes once
	// guarded), pointed to rather than copied into every flight.
	sub   *interop.Subject
	runID string
	key   string
	once  sync.Once
	// stopAfter disarms the disconnect watch; it reports whether the watch
	// had not fired yet.
	stopAfter func() bool
	// counted: the disconnect watch is counted as server work.
	counted bool

	// A disconnect noticed while the response is being written waits for
	// the write's outcome: a client that read the whole answer and hung up
	// must not cancel the run it was just told about.
	mu      sync.Mutex
	sending bool
	// written is done once the write's outcome is known; a WaitGroup
	// rather than a channel, so that the flight is one allocation.
	written sync.WaitGroup
	sent    bool // set before written is done
	// handedOver, when set, runs once the answer reached the client and
	// the ownership ended (the binding calls it).
	handedOver func()
}

// own makes c's request the owner of runID; the binding answers the
// request through the flight (c.owner).
func (s *Server) own(c *call, runID string) {
	r := c.r
	f := &flight{s: s, sub: &c.Subject, runID: runID, key: flightKey(r, c.Subject, c.id)}
	c.owner = f
	s.inflight.add(f)
	f.counted = s.begin()
	f.stopAfter = context.AfterFunc(r.Context(), func() {
		if f.counted {
			defer s.end()
		}
		defer s.recoverIn("disconnect watch", nil)
		f.disconnected()
	})
}

// disconnected runs when the request context ends: the client went away,
// or the request ended without delivering an answer (a panic; recover.go).
func (f *flight) disconnected() {
	f.mu.Lock()
	sending := f.sending
	f.mu.Unlock()
	if sending {
		f.written.Wait()
		if f.sent {
			return
		}
	}
	f.s.inflight.remove(f)
	f.cancel(ReasonRequestCancelled)
}

// cancel cancels the run once, whatever asks first. A run that already
// finished is left as it is.
func (f *flight) cancel(reason string) {
	f.once.Do(func() {
		// The request context is gone or going: cancel on a fresh one.
		ctx, stop := context.WithTimeout(context.Background(), cancelTimeout)
		defer stop()
		if _, err := f.s.deps.Store.CancelRun(ctx, *f.sub, f.runID, reason); err != nil && !errors.Is(err, interop.ErrRunTerminal) {
			f.s.log.Warn("mcp: cancelling a run failed", "error", err)
		}
	})
}

// deliver writes the response with write, which reports whether the whole
// response reached the connection, and ends the ownership: when it did
// not, the run is cancelled rather than left to a client that will never
// see its answer. It reports whether the response was sent.
func (f *flight) deliver(write func() bool) (sent bool) {
	f.mu.Lock()
	f.sending = true
	f.written.Add(1)
	f.mu.Unlock()
	// Deferred, so that a write that panics still ends the ownership
	// (and the disconnect watch, which waits on written, is not stuck).
	defer func() {
		f.sent = sent
		f.written.Done()
		f.end(sent)
	}()
	return write()
}

// abandon ends the ownership of a request whose client is gone without
// writing anything.
func (f *flight) abandon() {
	f.end(false)
}

func (f *flight) end(sent bool) {
	f.s.inflight.remove(f)
	if !sent {
		f.cancel(ReasonRequestCancelled)
	}
	if f.stopAfter() && f.counted {
		f.s.end()
	}
}

// canceller is an in-flight request notifications/cancelled can stop: a
// flight (a request owning a run) or a native tool call.
type canceller interface{ cancel(reason string) }

// inflightCalls indexes the in-flight requests by flightKey (who sent
// them, and their request id) for notifications/cancelled.
type inflightCalls struct {
	mu sync.Mutex
	m  map[string]canceller
}

func newInflightCalls() *inflightCalls { return &inflightCalls{m: map[string]canceller{}} }

// addCall registers a native call under key until the returned func runs.
func (c *inflightCalls) addCall(key string, stop context.CancelFunc) (remove func()) {
	entry := &callEntry{stop: stop}
	c.mu.Lock()
	c.m[key] = entry
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		if c.m[key] == canceller(entry) {
			delete(c.m, key)
		}
		c.mu.Unlock()
	}
}

// callEntry is a registered native call; a pointer, so remove can tell it
// from a later request reusing the id.
type callEntry struct{ stop context.CancelFunc }

func (e *callEntry) cancel(string) { e.stop() }

// flightKey scopes a request id to who sent it, so that a notification
// can only name its own requests (OpenWOP interop.md §MCP tasks and
// cancellation). An authenticated caller is its Subject's tenant,
// workspace and principal. An anonymous Subject says nothing about who is
// calling — every anonymous caller may resolve to the same one — and the
// stateless transport carries no session, so an anonymous request is also
// scoped to the connection it arrived on (r.RemoteAddr and the local
// address, as net/http reports them): only a notification on that
// connection names it. Over HTTP/1.1 a connection carries one request at
// a time, so an anonymous client cancels a call by closing it (the
// disconnect watch, which the MCP 2026-07-28 streamable HTTP transport
// treats as cancellation); over HTTP/2 it may also send the notification
// beside the call. A proxy that multiplexes several anonymous clients over
// one connection to the host makes them one client here, unless the
// host's SubjectResolver gives them distinct principals.
func flightKey(r *http.Request, sub interop.Subject, id []byte) string {
	// Built on the stack: only the key itself is allocated, unless it is
	// longer than the buffer.
	var buf [160]byte
	b := buf[:0]
	for _, f := range [...]string{sub.Tenant, sub.Workspace, sub.Principal} {
		b = appendField(b, f)
	}
	if sub.Authenticated {
		b = append(b, 'A')
	} else {
		b = append(b, '@')
		b = appendField(b, r.RemoteAddr)
		if local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
			b = appendField(b, local.String())
		}
	}
	return string(append(b, id...))
}

// appendField appends f length-prefixed, so no two field lists share a key.
func appendField(b []byte, f string) []byte {
	b = strconv.AppendInt(b, int64(len(f)), 10)
	b = append(b, ':')
	return append(b, f...)
}

func (c *inflightCalls) add(f *flight) {
	c.mu.Lock()
	c.m[f.key] = f
	c.mu.Unlock()
}

func (c *inflightCalls) remove(f *flight) {
	c.mu.Lock()
	if c.m[f.key] == canceller(f) {
		delete(c.m, f.key)
	}
	c.mu.Unlock()
}

// cancel cancels the request under key (a flight's run, a native call),
// if there is one.
func (c *inflightCalls) cancel(key string) bool {
	c.mu.Lock()
	f := c.m[key]
	c.mu.Unlock()
	if f == nil {
		return false
	}
	f.cancel(ReasonRequestCancelled)
	return true
}
