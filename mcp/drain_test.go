package mcp

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/isolation"
	"github.com/wopinterop/wopinterop/mcp/internal/mount"
)

// httpAnswer is one HTTP response read to its end.
type httpAnswer struct {
	status int
	ctype  string
	body   string
	err    error
}

// startCall sends q to ts in the background and returns where its answer
// will arrive.
func startCall(t *testing.T, ts interface {
	Client() *http.Client
}, url string, q rpc) <-chan httpAnswer {
	t.Helper()
	req := clientRequest(t, testCtx(t), url, q)
	out := make(chan httpAnswer, 1)
	go func() {
		res, err := ts.Client().Do(req)
		if err != nil {
			out <- httpAnswer{err: err}
			return
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		out <- httpAnswer{status: res.StatusCode, ctype: res.Header.Get("Content-Type"), body: string(b), err: err}
	}()
	return out
}

func await(t *testing.T, c <-chan httpAnswer) httpAnswer {
	t.Helper()
	select {
	case a := <-c:
		if a.err != nil {
			t.Fatalf("request failed: %v", a.err)
		}
		return a
	case <-time.After(5 * time.Second):
		t.Fatal("no answer 5 s after Drain")
	}
	return httpAnswer{}
}

// TestDrainBlockingCall: a blocking tools/call waiting on a working run
// answers at once when the mount drains — 503 with a JSON-RPC -32603 that
// names the request — and, since that answer hands the run to nobody,
// the run is cancelled as the request owned it (mcp-request-cancelled).
func TestDrainBlockingCall(t *testing.T) {
	e := newEnv(t, func(c *testConfig) { c.BlockTimeout = time.Minute })
	ts := e.serve()
	pending := startCall(t, ts, ts.URL, rpc{method: "tools/call", id: `"call-1"`, params: map[string]any{"name": "waits"}})
	run := e.waitRuns(alice, 1)[0]
	e.waitStatus(alice, run.ID, interop.StatusRunning)
	e.srv.Drain()
	a := await(t, pending)
	const want = `{"jsonrpc":"2.0","id":"call-1","error":{"code":-32603,"message":"Server shutting down: the tool call was cancelled"}}`
	if a.status != http.StatusServiceUnavailable || a.ctype != "application/json" || a.body != want {
		t.Fatalf("got %d %q %s\nwant 503 application/json %s", a.status, a.ctype, a.body, want)
	}
	if reason := e.cancelReason(run.ID); reason != ReasonRequestCancelled {
		t.Fatalf("cancel reason = %q, want %q", reason, ReasonRequestCancelled)
	}
}

// TestDrainTaskCall: a call that declared the Tasks extension and waits
// (TaskWait) on a working run answers CreateTaskResult at once when the
// mount drains; the run keeps running and the client can follow it.
func TestDrainTaskCall(t *testing.T) {
	e := newEnv(t, withTasks, func(c *testConfig) { c.TaskWait = time.Minute })
	ts := e.serve()
	pending := startCall(t, ts, ts.URL, rpc{method: "tools/call", caps: tasksCaps, params: map[string]any{"name": "waits"}})
	run := e.waitRuns(alice, 1)[0]
	e.waitStatus(alice, run.ID, interop.StatusRunning)
	e.srv.Drain()
	a := await(t, pending)
	if a.status != http.StatusOK || a.ctype != "application/json" {
		t.Fatalf("got %d %q %s", a.status, a.ctype, a.body)
	}
	checkGolden(t, "drain_task", []byte(a.body))
	if !strings.Contains(a.body, `"taskId":"`+isolation.Project(run.ID)+`"`) {
		t.Fatalf("the task is not the run %s: %s", run.ID, a.body)
	}
	// Close waits for the disconnect watches: a late cancel would show.
	ts.Close()
	if err := e.srv.Close(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	got, err := e.store.GetRun(testCtx(t), alice, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != interop.StatusRunning || got.CancelReason != "" {
		t.Fatalf("the task's run is %s (cancel reason %q) after the drain", got.Status, got.CancelReason)
	}
}

// TestDrainSettledRun: a call whose run already suspended when the drain
// wakes it gets its ordinary answer (input_required), not the shutdown
// error, and the run keeps waiting for that answer.
func TestDrainSettledRun(t *testing.T) {
	e := newEnv(t, withTasks, func(c *testConfig) { c.TaskWait = time.Minute })
	e.srv.Drain()
	// A request that got past the guard just before the drain: served
	// directly, as the guard would have let it through.
	r := rpc{method: "tools/call", params: map[string]any{"name": "conformance-approval"}}.request()
	rec := httptest.NewRecorder()
	x := &exchange{ResponseWriter: rec, s: e.srv}
	x.call = call{Call: mount.Call{Subject: alice, Caps: mount.Caps{Elicitation: true, ElicitationForm: true}}, id: []byte("7"), method: methodToolsCall, r: r}
	run, _, err := e.store.CreateRun(testCtx(t), alice, interop.CreateRunRequest{WorkflowID: "conformance-approval", Inputs: []byte(`{}`), Transport: interop.TransportMCP})
	if err != nil {
		t.Fatal(err)
	}
	run = e.waitStatus(alice, run.ID, interop.StatusWaitingApproval)
	e.srv.own(&x.call, run.ID)
	res, err := e.srv.respond(r.Context(), &invocation{c: &x.call, params: callParams{name: "conformance-approval", args: []byte(`{}`)}}, run, 0)
	e.srv.reply(x, res, err)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"resultType":"input_required"`) {
		t.Fatalf("got %d %s", rec.Code, rec.Body)
	}
	if got := e.waitStatus(alice, run.ID, interop.StatusWaitingApproval); got.CancelReason != "" {
		t.Fatalf("run cancelled: %q", got.CancelReason)
	}
}

// TestDrainRefusesNewRequests: after Drain every request — a call, a
// read, a notification, even a GET — is refused before its body is read,
// with 503 and a JSON-RPC -32603 without id, and nothing is created.
func TestDrainRefusesNewRequests(t *testing.T) {
	e := newEnv(t, withTasks)
	e.srv.Drain()
	e.srv.Drain() // idempotent
	const want = `{"jsonrpc":"2.0","error":{"code":-32603,"message":"Server shutting down"}}`
	get := rpc{method: "tools/list"}.request()
	get.Method = http.MethodGet
	for _, r := range []*http.Request{
		rpc{method: "tools/call", params: map[string]any{"name": "conformance-noop"}}.request(),
		rpc{method: "tools/list"}.request(),
		rpc{method: "notifications/cancelled", body: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`}.request(),
		rpc{method: "tools/list", hdr: map[string]string{"Authorization": ""}}.request(),
		get,
	} {
		rec := httptest.NewRecorder()
		e.h.ServeHTTP(rec, r)
		if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Content-Type") != "application/json" || rec.Body.String() != want {
			t.Errorf("%s %s: got %d %s", r.Method, r.Header.Get("Mcp-Method"), rec.Code, rec.Body)
		}
	}
	if n := e.runsOf(alice).Total; n != 0 {
		t.Fatalf("a refused request created %d runs", n)
	}
}

// TestDrainEndsListen: an open subscriptions/listen stream ends with a
// final notifications/cancelled when the mount drains, as on Close.
func TestDrainEndsListen(t *testing.T) {
	e := newEnv(t, withTasks)
	ts := e.serve()
	req := clientRequest(t, testCtx(t), ts.URL, rpc{method: "subscriptions/listen", id: `"listen-1"`, params: map[string]any{"notifications": map[string]any{}}})
	res, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	lines := bufio.NewScanner(res.Body)
	var events []string
	ended := make(chan struct{})
	acked := make(chan struct{})
	go func() {
		defer close(ended)
		for lines.Scan() {
			if data, ok := strings.CutPrefix(lines.Text(), "data: "); ok {
				events = append(events, data)
				if len(events) == 1 {
					close(acked)
				}
			}
		}
	}()
	select {
	case <-acked:
	case <-time.After(5 * time.Second):
		t.Fatal("no acknowledgement")
	}
	e.srv.Drain()
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the listen stream outlived the drain")
	}
	const last = `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"listen-1"},"requestId":"listen-1","reason":"The server is shutting down."}}`
	if len(events) != 2 || events[1] != last {
		t.Fatalf("stream = %q, want the acknowledgement, then %s", events, last)
	}
}

// TestDrainConcurrent: Drain from several goroutines while calls arrive
// and wait: every call gets an answer in MCP's shape, none an empty body.
func TestDrainConcurrent(t *testing.T) {
	e := newEnv(t, withTasks, func(c *testConfig) { c.BlockTimeout = time.Minute; c.TaskWait = time.Minute })
	ts := e.serve()
	var calls []<-chan httpAnswer
	for i := range 8 {
		q := rpc{method: "tools/call", params: map[string]any{"name": "waits"}}
		if i%2 == 1 {
			q.caps = tasksCaps
		}
		calls = append(calls, startCall(t, ts, ts.URL, q))
	}
	e.waitRuns(alice, 4)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(e.srv.Drain)
	}
	wg.Wait()
	for _, c := range calls {
		a := await(t, c)
		ok := a.status == http.StatusOK && strings.Contains(a.body, `"resultType":"task"`) ||
			a.status == http.StatusServiceUnavailable && strings.Contains(a.body, `"code":-32603`)
		if !ok || a.ctype != "application/json" {
			t.Errorf("got %d %q %s", a.status, a.ctype, a.body)
		}
	}
}
