package sealed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// FuzzOpen: Open never panics, and nothing opens but the values this
// host sealed. Every authentic seed passes all checks (fixed clock, right
// Subject and digest, a ledger that never remembers), so any other input
// that opened would be a forgery; every other input must be ErrTampered.
func FuzzOpen(f *testing.F) {
	clock := newClock(t0)
	always := LedgerFunc(func(context.Context, string, time.Time) (bool, error) { return true, nil })
	s, err := NewSealer(Config{Key: keyA, PreviousKeys: [][]byte{keyB}, Ledger: always, Now: clock.Now})
	if err != nil {
		f.Fatal(err)
	}
	g := testGrant(f)
	authentic := map[string]bool{}
	add := func(v string) { authentic[v] = true; f.Add(v) }
	for _, key := range [][]byte{keyA, keyB} {
		sealer, err := NewSealer(Config{Key: key, Now: clock.Now})
		if err != nil {
			f.Fatal(err)
		}
		sealer.random = &detReader{seed: "fuzz"} // deterministic: committed corpus stays meaningful
		for _, grant := range []Grant{g, {RunID: runID, InterruptIDs: []string{intr1}, Round: 16, RequestDigest: g.RequestDigest}} {
			v, err := sealer.Seal(alice, grant)
			if err != nil {
				f.Fatal(err)
			}
			add(v)
			f.Add(v[:len(v)-1])
			f.Add(v + "A")
			f.Add(strings.Replace(v, "rs1.", "rs2.", 1))
		}
	}
	for _, s := range []string{"", "rs1.", "rs1.AAAA", "rs1.====", "rs1.\n", "garbage", strings.Repeat("A", 300)} {
		f.Add(s)
	}
	expect := expectFor(g)
	f.Fuzz(func(t *testing.T, in string) {
		c, err := s.Open(context.Background(), in, expect)
		if err == nil {
			if !authentic[in] {
				t.Fatalf("a value this host never sealed opened: %q -> %+v", in, c)
			}
			if c.RunID != runID || c.RequestDigest != g.RequestDigest {
				t.Fatalf("authentic value opened to %+v", c)
			}
			return
		}
		if err != ErrTampered || authentic[in] {
			t.Fatalf("Open(%q) = %v; authentic %t", in, err, authentic[in])
		}
	})
}

// FuzzDecodeClaims: the plaintext decoder never panics and accepts only
// exact encodings (authenticated bytes are decoded, but a decoder must hold
// up anyway).
func FuzzDecodeClaims(f *testing.F) {
	c := goldenClaims(f)
	enc := appendClaims(nil, &c)
	f.Add(enc)
	f.Add(enc[:fixedClaimsLen+3])
	f.Add(append(bytes.Clone(enc), 0))
	f.Add([]byte{})
	host := goldenClaims(f)
	host.grant = hostGrantFor(f)
	f.Add(appendClaims(nil, &host))
	f.Fuzz(func(t *testing.T, b []byte) {
		var got sealedClaims
		if err := decodeClaims(b, &got); err != nil {
			if !errors.Is(err, errClaimsEncoding) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if again := appendClaims(nil, &got); !bytes.Equal(again, b) {
			t.Fatalf("decode/encode is not the identity:\n in %x\nout %x", b, again)
		}
		run := got.grant.RunID != "" && len(got.grant.InterruptIDs) > 0 && len(got.grant.InputKeys) == 0 && got.grant.HostState == nil
		host := got.grant.RunID == "" && len(got.grant.InterruptIDs) == 0 && len(got.grant.InputKeys) > 0
		if got.grant.Round < 1 || got.grant.Round > MaxRound || run == host {
			t.Fatalf("decoded claims out of range: %+v", got.grant)
		}
	})
}

// FuzzRequestDigest: RequestDigest accepts exactly the single JSON values
// without duplicate names or excessive depth; its canonical form is a
// fixed point, decodes to the same value, and has the same digest.
func FuzzRequestDigest(f *testing.F) {
	for _, s := range canonicalInputs {
		f.Add([]byte(s))
	}
	for _, v := range requestDigestVectors {
		f.Add([]byte(v.args))
	}
	for _, s := range []string{`{"a":1,"a":2}`, `{} {}`, `[1,`, `{"a":"\ud800"}`, "\"\xff\"", `1.5e300`, `-0`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		d, err := RequestDigest("tool", args)
		if err != nil {
			if !errors.Is(err, ErrArguments) {
				t.Fatalf("error %v does not wrap ErrArguments", err)
			}
			if len(args) == 0 {
				t.Fatal("absent arguments refused")
			}
			if json.Valid(args) && !errors.Is(err, errDuplicateMember) && !errors.Is(err, errTooDeep) {
				t.Fatalf("valid JSON %q refused: %v", args, err)
			}
			return
		}
		if len(args) == 0 {
			args = []byte("{}")
		}
		if !json.Valid(args) {
			t.Fatalf("invalid JSON %q accepted", args)
		}
		canon, err := appendCanonicalJSON(nil, args)
		if err != nil {
			t.Fatal(err)
		}
		again, err := appendCanonicalJSON(nil, canon)
		if err != nil || !bytes.Equal(again, canon) {
			t.Fatalf("canonical form %q is not a fixed point: %q, %v", canon, again, err)
		}
		if d2, err := RequestDigest("tool", canon); err != nil || d2 != d {
			t.Fatalf("digest of the canonical form differs (%v)", err)
		}
		if a, b := decodeAny(t, args), decodeAny(t, canon); !reflect.DeepEqual(a, b) {
			t.Fatalf("canonical form %q decodes to %v, input %q to %v", canon, b, args, a)
		}
	})
}

func decodeAny(t *testing.T, b []byte) any {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %q: %v", b, err)
	}
	return v
}
