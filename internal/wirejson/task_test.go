package wirejson

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
)

// encodingJSON is what the Task encoder must write: json.Encoder's bytes
// (HTML escaping on) without the newline.
func encodingJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// checkSameAsEncodingJSON fails unless AppendTask writes encoding/json's
// bytes for task, or both refuse it.
func checkSameAsEncodingJSON(t *testing.T, task *wire.Task) {
	t.Helper()
	want, wantErr := encodingJSON(task)
	got, err := AppendTask(nil, task)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("error %v, encoding/json's %v", err, wantErr)
	}
	if err == nil && !bytes.Equal(got, want) {
		t.Fatalf("AppendTask:\n%s\nencoding/json:\n%s", got, want)
	}
}

func TestAppendTaskMatchesEncodingJSON(t *testing.T) {
	at := time.Date(2026, 12, 1, 19, 4, 5, 123456000, time.UTC)
	zone := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 5*3600+30*60))
	odd := time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	text := &wire.Part{Content: wire.Text("hi <b> & \u2028 \xff \"q\"\n")}
	cases := map[string]*wire.Task{
		"empty":  {},
		"states": {ID: "t", ContextID: "c", Status: wire.TaskStatus{State: wire.TaskStateCompleted, Timestamp: &at}},
		"full": {
			ID: "t<1>", ContextID: "c&2",
			Artifacts: []*wire.Artifact{
				{ID: "a", Description: "d", Name: "n", Extensions: []string{"e1", "e2"}, Metadata: map[string]any{"z": 1, "a": []any{"x", nil}},
					Parts: wire.ContentParts{
						{Content: wire.Data{Value: json.RawMessage(`{"ok":true,"n":[1,2]}`)}},
						{Content: wire.Data{Value: json.RawMessage(`{ "spaced" : "<x>" }`)}},
						{Content: wire.Data{Value: json.RawMessage(`"\u2028 \u2029"`)}},
						{Content: wire.Data{Value: json.RawMessage(`{"h":"<x>&","l":" "}`)}},
						{Content: wire.Data{Value: json.RawMessage("[\"\u2029\"]")}},
						{Content: wire.Data{Value: json.RawMessage(`["<"]`)}},
						{Content: wire.Data{Value: json.RawMessage(`[">"]`)}},
						{Content: wire.Data{Value: json.RawMessage(`["&"]`)}},
						{Content: wire.Data{Value: json.RawMessage("[1,\t2]")}},
						{Content: wire.Data{Value: json.RawMessage("[1,\n2]")}},
						{Content: wire.Data{Value: json.RawMessage("[1,\r2]")}},
						{Content: wire.Data{Value: json.RawMessage("[1, 2]")}},
						{Content: wire.Data{Value: json.RawMessage(nil)}},
						{Content: wire.Data{Value: map[string]any{"k": "v&"}}},
						{Content: wire.Data{}},
						{Content: wire.Raw("bytes\x00\xff"), Filename: "f.bin", MediaType: "application/octet-stream"},
						{Content: wire.Raw(nil)},
						{Content: wire.URL("https://x/?a=1&b=2"), MediaType: "text/html"},
						{Content: wire.URL(""), Filename: "only-name"},
						{Content: wire.URL("")},
						{},
						{Metadata: map[string]any{"m": 1.5}},
						text,
						nil,
					}},
				{ID: "b"},
				nil,
			},
			History: []*wire.Message{
				{ID: "m1", Role: wire.MessageRoleUser, Metadata: map[string]any{"skillId": "conformance-noop", "<k>": true, "\xff": false, "a": nil,
					"list": []any{"x", 1, map[string]any{"z": "y", "b": []any{}}, []any(nil), json.RawMessage(` [1] `)}, "m": map[string]any(nil), "e": map[string]any{}}, Parts: wire.ContentParts{text}, ReferenceTasks: []wire.TaskID{"r1", "r2"}, Extensions: []string{"x"}},
				{ID: "m2", Role: wire.MessageRoleAgent, TaskID: "t", ContextID: "c", Parts: wire.ContentParts{}, Metadata: map[string]any{"openwop": map[string]string{"k": "v"}}},
				nil,
			},
			Metadata: map[string]any{"openwop": struct {
				Interrupt string `json:"interrupt"`
			}{"i<1>"}},
			Status: wire.TaskStatus{State: wire.TaskStateInputRequired, Timestamp: &zone,
				Message: &wire.Message{ID: "s", Role: wire.MessageRoleAgent, Parts: wire.ContentParts{text}}},
		},
		"empty lists":         {ID: "t", Artifacts: []*wire.Artifact{}, History: []*wire.Message{}, Metadata: map[string]any{}},
		"timestamp refused":   {ID: "t", Status: wire.TaskStatus{Timestamp: &odd}},
		"invalid raw refused": {ID: "t", Artifacts: []*wire.Artifact{{Parts: wire.ContentParts{{Content: wire.Data{Value: json.RawMessage(`{"a":`)}}}}}},
		"empty raw refused":   {ID: "t", Artifacts: []*wire.Artifact{{Parts: wire.ContentParts{{Content: wire.Data{Value: json.RawMessage{}}}}}}},
	}
	for name, task := range cases {
		t.Run(name, func(t *testing.T) { checkSameAsEncodingJSON(t, task) })
	}
}

// FuzzAppendTask holds AppendTask to encoding/json byte for byte (the
// differential check of the hand-written encoder).
func FuzzAppendTask(f *testing.F) {
	f.Add("t", "c", "m", "hi <&>", []byte(`{"ok":true}`), []byte("raw"), "https://x", int64(1764615845123456789), uint8(0))
	f.Add("\xff\u2028", "", "", "", []byte(`{ "a" : "<" }`), []byte(nil), "", int64(-62135596800), uint8(255))
	f.Add("", "c", "m", "", []byte(`not json`), []byte{}, "", int64(253402300800), uint8(7))
	f.Fuzz(func(t *testing.T, id, ctx, msgID, text string, data, raw []byte, url string, unixNano int64, flags uint8) {
		ts := time.Unix(0, unixNano).UTC()
		if flags&1 != 0 {
			ts = ts.In(time.FixedZone("z", int(unixNano%50000)))
		}
		parts := wire.ContentParts{
			{Content: wire.Text(text), MediaType: url},
			{Content: wire.Data{Value: json.RawMessage(data)}},
			{Content: wire.Raw(raw), Filename: text},
			{Content: wire.URL(url)},
		}
		task := &wire.Task{
			ID: wire.TaskID(id), ContextID: ctx,
			Status: wire.TaskStatus{State: wire.TaskState(text), Timestamp: &ts},
			History: []*wire.Message{{ID: msgID, ContextID: ctx, TaskID: wire.TaskID(id),
				Role: wire.MessageRole(url), Parts: parts[:flags%5]}},
		}
		if flags&2 != 0 {
			task.Artifacts = []*wire.Artifact{{ID: wire.ArtifactID(msgID), Name: text, Description: ctx, Parts: parts}}
		}
		if flags&4 != 0 {
			task.Status.Message = &wire.Message{ID: msgID, Parts: parts[flags%5:]}
			task.Metadata = map[string]any{text: url, ctx: []any{msgID, flags&8 != 0, nil, map[string]any{id: json.RawMessage(data)}, []any(nil)},
				"n": float64(unixNano) / 7, "m": map[string]any(nil), "s": []string{text}}
		}
		checkSameAsEncodingJSON(t, task)
	})
}
