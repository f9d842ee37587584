package a2a

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/isolation"
)

// drainEnv is a restEnv served over real HTTP with both bindings — the
// JSON-RPC interface at rpcPath, HTTP+JSON under restEnvPrefix — whose
// cancellable fixture never settles within a test, and whose blocking
// SendMessage would wait far longer than any test does.
type drainEnv struct {
	*restEnv
	server *httptest.Server
}

func newDrainEnv(t *testing.T) *drainEnv {
	t.Helper()
	e := newRESTEnv(t, func(c *testConfig) {
		c.Routed = append(c.Routed, interop.Workflow{ID: memstore.FixtureCancellable, Name: "Cancellable"})
		c.BlockTimeout = time.Minute
	})
	mux := http.NewServeMux()
	mux.Handle(rpcPath, e.srv.JSONRPC())
	mux.Handle("/", e.mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &drainEnv{restEnv: e, server: srv}
}

// post sends op on binding b over the network, as acme.
func (d *drainEnv) post(t *testing.T, ctx context.Context, b hintBinding, op hintOp) *http.Response {
	t.Helper()
	resp, err := d.send(ctx, b, op)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

// send is post for any goroutine: the caller closes the body.
func (d *drainEnv) send(ctx context.Context, b hintBinding, op hintOp) (*http.Response, error) {
	target, body := d.server.URL+restEnvPrefix+op.path, op.body
	verb := op.verb
	if b == viaJSONRPC {
		target, body, verb = d.server.URL+rpcPath, rpcBody(1, op.method, op.params), http.MethodPost
	}
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, verb, target, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Authorization", "Bearer key-acme")
	return d.server.Client().Do(req)
}

func cancellableSend(id string) hintOp {
	msg := map[string]any{"messageId": id, "role": "ROLE_USER", "parts": []any{map[string]any{"text": "wait"}},
		"metadata": map[string]any{"skillId": memstore.FixtureCancellable}}
	body, _ := json.Marshal(map[string]any{"message": msg})
	return hintOp{method: methodSendMessage, params: map[string]any{"message": msg}, verb: http.MethodPost, path: "/message:send", body: string(body)}
}

// awaitRun waits until acme has a run of workflow and returns it.
func (d *drainEnv) awaitRun(t *testing.T, workflow string) interop.Run {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		page, err := d.store.ListRuns(t.Context(), restKeys["key-acme"], interop.ListRunsQuery{WorkflowID: workflow})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Runs) > 0 {
			return page.Runs[0]
		}
	}
	t.Fatalf("no %s run appeared", workflow)
	return interop.Run{}
}

// A blocking SendMessage still waiting for its run when the server drains
// answers at once with the Task as it is — never an empty 200 — and the
// run goes on: A2A tasks are durable, the client reads it later.
func TestDrainAnswersABlockingSendMessage(t *testing.T) {
	for _, b := range hintBindings {
		t.Run(string(b), func(t *testing.T) {
			d := newDrainEnv(t)
			type answer struct {
				status int
				body   []byte
				err    error
			}
			answered := make(chan answer, 1)
			go func() {
				resp, err := d.send(t.Context(), b, cancellableSend("m-blocking"))
				if err != nil {
					answered <- answer{err: err}
					return
				}
				defer resp.Body.Close()
				body, err := io.ReadAll(resp.Body)
				answered <- answer{resp.StatusCode, body, err}
			}()
			run := d.awaitRun(t, memstore.FixtureCancellable)
			select {
			case a := <-answered:
				t.Fatalf("answered before the drain: HTTP %d %s", a.status, a.body)
			case <-time.After(50 * time.Millisecond):
			}
			d.srv.Drain()
			var a answer
			select {
			case a = <-answered:
			case <-time.After(5 * time.Second):
				t.Fatal("the blocking SendMessage outlived the drain")
			}
			if a.err != nil {
				t.Fatal(a.err)
			}
			raw := json.RawMessage(a.body)
			if b == viaJSONRPC {
				var out rpcResponse
				if err := json.Unmarshal(a.body, &out); err != nil || out.Error != nil || string(out.ID) != "1" {
					t.Fatalf("HTTP %d %s", a.status, a.body)
				}
				raw = out.Result
			}
			var sent struct{ Task wire.Task }
			if a.status != http.StatusOK || json.Unmarshal(raw, &sent) != nil || string(sent.Task.ID) != run.ID ||
				sent.Task.Status.State != wire.TaskStateWorking || sent.Task.ContextID == "" {
				t.Fatalf("HTTP %d %s: want the Task at TASK_STATE_WORKING", a.status, a.body)
			}
			if now := d.runOf(t, run.ID); now.Status != interop.StatusRunning {
				t.Fatalf("the drain changed the run: %s", now.Status)
			}
		})
	}
}

func (d *drainEnv) runOf(t *testing.T, id string) interop.Run {
	t.Helper()
	run, err := d.store.GetRun(t.Context(), restKeys["key-acme"], id)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// Streams end cleanly at a drain: what was sent stays sent, no error event
// follows, the body ends.
func TestDrainEndsStreams(t *testing.T) {
	type streamCase struct {
		name string
		op   func(d *drainEnv, t *testing.T) hintOp
		// events is how many events the stream has sent before the drain.
		events int
	}
	cases := []streamCase{
		{"SendStreamingMessage", func(*drainEnv, *testing.T) hintOp {
			op := cancellableSend("m-stream")
			op.method, op.path = methodSendStreamingMessage, "/message:stream"
			return op
		}, 1},
		{"SubscribeToTask", func(d *drainEnv, t *testing.T) hintOp {
			task, _ := d.sendTask(t, "key-acme", `{"message":{"messageId":"m-sub","role":"ROLE_USER","parts":[{"text":"wait"}],"metadata":{"skillId":"`+memstore.FixtureApproval+`"}}}`)
			return hintOp{method: methodSubscribeToTask, params: map[string]any{"id": task.ID},
				verb: http.MethodPost, path: "/tasks/" + isolation.Project(string(task.ID)) + ":subscribe"}
		}, 1},
	}
	for _, b := range hintBindings {
		for _, tc := range cases {
			t.Run(string(b)+"/"+tc.name, func(t *testing.T) {
				d := newDrainEnv(t)
				resp := d.post(t, t.Context(), b, tc.op(d, t))
				if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
					t.Fatalf("HTTP %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
				}
				s := &rpcStream{resp: resp, r: bufio.NewReader(resp.Body)}
				var frames [][]byte
				for len(frames) < tc.events {
					data, err := s.next()
					if err != nil {
						t.Fatalf("before the drain: %v (%s)", err, s.raw.Bytes())
					}
					frames = append(frames, data)
				}
				ended := make(chan error, 1)
				go func() {
					for {
						data, err := s.next()
						if err != nil {
							ended <- err
							return
						}
						frames = append(frames, data)
					}
				}()
				d.srv.Drain()
				select {
				case err := <-ended:
					if !errors.Is(err, io.EOF) {
						t.Fatalf("the stream was cut, not ended: %v (%s)", err, s.raw.Bytes())
					}
				case <-time.After(5 * time.Second):
					t.Fatal("the stream outlived the drain")
				}
				for _, f := range frames {
					if b == viaJSONRPC {
						rpcEvent(t, f, "1")
						continue
					}
					var sr wire.StreamResponse
					if strings.Contains(string(f), `"error"`) || json.Unmarshal(f, &sr) != nil {
						t.Fatalf("frame %s is not an event", f)
					}
				}
			})
		}
	}
}

// After Drain every request on either interface is refused in the
// binding's shape before anything is resolved or recorded — or read: a
// JSON-RPC request, single, batch or notification, is answered 503 with
// one error -32000 (reason SERVER_ERROR) whose id is null, HTTP+JSON 503
// UNAVAILABLE. The public card is still served. Drain is idempotent and
// safe to call concurrently.
func TestDrainRefusesNewRequests(t *testing.T) {
	d, rec := recordingEnv(t)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(d.srv.Drain)
	}
	wg.Wait()
	d.srv.Drain()
	ctx := t.Context()

	for _, body := range []string{
		rpcBody("r-7", methodListTasks, nil),
		`[` + rpcBody(1, methodListTasks, nil) + `,` + rpcBody(2, methodGetTask, map[string]any{"id": "x"}) + `]`,
		rpcBody(nil, methodListTasks, nil),
	} {
		res := d.rawRPC(t, ctx, "key-acme", "1.0", body)
		out := wantRPCError(t, rpcReply{status: res.status, header: res.header, body: res.body}, http.StatusServiceUnavailable, codeServerError, "SERVER_ERROR")
		if string(out.ID) != "null" {
			t.Errorf("id %s, want null: the body is not read", out.ID)
		}
	}
	for _, c := range []restCall{
		{method: http.MethodGet, path: "/tasks", key: "key-acme"},
		{method: http.MethodPost, path: "/message:send", key: "key-acme", body: restSendBody("m-late", "hi")},
		{method: http.MethodGet, path: "/tasks"}, // no credential: still 503, nothing resolved
	} {
		restWantStatus(t, d.do(t, c), http.StatusServiceUnavailable, "UNAVAILABLE", "SERVER_ERROR")
	}
	if n := len(rec.since(0)); n != 0 {
		t.Errorf("%d negotiation records for refused requests, want none", n)
	}
	if page, _ := d.store.ListRuns(ctx, restKeys["key-acme"], interop.ListRunsQuery{}); len(page.Runs) != 0 {
		t.Errorf("a refused SendMessage started %d runs", len(page.Runs))
	}
	if card := d.do(t, restCall{method: http.MethodGet, path: restEnvCardPath}); card.status != http.StatusOK {
		t.Errorf("public card after the drain: HTTP %d", card.status)
	}

	// a2a-go reads the HTTP+JSON refusal as its ErrServerError.
	srv := httptest.NewServer(d.mux)
	defer srv.Close()
	u, _ := url.Parse(srv.URL + restEnvPrefix)
	_, err := a2aclient.NewRESTTransport(u, srv.Client()).ListTasks(ctx, peerParams("key-acme"), &wire.ListTasksRequest{})
	if !errors.Is(err, wire.ErrServerError) {
		t.Errorf("a2a-go REST client: %v, want ErrServerError", err)
	}
}
