package mcp

// subscriptions/listen (OpenWOP interop map, mcp.tasks.methods): the POST is answered with an SSE
// stream. Its first message is notifications/subscriptions/acknowledged,
// naming the notification types and task ids the mount agreed to — a task
// the caller cannot read is left out exactly like one that does not exist.
// Then each acknowledged task's current state and every later change is
// sent as notifications/tasks, carrying what tasks/get would return at that
// moment. Every message carries _meta subscriptionId = the listen request's
// id. The stream ends when the client goes away, or — with a final
// notifications/cancelled naming the listen request, the only time the
// host sends that notification (OpenWOP interop.md §MCP tasks and cancellation) — when every acknowledged task has
// finished or the server drains or closes.

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/wopinterop/wopinterop/internal/readgate"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/isolation"
	"github.com/wopinterop/wopinterop/mcp/internal/mount"
)

// listenTask is one acknowledged task of a stream.
type listenTask struct {
	taskID string // as the client named it
	runID  string
	last   []byte // the last notifications/tasks params sent
	done   bool   // terminal state sent
	dirty  atomic.Bool
	// lost: the task's watcher can no longer follow its run (the store
	// failed or panicked), so the stream cannot keep its promise.
	lost atomic.Bool
}

// errListenLost ends a stream that lost one of its tasks: the client
// subscribes again or polls with tasks/get.
var errListenLost = newError(codeInternalError, "Internal error: a subscribed task can no longer be followed")

func (s *Server) listen(ctx context.Context, c *call) (answer, error) {
	var filter map[string]json.RawMessage
	raw, ok := c.Params.Get("notifications")
	if !ok || len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &filter) != nil {
		return answer{}, errInvalidParams("Invalid params: notifications must be an object")
	}
	var requested []string
	_, wantsTasks := filter["taskIds"]
	if wantsTasks && string(filter["taskIds"]) != "null" && s.opts.Tasks {
		if !c.Caps.Tasks {
			return answer{}, missingCapability(requiredTasks)
		}
		if json.Unmarshal(filter["taskIds"], &requested) != nil {
			return answer{}, errInvalidParams("Invalid params: taskIds must be an array of strings")
		}
	}
	var tasks []*listenTask
	acked := []string{}
	for _, id := range requested {
		if slices.Contains(acked, id) {
			continue
		}
		runID, err := isolation.ParseID(id)
		if err != nil || readgate.CheckReadable(c.Subject, runID) != nil {
			continue
		}
		if _, err := s.deps.Store.GetRun(ctx, c.Subject, runID); err != nil {
			continue // unreadable or unknown: left out alike
		}
		acked = append(acked, id)
		tasks = append(tasks, &listenTask{taskID: id, runID: runID})
	}
	if !s.begin() {
		return answer{}, errShuttingDown
	}
	type ackFilter struct {
		TaskIDs *[]string `json:"taskIds,omitempty"`
	}
	ackParams := struct {
		Meta          notificationMeta `json:"_meta"`
		Notifications ackFilter        `json:"notifications"`
	}{Meta: notificationMeta{SubscriptionID: c.id}}
	if s.opts.Tasks && wantsTasks && c.Caps.Tasks {
		ackParams.Notifications.TaskIDs = &acked
	}
	return answer{stream: func(st *stream) {
		defer s.end()
		if st.send(methodNotifyAcknowledged, ackParams) {
			s.follow(ctx, c, st, tasks)
		}
	}}, nil
}

// follow sends the acknowledged tasks' notifications on st until the
// client goes away, every task has finished or the server drains or
// closes.
func (s *Server) follow(ctx context.Context, c *call, st *stream, tasks []*listenTask) {
	wctx, stopWatch := context.WithCancel(ctx)
	var watchers sync.WaitGroup
	defer func() {
		stopWatch()
		watchers.Wait()
	}()
	wake := make(chan struct{}, 1)
	for _, t := range tasks {
		t.dirty.Store(true) // send the current state first
		watchers.Add(1)
		go func() {
			defer watchers.Done()
			s.watchTask(wctx, c.Subject, t, wake)
		}()
	}
	if len(tasks) > 0 {
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.life.Done():
			st.cancelled(c.id, "The server is shutting down.")
			return
		case <-s.drain.Done():
			st.cancelled(c.id, "The server is shutting down.")
			return
		case <-wake:
			finished := true
			for _, t := range tasks {
				if t.dirty.Swap(false) && !s.sendTask(ctx, c, st, t) {
					return
				}
				if t.lost.Load() && !t.done {
					st.sendError(c.id, errListenLost)
					return
				}
				finished = finished && t.done
			}
			if finished {
				st.cancelled(c.id, "Every subscribed task has finished.")
				return
			}
		}
	}
}

// watchTask marks t dirty whenever its run's log grows, until the run ends
// or ctx does. Whatever ends the watch marks t dirty once more, so the
// stream reads the run again: a run that finished before the watch began
// is still reported. A watch the store ends otherwise (an error, a
// panic) marks t lost: unless that last read finds the run finished or
// gone, nothing would report its later changes, and the stream ends with
// errListenLost.
func (s *Server) watchTask(ctx context.Context, sub interop.Subject, t *listenTask, wake chan<- struct{}) {
	signal := func() {
		t.dirty.Store(true)
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	defer signal()
	defer s.recoverIn("listen watcher", func() { t.lost.Store(true) })
	run, err := s.deps.Store.GetRun(ctx, sub, t.runID)
	if err != nil || run.Status.Terminal() {
		return // gone or finished: the stream's own read tells which
	}
	events, err := s.deps.Store.WatchRun(ctx, sub, t.runID, run.LastSequence)
	if err != nil {
		t.lost.Store(ctx.Err() == nil)
		return
	}
	for ev, err := range events {
		if err != nil {
			t.lost.Store(ctx.Err() == nil)
			return
		}
		signal()
		if ev.Terminal() {
			return
		}
	}
}

// sendTask sends t's current state when it changed since the last one.
func (s *Server) sendTask(ctx context.Context, c *call, st *stream, t *listenTask) bool {
	run, err := s.deps.Store.GetRun(ctx, c.Subject, t.runID)
	if err != nil {
		t.done = true // gone: nothing more will be sent for it
		return true
	}
	dt, err := s.detailedTask(ctx, c.Subject, &run)
	if err != nil {
		s.log.ErrorContext(ctx, "mcp: task notification failed", "error", err)
		t.done = true
		return true
	}
	dt.TaskID = t.taskID
	body, err := mount.Marshal(dt)
	if err != nil || slices.Equal(body, t.last) {
		return true
	}
	t.last = body
	t.done = run.Status.Terminal()
	dt.Meta = &notificationMeta{SubscriptionID: c.id}
	return st.send(methodNotifyTasks, dt)
}

// begin counts one unit of background work unless the server is closing.
func (s *Server) begin() bool {
	s.workMu.Lock()
	defer s.workMu.Unlock()
	if s.life.Err() != nil {
		return false
	}
	s.work.Add(1)
	return true
}

func (s *Server) end() { s.work.Done() }
