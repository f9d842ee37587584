package mount

import (
	"encoding/json"
	"testing"
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
		var p map[string]json.RawMessage
		if err := json.Unmarshal([]byte(tc.params), &p); err != nil {
			t.Fatal(err)
		}
		got, refuse := ParseRound(p)
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
		if json.Unmarshal(raw, &p) != nil {
			return
		}
		got, refuse := ParseRound(p)
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
