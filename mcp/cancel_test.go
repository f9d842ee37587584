package mcp

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/interop"
)

// serve starts a real HTTP server for e.
func (e *env) serve() *httptest.Server {
	ts := httptest.NewServer(e.h)
	e.t.Cleanup(ts.Close)
	return ts
}

// rawRequest renders q as HTTP/1.1 bytes with lower-case header names, as
// a client may send them.
func rawRequest(q rpc, host string) []byte {
	r := q.request()
	body, _ := io.ReadAll(r.Body)
	var b strings.Builder
	b.WriteString("POST /mcp HTTP/1.1\r\nhost: " + host + "\r\n")
	for k, vs := range r.Header {
		for _, v := range vs {
			b.WriteString(strings.ToLower(k) + ": " + v + "\r\n")
		}
	}
	b.WriteString("content-length: " + strconv.Itoa(len(body)) + "\r\n\r\n")
	b.Write(body)
	return []byte(b.String())
}

// cancelledBy waits for runID to end cancelled and returns the reason of
// its run.cancelling event.
func (e *env) cancelReason(runID string) string {
	e.t.Helper()
	run := e.waitStatus(alice, runID, interop.StatusCancelled)
	return run.CancelReason
}

// TestDisconnectBeforeResponseCancels: a client that goes away before the
// whole response is sent cancels the run (OpenWOP interop.md §MCP tasks and cancellation).
func TestDisconnectBeforeResponseCancels(t *testing.T) {
	e := newEnv(t)
	ts := e.serve()
	ctx, cancel := context.WithCancel(context.Background())
	req := clientRequest(t, ctx, ts.URL, rpc{method: "tools/call", params: map[string]any{"name": "waits"}})
	done := make(chan error, 1)
	go func() {
		resp, err := ts.Client().Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	run := e.waitRuns(alice, 1)[0]
	cancel()
	if err := <-done; err == nil {
		t.Fatal("the request finished despite the cancel")
	}
	if reason := e.cancelReason(run.ID); reason != ReasonRequestCancelled {
		t.Fatalf("cancel reason = %q, want %q", reason, ReasonRequestCancelled)
	}
}

// TestRawSocketDisconnect: the same over a bare TCP connection that writes
// a request and closes without reading anything.
func TestRawSocketDisconnect(t *testing.T) {
	e := newEnv(t)
	ts := e.serve()
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Write(rawRequest(rpc{method: "tools/call", params: map[string]any{"name": "waits"}}, ts.Listener.Addr().String())); err != nil {
		t.Fatal(err)
	}
	run := e.waitRuns(alice, 1)[0]
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	if reason := e.cancelReason(run.ID); reason != ReasonRequestCancelled {
		t.Fatalf("cancel reason = %q", reason)
	}
}

// TestDisconnectAfterResponse: once the whole response was sent, closing
// the connection changes nothing (OpenWOP interop.md §MCP tasks and cancellation) — for an input_required
// answer and for a task.
func TestDisconnectAfterResponse(t *testing.T) {
	cases := []struct {
		name string
		req  rpc
		want interop.RunStatus
	}{
		{"input_required", rpc{method: "tools/call", caps: `{"elicitation":{}}`, params: map[string]any{"name": "conformance-approval"}}, interop.StatusWaitingApproval},
		{"task", rpc{method: "tools/call", caps: `{"extensions":{"io.modelcontextprotocol/tasks":{}}}`, params: map[string]any{"name": "waits"}}, interop.StatusRunning},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, withTasks)
			ts := httptest.NewServer(e.h)
			conn, err := net.Dial("tcp", ts.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := conn.Write(rawRequest(tc.req, ts.Listener.Addr().String())); err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("%d %s %v", resp.StatusCode, body, err)
			}
			conn.Close()
			// Close waits for every handler and every disconnect watch the
			// mount armed, so a late cancel would have happened by now.
			ts.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := e.srv.Close(ctx); err != nil {
				t.Fatal(err)
			}
			run := e.onlyRun(alice)
			if run.Status != tc.want || run.CancelReason != "" {
				t.Fatalf("run is %s (cancel reason %q) after the client left", run.Status, run.CancelReason)
			}
		})
	}
}

// TestNotificationsCancelled: notifications/cancelled naming an in-flight
// request of the same Subject cancels its run; the call ends with an
// isError result on its own stream (OpenWOP interop.md §MCP tasks and cancellation).
func TestNotificationsCancelled(t *testing.T) {
	e := newEnv(t)
	recs := make(chan *httptest.ResponseRecorder, 1)
	go func() {
		recs <- e.do(rpc{method: "tools/call", id: `"call-7"`, params: map[string]any{"name": "waits"}})
	}()
	run := e.waitRuns(alice, 1)[0]
	cancelled := func(as, id string) int {
		return e.do(rpc{method: "notifications/cancelled", as: as, body: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `}}`}).Code
	}
	// Another principal, or a number id instead of the string one, names
	// nothing.
	for _, c := range [][2]string{{"acme:bob", `"call-7"`}, {"globex:alice", `"call-7"`}, {"acme:alice", `7`}} {
		if code := cancelled(c[0], c[1]); code != http.StatusAccepted {
			t.Fatalf("notification answered %d", code)
		}
	}
	if got := e.waitStatus(alice, run.ID, interop.StatusRunning); got.Status != interop.StatusRunning {
		t.Fatal("a foreign notification touched the run")
	}
	if code := cancelled("acme:alice", `"call-7"`); code != http.StatusAccepted {
		t.Fatalf("notification answered %d", code)
	}
	rec := <-recs
	text, isError := toolResult(t, result(t, rec))
	if !isError || text != "The tool call was cancelled." {
		t.Fatalf("call ended with %q isError=%v", text, isError)
	}
	if reason := e.cancelReason(run.ID); reason != ReasonRequestCancelled {
		t.Fatalf("cancel reason = %q", reason)
	}
}

// TestBlockTimeout: a blocking call that outlives BlockTimeout is answered
// with a task when the request declared the extension, and otherwise
// stops its run with an isError result.
func TestBlockTimeout(t *testing.T) {
	e := newEnv(t, withTasks, func(c *testConfig) { c.BlockTimeout = 30 * time.Millisecond; c.TaskWait = 30 * time.Millisecond })
	text, isError := toolResult(t, result(t, e.do(rpc{method: "tools/call", params: map[string]any{"name": "waits"}})))
	if !isError || !strings.Contains(text, "time limit") {
		t.Fatalf("result %q isError=%v", text, isError)
	}
	run := e.onlyRun(alice)
	if reason := e.cancelReason(run.ID); reason != ReasonRequestTimeout {
		t.Fatalf("cancel reason = %q", reason)
	}
	res := result(t, e.do(rpc{method: "tools/call", caps: `{"extensions":{"io.modelcontextprotocol/tasks":{}}}`, params: map[string]any{"name": "waits"}}))
	if res["resultType"] != "task" || res["status"] != "working" {
		t.Fatalf("want a working task, got %v", res)
	}
}

// TestTaskAnswers: with the extension declared, a suspended run is a task
// in input_required (never an InputRequiredResult), a finished one may be
// a plain result, and a tool that forbids tasks never becomes one.
func TestTaskAnswers(t *testing.T) {
	e := newEnv(t, withTasks, func(c *testConfig) { c.TaskWait = 5 * time.Second })
	tasksCaps := `{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}`
	res := result(t, e.do(rpc{method: "tools/call", caps: tasksCaps, params: map[string]any{"name": "conformance-approval"}}))
	if res["resultType"] != "task" || res["status"] != "input_required" || res["requestState"] != nil || res["inputRequests"] != nil {
		t.Fatalf("want a bare input_required task, got %v", res)
	}
	res = result(t, e.do(rpc{method: "tools/call", caps: tasksCaps, params: map[string]any{"name": "conformance-noop"}}))
	if res["resultType"] != "complete" || res["taskId"] != nil {
		t.Fatalf("a finished run: %v", res)
	}
	res = result(t, e.do(rpc{method: "tools/call", caps: tasksCaps, params: map[string]any{"name": wfTaskRequired}}))
	if res["resultType"] != "complete" && res["resultType"] != "task" {
		t.Fatalf("task-required tool: %v", res)
	}
	// A legacy "task" hint does not turn a forbidden tool into a task.
	res = result(t, e.do(rpc{method: "tools/call", caps: tasksCaps, params: map[string]any{"name": wfTaskForbidden, "task": map[string]any{"ttl": 1000}}}))
	if res["resultType"] != "complete" {
		t.Fatalf("task-forbidden tool: %v", res)
	}
	// Without the mount serving tasks, a declared extension is opaque.
	e2 := newEnv(t)
	wantError(t, e2.do(rpc{method: "tools/call", caps: `{"extensions":{"io.modelcontextprotocol/tasks":{}}}`, params: map[string]any{"name": "conformance-approval"}}), 400, codeMissingCapability)
}

// clientRequest turns q into a request for an http.Client against base.
func clientRequest(t testing.TB, ctx context.Context, base string, q rpc) *http.Request {
	t.Helper()
	in := q.request()
	out, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/mcp", in.Body)
	if err != nil {
		t.Fatal(err)
	}
	out.Header = in.Header
	return out
}
