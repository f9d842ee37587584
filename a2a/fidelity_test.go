package a2a

// Fidelity: nothing a peer sends is altered. A data part reaches the run's
// inputs, the stored message and every projection of it as the bytes the
// peer sent; referenceTaskIds and extensions reach the host and come back
// in the history; a completed run's output reaches A2A peers.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/internal/pushservice"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
)

// exactData is a data part a float64 round trip through an any would
// alter: an integer above 2^53, members out of key order, numbers spelled
// 1.0, 1e2, -0, 0.10 and -1.5E-7, an escaped string.
const exactData = `{"z":12345678901234567890,"a":[1.0,1e2,-0,0.10,-1.5E-7],"s":"caf\u00e9 \"q\"","n":{"y":null,"x":true}}`

// probeExact records its inputs and completes with them as its output,
// publishing no artifact.
const probeExact = "probe-exact"

// exactProbe registers probeExact in tenant acme of store and returns what
// its runs saw, by run id.
func exactProbe(t testing.TB, store *memstore.Store) *coreRecorder {
	t.Helper()
	rec := &coreRecorder{seen: map[string]any{}}
	err := store.Register("acme", memstore.WorkflowDef{
		Workflow: interop.Workflow{ID: probeExact, Name: "Exact"},
		Run: func(_ context.Context, rc *memstore.RunContext) (json.RawMessage, error) {
			rec.put(rc.RunID(), string(rc.Inputs()))
			return rc.Inputs(), nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func routeExact(c *testConfig) {
	c.Routed = append(c.Routed, interop.Workflow{ID: probeExact, Name: "Exact"})
}

// exactMessage is a SendMessage message for probeExact: a text part, then
// exactData, with referenceTaskIds and extensions.
const exactMessage = `{"messageId":"m-exact","role":"ROLE_USER",` +
	`"parts":[{"text":"keep it"},{"data":` + exactData + `}],` +
	`"referenceTaskIds":["acme/AAAAAAAAAAAAAAAAAAAAAAAAAA","task-of-another-agent"],` +
	`"extensions":["https://ext.example/a2a/trace/v1","urn:example:ext"],` +
	`"metadata":{"skillId":"` + probeExact + `"}}`

// wantExactRun checks what the host got: the inputs and the stored first
// message, byte for byte.
func wantExactRun(t *testing.T, store *memstore.Store, rec *coreRecorder, id string) {
	t.Helper()
	if got, _ := rec.get(id); got != exactData {
		t.Errorf("run inputs\n got %v\nwant %s", got, exactData)
	}
	run, err := store.GetRun(context.Background(), interop.Subject{Tenant: "acme", Principal: "user:alice", Authenticated: true}, id)
	if err != nil {
		t.Fatal(err)
	}
	m := run.Messages[0]
	if len(m.Parts) != 2 || string(m.Parts[1].Data) != exactData {
		t.Errorf("stored data part %s, want %s", m.Parts[1].Data, exactData)
	}
	if !slices.Equal(m.ReferenceTaskIDs, []string{"acme/AAAAAAAAAAAAAAAAAAAAAAAAAA", "task-of-another-agent"}) ||
		!slices.Equal(m.Extensions, []string{"https://ext.example/a2a/trace/v1", "urn:example:ext"}) {
		t.Errorf("stored message referenceTaskIds %q extensions %q", m.ReferenceTaskIDs, m.Extensions)
	}
	if string(run.Output) != exactData {
		t.Errorf("output %s", run.Output)
	}
}

// wantExactTask checks a Task's JSON: the history holds the data part, the
// referenceTaskIds and the extensions as sent, and the output artifact
// holds the output as produced.
func wantExactTask(t *testing.T, body []byte) {
	t.Helper()
	for _, want := range []string{
		`"parts":[{"text":"keep it"},{"data":` + exactData + `}]`,
		`"referenceTaskIds":["acme/AAAAAAAAAAAAAAAAAAAAAAAAAA","task-of-another-agent"]`,
		`"extensions":["https://ext.example/a2a/trace/v1","urn:example:ext"]`,
		`"artifacts":[{"artifactId":"openwop.output","name":"output","parts":[{"data":` + exactData + `}]}]`,
	} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("the task lacks %s\n%s", want, body)
		}
	}
}

func TestDataPartsKeepTheirBytesJSONRPC(t *testing.T) {
	e := newRPCEnv(t, routeExact)
	rec := exactProbe(t, e.store)

	send := acme(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":` + exactMessage + `}}`)
	res := e.do(t, send)
	task := rpcTask(t, res, true)
	if task.Status.State != wire.TaskStateCompleted {
		t.Fatalf("state %s", task.Status.State)
	}
	wantExactRun(t, e.store, rec, string(task.ID))
	wantExactTask(t, res.body)
	n := newRPCNormalizer(e.agentR)
	rpcGolden(t, "send_message_exact_data", n.apply(rpcTranscript(send, res)))

	get := acme(`{"jsonrpc":"2.0","id":2,"method":"GetTask","params":{"id":"` + string(task.ID) + `"}}`)
	res = e.do(t, get)
	wantExactTask(t, res.body)
	rpcGolden(t, "get_task_exact_data", n.apply(rpcTranscript(get, res)))

	list := acme(`{"jsonrpc":"2.0","id":3,"method":"ListTasks","params":{"contextId":"` + task.ContextID + `","includeArtifacts":true}}`)
	wantExactTask(t, e.do(t, list).body)

	// Streamed: the Task first (its history), the output artifact before
	// the end.
	srv := httptest.NewServer(e.mux)
	defer srv.Close()
	stream := acme(`{"jsonrpc":"2.0","id":4,"method":"SendStreamingMessage","params":{"message":` +
		strings.Replace(exactMessage, "m-exact", "m-exact-stream", 1) + `}}`)
	st := e.openStream(t, context.Background(), srv, stream)
	var frames [][]byte
	for {
		data, err := st.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		frames = append(frames, data)
	}
	all := bytes.Join(frames, []byte("\n"))
	if !bytes.Contains(all, []byte(`{"data":`+exactData+`}`)) {
		t.Errorf("the stream lost the data part's bytes:\n%s", all)
	}
	streamed := rpcReply{status: st.resp.StatusCode, header: st.resp.Header, body: st.raw.Bytes()}
	rpcGolden(t, "send_streaming_message_exact_data", newRPCNormalizer(e.agentR).apply(rpcTranscript(stream, streamed)))
}

func TestDataPartsKeepTheirBytesHTTPJSON(t *testing.T) {
	e := newRESTEnv(t, routeExact)
	rec := exactProbe(t, e.store)

	send := restCall{method: http.MethodPost, path: "/message:send", key: "key-acme", body: `{"message":` + exactMessage + `}`}
	res := e.do(t, send)
	if res.status != http.StatusOK {
		t.Fatalf("HTTP %d: %s", res.status, res.body)
	}
	var sent struct{ Task wire.Task }
	if err := json.Unmarshal(res.body, &sent); err != nil {
		t.Fatal(err)
	}
	wantExactRun(t, e.store, rec, string(sent.Task.ID))
	wantExactTask(t, res.body)
	restGolden(t, "rest", "send-exact-data", restTranscript(send, res))

	get := restCall{method: http.MethodGet, path: "/tasks/" + strings.Replace(string(sent.Task.ID), "/", "%2F", 1), key: "key-acme"}
	res = e.do(t, get)
	wantExactTask(t, res.body)
	restGolden(t, "rest", "get-task-exact-data", restTranscript(get, res))

	list := restCall{method: http.MethodGet, path: "/tasks?includeArtifacts=true&contextId=" + sent.Task.ContextID, key: "key-acme"}
	wantExactTask(t, e.do(t, list).body)

	stream := restCall{method: http.MethodPost, path: "/message:stream", key: "key-acme",
		body: `{"message":` + strings.Replace(exactMessage, "m-exact", "m-exact-stream", 1) + `}`}
	res = e.do(t, stream)
	if !bytes.Contains(res.body, []byte(`{"data":`+exactData+`}`)) {
		t.Errorf("the stream lost the data part's bytes:\n%s", res.body)
	}
	restGolden(t, "rest", "stream-exact-data", restTranscript(stream, res))
}

// TestKeepDataBytesFollowsEncodingJSON: the span kept for a part is the
// one encoding/json decoded, whatever members repeat.
func TestKeepDataBytesFollowsEncodingJSON(t *testing.T) {
	s := projectServer(t)
	for _, tc := range []struct {
		name, params string
		want         []string // per part: the raw data, or "" for a part that is not data
	}{
		{"one data part", `{"message":{"parts":[{"data":1.0}]}}`, []string{"1.0"}},
		{"whitespace kept out", `{"message":{"parts":[{"data" :  [ 1 , 2 ]  }]}}`, []string{"[ 1 , 2 ]"}},
		{"repeated data member", `{"message":{"parts":[{"data":1,"data":2.50}]}}`, []string{"2.50"}},
		{"repeated parts member", `{"message":{"parts":[{"data":1},{"data":3}],"parts":[{"text":"x"},{"data":{"b":1,"a":2}}]}}`, []string{"", `{"b":1,"a":2}`}},
		{"repeated message member", `{"message":{"parts":[{"data":1}]},"message":{"messageId":"m"}}`, []string{"1"}},
		{"shorter second parts", `{"message":{"parts":[{"data":1},{"data":3}]},"message":{"parts":[{"data":2e0}]}}`, []string{"2e0"}},
		{"null data is no data part", `{"message":{"parts":[{"data":null,"text":"t"}]}}`, []string{""}},
		{"data in metadata is not a part", `{"metadata":{"parts":[{"data":1}]},"message":{"parts":[{"text":"t"}]}}`, []string{""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := new(wire.SendMessageRequest)
			if err := s.decodeParams([]byte(tc.params), shapeSendMessageRequest, req); err != nil {
				t.Fatal(err)
			}
			if len(req.Message.Parts) != len(tc.want) {
				t.Fatalf("%d parts, want %d", len(req.Message.Parts), len(tc.want))
			}
			for i, want := range tc.want {
				d, ok := req.Message.Parts[i].Content.(wire.Data)
				if want == "" {
					if ok {
						t.Errorf("part %d is a data part", i)
					}
					continue
				}
				raw, isRaw := d.Value.(json.RawMessage)
				if !ok || !isRaw || string(raw) != want {
					t.Errorf("part %d = %#v, want the bytes %s", i, d.Value, want)
				}
			}
		})
	}
	// The bytes are the binding's own: a reused request buffer cannot
	// change them.
	params := []byte(`{"message":{"parts":[{"data":[1]}]}}`)
	req := new(wire.SendMessageRequest)
	if err := s.decodeParams(params, shapeSendMessageRequest, req); err != nil {
		t.Fatal(err)
	}
	copy(params, bytes.Repeat([]byte("x"), len(params)))
	if raw := req.Message.Parts[0].Content.(wire.Data).Value.(json.RawMessage); string(raw) != "[1]" {
		t.Fatalf("the data part aliases the request buffer: %s", raw)
	}
}

// TestOutputArtifact: a completed run that published no artifact shows its
// output as the artifact openwop.output, one data part holding it exactly,
// wherever artifacts show; a run that published artifacts shows only
// those, and a run with no output or not completed shows none.
func TestOutputArtifact(t *testing.T) {
	env := newCoreEnv(t, withRouted(memstore.FixtureDelay, memstore.FixtureNoop, memstore.FixtureFailure, probeGate),
		withCaps(caps{Streaming: true, DurableTasks: true}))
	c := asCaller(coreTenantA, "alice")
	ctx := coreCtx(t)
	skill := func(id, msgID string) *wire.Message {
		m := textMessage(msgID, "go")
		m.Metadata = map[string]any{"skillId": id}
		return m
	}
	wantOutput := func(t *testing.T, arts []*wire.Artifact, want string) {
		t.Helper()
		if len(arts) != 1 || arts[0].ID != outputArtifactID || arts[0].Name != "output" || len(arts[0].Parts) != 1 {
			t.Fatalf("artifacts %+v, want only the output artifact", arts)
		}
		got, err := json.Marshal(arts[0].Parts[0])
		if err != nil || string(got) != `{"data":`+want+`}` {
			t.Fatalf("output part %s (%v), want {\"data\":%s}", got, err, want)
		}
	}

	delay := env.send(t, c, skill(memstore.FixtureDelay, "m-delay"))
	if delay.Status.State != wire.TaskStateCompleted {
		t.Fatalf("delay task %s", delay.Status.State)
	}
	wantOutput(t, delay.Artifacts, `{"delayedMs":0}`)
	got, err := env.srv.getTask(ctx, c, &wire.GetTaskRequest{ID: delay.ID})
	if err != nil {
		t.Fatal(err)
	}
	wantOutput(t, got.Artifacts, `{"delayedMs":0}`)
	list, err := env.srv.listTasks(ctx, c, &wire.ListTasksRequest{ContextID: delay.ContextID, IncludeArtifacts: true})
	if err != nil || len(list.Tasks) != 1 {
		t.Fatalf("list %+v %v", list, err)
	}
	wantOutput(t, list.Tasks[0].Artifacts, `{"delayedMs":0}`)
	if list, _ := env.srv.listTasks(ctx, c, &wire.ListTasksRequest{ContextID: delay.ContextID}); len(list.Tasks[0].Artifacts) != 0 {
		t.Errorf("ListTasks without includeArtifacts shows %+v", list.Tasks[0].Artifacts)
	}

	// The workflow's own artifacts only.
	noop := env.send(t, c, skill(memstore.FixtureNoop, "m-noop"))
	if len(noop.Artifacts) != 1 || noop.Artifacts[0].ID != memstore.FixtureArtifactID {
		t.Errorf("noop artifacts %+v, want only its own", noop.Artifacts)
	}
	// No output, no artifact.
	if failed := env.send(t, c, skill(memstore.FixtureFailure, "m-fail")); len(failed.Artifacts) != 0 {
		t.Errorf("failed task artifacts %+v", failed.Artifacts)
	}

	// Streamed: the output's artifactUpdate goes just before the terminal
	// statusUpdate; the push bodies of the completion say the same.
	seq, err := opened(env.srv.sendStreamingMessage(ctx, c, &wire.SendMessageRequest{Message: skill(probeGate, "m-gate")}))
	if err != nil {
		t.Fatal(err)
	}
	var events []wire.Event
	var once sync.Once
	for ev, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, ev)
		once.Do(func() { close(env.release) })
	}
	if k := eventKinds(events); !strings.HasSuffix(k, "artifactUpdate statusUpdate:TASK_STATE_COMPLETED") || strings.Count(k, "artifactUpdate") != 1 {
		t.Fatalf("stream %s, want the output artifact just before COMPLETED", k)
	}
	upd := events[len(events)-2].(*wire.TaskArtifactUpdateEvent)
	first := events[0].(*wire.Task)
	if upd.TaskID != first.ID || upd.ContextID != first.ContextID || upd.Append || !upd.LastChunk {
		t.Errorf("artifactUpdate %+v", upd)
	}
	wantOutput(t, []*wire.Artifact{upd.Artifact}, `{"ok":true}`)

	run := env.run(t, c.subject, first.ID)
	pushed, err := env.srv.pushEvents(ctx, c.subject, pushservice.TaskRef{ID: run.ID, ContextID: run.ContextID}, &interop.RunEvent{Type: interop.EventRunCompleted, Status: interop.StatusCompleted, Timestamp: run.StatusAt}, interop.StatusRunning)
	if err != nil {
		t.Fatal(err)
	}
	if k := eventKinds(pushed); k != "artifactUpdate statusUpdate:TASK_STATE_COMPLETED" {
		t.Fatalf("push bodies %s", k)
	}
	if a, b := mustJSON(t, pushed[0]), mustJSON(t, upd); a != b {
		t.Errorf("push body %s, stream event %s", a, b)
	}
}

func eventKinds(evs []wire.Event) string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = eventKind(ev)
	}
	return strings.Join(out, " ")
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDataPartsAreNotDecoded: a data value is carried as bytes, never
// decoded into Go values on the way (which would cost an allocation per
// member, number and string of it).
func TestDataPartsAreNotDecoded(t *testing.T) {
	s := projectServer(t)
	var members strings.Builder
	for i := range 200 {
		members.WriteString(`"k` + strconv.Itoa(i) + `":[1.5,2,"x",{"y":null}],`)
	}
	params := []byte(`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"data":{` + members.String() + `"z":0}}]}}`)
	buf := make([]byte, len(params))
	allocs := testing.AllocsPerRun(20, func() {
		copy(buf, params)
		req := new(wire.SendMessageRequest)
		if err := s.decodeParams(buf, shapeSendMessageRequest, req); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 40 {
		t.Errorf("decoding a message with a 200-member data part costs %.0f allocations, want ≤ 40", allocs)
	}
}
