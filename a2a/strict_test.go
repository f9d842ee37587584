package a2a

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
)

func TestCheckMemberCase(t *testing.T) {
	cases := []struct {
		name  string
		sh    shape
		in    string
		field string // "" = accepted
	}{
		{"exact names", shapeSendMessageRequest, `{"tenant":"t","message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x","mediaType":"text/plain"}],"taskId":"a/b","contextId":"c"},"configuration":{"historyLength":1,"returnImmediately":false}}`, ""},
		{"unknown members ignored", shapeSendMessageRequest, `{"kind":"message","message":{"kind":"x","parts":[{"kind":"text","text":"x"}]}}`, ""},
		{"top-level case", shapeSendMessageRequest, `{"Message":{}}`, "message"},
		{"nested case", shapeSendMessageRequest, `{"message":{"messageID":"m"}}`, "message.messageId"},
		{"case inside a part", shapeSendMessageRequest, `{"message":{"parts":[{"text":"a"},{"Text":"b"}]}}`, "message.parts[1].text"},
		{"case in the config", shapeSendMessageRequest, `{"configuration":{"HistoryLength":2}}`, "configuration.historyLength"},
		{"case in the push config", shapeSendMessageRequest, `{"configuration":{"taskPushNotificationConfig":{"url":"u","authentication":{"Scheme":"Bearer"}}}}`, "configuration.taskPushNotificationConfig.authentication.scheme"},
		{"Unicode fold (long s)", shapeSendMessageRequest, `{"message":{"meſsageId":"m"}}`, "message.messageId"},
		{"Unicode fold (Kelvin sign)", shapeListTasksRequest, "{\"pageTo\u212aen\":\"x\"}", "pageToken"},
		{"escaped key, exact", shapeGetTaskRequest, `{"\u0069d":"x"}`, ""},
		{"escaped key, other case", shapeGetTaskRequest, `{"\u0049D":"x"}`, "id"},
		{"opaque metadata", shapeSendMessageRequest, `{"metadata":{"Message":1,"TENANT":2},"message":{"metadata":{"MessageId":3},"parts":[{"metadata":{"Text":4},"data":{"TEXT":5,"Data":{"URL":6}}}]}}`, ""},
		{"wrong JSON types pass to the decoder", shapeSendMessageRequest, `{"message":"text","configuration":[{"HistoryLength":1}]}`, ""},
		{"parts not an array", shapeSendMessageRequest, `{"message":{"parts":{"Text":"x"}}}`, ""},
		{"get task", shapeGetTaskRequest, `{"Id":"x"}`, "id"},
		{"list tasks", shapeListTasksRequest, `{"pagesize":3}`, "pageSize"},
		{"cancel task", shapeCancelTaskRequest, `{"id":"x","Metadata":{}}`, "metadata"},
		{"subscribe", shapeSubscribeRequest, `{"ID":"x"}`, "id"},
		{"push get", shapeGetPushConfigRequest, `{"taskid":"x"}`, "taskId"},
		{"push list", shapeListPushConfigsRequest, `{"taskId":"x","PageToken":"p"}`, "pageToken"},
		{"push delete", shapeDeletePushConfigRequest, `{"taskId":"x","iD":"c"}`, "id"},
		{"push create", shapePushConfig, `{"taskId":"x","URL":"u"}`, "url"},
		{"extended card", shapeExtendedCardRequest, `{"Tenant":"r"}`, "tenant"},
		{"duplicates are not refused", shapeGetTaskRequest, `{"id":"a","id":"b"}`, ""},
		{"empty object", shapeGetTaskRequest, ` { } `, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := checkMemberCase([]byte(tc.in), tc.sh)
			var cm *caseMismatch
			switch {
			case tc.field == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.field != "" && !errors.As(err, &cm):
				t.Fatalf("got %v, want a mismatch at %s", err, tc.field)
			case tc.field != "" && cm.Field != tc.field:
				t.Fatalf("field %q, want %q", cm.Field, tc.field)
			}
		})
	}
}

// TestEncodingJSONFoldsMemberNames documents why the check exists: without
// it, encoding/json serves a misspelled member, Unicode folds included.
func TestEncodingJSONFoldsMemberNames(t *testing.T) {
	var m wire.Message
	if err := json.Unmarshal([]byte(`{"MESSAGEID":"a","meſsageId":"b"}`), &m); err != nil {
		t.Fatal(err)
	}
	if m.ID != "b" {
		t.Fatalf("encoding/json read messageId %q; the walker's folding assumption no longer holds", m.ID)
	}
	if err := checkMemberCase([]byte(`{"message":{"MESSAGEID":"a"}}`), shapeSendMessageRequest); err == nil {
		t.Fatal("the walker accepted what encoding/json would fold")
	}
}

func TestCheckMemberCaseMalformed(t *testing.T) {
	for _, in := range []string{``, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":1 "b":2}`, `{"a":[1}`, `{"a":"x` + "\x01" + `"}`, `}`, `{"id":1}x`, `{"a":tru€}`} {
		if err := checkMemberCase([]byte(in), shapeGetTaskRequest); !errors.Is(err, errMalformedJSON) {
			t.Errorf("%q: got %v, want errMalformedJSON", in, err)
		}
	}
}

// TestCheckMemberCaseDeepOpaque: an opaque subtree is skipped without
// recursion, so nesting depth costs no stack.
func TestCheckMemberCaseDeepOpaque(t *testing.T) {
	deep := strings.Repeat(`{"a":[`, 200000) + strings.Repeat(`]}`, 200000)
	in := `{"message":{"metadata":` + deep + `,"parts":[{"data":` + deep + `}]}}`
	if err := checkMemberCase([]byte(in), shapeSendMessageRequest); err != nil {
		t.Fatal(err)
	}
}

// TestShapeNamesMatchWireTypes keeps the member lists in step with the
// a2a-go json tags, so a new wire member cannot slip past the check.
func TestShapeNamesMatchWireTypes(t *testing.T) {
	for sh, v := range map[shape]any{
		shapeSendMessageRequest:      wire.SendMessageRequest{},
		shapeSendMessageConfig:       wire.SendMessageConfig{},
		shapeMessage:                 wire.Message{},
		shapePushConfig:              wire.PushConfig{},
		shapePushAuth:                wire.PushAuthInfo{},
		shapeGetTaskRequest:          wire.GetTaskRequest{},
		shapeListTasksRequest:        wire.ListTasksRequest{},
		shapeCancelTaskRequest:       wire.CancelTaskRequest{},
		shapeSubscribeRequest:        wire.SubscribeToTaskRequest{},
		shapeGetPushConfigRequest:    wire.GetTaskPushConfigRequest{},
		shapeListPushConfigsRequest:  wire.ListTaskPushConfigRequest{},
		shapeDeletePushConfigRequest: wire.DeleteTaskPushConfigRequest{},
		shapeExtendedCardRequest:     wire.GetExtendedAgentCardRequest{},
	} {
		var tags []string
		rt := reflect.TypeOf(v)
		for i := range rt.NumField() {
			name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
			tags = append(tags, name)
		}
		names := strings.Split(sh.names(), ",")
		slices.Sort(tags)
		slices.Sort(names)
		if !slices.Equal(tags, names) {
			t.Errorf("%s: shape names %v, json tags %v", rt.Name(), names, tags)
		}
	}
	// Part has a custom codec; its members are those of the JSON it reads.
	p := wire.NewDataPart(map[string]any{"k": 1})
	p.Filename, p.MediaType, p.Metadata = "f", "m", map[string]any{"x": 1}
	for _, part := range []*wire.Part{p, wire.NewTextPart("t"), wire.NewRawPart([]byte{1}), wire.NewFileURLPart("https://x", "")} {
		b, err := json.Marshal(part)
		if err != nil {
			t.Fatal(err)
		}
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(b, &keys); err != nil {
			t.Fatal(err)
		}
		for k := range keys {
			if !shapePart.known(k) {
				t.Errorf("Part member %q is not in the part shape", k)
			}
		}
	}
}

// FuzzStrictKeys checks the walker against an independent oracle: decode
// the JSON into generic values with encoding/json and look for a key that
// folds onto a member of the expected shape. Both must agree on whether
// the input is refused; the walker must never panic, and must call only
// JSON malformed.
func FuzzStrictKeys(f *testing.F) {
	seeds := []string{
		`{"message":{"messageId":"m","parts":[{"text":"x"}]}}`,
		`{"message":{"MessageId":"m"}}`,
		`{"metadata":{"Message":1},"message":{"parts":[{"data":{"TEXT":1}}]}}`,
		`{"configuration":{"taskPushNotificationConfig":{"authentication":{"SCHEME":"x"}}}}`,
		`{"\u006Dessage":{}}`,
		`{"message":{"meſsageId":"m"}}`,
		`[{"message":1}]`,
		`{"message":{"parts":[[],{},{"Raw":""}]}}`,
		`{"a":{"b":[1,2,{"c":null}]},"message":null}`,
		`{"message`,
		`{"message":{"parts":[{"text":"t"},{"data":{"z":12345678901234567890,"a":[1.0,1e2,-0]}}]}}`,
		`{"message":{"parts":[{"data":1,"data":2.50}],"parts":[{"data":null,"text":"x"},{"data":"s"}]},"message":{"parts":[{"data":[]}]}}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s), uint8(shapeSendMessageRequest))
	}
	f.Add([]byte(`{"ID":"x"}`), uint8(shapeGetTaskRequest))
	f.Add([]byte(`{"pagesize":1}`), uint8(shapeListTasksRequest))
	f.Fuzz(func(t *testing.T, data []byte, s uint8) {
		sh := shape(s % uint8(shapeExtendedCardRequest+1))
		err := checkMemberCase(data, sh)
		if !json.Valid(data) {
			// The walker is lenient about literal spelling; it may accept
			// what encoding/json refuses, but must not panic.
			return
		}
		if errors.Is(err, errMalformedJSON) {
			t.Fatalf("valid JSON called malformed: %q", data)
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber() // huge numbers are valid JSON, not float64s
		want, oerr := oracleMismatch(dec, sh)
		if oerr != nil {
			t.Fatalf("oracle: %v", oerr)
		}
		var cm *caseMismatch
		got := errors.As(err, &cm)
		if got != want {
			t.Fatalf("walker refused=%v (%v), oracle refused=%v for %q (shape %d)", got, err, want, data, sh)
		}
		if sh == shapeSendMessageRequest && err == nil {
			checkKeptData(t, data)
		}
	})
}

// oracleMismatch is the check written the obvious way over encoding/json's
// own tokenizer (which, unlike decoding into a map, keeps duplicate keys).
func oracleMismatch(dec *json.Decoder, sh shape) (bool, error) {
	tok, err := dec.Token()
	if err != nil {
		return false, err
	}
	delim, isDelim := tok.(json.Delim)
	if !isDelim {
		return false, nil
	}
	found := false
	switch {
	case delim == '[':
		elem := shapeSkip
		if sh == shapeParts {
			elem = shapePart
		}
		for dec.More() {
			m, err := oracleMismatch(dec, elem)
			if err != nil {
				return false, err
			}
			found = found || m
		}
	case delim == '{':
		names := strings.Split(sh.names(), ",")
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return false, err
			}
			k := kt.(string)
			child := shapeSkip
			if sh != shapeSkip && sh != shapeParts && sh != shapeData {
				if slices.Contains(names, k) {
					child = sh.child(k)
				} else {
					for _, n := range names {
						if strings.EqualFold(n, k) {
							found = true
						}
					}
				}
			}
			m, err := oracleMismatch(dec, child)
			if err != nil {
				return false, err
			}
			found = found || m
		}
	}
	_, err = dec.Token() // the closing delimiter
	return found, err
}

// checkKeptData: after the binding's decode, every data part holds, as a
// json.RawMessage, exactly the bytes encoding/json itself reads for that
// part's "data" member (an oracle with a2a-go's decoding structure: fresh
// parts per "parts" member, the last of repeated members).
func checkKeptData(t *testing.T, data []byte) {
	t.Helper()
	var oracle struct {
		Message *struct {
			Parts oracleParts `json:"parts"`
		} `json:"message"`
	}
	oerr := json.Unmarshal(data, &oracle)
	// The binding's own decode, on a copy: it blanks the data values in
	// the buffer it is given.
	req := new(wire.SendMessageRequest)
	if err := projectServer(t).decodeParams(bytes.Clone(data), shapeSendMessageRequest, req); err != nil || req.Message == nil {
		return
	}
	if oerr != nil || oracle.Message == nil || len(oracle.Message.Parts) != len(req.Message.Parts) {
		t.Fatalf("the oracle read %+v (%v) where a2a-go read %d parts: %q", oracle.Message, oerr, len(req.Message.Parts), data)
	}
	for i, p := range req.Message.Parts {
		d, ok := p.Content.(wire.Data)
		if !ok {
			continue
		}
		raw, isRaw := d.Value.(json.RawMessage)
		if !isRaw || !bytes.Equal(raw, oracle.Message.Parts[i].Data) {
			t.Fatalf("part %d holds %#v, encoding/json read %s: %q", i, d.Value, oracle.Message.Parts[i].Data, data)
		}
	}
}

type oracleParts []*oraclePart

func (p *oracleParts) UnmarshalJSON(b []byte) error {
	var parts []*oraclePart
	if err := json.Unmarshal(b, &parts); err != nil {
		return err
	}
	*p = parts
	return nil
}

type oraclePart struct{ Data json.RawMessage }

func (p *oraclePart) UnmarshalJSON(b []byte) error {
	var w struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	p.Data = w.Data
	return nil
}
