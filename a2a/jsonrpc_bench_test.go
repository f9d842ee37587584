package a2a

// The JSON-RPC binding against two references, run together so the ratios
// come from one machine state:
//
//	ours   Server.JSONRPC over memstore (subject resolution, version
//	       negotiation with its audit record kept in memstore's host-event
//	       log, gate, strict decode, id
//	       parsing, the store read, projection, encoding)
//	bare   a plain http.HandlerFunc that decodes the same request with
//	       encoding/json and writes the same Task JSON, marshalled each time
//	a2ago  a2asrv.NewJSONRPCHandler over a RequestHandler stub that returns
//	       the same fixed Task
//
// Every variant serves the same *http.Request (its body rewound) into a
// fresh httptest.ResponseRecorder, so the harness costs the same in each.
//
//	go test ./a2a -run '^$' -bench 'GetTask|SendMessageNoop' -benchmem

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/wopinterop/wopinterop/internal/processcpu"
	"github.com/wopinterop/wopinterop/interop/memstore"
)

// rewindBody is a request body that can be served again without
// allocating.
type rewindBody struct{ bytes.Reader }

func (*rewindBody) Close() error { return nil }

// benchRequest is one POST whose body is reset before each use.
type benchRequest struct {
	r    *http.Request
	body *rewindBody
}

func newBenchRequest(b *testing.B, body []byte) *benchRequest {
	b.Helper()
	rb := &rewindBody{}
	rb.Reset(body)
	r := httptest.NewRequest(http.MethodPost, rpcPath, rb)
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("A2A-Version", "1.0")
	r.Header.Set("Authorization", "Bearer "+rpcKeyAcme)
	r.ContentLength = int64(len(body))
	return &benchRequest{r: r, body: rb}
}

// serve runs h on the request with body and checks the status.
func (br *benchRequest) serve(b *testing.B, h http.Handler, body []byte) {
	br.body.Reset(body)
	br.r.ContentLength = int64(len(body))
	br.r.Body = br.body
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, br.r)
	if rec.Code != http.StatusOK {
		b.Fatalf("HTTP %d: %s", rec.Code, rec.Body)
	}
}

// newBenchEnv is the JSON-RPC test host. Its Auditor delivers every
// negotiation record synchronously into memstore's host-event log, so
// the record's whole cost — building it, validating and keeping it — is
// paid on the request path and shows in ns/op; cpu-ns/op counts the
// process's CPU, so work moved to another goroutine or core (the run's
// own goroutine, GC) is charged to the request too.
func newBenchEnv(b *testing.B) *rpcEnv {
	b.Helper()
	return newRPCEnv(b)
}

// loop runs serve b.N times and reports the process CPU per operation
// (user + system, every thread) beside the wall time.
func loop(b *testing.B, serve func()) {
	b.ReportAllocs()
	start := processcpu.Used()
	for b.Loop() {
		serve()
	}
	b.ReportMetric(float64(processcpu.Used()-start)/float64(b.N), "cpu-ns/op")
}

// bareHandler decodes the request as a minimal server would and writes
// task as the result.
func bareHandler(task *wire.Task, wrap bool) http.Handler {
	type request struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params"`
	}
	type response struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  any             `json:"result"`
	}
	type sendResponse struct {
		Task *wire.Task `json:"task"`
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var req request
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var result any = task
		if wrap {
			var p wire.SendMessageRequest
			if err := json.Unmarshal(req.Params, &p); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			result = sendResponse{Task: task}
		} else {
			var p wire.GetTaskRequest
			if err := json.Unmarshal(req.Params, &p); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
		}
		out, err := json.Marshal(response{JSONRPC: "2.0", ID: req.ID, Result: result})
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(out)
	})
}

// a2aStub is a trivial a2asrv.RequestHandler returning one fixed task.
type a2aStub struct{ task *wire.Task }

var _ a2asrv.RequestHandler = a2aStub{}

func (s a2aStub) GetTask(context.Context, *wire.GetTaskRequest) (*wire.Task, error) {
	return s.task, nil
}

func (s a2aStub) ListTasks(context.Context, *wire.ListTasksRequest) (*wire.ListTasksResponse, error) {
	return &wire.ListTasksResponse{Tasks: []*wire.Task{s.task}}, nil
}

func (s a2aStub) CancelTask(context.Context, *wire.CancelTaskRequest) (*wire.Task, error) {
	return s.task, nil
}

func (s a2aStub) SendMessage(context.Context, *wire.SendMessageRequest) (wire.SendMessageResult, error) {
	return s.task, nil
}

func (s a2aStub) SubscribeToTask(context.Context, *wire.SubscribeToTaskRequest) iter.Seq2[wire.Event, error] {
	return func(yield func(wire.Event, error) bool) { yield(s.task, nil) }
}

func (s a2aStub) SendStreamingMessage(context.Context, *wire.SendMessageRequest) iter.Seq2[wire.Event, error] {
	return func(yield func(wire.Event, error) bool) { yield(s.task, nil) }
}

func (a2aStub) GetTaskPushConfig(context.Context, *wire.GetTaskPushConfigRequest) (*wire.PushConfig, error) {
	return nil, wire.ErrPushNotificationNotSupported
}

func (a2aStub) ListTaskPushConfigs(context.Context, *wire.ListTaskPushConfigRequest) (*wire.ListTaskPushConfigResponse, error) {
	return nil, wire.ErrPushNotificationNotSupported
}

func (a2aStub) CreateTaskPushConfig(context.Context, *wire.PushConfig) (*wire.PushConfig, error) {
	return nil, wire.ErrPushNotificationNotSupported
}

func (a2aStub) DeleteTaskPushConfig(context.Context, *wire.DeleteTaskPushConfigRequest) error {
	return wire.ErrPushNotificationNotSupported
}

func (a2aStub) GetExtendedAgentCard(context.Context, *wire.GetExtendedAgentCardRequest) (*wire.AgentCard, error) {
	return nil, wire.ErrExtendedCardNotConfigured
}

// resultTask decodes the Task our handler answered, the fixed task of the
// references.
func resultTask(b *testing.B, body []byte, wrapped bool) *wire.Task {
	b.Helper()
	var env struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		b.Fatal(err)
	}
	raw := env.Result
	if wrapped {
		var w struct {
			Task json.RawMessage `json:"task"`
		}
		if err := json.Unmarshal(raw, &w); err != nil {
			b.Fatal(err)
		}
		raw = w.Task
	}
	var task wire.Task
	if err := json.Unmarshal(raw, &task); err != nil {
		b.Fatal(err)
	}
	return &task
}

// BenchmarkGetTask reads a completed conformance-noop task (one history
// message, one artifact).
func BenchmarkGetTask(b *testing.B) {
	e := newBenchEnv(b)
	task := e.completedTask(b, "m-bench")
	body := []byte(rpcBody(1, methodGetTask, map[string]any{"id": string(task.ID)}))
	ours := e.handler
	probe := e.do(b, acme(string(body)))
	fixed := resultTask(b, probe.body, false)

	variants := []struct {
		name string
		h    http.Handler
	}{
		{"ours", ours},
		{"bare", bareHandler(fixed, false)},
		{"a2ago", a2asrv.NewJSONRPCHandler(a2aStub{task: fixed})},
	}
	for _, v := range variants {
		b.Run(v.name, func(b *testing.B) {
			br := newBenchRequest(b, body)
			loop(b, func() { br.serve(b, v.h, body) })
		})
	}
}

// BenchmarkSendMessageNoop starts a conformance-noop task per iteration
// (a fresh messageId each time, so no idempotent repeat) and answers it
// completed. ours runs the whole run through memstore; the references
// only decode and answer the fixed task.
func BenchmarkSendMessageNoop(b *testing.B) {
	e := newBenchEnv(b)
	prefix := []byte(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m-`)
	suffix := []byte(`","role":"ROLE_USER","parts":[{"text":"go"}],"metadata":{"skillId":"` + memstore.FixtureNoop + `"}}}}`)
	body := make([]byte, 0, len(prefix)+len(suffix)+20)
	next := func(i int) []byte {
		body = append(body[:0], prefix...)
		body = strconv.AppendInt(body, int64(i), 10)
		return append(body, suffix...)
	}
	probe := e.do(b, acme(string(next(-1))))
	fixed := resultTask(b, probe.body, true)

	variants := []struct {
		name string
		h    http.Handler
	}{
		{"ours", e.handler},
		{"bare", bareHandler(fixed, true)},
		{"a2ago", a2asrv.NewJSONRPCHandler(a2aStub{task: fixed})},
	}
	for vi, v := range variants {
		// The counter outlives the sub-benchmark function, which -count
		// runs again: a repeated messageId would take the idempotent path.
		i := vi << 40
		b.Run(v.name, func(b *testing.B) {
			br := newBenchRequest(b, next(0))
			loop(b, func() {
				i++
				br.serve(b, v.h, next(i))
			})
		})
	}
}

// BenchmarkSendMessageData is BenchmarkSendMessageNoop with the task's
// inputs in a data part: the binding keeps the part's bytes and validates
// them against the workflow's input schema before the run exists.
func BenchmarkSendMessageData(b *testing.B) {
	e := newBenchEnv(b)
	prefix := []byte(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m-`)
	suffix := []byte(`","role":"ROLE_USER","parts":[{"text":"go"},{"data":{"message":"run it","n":12345678901234567890,"x":[1.0,1e2]}}],"metadata":{"skillId":"` + memstore.FixtureNoop + `"}}}}`)
	body := make([]byte, 0, len(prefix)+len(suffix)+20)
	i := 0
	br := newBenchRequest(b, suffix)
	loop(b, func() {
		i++
		body = append(strconv.AppendInt(append(body[:0], prefix...), int64(i), 10), suffix...)
		br.serve(b, e.handler, body)
	})
}
