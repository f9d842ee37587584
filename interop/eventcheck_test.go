package interop

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestEventTypeValid(t *testing.T) {
	if !slices.IsSorted(registeredEventTypes) {
		t.Fatal("registeredEventTypes is not sorted: Registered's binary search would miss types")
	}
	tests := []struct {
		typ               EventType
		registered, valid bool
	}{
		{"run.started", true, true},
		{"artifact.created", true, true},
		{"negotiation.decided", true, true},
		{"agent.reasoning-delta", true, true},
		{"workflow-chain.confidence-escalated", true, true},
		{"acme.audit-noted", false, true},
		{"wopinterop.cancel-requested", false, true},
		{"acme.sub.name", false, true},
		// Names in a registered namespace must be registered.
		{"run.cancelling", false, false},
		{"artifact.published", false, false},
		{"node.waiting", false, false},
		// The reserved org and malformed names.
		{"openwop.anything", false, false},
		{"Run.started", false, false},
		{"started", false, false},
		{"acme.", false, false},
		{"acme.a.b.c", false, false},
		{"acme.under_score", false, false},
		{"", false, false},
	}
	for _, tc := range tests {
		if got := tc.typ.Registered(); got != tc.registered {
			t.Errorf("%q.Registered() = %v, want %v", tc.typ, got, tc.registered)
		}
		if got := tc.typ.Valid(); got != tc.valid {
			t.Errorf("%q.Valid() = %v, want %v", tc.typ, got, tc.valid)
		}
	}
}

func TestOutputsOf(t *testing.T) {
	for in, want := range map[string]string{
		``:                  `{}`,
		`  `:                `{}`,
		`{"a":1}`:           `{"a":1}`,
		" {\"a\":1}\n":      `{"a":1}`,
		`"text"`:            `{"result":"text"}`,
		`[1,2]`:             `{"result":[1,2]}`,
		`12345678901234567`: `{"result":12345678901234567}`,
		`null`:              `{"result":null}`,
	} {
		if got := string(OutputsOf(json.RawMessage(in))); got != want {
			t.Errorf("OutputsOf(%q) = %s, want %s", in, got, want)
		}
	}
}

// goodEvent is a valid event of type typ with payload p.
func goodEvent(typ EventType, p string) RunEvent {
	return RunEvent{
		EventID: "evt-AAAAAAAAAAAAAAAAAAAAAAAAAA", RunID: "acme/BBBBBBBBBBBBBBBBBBBBBBBBBB",
		Sequence: 3, Type: typ, Timestamp: time.Date(2026, 10, 5, 12, 0, 0, 0, time.UTC),
		SchemaVersion: 1, Payload: json.RawMessage(p),
	}
}

func TestRunEventValidate(t *testing.T) {
	const interrupt = `"nodeId":"approve","interruptId":"acme/CCCCCCCCCCCCCCCCCCCCCCCCCC"`
	valid := []RunEvent{
		goodEvent(EventRunStarted, `{"workflowId":"conformance-noop","transport":"mcp"}`),
		goodEvent(EventRunStarted, `{"workflowId":"w","inputs":{"a":1},"x-host":true}`),
		goodEvent(EventRunCompleted, `{"outputs":{}}`),
		goodEvent(EventRunFailed, `{"error":{"code":"internal_error","message":"m"}}`),
		goodEvent(EventRunCancelled, `{}`),
		goodEvent(EventRunCancelled, `{"reason":"mcp-request-cancelled"}`),
		goodEvent(EventNodeSuspended, `{`+interrupt+`,"kind":"credential","key":"k"}`),
		goodEvent(EventInterruptResolved, `{`+interrupt+`,"reason":"withdrawn"}`),
		goodEvent(EventArtifactCreated, `{"artifactId":"a","artifactType":"artifact","registered":false}`),
		goodEvent(EventNegotiationDecided, `{"protocol":"a2a","outcome":"refused","at":"2026-10-05T12:00:00Z","reason":"unauthenticated"}`),
		goodEvent("acme.audit-noted", `"anything"`),
		goodEvent("agent.reasoned", `[1]`),
	}
	for _, ev := range valid {
		if err := ev.Validate(); err != nil {
			t.Errorf("%s %s: %v", ev.Type, ev.Payload, err)
		}
	}
	withEnvelope := func(edit func(*RunEvent)) RunEvent {
		ev := goodEvent(EventRunCompleted, `{"outputs":{}}`)
		edit(&ev)
		return ev
	}
	invalid := []struct {
		ev   RunEvent
		want string
	}{
		{withEnvelope(func(e *RunEvent) { e.EventID = "short" }), "eventId"},
		{withEnvelope(func(e *RunEvent) { e.EventID = "evt/AAAAAAAAAAAAAAAAAAAAAAAAAA" }), "eventId"},
		{withEnvelope(func(e *RunEvent) { e.RunID = "BBBBBBBBBBBBBBBBBBBBBBBBBB" }), "runId"},
		{withEnvelope(func(e *RunEvent) { e.NodeID = "a/b" }), "nodeId"},
		{withEnvelope(func(e *RunEvent) { e.Sequence = -1 }), "sequence"},
		{withEnvelope(func(e *RunEvent) { e.SchemaVersion = 0 }), "schemaVersion"},
		{withEnvelope(func(e *RunEvent) { e.Timestamp = time.Time{} }), "timestamp"},
		{withEnvelope(func(e *RunEvent) { e.Type = "run.cancelling" }), "neither registered nor a vendor"},
		{withEnvelope(func(e *RunEvent) { e.Payload = json.RawMessage(`{`) }), "not a JSON value"},
		{withEnvelope(func(e *RunEvent) { e.Payload = nil }), "not a JSON value"},
		{goodEvent(EventRunCompleted, `[]`), "not a JSON object"},
		{goodEvent(EventRunCompleted, `{}`), `lacks "outputs"`},
		{goodEvent(EventRunCompleted, `{"outputs":"x"}`), "outputs must be a JSON object"},
		{goodEvent(EventRunCompleted, `{"outputs":{},"output":{}}`), `member "output"`},
		{goodEvent(EventRunStarted, `{"transport":"rest"}`), `lacks "workflowId"`},
		{goodEvent(EventRunStarted, `{"workflowId":"a b"}`), "workflowId"},
		{goodEvent(EventRunStarted, `{"workflowId":"w","transport":"grpc"}`), "transport must be one of"},
		{goodEvent(EventRunStarted, `{"workflowId":"w","inputs":[1]}`), "inputs must be a JSON object"},
		{goodEvent(EventRunFailed, `{"error":{"message":"m"}}`), "non-empty code"},
		{goodEvent(EventRunFailed, `{"reason":"m"}`), `member "reason"`},
		{goodEvent(EventRunCancelled, `{"reason":7}`), "reason must be a string"},
		{goodEvent(EventNodeSuspended, `{"nodeId":"n"}`), `lacks "interruptId"`},
		{goodEvent(EventNodeSuspended, `{"nodeId":"n","interruptId":"CCCCCCCCCCCCCCCCCCCCCCCCCC"}`), "interruptId"},
		{goodEvent(EventNodeSuspended, `{`+interrupt+`,"kind":"approve"}`), "kind must be one of"},
		{goodEvent(EventInterruptResolved, `{`+interrupt+`,"reason":""}`), "1–64"},
		{goodEvent(EventInterruptResolved, `{`+interrupt+`,"reason":"`+strings.Repeat("r", 65)+`"}`), "1–64"},
		{goodEvent(EventArtifactCreated, `{"artifactId":"a"}`), `lacks "artifactType"`},
		{goodEvent(EventArtifactCreated, `{"artifactId":"","artifactType":"t"}`), "artifactId must be"},
		{goodEvent(EventNegotiationDecided, `{"protocol":"a2a","outcome":"maybe","at":"x"}`), "outcome must be one of"},
		{goodEvent(EventNegotiationDecided, `{"protocol":"a2a","outcome":"accepted","at":"x","peer":"h"}`), `member "peer"`},
	}
	for _, tc := range invalid {
		err := tc.ev.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %s: Validate() = %v, want an error containing %q", tc.ev.Type, tc.ev.Payload, err, tc.want)
		}
	}
}

func TestNewRunEventEncodesTheDocument(t *testing.T) {
	ev, err := NewRunEvent(EventNodeSuspended, NodeSuspended{NodeID: "n", InterruptID: "acme/CCCCCCCCCCCCCCCCCCCCCCCCCC", Kind: InterruptApproval})
	if err != nil {
		t.Fatal(err)
	}
	ev.EventID, ev.RunID, ev.NodeID = "evt-AAAAAAAAAAAAAAAAAAAAAAAAAA", "acme/BBBBBBBBBBBBBBBBBBBBBBBBBB", "n"
	ev.Timestamp = time.Date(2026, 10, 5, 12, 0, 0, 0, time.UTC)
	ev.Status, ev.Chunk = StatusWaitingApproval, &ArtifactChunk{LastChunk: true}
	got, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	// Status and Chunk are the library's, never part of the document.
	want := `{"eventId":"evt-AAAAAAAAAAAAAAAAAAAAAAAAAA","runId":"acme/BBBBBBBBBBBBBBBBBBBBBBBBBB","sequence":0,"type":"node.suspended","nodeId":"n","timestamp":"2026-10-05T12:00:00Z","schemaVersion":1,"payload":{"nodeId":"n","interruptId":"acme/CCCCCCCCCCCCCCCCCCCCCCCCCC","kind":"approval"}}`
	if string(got) != want {
		t.Fatalf("encoded\n %s\nwant\n %s", got, want)
	}
	if err := ev.Validate(); err != nil {
		t.Fatal(err)
	}
	var p NodeSuspended
	if err := ev.DecodePayload(&p); err != nil || p.InterruptID != "acme/CCCCCCCCCCCCCCCCCCCCCCCCCC" {
		t.Fatalf("DecodePayload = %+v, %v", p, err)
	}
	if _, err := NewRunEvent(EventRunCompleted, RunCompleted{Outputs: json.RawMessage(`{`)}); err == nil {
		t.Fatal("NewRunEvent encoded an invalid payload")
	}
}

// FuzzRunEventValidate: Validate decodes arbitrary payloads; it must never
// panic, and what it accepts as a registered payload must be a JSON object.
func FuzzRunEventValidate(f *testing.F) {
	for _, seed := range []struct{ typ, payload string }{
		{"run.completed", `{"outputs":{}}`},
		{"run.started", `{"workflowId":"w","transport":"a2a"}`},
		{"node.suspended", `{"nodeId":"n","interruptId":"acme/CCCCCCCCCCCCCCCCCCCCCCCCCC"}`},
		{"run.failed", `{"error":{"code":"c","message":"m"}}`},
		{"acme.x", `null`},
		{"negotiation.decided", `{"protocol":"a2a","outcome":"accepted","at":"t"}`},
	} {
		f.Add(seed.typ, []byte(seed.payload))
	}
	f.Fuzz(func(t *testing.T, typ string, payload []byte) {
		ev := goodEvent(EventType(typ), string(payload))
		err := ev.Validate()
		if err != nil {
			return
		}
		if !json.Valid(payload) {
			t.Fatalf("accepted invalid JSON %q", payload)
		}
		if _, ruled := payloadRules[ev.Type]; ruled {
			var m map[string]json.RawMessage
			if json.Unmarshal(payload, &m) != nil {
				t.Fatalf("accepted a non-object %s payload %q", typ, payload)
			}
		}
	})
}
