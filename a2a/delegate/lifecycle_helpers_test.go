package delegate

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"log/slog"
	"sync"
	"testing"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/internal/interopmap"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/mapping"
)

// builtinMap is decoded once per test binary; a Map is read-only.
var builtinMap = sync.OnceValue(func() *interopmap.Map { return (*interopmap.Map)(mapping.Builtin()) })

// item is one element of a scripted stream: an event or an error.
type item struct {
	ev  wire.Event
	err error
}

func seqOf(items ...item) iter.Seq2[wire.Event, error] {
	return func(yield func(wire.Event, error) bool) {
		for _, it := range items {
			if !yield(it.ev, it.err) {
				return
			}
		}
	}
}

// blockUntilDone is a stream that yields items and then blocks until ctx
// ends, as a peer that keeps a stream open.
func blockUntilDone(ctx context.Context, items ...item) iter.Seq2[wire.Event, error] {
	return func(yield func(wire.Event, error) bool) {
		for _, it := range items {
			if !yield(it.ev, it.err) {
				return
			}
		}
		<-ctx.Done()
		yield(nil, ctx.Err())
	}
}

var errUnexpectedCall = errors.New("fake: unexpected call")

// fakeRemote is a scripted peer behind the remote interface. Each hook gets
// the 1-based number of its call; a nil hook fails the call.
type fakeRemote struct {
	mu         sync.Mutex
	sends      []*wire.SendMessageRequest // every SendMessage and SendStreamingMessage, in order
	streamed   []bool                     // whether sends[i] was streaming
	gets       []*wire.GetTaskRequest
	cancels    []*wire.CancelTaskRequest
	subscribes []*wire.SubscribeToTaskRequest

	send      func(ctx context.Context, n int, req *wire.SendMessageRequest) (wire.SendMessageResult, error)
	stream    func(ctx context.Context, n int, req *wire.SendMessageRequest) iter.Seq2[wire.Event, error]
	get       func(ctx context.Context, n int, req *wire.GetTaskRequest) (*wire.Task, error)
	cancel    func(ctx context.Context, n int, req *wire.CancelTaskRequest) (*wire.Task, error)
	subscribe func(ctx context.Context, n int, req *wire.SubscribeToTaskRequest) iter.Seq2[wire.Event, error]
}

func (f *fakeRemote) SendMessage(ctx context.Context, req *wire.SendMessageRequest) (wire.SendMessageResult, error) {
	f.mu.Lock()
	f.sends, f.streamed = append(f.sends, req), append(f.streamed, false)
	n := len(f.sends)
	f.mu.Unlock()
	if f.send == nil {
		return nil, errUnexpectedCall
	}
	return f.send(ctx, n, req)
}

func (f *fakeRemote) SendStreamingMessage(ctx context.Context, req *wire.SendMessageRequest) iter.Seq2[wire.Event, error] {
	f.mu.Lock()
	f.sends, f.streamed = append(f.sends, req), append(f.streamed, true)
	n := len(f.sends)
	f.mu.Unlock()
	if f.stream == nil {
		return seqOf(item{err: errUnexpectedCall})
	}
	return f.stream(ctx, n, req)
}

func (f *fakeRemote) GetTask(ctx context.Context, req *wire.GetTaskRequest) (*wire.Task, error) {
	f.mu.Lock()
	f.gets = append(f.gets, req)
	n := len(f.gets)
	f.mu.Unlock()
	if f.get == nil {
		return nil, errUnexpectedCall
	}
	return f.get(ctx, n, req)
}

func (f *fakeRemote) CancelTask(ctx context.Context, req *wire.CancelTaskRequest) (*wire.Task, error) {
	f.mu.Lock()
	f.cancels = append(f.cancels, req)
	n := len(f.cancels)
	f.mu.Unlock()
	if f.cancel == nil {
		return nil, errUnexpectedCall
	}
	return f.cancel(ctx, n, req)
}

func (f *fakeRemote) SubscribeToTask(ctx context.Context, req *wire.SubscribeToTaskRequest) iter.Seq2[wire.Event, error] {
	f.mu.Lock()
	f.subscribes = append(f.subscribes, req)
	n := len(f.subscribes)
	f.mu.Unlock()
	if f.subscribe == nil {
		return seqOf(item{err: errUnexpectedCall})
	}
	return f.subscribe(ctx, n, req)
}

// counts returns how many sends, gets, cancels and subscribes were made.
func (f *fakeRemote) counts() (sends, gets, cancels, subscribes int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.sends), len(f.gets), len(f.cancels), len(f.subscribes)
}

func (f *fakeRemote) sent(i int) *wire.SendMessageRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sends[i]
}

// recordingSink keeps the run events a delegation appends.
type recordingSink struct {
	mu     sync.Mutex
	runIDs []string
	events []interop.RunEvent
}

func (s *recordingSink) AppendRunEvent(_ context.Context, runID string, ev interop.RunEvent) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runIDs = append(s.runIDs, runID)
	s.events = append(s.events, ev)
	return nil
}

func (s *recordingSink) PublishHostEvent(context.Context, string, interop.HostEvent) error {
	return errors.New("sink: no host events expected")
}

func (s *recordingSink) ofType(t interop.EventType) []interop.RunEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []interop.RunEvent
	for _, ev := range s.events {
		if ev.Type == t {
			out = append(out, ev)
		}
	}
	return out
}

// payloads decodes the payloads of the events of type t.
func (s *recordingSink) payloads(t *testing.T, typ interop.EventType) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, ev := range s.ofType(typ) {
		var m map[string]any
		if err := json.Unmarshal(ev.Payload, &m); err != nil {
			t.Fatalf("%s payload: %v", typ, err)
		}
		out = append(out, m)
	}
	return out
}

const (
	testRunID   = "run-1"
	testTenant  = "tenant-a"
	testTask    = wire.TaskID("task-1")
	testContext = "ctx-1"
	stepSkill   = "summarise"
	testClass   = "public"
)

var testNow = time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)

// testConn is a Conn over r with a permissive admission: the test skill
// and class, input requests allowed, a 2 s deadline.
func testConn(r remote, edit ...func(*Admission)) (*Conn, *recordingSink) {
	sink := &recordingSink{}
	adm := Admission{
		Alias:           "peer",
		Skills:          []AdmittedSkill{{ID: stepSkill}},
		DataClasses:     []string{testClass},
		Limits:          Limits{Deadline: 2 * time.Second},
		MayRequestInput: true,
	}
	for _, e := range edit {
		e(&adm)
	}
	return &Conn{
		RunID: testRunID, Admission: adm, Version: "1.0", Tenant: testTenant, Streaming: true,
		remote: r,
		deps: &connDeps{
			events: sink, now: func() time.Time { return testNow },
			log: slog.New(slog.DiscardHandler), reverse: builtinMap(),
		},
	}, sink
}

func testStep() Step {
	return Step{Skill: stepSkill, DataClass: testClass, Inputs: json.RawMessage(`{"text":"hello"}`)}
}

func task(state wire.TaskState, arts ...*wire.Artifact) *wire.Task {
	return &wire.Task{ID: testTask, ContextID: testContext, Status: wire.TaskStatus{State: state}, Artifacts: arts}
}

func statusEvent(state wire.TaskState, msg *wire.Message) *wire.TaskStatusUpdateEvent {
	return &wire.TaskStatusUpdateEvent{TaskID: testTask, ContextID: testContext, Status: wire.TaskStatus{State: state, Message: msg}}
}

func textArtifact(id wire.ArtifactID, texts ...string) *wire.Artifact {
	a := &wire.Artifact{ID: id}
	for _, s := range texts {
		a.Parts = append(a.Parts, wire.NewTextPart(s))
	}
	return a
}

func artifactEvent(a *wire.Artifact, appendChunk, last bool) *wire.TaskArtifactUpdateEvent {
	return &wire.TaskArtifactUpdateEvent{TaskID: testTask, ContextID: testContext, Artifact: a, Append: appendChunk, LastChunk: last}
}

func agentText(s string) *wire.Message {
	return &wire.Message{ID: "m-" + s, Role: wire.MessageRoleAgent, Parts: []*wire.Part{wire.NewTextPart(s)}}
}

// streamOf answers every streaming send with items.
func streamOf(items ...item) func(context.Context, int, *wire.SendMessageRequest) iter.Seq2[wire.Event, error] {
	return func(context.Context, int, *wire.SendMessageRequest) iter.Seq2[wire.Event, error] {
		return seqOf(items...)
	}
}

// getReturns answers every GetTask with t.
func getReturns(t *wire.Task) func(context.Context, int, *wire.GetTaskRequest) (*wire.Task, error) {
	return func(context.Context, int, *wire.GetTaskRequest) (*wire.Task, error) { return t, nil }
}

// ev wraps an event as a stream item.
func ev(e wire.Event) item { return item{ev: e} }

type iterSeq = iter.Seq2[wire.Event, error]
