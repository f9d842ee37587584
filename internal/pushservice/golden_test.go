package pushservice

import (
	"encoding/json"
	"testing"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/internal/golden"
)

// checkGolden compares a push body with testdata/golden/name; refresh with
// go test ./internal/pushservice -run Golden -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, "golden/"+name, got)
}

func TestGoldenBodies(t *testing.T) {
	at := time.Date(2026, 11, 30, 9, 30, 0, 0, time.UTC)
	cases := []struct {
		name string
		ev   wire.Event
	}{
		{"status_completed.json", &wire.TaskStatusUpdateEvent{
			TaskID: "acme/RUN0000000000000000000000", ContextID: "ctx-1",
			Status: wire.TaskStatus{State: wire.TaskStateCompleted, Timestamp: &at},
		}},
		{"status_input_required.json", &wire.TaskStatusUpdateEvent{
			TaskID: "acme/RUN0000000000000000000000", ContextID: "ctx-1",
			Status: wire.TaskStatus{State: wire.TaskStateInputRequired, Timestamp: &at, Message: &wire.Message{
				ID: "acme/INT0000000000000000000000", Role: wire.MessageRoleAgent, TaskID: "acme/RUN0000000000000000000000", ContextID: "ctx-1",
				Parts: wire.ContentParts{wire.NewTextPart("Approve <the> request & go?")},
			}},
			Metadata: map[string]any{"openwop": map[string]any{"interrupt": map[string]any{"id": "acme/INT0000000000000000000000", "kind": "approval", "actions": []string{"accept", "reject"}}}},
		}},
		{"artifact_chunk.json", &wire.TaskArtifactUpdateEvent{
			TaskID: "acme/RUN0000000000000000000000", ContextID: "ctx-1",
			Artifact: &wire.Artifact{ID: "out", Parts: wire.ContentParts{wire.NewTextPart("chunk 1")}},
			Append:   true, LastChunk: true,
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := encodeBody(c.ev)
			if err != nil {
				t.Fatal(err)
			}
			var members map[string]json.RawMessage
			if err := json.Unmarshal(b, &members); err != nil || len(members) != 1 {
				t.Fatalf("%s: not a StreamResponse with one member", b)
			}
			checkGolden(t, c.name, b)
		})
	}
	if _, err := encodeBody(nil); err == nil {
		t.Fatal("a nil event encoded")
	}
}

func TestGoldenDeadLetter(t *testing.T) {
	b, err := json.Marshal(deadLetterPayload{TaskID: "acme/RUN0000000000000000000000", ConfigID: "pc-CFG", Attempts: 5, LastStatus: "5xx"})
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "dead_letter_payload.json", b)
}
