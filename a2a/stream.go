package a2a

// The watch-driven event sequences of SendStreamingMessage and
// SubscribeToTask (OpenWOP interop map, a2a.operations and a2a.fields). A stream is the run's own event
// log seen through the projection: nothing is buffered or stored on the
// side, so a stream shows exactly what GetTask would show at each step.

import (
	"context"
	"iter"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/interop"
)

// follow returns the stream of run from the state it is in: the Task
// first, then one statusUpdate per status change and one artifactUpdate
// per artifact.created chunk, ending after the terminal statusUpdate, or
// after an interrupted one when stopAtInterrupt (SendStreamingMessage).
// Other log entries (audit records, interrupt bookkeeping that leaves the
// status as it was) produce nothing: a stream never carries agent.*,
// provider usage or tool I/O (OpenWOP interop map, a2a.fields).
//
// The watch is opened here, so a run the caller cannot read is refused
// before the first event. The stream ends quietly when ctx is done (the
// client went away) and when the server drains, after the events already
// sent. The sequence must be ranged over once.
func (s *Server) follow(ctx context.Context, c *call, run interop.Run, v taskView, stopAtInterrupt bool) (iter.Seq2[wire.Event, error], error) {
	first, err := s.projectOrFail(ctx, &run, v)
	if err != nil {
		return nil, err
	}
	f := &follower{s: s, ctx: ctx, subject: c.subject, stopAtInterrupt: stopAtInterrupt, first: first, last: run.Status}
	if f.done(run.Status) {
		return f.only, nil
	}
	// The watch ends with ctx or when the server drains (openStreams).
	f.wctx, f.link.cancel = context.WithCancel(ctx)
	if !s.streams.add(&f.link) {
		f.link.cancel()
		return f.only, nil // drained before the watch opened
	}
	events, err := s.cfg.Store.WatchRun(f.wctx, c.subject, run.ID, run.LastSequence)
	if err != nil {
		f.release()
		if f.wctx.Err() != nil && ctx.Err() == nil {
			return f.only, nil // drained as the watch opened
		}
		return nil, s.taskRefusal(ctx, "WatchRun", err)
	}
	// The stream keeps of the run only what its updates name.
	f.runID, f.contextID = run.ID, run.ContextID
	f.events = events
	return f.all, nil
}

// follower is the state of one stream of follow. An open stream's
// goroutine waits beneath all for as long as the run is idle, so all's
// frame is kept small and the per-event work is step's: the runtime
// shrinks a waiting goroutine's stack back only when little of it is in
// use. What the stream no longer needs (the first event) is let go.
type follower struct {
	s               *Server
	ctx, wctx       context.Context
	subject         interop.Subject // the caller's, the request's call let go
	stopAtInterrupt bool
	first           wire.Event
	runID           string
	contextID       string
	last            interop.RunStatus
	events          iter.Seq2[interop.RunEvent, error]
	link            streamLink // the watch's, among the server's open streams
	yield           func(wire.Event, error) bool
}

// release ends the watch.
func (f *follower) release() { f.s.streams.remove(&f.link) }

func (f *follower) done(st interop.RunStatus) bool {
	return st.Terminal() || f.stopAtInterrupt && st.Suspended()
}

// only is the stream of a run that is already where the stream ends.
func (f *follower) only(yield func(wire.Event, error) bool) { yield(f.first, nil) }

func (f *follower) all(yield func(wire.Event, error) bool) {
	defer f.release()
	first := f.first
	f.first = nil
	if !yield(first, nil) {
		return
	}
	f.yield = yield
	f.events(f.step)
}

// step relays one element of the watch; it reports whether the stream
// goes on.
func (f *follower) step(ev interop.RunEvent, err error) bool {
	if err != nil {
		if f.wctx.Err() == nil {
			f.yield(nil, f.s.storeFault(f.ctx, "WatchRun", err))
		}
		return false
	}
	run := interop.Run{ID: f.runID, ContextID: f.contextID}
	c := call{subject: f.subject}
	return f.s.relay(f.ctx, &c, &run, &ev, &f.last, f.yield) && !f.done(ev.Status)
}

// relay yields what one watch event of run shows: an artifactUpdate for an
// artifact chunk and, when the status moved from *last, the statusUpdate,
// after the output's artifactUpdate on a completion (statusAt). It
// reports whether the stream goes on.
func (s *Server) relay(ctx context.Context, c *call, run *interop.Run, ev *interop.RunEvent, last *interop.RunStatus, yield func(wire.Event, error) bool) bool {
	if ev.Chunk != nil && !yield(artifactUpdate(run, ev.Chunk), nil) {
		return false
	}
	if ev.Status == *last {
		return true
	}
	*last = ev.Status
	output, upd, err := s.statusAt(ctx, c, run, ev)
	if err != nil {
		if ctx.Err() == nil {
			yield(nil, err)
		}
		return false
	}
	if output != nil && !yield(output, nil) {
		return false
	}
	return yield(upd, nil)
}

// lazily is the stream open returns, opened only when it is ranged over,
// so that a panic in open is the stream's (safeEvents) and a refusal of
// open is the stream's first and only element, answered by the binding
// as a plain error.
func lazily(open func() (iter.Seq2[wire.Event, error], error)) iter.Seq2[wire.Event, error] {
	return (&lazySeq{open: open}).all
}

// lazySeq is the state of one lazily sequence: open is let go once it
// ran, and with it what opening needed (the request, the call), which an
// open stream no longer does.
type lazySeq struct {
	open func() (iter.Seq2[wire.Event, error], error)
}

func (l *lazySeq) all(yield func(wire.Event, error) bool) {
	open := l.open
	l.open = nil
	events, err := open()
	if err != nil {
		yield(nil, err)
		return
	}
	events(yield)
}

// statusAt projects the status an event moved the run to and, when that
// is a completion without any published artifact, the artifactUpdate of
// the run's output that goes before it (outputArtifact), so the stream ends
// holding what GetTask would. A suspension needs the interrupt it opened,
// a failure its message and a completion its artifacts and output, none of
// which the event carries: the run is read for them. If the interrupt is
// no longer open by then, the update carries the state without it.
func (s *Server) statusAt(ctx context.Context, c *call, run *interop.Run, ev *interop.RunEvent) (*wire.TaskArtifactUpdateEvent, *wire.TaskStatusUpdateEvent, error) {
	at := interop.Run{
		ID:        run.ID,
		ContextID: run.ContextID,
		Status:    ev.Status,
		StatusAt:  ev.Timestamp,
	}
	var output *wire.TaskArtifactUpdateEvent
	if ev.Status.Suspended() || ev.Status == interop.StatusFailed || ev.Status == interop.StatusCompleted {
		now, err := s.cfg.Store.GetRun(ctx, c.subject, run.ID)
		if err != nil {
			return nil, nil, s.taskRefusal(ctx, "GetRun", err)
		}
		at.FailureMessage = now.FailureMessage
		// node.suspended names the interrupt it opened; any other event
		// that left the run suspended takes the first open one.
		var opened interop.NodeSuspended
		if ev.Type == interop.EventNodeSuspended {
			_ = ev.DecodePayload(&opened)
		}
		for _, in := range now.Interrupts {
			if in.ID == opened.InterruptID || opened.InterruptID == "" {
				at.Interrupts = []interop.Interrupt{in}
				break
			}
		}
		if a, ok := outputArtifact(&now); ok && ev.Status == interop.StatusCompleted {
			output = &wire.TaskArtifactUpdateEvent{
				TaskID:    wire.TaskID(run.ID),
				ContextID: contextOf(run),
				Artifact:  wireArtifact(&a),
				LastChunk: true,
			}
		}
	}
	upd, err := s.statusUpdate(&at)
	if err != nil {
		return nil, nil, s.storeFault(ctx, "project", err)
	}
	return output, upd, nil
}
