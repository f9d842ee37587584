package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/internal/interopmap"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/isolation"
	"github.com/wopinterop/wopinterop/mapping"
)

const tasksCaps = `{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}`

func taskCall(name string) rpc {
	return rpc{method: "tools/call", caps: tasksCaps, params: map[string]any{"name": name}}
}

func taskReq(method, taskID string, extra map[string]any) rpc {
	params := map[string]any{"taskId": taskID}
	for k, v := range extra {
		params[k] = v
	}
	return rpc{method: method, caps: tasksCaps, params: params}
}

// startTask calls name as a task and returns its taskId and run.
func (e *env) startTask(name string) (string, interop.Run) {
	e.t.Helper()
	res := result(e.t, e.do(taskCall(name)))
	if res["resultType"] != "task" {
		e.t.Fatalf("want a task, got %v", res)
	}
	taskID := res["taskId"].(string)
	runID, err := isolation.ParseID(taskID)
	if err != nil {
		e.t.Fatal(err)
	}
	run, err := e.store.GetRun(testCtx(e.t), alice, runID)
	if err != nil {
		e.t.Fatalf("tasks/get would not resolve the new task: %v", err)
	}
	return taskID, run
}

// TestTaskLifecycle: create → input_required → update → completed, with
// every read appending nothing (OpenWOP RFC 0198 §B, §E; interop.md §MCP tasks and cancellation).
func TestTaskLifecycle(t *testing.T) {
	e := newEnv(t, withTasks)
	taskID, run := e.startTask("conformance-approval")
	if taskID != isolation.Project(run.ID) || !strings.Contains(taskID, "~2F") {
		t.Fatalf("taskId %q is not the projected run id %q", taskID, run.ID)
	}
	if _, opaque, _ := isolation.Split(run.ID); len(opaque) < 22 {
		t.Fatalf("opaque segment %q is shorter than 128 bits", opaque)
	}
	// Durable at once (MCP 2026-07-28 Tasks extension §Task Creation).
	first := result(t, e.do(taskReq("tasks/get", taskID, nil)))
	if first["resultType"] != "complete" || first["taskId"] != taskID {
		t.Fatalf("tasks/get = %v", first)
	}
	run = e.waitStatus(alice, run.ID, interop.StatusWaitingApproval)
	rec := e.do(taskReq("tasks/get", taskID, nil))
	checkGolden(t, "tasks_get_input_required", rec.Body.Bytes())
	got := result(t, rec)
	e.unchanged(run)
	if got["status"] != "input_required" || got["requestState"] != nil || got["result"] != nil {
		t.Fatalf("input_required task = %v", got)
	}
	reqs := got["inputRequests"].(map[string]any)
	key := run.Interrupts[0].ID
	if len(reqs) != 1 || reqs[key] == nil {
		t.Fatalf("inputRequests %v not keyed by %s", reqs, key)
	}
	ack := e.do(taskReq("tasks/update", taskID, map[string]any{"inputResponses": map[string]any{key: map[string]any{"action": "accept"}, "unknown-key": map[string]any{"action": "accept"}}}))
	checkGolden(t, "tasks_update_ack", ack.Body.Bytes())
	if res := result(t, ack); len(res) != 2 || res["resultType"] != "complete" {
		t.Fatalf("ack = %v", res)
	}
	run = e.waitStatus(alice, run.ID, interop.StatusCompleted)
	rec = e.do(taskReq("tasks/get", taskID, nil))
	checkGolden(t, "tasks_get_completed", rec.Body.Bytes())
	done := result(t, rec)
	e.unchanged(run)
	inner, _ := done["result"].(map[string]any)
	if done["status"] != "completed" || inner == nil || inner["isError"] != false || done["error"] != nil {
		t.Fatalf("completed task = %v", done)
	}
	if _, ok := inner["_meta"]; ok {
		t.Errorf("inlined result carries _meta: %v", inner)
	}
	// Answering again resolves nothing.
	result(t, e.do(taskReq("tasks/update", taskID, map[string]any{"inputResponses": map[string]any{key: map[string]any{"action": "decline"}}})))
	e.unchanged(run)
}

// TestTaskFailedRunIsCompletedWithError: a failed run is a completed task
// whose result has isError true (OpenWOP interop map, mcp.tasks.status).
func TestTaskFailedRun(t *testing.T) {
	e := newEnv(t, withTasks)
	// With TaskWait 0 the call is answered as a task from the run the
	// store created, before the fixture fails.
	taskID, run := e.startTask("conformance-failure")
	e.waitStatus(alice, run.ID, interop.StatusFailed)
	got := result(t, e.do(taskReq("tasks/get", taskID, nil)))
	inner := got["result"].(map[string]any)
	if got["status"] != "completed" || inner["isError"] != true {
		t.Fatalf("failed run as task = %v", got)
	}
}

// TestTaskHostFault: a map that projects a run status onto task status
// failed yields the error object and no result.
func TestTaskHostFault(t *testing.T) {
	builtin, _ := mapping.Builtin().JSON()
	doc := strings.Replace(string(builtin), `"runStatus": "failed",
          "taskStatus": "completed"`, `"runStatus": "failed",
          "taskStatus": "failed"`, 1)
	m, err := mapping.Load([]byte(doc))
	if err != nil || func() bool {
		s, _ := (*interopmap.Map)(m).MCPTaskStatus(interop.StatusFailed)
		return s != interopmap.TaskFailed
	}() {
		t.Fatalf("could not derive a map with a failed task status (%v)", err)
	}
	e := newEnv(t, withTasks, func(c *testConfig) { c.Map = m })
	taskID, run := e.startTask("conformance-failure")
	e.waitStatus(alice, run.ID, interop.StatusFailed)
	got := result(t, e.do(taskReq("tasks/get", taskID, nil)))
	if got["status"] != "failed" || got["result"] != nil || got["error"] == nil {
		t.Fatalf("host-fault task = %v", got)
	}
}

// TestTaskCancel: tasks/cancel acknowledges and cancels; on a finished
// task it acknowledges and appends nothing (OpenWOP interop map, mcp.tasks).
func TestTaskCancel(t *testing.T) {
	e := newEnv(t, withTasks)
	taskID, run := e.startTask("waits")
	if res := result(t, e.do(taskReq("tasks/cancel", taskID, nil))); res["resultType"] != "complete" || len(res) != 2 {
		t.Fatalf("ack = %v", res)
	}
	run = e.waitStatus(alice, run.ID, interop.StatusCancelled)
	if run.CancelReason != ReasonTaskCancelled {
		t.Errorf("reason = %q", run.CancelReason)
	}
	rec := e.do(taskReq("tasks/get", taskID, nil))
	checkGolden(t, "tasks_get_cancelled", rec.Body.Bytes())
	if got := result(t, rec); got["status"] != "cancelled" {
		t.Fatalf("tasks/get = %v", got)
	}
	result(t, e.do(taskReq("tasks/cancel", taskID, nil)))
	e.unchanged(run)
}

// TestTaskIsolation: another tenant's taskId, an unknown one and a
// malformed one get byte-identical -32602 answers on every tasks/*
// method, and nothing changes (OpenWOP interop.md §Isolation; RFC 0198 §C.6).
func TestTaskIsolation(t *testing.T) {
	e := newEnv(t, withTasks)
	taskID, run := e.startTask("conformance-approval")
	run = e.waitStatus(alice, run.ID, interop.StatusWaitingApproval)
	key := run.Interrupts[0].ID
	unknown := isolation.Project(tenantA + "/AAAAAAAAAAAAAAAAAAAAAAAAAA")
	for _, method := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		extra := map[string]any{"inputResponses": map[string]any{key: map[string]any{"action": "accept"}}}
		var bodies []string
		for _, attempt := range []struct{ as, id string }{
			{"globex:mallory", taskID},
			{"acme:alice", unknown},
			{"acme:alice", "garbage"},
			{"globex:mallory", strings.Replace(taskID, "~2F", "/", 1)},
		} {
			q := taskReq(method, attempt.id, extra)
			q.as = attempt.as
			rec := e.do(q)
			wantError(t, rec, http.StatusBadRequest, codeInvalidParams)
			bodies = append(bodies, rec.Body.String())
		}
		checkGolden(t, "tasks_unknown_"+strings.TrimPrefix(method, "tasks/"), []byte(bodies[0]))
		for i, b := range bodies[1:] {
			if b != bodies[0] {
				t.Errorf("%s: answer %d differs:\n%s\n%s", method, i+1, b, bodies[0])
			}
		}
	}
	e.unchanged(run)
}

// TestTaskUpdateRefusals: malformed inputResponses and non-approvers are
// -32602; the run keeps waiting.
func TestTaskUpdateRefusals(t *testing.T) {
	e := newEnv(t, withTasks)
	taskID, run := e.startTask("conformance-approval")
	run = e.waitStatus(alice, run.ID, interop.StatusWaitingApproval)
	key := run.Interrupts[0].ID
	for _, responses := range []any{nil, "x", map[string]any{key: map[string]any{"action": "sure"}}} {
		extra := map[string]any{}
		if responses != nil {
			extra["inputResponses"] = responses
		}
		wantError(t, e.do(taskReq("tasks/update", taskID, extra)), 400, codeInvalidParams)
	}
	e.unchanged(run)
}

// sse reads the messages of a listen stream.
type sse struct {
	t  testing.TB
	sc *bufio.Scanner
	// raw is the data of the last message.
	raw []byte
}

func (s *sse) next() map[string]any {
	s.t.Helper()
	var data []byte
	for s.sc.Scan() {
		line := s.sc.Bytes()
		switch {
		case bytes.HasPrefix(line, []byte("data: ")):
			data = append(data, line[len("data: "):]...)
		case len(line) == 0 && data != nil:
			s.raw = data
			var m map[string]any
			if err := json.Unmarshal(data, &m); err != nil {
				s.t.Fatalf("bad SSE data %s: %v", data, err)
			}
			return m
		}
	}
	s.t.Fatalf("stream ended: %v", s.sc.Err())
	return nil
}

func (e *env) openListen(t testing.TB, ts string, q rpc) (*sse, *http.Response) {
	t.Helper()
	resp, err := http.DefaultClient.Do(clientRequest(t, testCtx(t), ts, q))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("listen answered %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return &sse{t: t, sc: bufio.NewScanner(resp.Body)}, resp
}

// TestListenTasks: the acknowledgement comes first and omits unreadable
// and unknown tasks; notifications/tasks carry what tasks/get would; the
// stream ends with notifications/cancelled naming the listen request once
// every task finished (OpenWOP interop map, mcp.tasks.methods; interop.md §MCP tasks and cancellation).
func TestListenTasks(t *testing.T) {
	e := newEnv(t, withTasks)
	ts := e.serve()
	taskID, run := e.startTask("conformance-approval")
	foreign := result(t, e.do(rpc{method: "tools/call", as: "globex:bob", caps: tasksCaps, params: map[string]any{"name": "conformance-approval"}}))["taskId"].(string)
	unknown := isolation.Project(tenantA + "/AAAAAAAAAAAAAAAAAAAAAAAAAA")
	run = e.waitStatus(alice, run.ID, interop.StatusWaitingApproval)

	q := rpc{method: "subscriptions/listen", id: `"sub-1"`, caps: tasksCaps, params: map[string]any{"notifications": map[string]any{"taskIds": []string{foreign, taskID, unknown, "garbage"}, "toolsListChanged": true}}}
	stream, _ := e.openListen(t, ts.URL, q)
	ackMsg := stream.next()
	checkGolden(t, "listen_acknowledged", stream.raw)
	params := ackMsg["params"].(map[string]any)
	if ackMsg["method"] != "notifications/subscriptions/acknowledged" || params["_meta"].(map[string]any)["io.modelcontextprotocol/subscriptionId"] != "sub-1" {
		t.Fatalf("first message = %v", ackMsg)
	}
	if ids := params["notifications"].(map[string]any)["taskIds"].([]any); len(ids) != 1 || ids[0] != taskID {
		t.Fatalf("acknowledged %v, want only %s", ids, taskID)
	}
	if _, ok := params["notifications"].(map[string]any)["toolsListChanged"]; ok {
		t.Fatalf("acknowledged an unsupported notification type")
	}
	want := result(t, e.do(taskReq("tasks/get", taskID, nil)))
	note := stream.next()
	checkGolden(t, "listen_task_input_required", stream.raw)
	got := note["params"].(map[string]any)
	if note["method"] != "notifications/tasks" || got["status"] != "input_required" || got["_meta"].(map[string]any)["io.modelcontextprotocol/subscriptionId"] != "sub-1" {
		t.Fatalf("task notification = %v", note)
	}
	delete(got, "_meta")
	delete(want, "_meta")
	delete(want, "resultType")
	if a, b := mustJSON(t, got), mustJSON(t, want); a != b {
		t.Fatalf("notification %s differs from tasks/get %s", a, b)
	}
	key := run.Interrupts[0].ID
	result(t, e.do(taskReq("tasks/update", taskID, map[string]any{"inputResponses": map[string]any{key: map[string]any{"action": "accept"}}})))
	for {
		note = stream.next()
		if note["method"] != "notifications/tasks" {
			t.Fatalf("unexpected %v", note)
		}
		if note["params"].(map[string]any)["status"] == "completed" {
			break
		}
	}
	end := stream.next()
	checkGolden(t, "listen_cancelled", stream.raw)
	if end["method"] != "notifications/cancelled" || end["params"].(map[string]any)["requestId"] != "sub-1" {
		t.Fatalf("stream end = %v", end)
	}
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestListenGating: asking for task notifications without declaring the
// extension is -32021; a stream without tasks stays open until the server
// closes, then ends with notifications/cancelled.
func TestListenGating(t *testing.T) {
	e := newEnv(t, withTasks)
	rec := e.do(rpc{method: "subscriptions/listen", params: map[string]any{"notifications": map[string]any{"taskIds": []string{"x"}}}})
	r := wantError(t, rec, 400, codeMissingCapability)
	if string(r.Error.Data) != `{"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}` {
		t.Errorf("data = %s", r.Error.Data)
	}
	wantError(t, e.do(rpc{method: "subscriptions/listen", params: map[string]any{}}), 400, codeInvalidParams)

	ts := e.serve()
	stream, _ := e.openListen(t, ts.URL, rpc{method: "subscriptions/listen", id: "5", params: map[string]any{"notifications": map[string]any{"toolsListChanged": true}}})
	ack := stream.next()
	if n := ack["params"].(map[string]any)["notifications"].(map[string]any); len(n) != 0 {
		t.Fatalf("acknowledged %v", n)
	}
	closed := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		closed <- e.srv.Close(ctx)
	}()
	end := stream.next()
	if end["method"] != "notifications/cancelled" || end["params"].(map[string]any)["requestId"] != float64(5) {
		t.Fatalf("stream end = %v", end)
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
}

// gateStore holds every GetRun but the listen handler's own (the first one
// after arm, whose context it remembers) until open is closed: the stream's
// watcher then reads its run only after the test changed it.
type gateStore struct {
	*memstore.Store
	mu      sync.Mutex
	armed   bool
	handler context.Context
	open    chan struct{}
}

func (g *gateStore) GetRun(ctx context.Context, s interop.Subject, runID string) (interop.Run, error) {
	g.mu.Lock()
	if g.armed && g.handler == nil {
		g.handler = ctx
	}
	held := g.armed && ctx != g.handler
	g.mu.Unlock()
	if held {
		<-g.open
	}
	return g.Store.GetRun(ctx, s, runID)
}

// TestListenReportsRunFinishedBeforeItsWatch: a run that finishes after
// the stream sent its state but before the stream's watcher first read it
// is still reported, and the stream still ends.
func TestListenReportsRunFinishedBeforeItsWatch(t *testing.T) {
	gs := &gateStore{open: make(chan struct{})}
	e := newEnv(t, withTasks, func(c *testConfig) {
		gs.Store = c.Store.(*memstore.Store)
		c.Store = gs
	})
	ts := e.serve()
	taskID, run := e.startTask("conformance-approval")
	run = e.waitStatus(alice, run.ID, interop.StatusWaitingApproval)
	gs.mu.Lock()
	gs.armed = true
	gs.mu.Unlock()
	stream, _ := e.openListen(t, ts.URL, rpc{method: "subscriptions/listen", id: `"sub-1"`, caps: tasksCaps,
		params: map[string]any{"notifications": map[string]any{"taskIds": []string{taskID}}}})
	stream.next() // acknowledged
	if m := stream.next(); m["params"].(map[string]any)["status"] != "input_required" {
		t.Fatalf("want the task waiting, got %v", m)
	}
	if _, err := e.store.ResolveInterrupt(testCtx(t), alice, interop.ResolveRequest{RunID: run.ID, InterruptID: run.Interrupts[0].ID, Outcome: interop.OutcomeAccept, Value: json.RawMessage(`{"action":"accept"}`)}); err != nil {
		t.Fatal(err)
	}
	e.waitStatus(alice, run.ID, interop.StatusCompleted)
	close(gs.open)
	for {
		m := stream.next()
		if m["method"] == "notifications/tasks" && m["params"].(map[string]any)["status"] == "completed" {
			break
		}
	}
	if m := stream.next(); m["method"] != "notifications/cancelled" {
		t.Fatalf("stream end %v", m)
	}
}
