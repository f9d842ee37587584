package jsonbytes

import (
	"encoding/json"
	"testing"
)

// unmarshalString is encoding/json's decoding of raw as the contents of a
// JSON string.
func unmarshalString(raw []byte) (string, bool) {
	var s string
	err := json.Unmarshal([]byte(`"`+string(raw)+`"`), &s)
	return s, err == nil
}

func TestDecodeStringMatchesEncodingJSON(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want string
		ok   bool
	}{
		{``, "", true},
		{`plain`, "plain", true},
		{`caf\u00e9 \"q\"`, "café \"q\"", true},
		{`\/\b\f\n\r\t\\`, "/\b\f\n\r\t\\", true},
		{`\'`, "", false},
		{`\ud83d\ude00`, "😀", true},
		{`\ud83d`, "\uFFFD", true},              // an unpaired high surrogate
		{`\ude00x`, "\uFFFDx", true},            // an unpaired low surrogate
		{`\ud83d\u0041`, "\uFFFDA", true},       // a surrogate followed by a non-surrogate
		{`\ud83d\ud83d\ude00`, "\uFFFD😀", true}, // two highs, then a pair
		{"bad\xffutf8\xc3", "bad\uFFFDutf8\uFFFD", true},
		{"\xed\xa0\x80", "\uFFFD\uFFFD\uFFFD", true}, // an encoded surrogate is invalid UTF-8
		{"é中🙂", "é中🙂", true},
		{`\uZZZZ`, "", false},
		{`\x`, "", false},
		{`trailing\`, "", false},
		{"a\"b", "", false},
		{"a\nb", "", false},
	} {
		got, ok := DecodeString([]byte(tc.raw))
		if got != tc.want || ok != tc.ok {
			t.Errorf("DecodeString(%q) = %q, %v; want %q, %v", tc.raw, got, ok, tc.want, tc.ok)
		}
		if want, wantOK := unmarshalString([]byte(tc.raw)); got != want || ok != wantOK {
			t.Errorf("DecodeString(%q) = %q, %v; encoding/json %q, %v", tc.raw, got, ok, want, wantOK)
		}
	}
}

func FuzzDecodeString(f *testing.F) {
	for _, s := range []string{"", `a\u00e9`, `\ud83d\ude00`, `\ud83d`, "bad\xff", `\n\"`, `\`, "\x00"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, ok := DecodeString(raw)
		if want, wantOK := unmarshalString(raw); got != want || ok != wantOK {
			t.Fatalf("DecodeString(%q) = %q, %v; encoding/json %q, %v", raw, got, ok, want, wantOK)
		}
	})
}

// isJSONNumber is encoding/json's answer: a valid value that is a number,
// with no whitespace around it.
func isJSONNumber(lit []byte) bool {
	return len(lit) > 0 && (lit[0] == '-' || '0' <= lit[0] && lit[0] <= '9') && len(TrimSpace(lit)) == len(lit) && json.Valid(lit)
}

func TestIsNumber(t *testing.T) {
	for _, lit := range []string{"0", "-0", "1", "12345678901234567890", "1.5", "-1.5E-7", "1e2", "1E+2", "0.10"} {
		if !IsNumber([]byte(lit)) {
			t.Errorf("IsNumber(%s) = false", lit)
		}
	}
	for _, lit := range []string{"", "-", "01", "1.", ".5", "1e", "1e+", "+1", "0x10", "1_0", "Inf", "NaN", "1 ", "true"} {
		if IsNumber([]byte(lit)) {
			t.Errorf("IsNumber(%q) = true", lit)
		}
	}
}

func FuzzIsNumber(f *testing.F) {
	for _, s := range []string{"0", "-0.5e+3", "01", "1.", "+1", "1e"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, lit []byte) {
		if got, want := IsNumber(lit), isJSONNumber(lit); got != want {
			t.Fatalf("IsNumber(%q) = %v, encoding/json %v", lit, got, want)
		}
	})
}

func TestScannerLiteral(t *testing.T) {
	sc := Scanner{Data: []byte(`-1.5e3,true]null}"x"`)}
	for _, want := range []string{"-1.5e3", "true", "null", ""} {
		got := sc.Literal()
		if string(got) != want {
			t.Fatalf("Literal() = %q, want %q", got, want)
		}
		sc.Pos++ // the delimiter
	}
}
