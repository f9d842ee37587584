package remote

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/internal/golden"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/outbound"
)

// stored is ev as a store hands it out, with the attempt id in its payload
// replaced by a fixed one, so golden bytes and the RunEventDoc validator
// see a whole document.
func stored(ev interop.RunEvent, attemptID string) interop.RunEvent {
	ev.EventID = "evt-000000000000001"
	ev.RunID = testRunID
	ev.Sequence = 7
	ev.Payload = bytes.ReplaceAll(ev.Payload, []byte(attemptID), []byte("att_0"))
	return ev
}

func TestEventTypesAreVendorTypesOfTheLibrary(t *testing.T) {
	for _, typ := range []interop.EventType{EventTranslationLoss, EventReconciled} {
		if !typ.Valid() || typ.Registered() {
			t.Errorf("%s: Valid=%v Registered=%v, want a valid vendor type", typ, typ.Valid(), typ.Registered())
		}
	}
}

// lossyAsk asks once, with _meta on the interim result and on the input
// request.
const lossyAsk = `{"resultType":"input_required","_meta":{"io.example/trace":1},
	"inputRequests":{"who":{"method":"elicitation/create","params":{"_meta":{"io.example/a":1,"io.example/b":2},"message":"?"}}},
	"requestState":"s"}`

// lossyResult carries everything the projection drops: result, block and
// resource _meta, annotations, a resource link's title, description, size
// and icons, a sampling-only block, and structuredContent whose text copy
// disagrees.
const lossyResult = `{"resultType":"complete","_meta":{"io.example/x":1,"io.example/y":2,"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}},"content":[
	{"type":"text","text":"{\"n\":8}","annotations":{"audience":["user"]},"_meta":{"k":1}},
	{"type":"resource","resource":{"uri":"file:///a","text":"a","_meta":{"k":1}},"annotations":{"priority":0.5}},
	{"type":"resource_link","uri":"https://example.com/r","name":"r","title":"R","description":"d","size":3,"icons":[{"src":"https://example.com/i.png"}]},
	{"type":"tool_use","id":"u1","name":"n","input":{}}
],"structuredContent":{"n":7}}`

func TestTranslationLossRecord(t *testing.T) {
	f := &fakeCaller{script: answers(t, lossyAsk, lossyResult)}
	s, sink := testSession(f)
	out, err := s.Call(t.Context(), CallRequest{Tool: "ask", Elicitation: formOnly, Decide: acceptAll})
	if err != nil {
		t.Fatalf("Call: %v", err)
	}
	events := sink.ofType(EventTranslationLoss)
	if len(events) != 1 || sink.count() != 1 {
		t.Fatalf("events %+v, want exactly one loss record", sink.events)
	}
	if sink.runIDs[0] != testRunID {
		t.Errorf("appended to run %q, want the session's run", sink.runIDs[0])
	}
	got := stored(events[0], out.AttemptID)
	if !got.Timestamp.Equal(testNow) || got.SchemaVersion != interop.SchemaVersion {
		t.Errorf("timestamp %v schemaVersion %d", got.Timestamp, got.SchemaVersion)
	}
	if err := got.Validate(); err != nil {
		t.Errorf("the stored record fails RunEventDoc validation: %v", err)
	}
	// Content-free: no key, value or server string of the result.
	for _, leak := range []string{"io.example", "audience", "https://", "file://", `"R"`, "tool_use"} {
		if strings.Contains(string(got.Payload), leak) {
			t.Errorf("the record carries %q: %s", leak, got.Payload)
		}
	}
	golden.Check(t, "loss_event.json", append(got.Payload, '\n'))
}

func TestAgreeingStructuredContentIsNoLoss(t *testing.T) {
	for _, body := range []string{
		`{"resultType":"complete","content":[{"type":"text","text":"{\"n\": 7}"}],"structuredContent":{"n":7}}`,
		`{"resultType":"complete","content":[{"type":"image","data":"aQ==","mimeType":"image/png"}],"structuredContent":{"n":7}}`,
		`{"resultType":"complete","content":[{"type":"text","text":"plain"}]}`,
	} {
		f := &fakeCaller{script: answers(t, body)}
		s, sink := testSession(f)
		if _, err := s.Call(t.Context(), CallRequest{Tool: "echo"}); err != nil {
			t.Fatal(err)
		}
		if sink.count() != 0 {
			t.Errorf("%s: events %+v, want none", body, sink.events)
		}
	}
}

func TestReconciliationRecord(t *testing.T) {
	f := &fakeCaller{script: blockUntilDone}
	s, sink := testSession(f, func(s *Session) { s.Admission.Limits.Timeout = 20 * time.Millisecond })
	out, err := s.Call(t.Context(), CallRequest{Tool: "echo"})
	if !errors.Is(err, ErrTimeout) || out.Reconciliation != outbound.FailedPossibleEffect {
		t.Fatalf("Call = %+v, %v", out, err)
	}
	events := sink.ofType(EventReconciled)
	if len(events) != 1 || sink.count() != 1 {
		t.Fatalf("events %+v, want one reconciliation record", sink.events)
	}
	got := stored(events[0], out.AttemptID)
	if err := got.Validate(); err != nil {
		t.Errorf("the stored record fails RunEventDoc validation: %v", err)
	}
	golden.Check(t, "reconciled_event.json", append(got.Payload, '\n'))
}

// failingSink refuses every record.
type failingSink struct{}

func (failingSink) AppendRunEvent(context.Context, string, interop.RunEvent) error {
	return interop.ErrRunTerminal
}

func (failingSink) PublishHostEvent(context.Context, string, interop.HostEvent) error {
	return interop.ErrRunTerminal
}

func TestARefusedRecordDoesNotChangeTheOutcome(t *testing.T) {
	f := &fakeCaller{script: answers(t, lossyResult)}
	s, _ := testSession(f, func(s *Session) { s.deps.events = failingSink{} })
	out, err := s.Call(t.Context(), CallRequest{Tool: "echo"})
	if err != nil || out.Result == nil {
		t.Fatalf("Call = %+v, %v", out, err)
	}
	// And a session without deps records nothing and still calls.
	f = &fakeCaller{script: answers(t, lossyResult)}
	s, _ = testSession(f, func(s *Session) { s.deps = nil })
	if _, err := s.Call(t.Context(), CallRequest{Tool: "echo"}); err != nil {
		t.Fatal(err)
	}
}

// TestRecordsSurviveTheCallersCancel: a record is appended even when the
// caller's context ended, the moment a reconciliation matters most.
func TestRecordsSurviveTheCallersCancel(t *testing.T) {
	f := &fakeCaller{script: blockUntilDone}
	s, _ := testSession(f)
	ctxSink := &ctxCheckingSink{}
	s.deps.events = ctxSink
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(10*time.Millisecond, cancel)
	if _, err := s.Call(ctx, CallRequest{Tool: "echo"}); !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	if ctxSink.appended != 1 || ctxSink.deadCtx {
		t.Fatalf("appended %d, under a dead context: %v", ctxSink.appended, ctxSink.deadCtx)
	}
}

type ctxCheckingSink struct {
	appended int
	deadCtx  bool
}

func (s *ctxCheckingSink) AppendRunEvent(ctx context.Context, _ string, _ interop.RunEvent) error {
	s.appended++
	s.deadCtx = s.deadCtx || ctx.Err() != nil
	return nil
}

func (s *ctxCheckingSink) PublishHostEvent(context.Context, string, interop.HostEvent) error {
	return nil
}
