package wirejson

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
)

// checkStreamResponse fails unless AppendStreamResponse writes what
// json.Marshal writes for wire.StreamResponse{Event: ev}, or both refuse.
func checkStreamResponse(t *testing.T, ev wire.Event) {
	t.Helper()
	want, wantErr := json.Marshal(wire.StreamResponse{Event: ev})
	got, err := AppendStreamResponse([]byte("prefix"), ev)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("error %v, encoding/json's %v", err, wantErr)
	}
	if err == nil && !bytes.Equal(got, append([]byte("prefix"), want...)) {
		t.Fatalf("AppendStreamResponse:\n%s\nencoding/json:\nprefix%s", got, want)
	}
}

func TestAppendStreamResponseMatchesEncodingJSON(t *testing.T) {
	at := time.Date(2026, 11, 30, 9, 30, 0, 5, time.UTC)
	odd := time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	msg := &wire.Message{ID: "m<1>", Role: wire.MessageRoleAgent, TaskID: "t", ContextID: "c",
		Parts: wire.ContentParts{wire.NewTextPart("Approve <the> request & go?")}}
	meta := map[string]any{"openwop": map[string]any{"interrupt": map[string]any{"id": "i", "actions": []string{"accept"}}}, "n": 1.5}
	cases := map[string]wire.Event{
		"status":            &wire.TaskStatusUpdateEvent{TaskID: "acme/RUN", ContextID: "ctx", Status: wire.TaskStatus{State: wire.TaskStateCompleted, Timestamp: &at}},
		"status message":    &wire.TaskStatusUpdateEvent{TaskID: "t&", ContextID: "c", Status: wire.TaskStatus{State: wire.TaskStateInputRequired, Message: msg}, Metadata: meta},
		"status empty":      &wire.TaskStatusUpdateEvent{},
		"status empty meta": &wire.TaskStatusUpdateEvent{Metadata: map[string]any{}},
		"status bad time":   &wire.TaskStatusUpdateEvent{Status: wire.TaskStatus{Timestamp: &odd}},
		"artifact":          &wire.TaskArtifactUpdateEvent{TaskID: "t", ContextID: "c", Artifact: &wire.Artifact{ID: "out", Parts: wire.ContentParts{wire.NewTextPart("chunk")}}, Append: true, LastChunk: true, Metadata: meta},
		"artifact nil":      &wire.TaskArtifactUpdateEvent{TaskID: "t"},
		"artifact first":    &wire.TaskArtifactUpdateEvent{Artifact: &wire.Artifact{ID: "a"}, LastChunk: true},
		"artifact bad data": &wire.TaskArtifactUpdateEvent{Artifact: &wire.Artifact{Parts: wire.ContentParts{{Content: wire.Data{Value: json.RawMessage(`{"a":`)}}}}},
		"task":              &wire.Task{ID: "t", ContextID: "c", Status: wire.TaskStatus{State: wire.TaskStateWorking, Timestamp: &at}, History: []*wire.Message{msg}},
		"message":           msg,
		"nil status":        (*wire.TaskStatusUpdateEvent)(nil),
		"nil artifact":      (*wire.TaskArtifactUpdateEvent)(nil),
		"nil task":          (*wire.Task)(nil),
		"nil message":       (*wire.Message)(nil),
		"no event":          nil,
	}
	for name, ev := range cases {
		t.Run(name, func(t *testing.T) { checkStreamResponse(t, ev) })
	}
}

// FuzzAppendStreamResponse holds AppendStreamResponse to encoding/json
// byte for byte for every kind of event a push body or a stream carries.
func FuzzAppendStreamResponse(f *testing.F) {
	f.Add("acme/RUN", "ctx", "completed", "hi <&>", []byte(`{"ok":true}`), int64(1764615845123456789), uint8(0))
	f.Add("\xff\u2028", "", "input-required", "", []byte(`{ "a" : "<" }`), int64(-62135596800), uint8(255))
	f.Add("", "c", "", "\"", []byte(`not json`), int64(253402300800), uint8(7))
	f.Fuzz(func(t *testing.T, id, ctx, state, text string, data []byte, unixNano int64, flags uint8) {
		ts := time.Unix(0, unixNano).UTC()
		if flags&1 != 0 {
			ts = ts.In(time.FixedZone("z", int(unixNano%50000)))
		}
		parts := wire.ContentParts{
			{Content: wire.Text(text)},
			{Content: wire.Data{Value: json.RawMessage(data)}},
		}
		var msg *wire.Message
		if flags&2 != 0 {
			msg = &wire.Message{ID: text, ContextID: ctx, TaskID: wire.TaskID(id), Role: wire.MessageRole(state), Parts: parts[:flags%3]}
		}
		var meta map[string]any
		if flags&4 != 0 {
			meta = map[string]any{text: state, ctx: []any{id, flags&8 != 0, nil, json.RawMessage(data)}, "n": float64(unixNano) / 7}
		}
		var ev wire.Event
		switch flags >> 5 {
		case 0, 1:
			ev = &wire.TaskStatusUpdateEvent{TaskID: wire.TaskID(id), ContextID: ctx, Metadata: meta,
				Status: wire.TaskStatus{State: wire.TaskState(state), Timestamp: &ts, Message: msg}}
		case 2, 3:
			var art *wire.Artifact
			if flags&16 != 0 {
				art = &wire.Artifact{ID: wire.ArtifactID(text), Name: state, Parts: parts}
			}
			ev = &wire.TaskArtifactUpdateEvent{TaskID: wire.TaskID(id), ContextID: ctx, Metadata: meta,
				Artifact: art, Append: flags&8 != 0, LastChunk: flags&1 != 0}
		case 4, 5:
			ev = &wire.Task{ID: wire.TaskID(id), ContextID: ctx, Metadata: meta,
				Status: wire.TaskStatus{State: wire.TaskState(state), Timestamp: &ts, Message: msg}}
		case 6:
			if msg == nil {
				msg = &wire.Message{ID: id, Parts: parts}
			}
			ev = msg
		}
		checkStreamResponse(t, ev)
	})
}
