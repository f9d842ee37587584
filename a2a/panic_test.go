package a2a

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
)

// withPanics makes the env's store panic in method; inventory, when set,
// replaces the agent inventory.
func withPanics(method string, inventory interop.AgentInventory) hardOption {
	return func(c *testConfig) {
		c.Store = panicStore{RunStore: c.Store, method: method}
		if inventory != nil {
			c.Inventory = inventory
		}
	}
}

// TestPanicsAreAnswered: a panic in the SubjectResolver, the RunStore or
// the AgentInventory is answered with the binding's internal error —
// JSON-RPC -32603 INTERNAL_ERROR echoing the id when it was read,
// HTTP+JSON 500 INTERNAL — and logged once, at error level, without the
// panic's value or a credential. Golden bytes.
func TestPanicsAreAnswered(t *testing.T) {
	const task = "acme/AAAAAAAAAAAAAAAAAAAAAAAAAA"
	taskPath := restEnvPrefix + "/tasks/" + urlPathEscape(task)
	agentR := newHardEnv(t).agentR // the same in every env: the same keys
	for _, tc := range []struct {
		name  string
		opt   hardOption
		call  hardCall
		file  string
		isRPC bool
	}{
		{"resolver/JSON-RPC", nil, hardCall{path: rpcPath, key: hardKeyPanic, body: rpcBody(1, methodGetTask, map[string]any{"id": task})}, "error_panic_resolver", true},
		{"resolver/HTTP+JSON", nil, hardCall{method: http.MethodGet, path: taskPath, key: hardKeyPanic}, "error-panic-resolver", false},
		{"store/JSON-RPC", withPanics("GetRun", nil), hardCall{path: rpcPath, key: "key-acme", body: rpcBody(7, methodGetTask, map[string]any{"id": task})}, "error_panic_store", true},
		{"store/HTTP+JSON", withPanics("GetRun", nil), hardCall{method: http.MethodGet, path: taskPath, key: "key-acme"}, "error-panic-store", false},
		{"store create/JSON-RPC", withPanics("CreateRun", nil), hardCall{path: rpcPath, key: "key-acme", body: rpcBody("c", methodSendMessage, hardSend("m-p", memstore.FixtureNoop))}, "error_panic_store_create", true},
		{"inventory/JSON-RPC", withPanics("", panicInventory{}), hardCall{path: rpcPath, key: "key-acme", body: rpcBody(3, methodGetExtendedAgentCard, map[string]any{"tenant": agentR})}, "error_panic_inventory", true},
		{"inventory/HTTP+JSON", withPanics("", panicInventory{}), hardCall{method: http.MethodGet, path: restEnvPrefix + "/" + agentR + "/extendedAgentCard", key: "key-acme"}, "error-panic-inventory", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var opts []hardOption
			if tc.opt != nil {
				opts = append(opts, tc.opt)
			}
			e := newHardEnv(t, opts...)
			res := tc.call.do(t, e.serve(t, nil, nil, nil))
			if res.err != nil {
				t.Fatalf("the connection was dropped: %v", res.err)
			}
			sent := tc.call.method
			if sent == "" {
				sent = http.MethodPost
			}
			sent += " " + strings.ReplaceAll(tc.call.path, agentR, "<R>")
			if tc.call.key != "" {
				sent += " (Authorization: Bearer " + tc.call.key + ")"
			}
			if tc.call.body != "" {
				sent += "\n" + strings.ReplaceAll(tc.call.body, agentR, "<R>")
			}
			got := res.transcript(sent)
			if tc.isRPC {
				wantRPCError(t, res.rpc(t), http.StatusOK, codeInternal, "INTERNAL_ERROR")
				rpcGolden(t, tc.file, got)
			} else {
				restWantStatus(t, res.rest(t), http.StatusInternalServerError, "INTERNAL", "INTERNAL_ERROR")
				restGolden(t, "rest", tc.file, got)
			}
			e.logs.wantOnePanicLogged(t)
			if bytes.Contains(res.body, []byte(hardSecret)) {
				t.Fatalf("the answer holds the panic's value: %s", res.body)
			}
		})
	}
}

// TestPanicInBatchElement: a panic in one element of a batch is that
// element's -32603; the others are answered as usual.
func TestPanicInBatchElement(t *testing.T) {
	e := newHardEnv(t, withPanics("GetRun", nil))
	hs := e.serve(t, nil, nil, nil)
	batch := "[" + rpcBody(1, methodGetTask, map[string]any{"id": "acme/AAAAAAAAAAAAAAAAAAAAAAAAAA"}) + "," +
		rpcBody(2, methodListTasks, nil) + "]"
	res := hardCall{path: rpcPath, key: "key-acme", body: batch}.do(t, hs)
	var answers []rpcResponse
	if res.err != nil || res.status != http.StatusOK || json.Unmarshal(res.body, &answers) != nil || len(answers) != 2 {
		t.Fatalf("HTTP %d %s (%v)", res.status, res.body, res.err)
	}
	if answers[0].Error == nil || answers[0].Error.Code != codeInternal || string(answers[0].ID) != "1" {
		t.Fatalf("the panicking element: %s", res.body)
	}
	if answers[1].Error != nil || string(answers[1].ID) != "2" {
		t.Fatalf("the other element: %s", res.body)
	}
	e.logs.wantOnePanicLogged(t)
}

// TestPanicMidStream: a panic in the run's watch after the stream began
// ends the stream with the internal error as its last event — a JSON-RPC
// error response, a google.rpc.Status on HTTP+JSON — and is logged once.
func TestPanicMidStream(t *testing.T) {
	for _, tc := range []struct {
		name string
		call hardCall
		want func(t *testing.T, last []byte)
	}{
		{"JSON-RPC", hardCall{path: rpcPath, key: "key-acme", body: rpcBody("s", methodSendStreamingMessage, hardSend("m-s1", probeHold))}, func(t *testing.T, last []byte) {
			want := `{"jsonrpc":"2.0","id":"s","error":{"code":-32603,"message":"internal error","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"INTERNAL_ERROR","domain":"a2a-protocol.org"}]}}`
			if string(last) != want {
				t.Fatalf("last event %s, want %s", last, want)
			}
		}},
		{"HTTP+JSON", hardCall{path: restEnvPrefix + "/message:stream", key: "key-acme", body: restHardSend("m-s2", probeHold)}, func(t *testing.T, last []byte) {
			want := `{"error":{"code":500,"status":"INTERNAL","message":"internal error","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"INTERNAL_ERROR","domain":"a2a-protocol.org"}]}}`
			if string(last) != want {
				t.Fatalf("last event %s, want %s", last, want)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newHardEnv(t, withPanics("WatchRun", nil))
			res := tc.call.do(t, e.serve(t, nil, nil, nil))
			if res.err != nil || res.status != http.StatusOK {
				t.Fatalf("HTTP %d (%v): %s", res.status, res.err, res.body)
			}
			frames := sseData(res.body)
			if len(frames) != 2 {
				t.Fatalf("%d events, want the Task and the error: %s", len(frames), res.body)
			}
			if !bytes.Contains(frames[0], []byte(`"task"`)) {
				t.Fatalf("first event %s, want the Task", frames[0])
			}
			tc.want(t, frames[1])
			e.logs.wantOnePanicLogged(t)
		})
	}
}

// TestPanicInCardResolver: the public card survives a panicking resolver
// with a 500 google.rpc.Status, logged once.
func TestPanicInCardResolver(t *testing.T) {
	e := newHardEnv(t)
	res := hardCall{method: http.MethodGet, path: restEnvCardPath, key: hardKeyPanic}.do(t, e.serve(t, nil, nil, nil))
	restWantStatus(t, res.rest(t), http.StatusInternalServerError, "INTERNAL", "INTERNAL_ERROR")
	e.logs.wantOnePanicLogged(t)
}

// TestSafeEventsPassesConsumerPanics: a panic of the stream's consumer is
// not the sequence's: it goes on up unchanged and is not logged as one.
func TestSafeEventsPassesConsumerPanics(t *testing.T) {
	e := newHardEnv(t)
	task := e.rpcSend(t, e.serve(t, nil, nil, nil), "m-c", memstore.FixtureNoop)
	run := e.store
	seq, err := e.srv.follow(context.Background(), asCaller("acme", "user:alice"), mustRun(t, run, string(task.ID)), taskView{}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if p := recover(); p != "consumer" {
			t.Fatalf("recovered %v, want the consumer's panic", p)
		}
		if n := len(e.logs.records(t, "ERROR")); n != 0 {
			t.Fatalf("%d error records for a panic that is not the sequence's", n)
		}
	}()
	for range e.srv.safeEvents(context.Background(), "test", "", seq) {
		panic("consumer")
	}
}

func mustRun(t testing.TB, store *memstore.Store, id string) interop.Run {
	t.Helper()
	run, err := store.GetRun(context.Background(), restKeys["key-acme"], id)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// TestPanicsReadByA2AGo: a2a-go's clients read a contained panic as its
// ErrInternalError on both bindings — a unary call, and a stream that
// ends with it after the Task.
func TestPanicsReadByA2AGo(t *testing.T) {
	for _, method := range []string{"GetRun", "WatchRun"} {
		e := newHardEnv(t, withPanics(method, nil))
		hs := e.serve(t, nil, nil, nil)
		rest, _ := url.Parse(hs.URL + restEnvPrefix)
		for name, tr := range map[string]a2aclient.Transport{
			"JSON-RPC":  a2aclient.NewJSONRPCTransport(hs.URL+rpcPath, hs.Client()),
			"HTTP+JSON": a2aclient.NewRESTTransport(rest, hs.Client()),
		} {
			params := a2aclient.ServiceParams{"A2A-Version": {"1.0"}, "Authorization": {"Bearer key-acme"}}
			if method == "GetRun" {
				_, err := tr.GetTask(t.Context(), params, &wire.GetTaskRequest{ID: "acme/AAAAAAAAAAAAAAAAAAAAAAAAAA"})
				if !errors.Is(err, wire.ErrInternalError) {
					t.Errorf("%s GetTask: %v, want ErrInternalError", name, err)
				}
				continue
			}
			var events []wire.Event
			var last error
			for ev, err := range tr.SendStreamingMessage(t.Context(), params, &wire.SendMessageRequest{Message: skillMessage(probeHold, wire.NewTextPart("go"))}) {
				if err != nil {
					last = err
					break
				}
				events = append(events, ev)
			}
			if len(events) != 1 || !errors.Is(last, wire.ErrInternalError) {
				t.Errorf("%s stream: %d events then %v, want the Task then ErrInternalError", name, len(events), last)
			}
		}
	}
}
