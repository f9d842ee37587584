package a2a

import (
	"bytes"
	"encoding/json"
	"testing"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
)

// TestEncodeResultWrapsTask checks the two shapes the bindings hand the
// encoder a task in: the bare Task and SendMessage's {"task":…}.
func TestEncodeResultWrapsTask(t *testing.T) {
	task := &wire.Task{ID: "t", ContextID: "c", Status: wire.TaskStatus{State: wire.TaskStateWorking}}
	for _, v := range []any{task, sendMessageResponse{Task: task}, (*wire.Task)(nil), map[string]int{"n": 1}} {
		var pool bufferPool
		b := pool.get(nil)
		if err := encodeResult(b, v); err != nil {
			t.Fatal(err)
		}
		want, _ := encodingJSON(v)
		if !bytes.Equal(b.out.Bytes(), want) {
			t.Fatalf("%T: %s, want %s", v, b.out.Bytes(), want)
		}
	}
}

// encodingJSON is json.Encoder's bytes for v (HTML escaping on) without
// the newline.
func encodingJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
