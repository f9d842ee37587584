package workunit_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/wopinterop/wopinterop/workunit"
)

// sample is the unit the encoding tests carry: member order, escapes,
// exponents and a character outside the BMP, none of it canonical yet.
var sample = workunit.Unit{
	Kind:     "com.example.invoice.review",
	ID:       "unit-7",
	ResultOf: "",
	Body: json.RawMessage(`{ "zeta": [1.0, 1E2, -0.0, 1e21, 0.000001, 1e-7],
		"amount": 1234.5600, "note": "caf\u00e9 <b> & \ud83d\ude00 \u2028 \"q\"",
		"10": true, "9": null, "b": {"y": 2, "x": 1} }`),
}

// sampleCanonical is sample's RFC 8785 form: members sorted by UTF-16
// code units (so "10" before "9"), numbers in ECMAScript's shortest form,
// only the escapes RFC 8785 §3.2.2.2 keeps.
const sampleCanonical = `{"body":{"10":true,"9":null,"amount":1234.56,"b":{"x":1,"y":2},"note":"café <b> & 😀 ` + "\u2028" + ` \"q\"","zeta":[1,100,0,1e+21,0.000001,1e-7]},"id":"unit-7","kind":"com.example.invoice.review"}`

func mustSeal(t testing.TB, u workunit.Unit) workunit.Envelope {
	t.Helper()
	e, err := workunit.Seal(u)
	if err != nil {
		t.Fatalf("Seal: %v", err)
	}
	return e
}

func hexSHA256(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Seal writes the RFC 8785 form and its SHA-256; Open gives back that
// unit, and sealing the opened unit gives back the same bytes.
func TestSealCanonicalAndOpenRoundTrip(t *testing.T) {
	e := mustSeal(t, sample)
	if got := string(e.Canonical()); got != sampleCanonical {
		t.Fatalf("canonical\n got %s\nwant %s", got, sampleCanonical)
	}
	if e.Digest() != hexSHA256([]byte(sampleCanonical)) {
		t.Fatalf("digest %s", e.Digest())
	}
	opened, err := workunit.Open([]byte(sampleCanonical), e.Digest())
	if err != nil {
		t.Fatal(err)
	}
	u := opened.Unit()
	if u.Kind != sample.Kind || u.ID != sample.ID || u.ResultOf != "" || !strings.HasPrefix(string(u.Body), `{"10":true,`) {
		t.Fatalf("opened %+v", u)
	}
	again := mustSeal(t, u)
	if !bytes.Equal(again.Canonical(), e.Canonical()) || again.Digest() != e.Digest() {
		t.Fatalf("Seal(Open(x)) = %s", again.Canonical())
	}
	// What an Envelope hands out is a copy.
	u.Body[0], opened.Canonical()[0] = 'x', 'x'
	if opened.Unit().Body[0] != '{' || opened.Canonical()[0] != '{' {
		t.Fatal("an Envelope shares its memory")
	}
}

// Every refusal of Seal names what is wrong and quotes nothing of the unit.
func TestSealRefusals(t *testing.T) {
	body := json.RawMessage(`{"secret":"s3cr3t"}`)
	for _, tc := range []struct {
		name string
		u    workunit.Unit
		want string
	}{
		{"no kind", workunit.Unit{Body: body}, "workunit: invalid unit: kind is required"},
		{"kind not UTF-8", workunit.Unit{Kind: "a\xff", Body: body}, "workunit: invalid unit: kind is not valid UTF-8"},
		{"id not UTF-8", workunit.Unit{Kind: "k", ID: "\xc3", Body: body}, "workunit: invalid unit: id is not valid UTF-8"},
		{"resultOf not a digest", workunit.Unit{Kind: "k", ResultOf: strings.Repeat("A", 64), Body: body}, "workunit: invalid unit: resultOf is not a lowercase hex SHA-256 digest"},
		{"no body", workunit.Unit{Kind: "k"}, "workunit: invalid unit: body is required"},
		{"body not JSON", workunit.Unit{Kind: "k", Body: json.RawMessage(`{"secret":`)}, "workunit: invalid unit: body is not one JSON value"},
		{"body smuggling a member", workunit.Unit{Kind: "k", Body: json.RawMessage(`1,"kind":"other"`)}, "workunit: invalid unit: body is not one JSON value"},
		{"duplicate member", workunit.Unit{Kind: "k", Body: json.RawMessage(`{"secret":1,"secret":2}`)}, "workunit: invalid unit: the body cannot be canonicalized (RFC 8785: I-JSON, no duplicate member names, numbers within IEEE-754 range)"},
		{"number out of range", workunit.Unit{Kind: "k", Body: json.RawMessage(`{"secret":1e400}`)}, "workunit: invalid unit: the body cannot be canonicalized (RFC 8785: I-JSON, no duplicate member names, numbers within IEEE-754 range)"},
		{"lone surrogate", workunit.Unit{Kind: "k", Body: json.RawMessage(`"s3cr3t\ud800"`)}, "workunit: invalid unit: the body cannot be canonicalized (RFC 8785: I-JSON, no duplicate member names, numbers within IEEE-754 range)"},
		{"invalid UTF-8 in the body", workunit.Unit{Kind: "k", Body: json.RawMessage("\"s3cr3t\xff\"")}, "workunit: invalid unit: the body cannot be canonicalized (RFC 8785: I-JSON, no duplicate member names, numbers within IEEE-754 range)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := workunit.Seal(tc.u)
			if err == nil || err.Error() != tc.want || !errors.Is(err, workunit.ErrInvalidUnit) {
				t.Fatalf("Seal: %v\nwant %s", err, tc.want)
			}
		})
	}
}

// Open refuses, in its documented classes, anything that Seal did not
// write or that changed on the way — even bytes whose digest is right.
func TestOpenRefusals(t *testing.T) {
	good := mustSeal(t, workunit.Unit{Kind: "k", Body: json.RawMessage(`{"a":1}`)})
	withOwnDigest := func(s string) ([]byte, string) { return []byte(s), hexSHA256([]byte(s)) }
	digestOf := hexSHA256([]byte("x"))
	for _, tc := range []struct {
		name      string
		canonical string
		digest    string // "" → the canonical text's own digest
		is        error
		want      string
	}{
		{"digest uppercase", string(good.Canonical()), strings.ToUpper(good.Digest()), workunit.ErrMalformed, "workunit: malformed envelope: the digest is not a lowercase hex SHA-256"},
		{"digest short", string(good.Canonical()), good.Digest()[1:], workunit.ErrMalformed, "workunit: malformed envelope: the digest is not a lowercase hex SHA-256"},
		{"digest of other bytes", string(good.Canonical()), digestOf, workunit.ErrDigestMismatch, "workunit: digest mismatch: the unit's bytes do not hash to its digest"},
		{"members unsorted", `{"kind":"k","body":{"a":1}}`, "", workunit.ErrNotCanonical, "workunit: not RFC 8785 canonical: the unit's bytes are not its canonical form"},
		{"whitespace", `{"body":{"a":1}, "kind":"k"}`, "", workunit.ErrNotCanonical, "workunit: not RFC 8785 canonical: the unit's bytes are not its canonical form"},
		{"number spelling", `{"body":{"a":1.0},"kind":"k"}`, "", workunit.ErrNotCanonical, "workunit: not RFC 8785 canonical: the unit's bytes are not its canonical form"},
		{"needless escape", `{"body":{"a":"\u0041"},"kind":"k"}`, "", workunit.ErrNotCanonical, "workunit: not RFC 8785 canonical: the unit's bytes are not its canonical form"},
		{"body members unsorted", `{"body":{"b":1,"a":2},"kind":"k"}`, "", workunit.ErrNotCanonical, "workunit: not RFC 8785 canonical: the unit's bytes are not its canonical form"},
		{"trailing whitespace", `{"body":1,"kind":"k"} `, "", workunit.ErrNotCanonical, "workunit: not RFC 8785 canonical: the unit's bytes are not its canonical form"},
		{"trailing value", `{"body":1,"kind":"k"}{}`, "", workunit.ErrMalformed, "workunit: malformed envelope: the unit is not a JSON object"},
		{"not an object", `[1]`, "", workunit.ErrMalformed, "workunit: malformed envelope: the unit is not a JSON object"},
		{"empty", ``, "", workunit.ErrMalformed, "workunit: malformed envelope: the unit is not a JSON object"},
		{"no kind", `{"body":1}`, "", workunit.ErrMalformed, "workunit: malformed envelope: the unit has no kind"},
		{"no body", `{"kind":"k"}`, "", workunit.ErrMalformed, "workunit: malformed envelope: the unit has no body"},
		{"kind not a string", `{"body":1,"kind":7}`, "", workunit.ErrMalformed, "workunit: malformed envelope: kind is not a string"},
		{"kind empty", `{"body":1,"kind":""}`, "", workunit.ErrMalformed, "workunit: malformed envelope: kind is empty"},
		{"id present and empty", `{"body":1,"id":"","kind":"k"}`, "", workunit.ErrMalformed, "workunit: malformed envelope: id is empty"},
		{"resultOf not a digest", `{"body":1,"kind":"k","resultOf":"abc"}`, "", workunit.ErrMalformed, "workunit: malformed envelope: resultOf is not a lowercase hex SHA-256"},
		{"unknown member", `{"body":1,"extra":2,"kind":"k"}`, "", workunit.ErrMalformed, "workunit: malformed envelope: the unit has a member other than body, id, kind and resultOf"},
		{"member case", `{"Body":1,"kind":"k"}`, "", workunit.ErrMalformed, "workunit: malformed envelope: the unit has a member other than body, id, kind and resultOf"},
		{"escaped member name", `{"b\u006fdy":1,"kind":"k"}`, "", workunit.ErrMalformed, "workunit: malformed envelope: a member name of the unit holds an escape"},
		{"repeated member", `{"body":1,"kind":"a","kind":"k"}`, "", workunit.ErrMalformed, "workunit: malformed envelope: a member of the unit is repeated"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			canonical, digest := withOwnDigest(tc.canonical)
			if tc.digest != "" {
				digest = tc.digest
			}
			e, err := workunit.Open(canonical, digest)
			if err == nil || err.Error() != tc.want || !errors.Is(err, tc.is) {
				t.Fatalf("Open: %v\nwant %s", err, tc.want)
			}
			if e.Digest() != "" || e.Canonical() != nil {
				t.Fatalf("a refusal returned an envelope: %s", e.Canonical())
			}
		})
	}
}

// A one-byte change anywhere fails closed: every byte of the canonical
// text, every character of the digest.
func TestOneByteChangeAnywhereFailsClosed(t *testing.T) {
	e := mustSeal(t, sample)
	canonical, digest := e.Canonical(), e.Digest()
	for i := range canonical {
		for _, delta := range []byte{1, 0x20, 0x80} {
			changed := bytes.Clone(canonical)
			changed[i] ^= delta
			if _, err := workunit.Open(changed, digest); !errors.Is(err, workunit.ErrDigestMismatch) {
				t.Fatalf("byte %d ^ %#x: %v", i, delta, err)
			}
		}
	}
	for i := range len(digest) {
		for _, c := range "0f" + "A" {
			if byte(c) == digest[i] {
				continue
			}
			changed := digest[:i] + string(c) + digest[i+1:]
			if _, err := workunit.Open(canonical, changed); err == nil {
				t.Fatalf("digest character %d → %c opened", i, c)
			}
		}
	}
	// A byte more or less.
	if _, err := workunit.Open(append(bytes.Clone(canonical), ' '), digest); !errors.Is(err, workunit.ErrDigestMismatch) {
		t.Fatalf("a byte appended: %v", err)
	}
	if _, err := workunit.Open(canonical[:len(canonical)-1], digest); !errors.Is(err, workunit.ErrDigestMismatch) {
		t.Fatalf("a byte dropped: %v", err)
	}
}

// Property: for random JSON bodies — exponents, escapes, non-BMP
// characters, member order, whitespace — Seal's output opens, Seal of
// the opened unit is the same bytes, and the body means what it meant.
func TestSealOpenProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(8785, 1))
	for i := range 3000 {
		body := randomJSON(r, 4)
		u := workunit.Unit{Kind: randomString(r) + "k", ID: randomString(r), Body: json.RawMessage(body)}
		e, err := workunit.Seal(u)
		if err != nil {
			t.Fatalf("case %d: Seal(%s): %v", i, body, err)
		}
		opened, err := workunit.Open(e.Canonical(), e.Digest())
		if err != nil {
			t.Fatalf("case %d: Open(%s): %v", i, e.Canonical(), err)
		}
		again, err := workunit.Seal(opened.Unit())
		if err != nil || !bytes.Equal(again.Canonical(), e.Canonical()) || again.Digest() != e.Digest() {
			t.Fatalf("case %d: Seal(Open(x)) != x\n   x %s\ngot %s (%v)", i, e.Canonical(), again.Canonical(), err)
		}
		if got := opened.Unit(); got.Kind != u.Kind || got.ID != u.ID {
			t.Fatalf("case %d: kind/id %q %q", i, got.Kind, got.ID)
		}
		var want, got any
		if json.Unmarshal([]byte(body), &want) != nil || json.Unmarshal(opened.Unit().Body, &got) != nil || !reflect.DeepEqual(want, got) {
			t.Fatalf("case %d: the body changed meaning\n  in %s\n out %s", i, body, opened.Unit().Body)
		}
	}
}

// randomJSON writes a random JSON value, depth levels deep at most, with
// random whitespace between tokens.
func randomJSON(r *rand.Rand, depth int) string {
	var b strings.Builder
	writeRandomJSON(&b, r, depth)
	return b.String()
}

func writeRandomJSON(b *strings.Builder, r *rand.Rand, depth int) {
	space := func() {
		for range r.IntN(3) {
			b.WriteByte(" \t\n\r"[r.IntN(4)])
		}
	}
	space()
	kind := r.IntN(8)
	if depth == 0 {
		kind = 2 + r.IntN(6)
	}
	switch kind {
	case 0: // object; keys unique (RFC 8785 refuses duplicates)
		b.WriteByte('{')
		seen := map[string]bool{}
		n := r.IntN(5)
		for i := 0; i < n; i++ {
			k := randomString(r)
			var decoded string
			_ = json.Unmarshal([]byte(`"`+k+`"`), &decoded)
			if seen[decoded] {
				continue
			}
			seen[decoded] = true
			if len(seen) > 1 {
				b.WriteByte(',')
			}
			space()
			b.WriteString(`"` + k + `"`)
			space()
			b.WriteByte(':')
			writeRandomJSON(b, r, depth-1)
		}
		space()
		b.WriteByte('}')
	case 1:
		b.WriteByte('[')
		n := r.IntN(5)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			writeRandomJSON(b, r, depth-1)
		}
		space()
		b.WriteByte(']')
	case 2, 3:
		b.WriteString(`"` + randomString(r) + `"`)
	case 4, 5:
		b.WriteString(randomNumber(r))
	case 6:
		b.WriteString([]string{"true", "false", "null"}[r.IntN(3)])
	default:
		b.WriteString(`"` + randomString(r) + `"`)
	}
	space()
}

// randomString is the inside of a JSON string literal: plain text,
// escapes RFC 8785 keeps and ones it rewrites, and characters in and
// beyond the BMP written raw or as (surrogate pair) escapes.
func randomString(r *rand.Rand) string {
	pieces := []string{
		"a", "Z", "10", "9", " ", "é", "€", "😀", "\u2028", "<", ">", "&",
		`\"`, `\\`, `\/`, `\n`, `\t`, `\u0000`, `\u001f`, `\u00e9`, `\u20ac`, `\ud83d\ude00`, `\u2028`, `\u0041`, `\b`, `\f`, `\r`,
	}
	var b strings.Builder
	for range r.IntN(6) {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

// randomNumber is a JSON number: integers, fractions and exponents in
// every spelling, down to subnormals and up to the largest double.
func randomNumber(r *rand.Rand) string {
	fixed := []string{"0", "-0", "-0.0", "1.0", "1E2", "1e+2", "1e-2", "1E-7", "1e21", "1e20", "123456789012345678", "0.1", "5e-324", "1.7976931348623157e308", "-1.5e-10", "9007199254740993", "0.30000000000000004"}
	if r.IntN(2) == 0 {
		return fixed[r.IntN(len(fixed))]
	}
	mant := strconv.FormatInt(r.Int64N(1_000_000_000), 10)
	if r.IntN(2) == 0 {
		mant = "-" + mant
	}
	if r.IntN(2) == 0 {
		mant += "." + strconv.Itoa(r.IntN(1000))
	}
	if r.IntN(2) == 0 {
		mant += []string{"e", "E", "e+", "e-", "E-"}[r.IntN(5)] + strconv.Itoa(r.IntN(300))
	}
	return mant
}
