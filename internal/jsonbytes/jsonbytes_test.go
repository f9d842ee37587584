package jsonbytes

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// marshalString is encoding/json's encoding of s, with or without HTML
// escaping.
func marshalString(s string, escapeHTML bool) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(escapeHTML)
	_ = enc.Encode(s)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", "\"\\/", "\x00\x01\x1f\x7f", "<>&", "\u2028\u2029", "é中🙂", "bad\xffutf8\xc3", "\r\n\t\b\f"} {
		for _, html := range []bool{true, false} {
			if got, want := AppendString(nil, s, html), marshalString(s, html); !bytes.Equal(got, want) {
				t.Errorf("AppendString(%q, html %v) = %s, want %s", s, html, got, want)
			}
		}
	}
	// Without HTML escaping '<', '>' and '&' pass as they are.
	if got := AppendString([]byte("x"), "<a&b>", false); string(got) != `x"<a&b>"` {
		t.Errorf("got %s", got)
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "<>&", "\u2028", "bad\xff", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, html := range []bool{true, false} {
			if got, want := AppendString(nil, s, html), marshalString(s, html); !bytes.Equal(got, want) {
				t.Fatalf("AppendString(%q, html %v) = %s, want %s", s, html, got, want)
			}
		}
	})
}

func TestScannerMembersAndElements(t *testing.T) {
	sc := Scanner{Data: []byte(` { "a" : [1, {"b":"}"}], "c\u0064":null , "a":2 } `)}
	type member struct {
		name    string
		escaped bool
		value   string
	}
	var got []member
	err := sc.Members(func(name []byte, escaped bool, value []byte) error {
		got = append(got, member{string(name), escaped, string(value)})
		return nil
	})
	want := []member{{"a", false, `[1, {"b":"}"}]`}, {`c\u0064`, true, "null"}, {"a", false, "2"}}
	if err != nil || len(got) != len(want) {
		t.Fatalf("members %v (%v)", got, err)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("member %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if sc.Space(); sc.Pos != len(sc.Data) {
		t.Errorf("Members stopped at %d of %d", sc.Pos, len(sc.Data))
	}
	if name, err := Unquote([]byte(`c\u0064`), true); err != nil || name != "cd" {
		t.Errorf("Unquote = %q, %v", name, err)
	}

	tooMany := errors.New("too many")
	sc = Scanner{Data: []byte(`[ {"x":[1,2]}, "s", 3 ]`)}
	elems, err := sc.Elements(3, tooMany)
	if err != nil || len(elems) != 3 || string(elems[0]) != `{"x":[1,2]}` || string(elems[1]) != `"s"` || string(elems[2]) != "3" {
		t.Fatalf("elements %q (%v)", elems, err)
	}
	sc = Scanner{Data: []byte(`[1,2,3,4]`)}
	if _, err := sc.Elements(3, tooMany); err != tooMany {
		t.Fatalf("four elements under a limit of three: %v", err)
	}
	sc = Scanner{Data: []byte(`[]`)}
	if elems, err := sc.Elements(3, tooMany); err != nil || elems != nil {
		t.Fatalf("empty array: %q %v", elems, err)
	}
}

// The scanner finds the ends of values, it does not validate them (input
// is checked with json.Valid first), but the structure Members and
// Elements rely on is checked.
func TestScannerRefusesMalformed(t *testing.T) {
	for _, in := range []string{`{"a"}`, `{"a":}`, `{"a" 1}`, `[1]`, `{"a":1,}`, `{"a":1 "b":2}`, `{"a":"b`} {
		sc := Scanner{Data: []byte(in)}
		if err := sc.Members(func([]byte, bool, []byte) error { return nil }); !errors.Is(err, ErrMalformed) {
			t.Errorf("Members(%q) = %v, want ErrMalformed", in, err)
		}
	}
	for _, in := range []string{`[1,]`, `[1 2]`, `{}`, `[`} {
		sc := Scanner{Data: []byte(in)}
		if _, err := sc.Elements(10, nil); !errors.Is(err, ErrMalformed) {
			t.Errorf("Elements(%q) = %v, want ErrMalformed", in, err)
		}
	}
}

// FuzzScanner checks the scanner against encoding/json on valid input:
// Skip consumes exactly one value, Members reports what json.Unmarshal
// reads into a map, Elements what it reads into a slice. On any input it
// never panics.
func FuzzScanner(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":[true,null,"x"],"a":{"c":-1.5e3}}`, `[1,"2",{"3":[]}]`, `"s\"t"`, `{}`, `[]`, `{"\u0041":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sc := Scanner{Data: data}
		skipErr := sc.Skip()
		if !json.Valid(data) {
			return
		}
		sc.Space()
		if skipErr != nil || sc.Pos != len(data) {
			t.Fatalf("Skip on valid %q: %v at %d", data, skipErr, sc.Pos)
		}
		trimmed := TrimSpace(data)
		if !utf8.Valid(trimmed) {
			return // Unquote keeps invalid UTF-8 that encoding/json replaces
		}
		switch trimmed[0] {
		case '{':
			var want map[string]json.RawMessage
			if json.Unmarshal(trimmed, &want) != nil {
				return
			}
			got := map[string]json.RawMessage{}
			sc := Scanner{Data: trimmed}
			err := sc.Members(func(name []byte, escaped bool, value []byte) error {
				n, err := Unquote(name, escaped)
				got[n] = value
				return err
			})
			if err != nil || len(got) != len(want) {
				t.Fatalf("Members on %q: %v, %d members, want %d", trimmed, err, len(got), len(want))
			}
			for k, v := range want {
				if !bytes.Equal(got[k], v) {
					t.Fatalf("member %q = %s, want %s", k, got[k], v)
				}
			}
		case '[':
			var want []json.RawMessage
			if json.Unmarshal(trimmed, &want) != nil {
				return
			}
			sc := Scanner{Data: trimmed}
			got, err := sc.Elements(len(want), errors.New("too many"))
			if err != nil || len(got) != len(want) {
				t.Fatalf("Elements on %q: %v, %d elements, want %d", trimmed, err, len(got), len(want))
			}
			for i := range want {
				if !bytes.Equal(got[i], want[i]) {
					t.Fatalf("element %d = %s, want %s", i, got[i], want[i])
				}
			}
		}
	})
}

// FuzzValid holds Valid to json.Valid on any input.
func FuzzValid(f *testing.F) {
	for _, s := range []string{
		`{"a":1,"b":[true,null,"x"],"a":{"c":-1.5e3}}`, `[1,"2",{"3":[]}]`, ` "s\"t\u00e9\/" `, `{}`, `[]`, `{"\u0041":1}`,
		`01`, `-`, `1.`, `1e`, `1e+`, `-0.0e-0`, `[1,]`, `{"a"}`, `{"a":}`, `{,}`, `tru`, `nulls`, "\"\xff\x01\"", "\"\xff\"",
		`"\x"`, `"\u12g4"`, `[1 2]`, `{"a":1 "b":2}`, `]`, `"`, ``, ` `, `1 1`, `{"a":[{"b":[]}],"c":{}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := Valid(data), json.Valid(data); got != want {
			t.Fatalf("Valid(%q) = %v, json.Valid says %v", data, got, want)
		}
	})
}

// TestValidDepth checks the nesting limit at its edge, where json.Valid
// turns from true to false.
func TestValidDepth(t *testing.T) {
	for _, depth := range []int{maxDepth - 1, maxDepth, maxDepth + 1} {
		for _, open := range []string{"[", `{"a":`} {
			closer := "]"
			if open != "[" {
				closer = "}"
			}
			data := []byte(strings.Repeat(open, depth) + "1" + strings.Repeat(closer, depth))
			if got, want := Valid(data), json.Valid(data); got != want {
				t.Fatalf("depth %d %s: Valid %v, json.Valid %v", depth, open, got, want)
			}
		}
	}
}

// BenchmarkValid compares Valid with json.Valid on a negotiation record
// sized object.
func BenchmarkValid(b *testing.B) {
	data := []byte(`{"protocol":"mcp","outcome":"accepted","at":"2026-12-01T19:41:31.123456789Z","version":"2026-07-28","requested":"2026-07-28","supported":["2026-07-28"],"peerDigest":"sha256:0123456789abcdef0123456789abcdef","n":-12.5e3,"ok":true,"x":null}`)
	b.Run("jsonbytes", func(b *testing.B) {
		for b.Loop() {
			if !Valid(data) {
				b.Fatal("invalid")
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			if !json.Valid(data) {
				b.Fatal("invalid")
			}
		}
	})
}

// FuzzAppendCompact holds AppendCompact to json.Compact on any input.
func FuzzAppendCompact(f *testing.F) {
	for _, s := range []string{` { "a" : [ 1 , "b c" ] } `, `{"s":"\" x\\"}`, "\t\"\\u0020\"\n", `{"a" 1}`, ``, ` `, "\"\xff \"", `[1 2]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		var want bytes.Buffer
		err := json.Compact(&want, src)
		got, ok := AppendCompact([]byte("x"), src)
		if ok != (err == nil) || (ok && string(got) != "x"+want.String()) || (!ok && string(got) != "x") {
			t.Fatalf("AppendCompact(%q) = %q, %v; json.Compact %q, %v", src, got, ok, want.String(), err)
		}
	})
}
