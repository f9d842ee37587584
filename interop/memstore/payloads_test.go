package memstore

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/wopinterop/wopinterop/interop"
)

// FuzzAppendPayload: the hand-written payloads are json.Marshal's bytes,
// whatever the strings hold (escapes, HTML, invalid UTF-8, U+2028).
func FuzzAppendPayload(f *testing.F) {
	f.Add("conformance-noop", "a2a", "artifact-1", "<b>&", "node", uint8(0))
	f.Add("", "", "", "", "", uint8(1))
	f.Add("wf\u2028\"\\\n", "mcp", "a\xffb", "\x00\x1f", "n\u2029", uint8(2))
	f.Fuzz(func(t *testing.T, workflow, transport, artifact, summary, node string, reg uint8) {
		var registered *bool
		if reg%3 != 0 {
			b := reg%3 == 1
			registered = &b
		}
		for _, payload := range []any{
			interop.RunStarted{WorkflowID: workflow, Transport: interop.Transport(transport)},
			interop.ArtifactCreated{ArtifactID: artifact, ArtifactType: transport, NodeID: node, Summary: summary, Registered: registered},
		} {
			want, err := json.Marshal(payload)
			if err != nil {
				t.Fatal(err)
			}
			if got := appendPayload(nil, payload); !bytes.Equal(got, want) {
				t.Fatalf("%#v:\n got %s\nwant %s", payload, got, want)
			}
		}
	})
}

// Payloads it does not know are left to json.Marshal.
func TestAppendPayloadLeavesOthers(t *testing.T) {
	for _, p := range []any{
		interop.RunStarted{WorkflowID: "w", Inputs: json.RawMessage(`{"a":1}`)},
		interop.RunCompleted{Outputs: json.RawMessage(`{"a": 1}`)},
		interop.RunCompleted{Outputs: json.RawMessage(`{"a":"<"}`)},
		interop.RunCompleted{},
		interop.RunCancelled{Reason: "r"},
	} {
		if b := appendPayload(nil, p); b != nil {
			t.Errorf("%#v encoded by hand: %s", p, b)
		}
	}
}

// FuzzAppendCompleted: run.completed is written by hand only when its
// outputs are json.Marshal's bytes as they stand, and then byte for byte
// as json.Marshal writes it; anything else (spacing, HTML characters,
// U+2028, invalid JSON) is left to json.Marshal.
func FuzzAppendCompleted(f *testing.F) {
	for _, s := range []string{`{}`, `{"ok":true}`, `{"result":[1,"a b",null]}`, `{"a": 1}`, `{"s":"<&>"}`,
		"{\"s\":\"\u2028\"}", `{"s":"\\"}`, `{"s":"\\"x"}`, `{`, ``, `"\u00e9"`, "\"\xe2\x80\xa9\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, outputs []byte) {
		payload := interop.RunCompleted{Outputs: outputs}
		got := appendPayload(nil, payload)
		want, err := json.Marshal(payload)
		if got == nil {
			return // json.Marshal's to write or refuse
		}
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%q:\n got %s\nwant %s (%v)", outputs, got, want, err)
		}
	})
}

// The common case is written by hand.
func TestAppendPayloadCompleted(t *testing.T) {
	got := appendPayload(nil, interop.RunCompleted{Outputs: json.RawMessage(`{"ok":true,"s":"a b"}`)})
	if want := `{"outputs":{"ok":true,"s":"a b"}}`; string(got) != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}
