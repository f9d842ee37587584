package mount

import (
	"encoding/json"
	"testing"

	"github.com/wopinterop/wopinterop/internal/jsonbytes"
)

// TestParseRound: requestState and inputResponses are read strictly, an
// explicit null counting as absent; each refusal names what is wrong.
func TestParseRound(t *testing.T) {
	cases := []struct {
		params string
		want   Round
		refuse string
	}{
		{`{}`, Round{}, ""},
		{`{"requestState":null,"inputResponses":null}`, Round{}, ""},
		{`{"requestState":"s"}`, Round{State: "s", HasState: true}, ""},
		{`{"requestState":7}`, Round{}, BadRequestState},
		{`{"inputResponses":{"k":{"action":"accept"}}}`, Round{Responses: map[string]json.RawMessage{"k": json.RawMessage(`{"action":"accept"}`)}, HasResponses: true}, ""},
		{`{"inputResponses":{}}`, Round{Responses: map[string]json.RawMessage{}, HasResponses: true}, ""},
		{`{"inputResponses":[]}`, Round{}, MalformedResponses},
		{`{"inputResponses":{"k":1}}`, Round{}, MalformedResponses},
		{`{"inputResponses":{"k":null}}`, Round{}, MalformedResponses},
	}
	for _, tc := range cases {
		got, refuse := ParseRound(ParamsOf([]byte(tc.params)))
		if refuse != tc.refuse {
			t.Errorf("%s: refusal %q, want %q", tc.params, refuse, tc.refuse)
			continue
		}
		if refuse == "" && (got.State != tc.want.State || got.HasState != tc.want.HasState || got.HasResponses != tc.want.HasResponses || len(got.Responses) != len(tc.want.Responses)) {
			t.Errorf("%s: %+v, want %+v", tc.params, got, tc.want)
		}
	}
}

// FuzzParseRound: any params object is read without a panic, and what is
// accepted holds only result objects.
func FuzzParseRound(f *testing.F) {
	for _, s := range []string{`{}`, `{"requestState":"rs1.x","inputResponses":{"a":{"action":"decline"}}}`, `{"inputResponses":{"a":[]}}`, `{"requestState":null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var p map[string]json.RawMessage
		if json.Unmarshal(raw, &p) != nil || p == nil {
			return // the envelope decoder passes only objects
		}
		got, refuse := ParseRound(ParamsOf(jsonbytes.TrimSpace(raw)))
		if refuse != "" {
			return
		}
		for k, v := range got.Responses {
			if len(v) == 0 || v[0] != '{' {
				t.Fatalf("response %q accepted: %s", k, v)
			}
		}
	})
}

// TestMarshal: no HTML escaping, no trailing newline.
func TestMarshal(t *testing.T) {
	b, err := Marshal(map[string]string{"t": "a <b> & c"})
	if err != nil || string(b) != `{"t":"a <b> & c"}` {
		t.Fatalf("%s %v", b, err)
	}
	if got := string(AppendString([]byte("x"), "<\"\n>")); got != `x"<\"\n>"` {
		t.Fatalf("AppendString = %s", got)
	}
}

// FuzzParamsGet: reading a member in place agrees with json.Unmarshal into
// a map[string]json.RawMessage on every JSON object and name — escaped and
// invalid UTF-8 names, duplicates (the last kept), absent members.
func FuzzParamsGet(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"name":"noop","arguments":{"a":[1,2,{"b":null}]},"_meta":{"x":"y"}}`,
		`{"name":1,"name":2}`, `{"n\u0061me":"x","\ud800":1,"a\"b":true}`, "{\"\xff\xfe\":1,\"n\xc3\":2}",
		` { "name" : 1 , "b" : [ ] } `,
	} {
		f.Add([]byte(s), "name")
	}
	f.Add([]byte(`{"a\"b":true}`), `a"b`)
	f.Add([]byte("{\"\xff\":1}"), "\ufffd")
	f.Fuzz(func(t *testing.T, raw []byte, name string) {
		var want map[string]json.RawMessage
		if json.Unmarshal(raw, &want) != nil || want == nil {
			return // the envelope decoder passes only objects
		}
		p := ParamsOf(jsonbytes.TrimSpace(raw))
		got, ok := p.Get(name)
		w, wantOK := want[name]
		if ok != wantOK || string(got) != string(w) {
			t.Fatalf("%q: Get(%q) = %q %v, want %q %v", raw, name, got, ok, w, wantOK)
		}
		if name == "arguments" {
			return // GetAll's names are distinct
		}
		all := []json.RawMessage{json.RawMessage("stale"), nil}
		p.GetAll(all, name, "arguments")
		args, argsOK := want["arguments"]
		if (all[0] != nil) != wantOK || string(all[0]) != string(w) || (all[1] != nil) != argsOK || string(all[1]) != string(args) {
			t.Fatalf("%q: GetAll(%q, arguments) = %q", raw, name, all)
		}
	})
}
