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
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/isolation"
)

// keepAliveInterval spaces the SSE comments that keep an idle listen
// stream from being closed by intermediaries.
const keepAliveInterval = 25 * time.Second

// listenTask is one acknowledged task of a stream.
type listenTask struct {
	taskID string // as the client named it
	runID  string
	last   []byte // the last notifications/tasks params sent
	done   bool   // terminal state sent
	dirty  atomic.Bool
}

func (s *Server) listen(w http.ResponseWriter, r *http.Request, c *call) {
	ctx := r.Context()
	var filter map[string]json.RawMessage
	raw, ok := c.msg.params["notifications"]
	if !ok || len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &filter) != nil {
		s.writeError(w, r, c.msg.id, errInvalidParams("Invalid params: notifications must be an object"))
		return
	}
	var requested []string
	_, wantsTasks := filter["taskIds"]
	if wantsTasks && string(filter["taskIds"]) != "null" && s.cfg.Tasks {
		if !c.caps.Tasks {
			s.writeError(w, r, c.msg.id, missingCapability(requiredTasks))
			return
		}
		if json.Unmarshal(filter["taskIds"], &requested) != nil {
			s.writeError(w, r, c.msg.id, errInvalidParams("Invalid params: taskIds must be an array of strings"))
			return
		}
	}
	var tasks []*listenTask
	acked := []string{}
	for _, id := range requested {
		if slices.Contains(acked, id) {
			continue
		}
		runID, err := isolation.ParseID(id)
		if err != nil || isolation.CheckReadable(c.subject, runID) != nil {
			continue
		}
		if _, err := s.cfg.Store.GetRun(ctx, c.subject, runID); err != nil {
			continue // unreadable or unknown: left out alike
		}
		acked = append(acked, id)
		tasks = append(tasks, &listenTask{taskID: id, runID: runID})
	}
	if !s.begin() {
		s.writeError(w, r, c.msg.id, errShuttingDown)
		return
	}
	defer s.end()

	st := openStream(w, c.msg.id)

	type ackFilter struct {
		TaskIDs *[]string `json:"taskIds,omitempty"`
	}
	ackParams := struct {
		Meta          notificationMeta `json:"_meta"`
		Notifications ackFilter        `json:"notifications"`
	}{Meta: notificationMeta{SubscriptionID: c.msg.id}}
	if s.cfg.Tasks && wantsTasks && c.caps.Tasks {
		ackParams.Notifications.TaskIDs = &acked
	}
	if !st.send(methodNotifyAcknowledged, ackParams) {
		return
	}

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
			s.watchTask(wctx, c.subject, t, wake)
		}()
	}
	if len(tasks) > 0 {
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	keepAlive := time.NewTicker(keepAliveInterval)
	defer keepAlive.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.life.Done():
			st.cancelled(c.msg.id, "The server is shutting down.")
			return
		case <-s.drain.Done():
			st.cancelled(c.msg.id, "The server is shutting down.")
			return
		case <-keepAlive.C:
			if !st.comment() {
				return
			}
		case <-wake:
			finished := true
			for _, t := range tasks {
				if t.dirty.Swap(false) && !s.sendTask(ctx, c, st, t) {
					return
				}
				finished = finished && t.done
			}
			if finished {
				st.cancelled(c.msg.id, "Every subscribed task has finished.")
				return
			}
		}
	}
}

// watchTask marks t dirty whenever its run's log grows, until the run ends
// or ctx does.
func (s *Server) watchTask(ctx context.Context, sub interop.Subject, t *listenTask, wake chan<- struct{}) {
	run, err := s.cfg.Store.GetRun(ctx, sub, t.runID)
	if err != nil || run.Status.Terminal() {
		return
	}
	events, err := s.cfg.Store.WatchRun(ctx, sub, t.runID, run.LastSequence)
	if err != nil {
		return
	}
	for _, err := range events {
		if err != nil {
			return
		}
		t.dirty.Store(true)
		select {
		case wake <- struct{}{}:
		default:
		}
	}
}

// sendTask sends t's current state when it changed since the last one.
func (s *Server) sendTask(ctx context.Context, c *call, st *stream, t *listenTask) bool {
	run, err := s.cfg.Store.GetRun(ctx, c.subject, t.runID)
	if err != nil {
		t.done = true // gone: nothing more will be sent for it
		return true
	}
	dt, err := s.detailedTask(ctx, c.subject, &run)
	if err != nil {
		s.log.ErrorContext(ctx, "mcp: task notification failed", "error", err)
		t.done = true
		return true
	}
	dt.TaskID = t.taskID
	body, err := marshal(dt)
	if err != nil || slices.Equal(body, t.last) {
		return true
	}
	t.last = body
	t.done = run.Status.Terminal()
	dt.Meta = &notificationMeta{SubscriptionID: c.msg.id}
	return st.send(methodNotifyTasks, dt)
}

// stream writes SSE messages of one listen response.
type stream struct {
	w     http.ResponseWriter
	rc    *http.ResponseController
	subID json.RawMessage
}

// send writes one JSON-RPC notification as an SSE message and flushes it.
func (st *stream) send(method string, params any) bool {
	p, err := marshal(params)
	if err != nil {
		return false
	}
	b := append([]byte("event: message\ndata: "), `{"jsonrpc":"2.0","method":`...)
	b = appendString(b, method)
	b = append(b, `,"params":`...)
	b = append(b, p...)
	b = append(b, "}\n\n"...)
	if _, err := st.w.Write(b); err != nil {
		return false
	}
	return st.rc.Flush() == nil
}

// sendRaw writes one already encoded JSON-RPC message as an SSE message
// and flushes it.
func (st *stream) sendRaw(msg []byte) bool {
	b := append([]byte("event: message\ndata: "), msg...)
	b = append(b, "\n\n"...)
	if _, err := st.w.Write(b); err != nil {
		return false
	}
	return st.rc.Flush() == nil
}

// openStream answers the request with an SSE stream (200,
// text/event-stream) and returns its writer.
func openStream(w http.ResponseWriter, subID json.RawMessage) *stream {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	return &stream{w: w, rc: http.NewResponseController(w), subID: subID}
}

func (st *stream) comment() bool {
	if _, err := st.w.Write([]byte(": keep-alive\n\n")); err != nil {
		return false
	}
	return st.rc.Flush() == nil
}

// cancelled ends the stream with notifications/cancelled naming the
// listen request.
func (st *stream) cancelled(listenID json.RawMessage, reason string) {
	st.send(methodNotifyCancelled, struct {
		Meta      notificationMeta `json:"_meta"`
		RequestID json.RawMessage  `json:"requestId"`
		Reason    string           `json:"reason"`
	}{notificationMeta{SubscriptionID: st.subID}, listenID, reason})
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
