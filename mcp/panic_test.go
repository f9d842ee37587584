package mcp

import (
	"bufio"
	"bytes"
	"context"
	"iter"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/mcp/internal/mount"
)

// panicStore is a memstore whose armed methods panic, as a buggy host
// store might.
type panicStore struct {
	*memstore.Store
	mu    sync.Mutex
	armed map[string]bool
	// stall, when set, makes WatchRun's events and WaitRun wait for it to
	// close, whatever their context says.
	stall chan struct{}
}

func (p *panicStore) arm(methods ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.armed = map[string]bool{}
	for _, m := range methods {
		p.armed[m] = true
	}
}

func (p *panicStore) check(method string) {
	p.mu.Lock()
	armed := p.armed[method]
	p.mu.Unlock()
	if armed {
		panic("store exploded in " + method)
	}
}

func (p *panicStore) ListWorkflows(ctx context.Context, s interop.Subject) ([]interop.Workflow, error) {
	p.check("ListWorkflows")
	return p.Store.ListWorkflows(ctx, s)
}

func (p *panicStore) CreateRun(ctx context.Context, s interop.Subject, req interop.CreateRunRequest) (interop.Run, bool, error) {
	p.check("CreateRun")
	return p.Store.CreateRun(ctx, s, req)
}

func (p *panicStore) GetRun(ctx context.Context, s interop.Subject, runID string) (interop.Run, error) {
	p.check("GetRun")
	return p.Store.GetRun(ctx, s, runID)
}

func (p *panicStore) CancelRun(ctx context.Context, s interop.Subject, runID, reason string) (interop.Run, error) {
	p.check("CancelRun")
	return p.Store.CancelRun(ctx, s, runID, reason)
}

func (p *panicStore) WatchRun(ctx context.Context, s interop.Subject, runID string, after int64) (iter.Seq2[interop.RunEvent, error], error) {
	p.check("WatchRun")
	if p.stall != nil {
		return func(func(interop.RunEvent, error) bool) { <-p.stall }, nil
	}
	return p.Store.WatchRun(ctx, s, runID, after)
}

func (p *panicStore) WaitRun(ctx context.Context, s interop.Subject, runID string, settled func(interop.RunStatus) bool) (interop.Run, error) {
	p.check("WaitRun")
	if p.stall != nil {
		<-p.stall
		return interop.Run{}, context.Canceled
	}
	return p.Store.WaitRun(ctx, s, runID, settled)
}

// logRecorder keeps what the mount logs, one record per line.
type logRecorder struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logRecorder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logRecorder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// panics returns the records of recovered panics.
func (l *logRecorder) panics() []string {
	var out []string
	for line := range strings.Lines(l.String()) {
		if strings.Contains(line, `msg="mcp: recovered from a panic"`) {
			out = append(out, line)
		}
	}
	return out
}

// wantOnePanic checks that exactly one panic was logged, at error level,
// where it happened, and without the caller's credential or arguments.
func (l *logRecorder) wantOnePanic(t testing.TB, where string) {
	t.Helper()
	waitFor(t, 5*time.Second, "the panic logged", func() bool { return len(l.panics()) > 0 })
	got := l.panics()
	if len(got) != 1 || !strings.Contains(got[0], " level=ERROR ") || !strings.Contains(got[0], "in="+quoteIfSpaced(where)+" ") ||
		!strings.Contains(got[0], `panic="store exploded`) && !strings.Contains(got[0], `panic="tool exploded`) {
		t.Fatalf("want one error record of a panic in %s, got %q", where, got)
	}
	for _, secret := range []string{"Bearer", "acme:alice", "s3cr3t"} {
		if strings.Contains(l.String(), secret) {
			t.Fatalf("the log holds %q:\n%s", secret, l)
		}
	}
}

func quoteIfSpaced(s string) string {
	if strings.Contains(s, " ") {
		return `"` + s + `"`
	}
	return s
}

// newPanicEnv is an env over a panicStore, logging into a logRecorder.
func newPanicEnv(t *testing.T, opts ...func(*testConfig)) (*env, *panicStore, *logRecorder) {
	t.Helper()
	ps := &panicStore{}
	logs := &logRecorder{}
	opts = append(opts, func(c *testConfig) {
		ps.Store = c.Store.(*memstore.Store)
		c.Store = ps
		c.Logger = slog.New(slog.NewTextHandler(logs, nil))
	})
	return newEnv(t, opts...), ps, logs
}

// TestPanicAnswersRequest: a panic on the request path — in the
// SubjectResolver or the RunStore — is answered HTTP 500 with a JSON-RPC
// -32603 in MCP's shape, naming the request id once it is known, logged
// once, and the mount serves the next request.
func TestPanicAnswersRequest(t *testing.T) {
	cases := []struct {
		name, golden string
		arm          string // a store method; "" makes the resolver panic
		req          func(e *env) rpc
	}{
		{"resolver", "error_panic_before_id", "", func(*env) rpc { return rpc{method: "tools/list", as: "explode"} }},
		{"tools/list", "error_panic", "ListWorkflows", func(*env) rpc { return rpc{method: "tools/list"} }},
		{"tools/call", "error_panic", "CreateRun", func(*env) rpc {
			return rpc{method: "tools/call", params: map[string]any{"name": "conformance-noop", "arguments": map[string]any{"note": "s3cr3t"}}}
		}},
		{"tasks/get", "error_panic", "GetRun", func(e *env) rpc {
			taskID, _ := e.startTask("waits")
			return taskReq("tasks/get", taskID, nil)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, ps, logs := newPanicEnv(t, withTasks, func(c *testConfig) {
				c.Subjects = interop.SubjectResolverFunc(func(r *http.Request) (interop.Subject, error) {
					if r.Header.Get("Authorization") == "Bearer explode" {
						panic("resolver exploded")
					}
					return testSubjects.ResolveSubject(r)
				})
			})
			req := tc.req(e)
			if tc.arm != "" {
				ps.arm(tc.arm)
			}
			rec := e.do(req)
			wantError(t, rec, http.StatusInternalServerError, codeInternalError)
			checkGolden(t, tc.golden, rec.Body.Bytes())
			if tc.arm == "" {
				got := logs.panics()
				if len(got) != 1 || !strings.Contains(got[0], `panic="resolver exploded"`) {
					t.Fatalf("want one panic record, got %q", got)
				}
			} else {
				logs.wantOnePanic(t, "request")
			}
			ps.arm()
			result(t, e.do(rpc{method: "tools/list"}))
		})
	}
}

// TestPanicInCallCancelsItsRun: a tools/call whose store panics once its
// run exists answers -32603, which hands the run to nobody, so the run is
// cancelled as for any request that ends without delivering it, and the
// request is no longer in flight.
func TestPanicInCallCancelsItsRun(t *testing.T) {
	e, ps, logs := newPanicEnv(t)
	ts := e.serve()
	ps.arm("WaitRun") // the status wait of tools/call (internal/settle)
	resp, err := ts.Client().Do(clientRequest(t, testCtx(t), ts.URL, rpc{method: "tools/call", id: `"c-1"`, params: map[string]any{"name": "waits"}}))
	if err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	_, _ = body.ReadFrom(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusInternalServerError || body.String() != `{"jsonrpc":"2.0","id":"c-1","error":{"code":-32603,"message":"Internal error"}}` {
		t.Fatalf("answer %d %s", resp.StatusCode, body.String())
	}
	logs.wantOnePanic(t, "request")
	ps.arm()
	run := e.onlyRun(alice)
	if reason := e.cancelReason(run.ID); reason != ReasonRequestCancelled {
		t.Fatalf("cancel reason %q", reason)
	}
	waitFor(t, 5*time.Second, "the request out of flight", func() bool {
		e.srv.inflight.mu.Lock()
		defer e.srv.inflight.mu.Unlock()
		return len(e.srv.inflight.m) == 0
	})
}

// panicTools is an extension with one native tool, "handoff", which
// reports progress and hands off to the "waits" workflow.
var panicTools = &fakeExtension{
	tools: []mount.Tool{{Name: "handoff"}},
	call: func(_ context.Context, tc *mount.ToolCall) (mount.ToolOutcome, error) {
		notifyProgress(tc, 1, "started")
		return mount.ToolOutcome{Handoff: &mount.Handoff{WorkflowID: "waits"}}, nil
	},
}

// TestPanicOnStream: a panic after a native tool's progress opened an SSE
// stream — here in the store, once the tool handed its call to a run — is
// answered as the last event of that stream. (A panic in the host's tool
// itself is mcp/ext's to contain.)
func TestPanicOnStream(t *testing.T) {
	e, ps, logs := newPanicEnv(t, withExtension(panicTools))
	ps.arm("CreateRun")
	rec := e.do(progressCall("handoff"))
	logs.wantOnePanic(t, "request")
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "text/event-stream" {
		t.Fatalf("answer %d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
	stream := &sse{t: t, sc: bufio.NewScanner(bytes.NewReader(rec.Body.Bytes()))}
	if m := stream.next(); m["method"] != "notifications/progress" {
		t.Fatalf("first event %v", m)
	}
	stream.next()
	if want := `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error"}}`; string(stream.raw) != want {
		t.Fatalf("last event %s, want %s", stream.raw, want)
	}
	if stream.sc.Scan() {
		t.Fatalf("more after the error: %q", stream.sc.Text())
	}
}

// TestPanicInListenWatcher: a store that panics while a listen stream's
// watcher follows a task ends that stream — with a -32603 naming the
// listen request, since the task can no longer be followed — and nothing
// else.
func TestPanicInListenWatcher(t *testing.T) {
	e, ps, logs := newPanicEnv(t, withTasks)
	ts := e.serve()
	taskID, _ := e.startTask("waits")
	ps.arm("WatchRun")
	listen := rpc{method: "subscriptions/listen", id: `"sub-1"`, caps: tasksCaps, params: map[string]any{"notifications": map[string]any{"taskIds": []string{taskID}}}}
	stream, _ := e.openListen(t, ts.URL, listen)
	if m := stream.next(); m["method"] != "notifications/subscriptions/acknowledged" {
		t.Fatalf("first message %v", m)
	}
	if m := stream.next(); m["params"].(map[string]any)["status"] != "working" {
		t.Fatalf("want the working task, got %v", m)
	}
	stream.next()
	if want := `{"jsonrpc":"2.0","id":"sub-1","error":{"code":-32603,"message":"Internal error: a subscribed task can no longer be followed"}}`; string(stream.raw) != want {
		t.Fatalf("stream end %s, want %s", stream.raw, want)
	}
	if stream.sc.Scan() {
		t.Fatalf("more after the error: %q", stream.sc.Text())
	}
	logs.wantOnePanic(t, "listen watcher")
	ps.arm()
	other, _ := e.openListen(t, ts.URL, listen)
	if m := other.next(); m["method"] != "notifications/subscriptions/acknowledged" {
		t.Fatalf("a new listen: %v", m)
	}
}

// TestPanicInInputGuard: a store that panics while the task input guard
// follows a task's run leaves that task unguarded, logged, and nothing
// else.
func TestPanicInInputGuard(t *testing.T) {
	e, ps, logs := newPanicEnv(t, withTasks)
	ps.arm("WatchRun")
	res := result(t, e.do(rpc{method: "tools/call", caps: `{"extensions":{"io.modelcontextprotocol/tasks":{}}}`, params: map[string]any{"name": "waits"}}))
	if res["resultType"] != "task" {
		t.Fatalf("want a task, got %v", res)
	}
	logs.wantOnePanic(t, "task input guard")
	ps.arm()
	result(t, e.do(taskReq("tasks/get", res["taskId"].(string), nil)))
}

// TestPanicInDisconnectWatch: a store that panics as the disconnect watch
// cancels the run of a client that went away is logged, and nothing else.
func TestPanicInDisconnectWatch(t *testing.T) {
	e, ps, logs := newPanicEnv(t)
	// The request itself stays in its wait, so the watch, not the request
	// noticing the disconnect, cancels the run.
	ps.stall = make(chan struct{})
	defer close(ps.stall)
	ts := e.serve()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if resp, err := ts.Client().Do(clientRequest(t, ctx, ts.URL, rpc{method: "tools/call", params: map[string]any{"name": "waits"}})); err == nil {
			resp.Body.Close()
		}
	}()
	run := e.waitRuns(alice, 1)[0]
	ps.arm("CancelRun")
	cancel()
	<-done
	logs.wantOnePanic(t, "disconnect watch")
	ps.arm()
	if got, err := e.store.GetRun(testCtx(t), alice, run.ID); err != nil || got.Status != interop.StatusRunning {
		t.Fatalf("run %s, %v", got.Status, err)
	}
	if _, err := e.store.CancelRun(testCtx(t), alice, run.ID, "test over"); err != nil {
		t.Fatal(err)
	}
}
