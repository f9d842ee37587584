package sealed

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wopinterop/wopinterop/internal/golden"
)

// hostGrantFor is a host grant: a tool the host serves itself asked for two
// inputs and keeps its own state for the next round.
func hostGrantFor(t testing.TB) Grant {
	d, err := OperationDigest("prompts/get", "summarise", []byte(`{"topic":"q3"}`))
	if err != nil {
		t.Fatal(err)
	}
	return Grant{
		Round:         2,
		RequestDigest: d,
		InputKeys:     []string{"user_name", "confirm"},
		HostState:     []byte("step=2;name=Alice"),
	}
}

func TestHostGrantRoundTrip(t *testing.T) {
	for name, g := range map[string]Grant{
		"with state":    hostGrantFor(t),
		"without state": func() Grant { g := hostGrantFor(t); g.HostState = nil; return g }(),
		"binary state":  func() Grant { g := hostGrantFor(t); g.HostState = []byte{0, 0xff, '\n'}; return g }(),
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, keyA)
			v := f.seal(t, g)
			if !sealedRE.MatchString(v) || strings.Contains(v, "Alice") {
				t.Fatalf("sealed value %q is not an opaque sealed value", v)
			}
			got, err := f.s.Open(context.Background(), v, expectFor(g))
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			if diff := cmp.Diff(Claims{Grant: g, ID: got.ID, ExpiresAt: t0.Add(DefaultTTL)}, got); diff != "" {
				t.Errorf("claims (-want +got):\n%s", diff)
			}
			// A host grant is single use like a run grant.
			if _, err := f.s.Open(context.Background(), v, expectFor(g)); !errors.Is(err, ErrReplayed) {
				t.Errorf("second Open: %v, want ErrReplayed", err)
			}
		})
	}
}

// A host grant binds the principal and the request like a run grant, and a
// tampered host grant never opens.
func TestHostGrantBindings(t *testing.T) {
	f := newFixture(t, keyA)
	g := hostGrantFor(t)
	other := alice
	other.Principal = "bob"
	if _, err := f.s.Open(context.Background(), f.seal(t, g), Expectation{Subject: other, RequestDigest: g.RequestDigest}); !errors.Is(err, ErrForeign) {
		t.Errorf("other principal: %v, want ErrForeign", err)
	}
	tool, _ := RequestDigest("summarise", []byte(`{"topic":"q3"}`))
	if _, err := f.s.Open(context.Background(), f.seal(t, g), Expectation{Subject: alice, RequestDigest: tool}); !errors.Is(err, ErrMismatch) {
		t.Errorf("tool digest of the same name: %v, want ErrMismatch", err)
	}
	v := f.seal(t, g)
	for _, tampered := range []string{v + "A", v[:len(v)-1], v + "-TAMPERED"} {
		if _, err := f.s.Open(context.Background(), tampered, expectFor(g)); !errors.Is(err, ErrTampered) {
			t.Errorf("Open(%q…): %v, want ErrTampered", tampered[len(tampered)-10:], err)
		}
	}
}

// TestHostClaimsEncodingGolden pins the host-grant layout documented
// beside appendClaims and checks that run grants keep theirs.
func TestHostClaimsEncodingGolden(t *testing.T) {
	c := goldenClaims(t)
	c.grant = hostGrantFor(t)
	enc := appendClaims(nil, &c)
	if len(enc) != claimsLen(&c) {
		t.Errorf("claimsLen = %d, encoding has %d bytes", claimsLen(&c), len(enc))
	}
	want := []byte{2, 0, 2, byte(len("user_name"))}
	want = append(want, "user_name"...)
	want = append(want, byte(len("confirm")))
	want = append(want, "confirm"...)
	want = append(want, byte(len("step=2;name=Alice")))
	want = append(want, "step=2;name=Alice"...)
	if tail := enc[fixedClaimsLen:]; !bytes.Equal(tail, want) {
		t.Errorf("variable part %q, want %q", tail, want)
	}
	var dump strings.Builder
	for b := enc; len(b) > 0; b = b[min(32, len(b)):] {
		dump.WriteString(hex.EncodeToString(b[:min(32, len(b))]) + "\n")
	}
	golden.Check(t, "claims_host.golden", []byte(dump.String()))

	var got sealedClaims
	if err := decodeClaims(enc, &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(c, got, cmp.AllowUnexported(sealedClaims{})); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func TestDecodeHostClaimsRefuses(t *testing.T) {
	c := goldenClaims(t)
	c.grant = hostGrantFor(t)
	enc := appendClaims(nil, &c)
	stateLenAt := len(enc) - len(c.grant.HostState) - 1
	cases := map[string][]byte{
		"no host state":      enc[:stateLenAt],
		"short host state":   enc[:len(enc)-1],
		"trailing byte":      append(bytes.Clone(enc), 0),
		"state length large": append(append(bytes.Clone(enc[:stateLenAt]), 0x7f), c.grant.HostState...),
		"no input keys":      append(bytes.Clone(enc[:fixedClaimsLen+2]), 0, 0),
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			var got sealedClaims
			if err := decodeClaims(in, &got); !errors.Is(err, errClaimsEncoding) {
				t.Errorf("err %v, want errClaimsEncoding", err)
			}
		})
	}
}

func TestSealRefusesInvalidHostGrant(t *testing.T) {
	f := newFixture(t, keyA)
	with := func(mod func(*Grant)) Grant {
		g := hostGrantFor(t)
		g.InputKeys = append([]string(nil), g.InputKeys...)
		mod(&g)
		return g
	}
	cases := map[string]Grant{
		"empty key":              with(func(g *Grant) { g.InputKeys[1] = "" }),
		"duplicate key":          with(func(g *Grant) { g.InputKeys[1] = g.InputKeys[0] }),
		"round 0":                with(func(g *Grant) { g.Round = 0 }),
		"round above MaxRound":   with(func(g *Grant) { g.Round = MaxRound + 1 }),
		"state without keys":     with(func(g *Grant) { g.InputKeys = nil }),
		"run grant with keys":    func() Grant { g := testGrant(t); g.InputKeys = []string{"k"}; return g }(),
		"run grant with state":   func() Grant { g := testGrant(t); g.HostState = []byte("x"); return g }(),
		"keys and interrupt ids": with(func(g *Grant) { g.InterruptIDs = []string{intr1} }),
		"too large for a value":  with(func(g *Grant) { g.HostState = bytes.Repeat([]byte("s"), MaxSealedLen) }),
	}
	for name, g := range cases {
		t.Run(name, func(t *testing.T) {
			v, err := f.s.Seal(alice, g)
			if !errors.Is(err, ErrInvalidGrant) || v != "" {
				t.Fatalf("Seal = %q, %v; want ErrInvalidGrant", v, err)
			}
		})
	}
}

// The largest host state that seals still opens.
func TestHostStateSizeLimit(t *testing.T) {
	f := newFixture(t, keyA)
	g := hostGrantFor(t)
	lo, hi := 0, MaxSealedLen
	for lo < hi { // the largest n that seals
		n := (lo + hi + 1) / 2
		g.HostState = bytes.Repeat([]byte{0xa5}, n)
		if _, err := f.s.Seal(alice, g); err != nil {
			hi = n - 1
		} else {
			lo = n
		}
	}
	if lo < 2048 {
		t.Fatalf("only %d bytes of host state fit; documented budget is 2 KiB", lo)
	}
	g.HostState = bytes.Repeat([]byte{0xa5}, lo)
	v := f.seal(t, g)
	c, err := f.s.Open(context.Background(), v, expectFor(g))
	if err != nil || len(v) > MaxSealedLen || !bytes.Equal(c.HostState, g.HostState) {
		t.Fatalf("largest host state: %d characters, err %v", len(v), err)
	}
}

func TestOperationDigest(t *testing.T) {
	d := func(method, name, args string) [32]byte {
		t.Helper()
		out, err := OperationDigest(method, name, []byte(args))
		if err != nil {
			t.Fatalf("OperationDigest(%q, %q, %q): %v", method, name, args, err)
		}
		return out
	}
	base := d("prompts/get", "p", `{"a":"1","b":"2"}`)
	if d("prompts/get", "p", ` { "b" : "2", "a" : "1" } `) != base {
		t.Error("canonically equal arguments digest differently")
	}
	if d("prompts/get", "p", ``) != d("prompts/get", "p", `{}`) {
		t.Error("absent arguments differ from {}")
	}
	distinct := map[string][32]byte{
		"base":              base,
		"other method":      d("resources/read", "p", `{"a":"1","b":"2"}`),
		"other name":        d("prompts/get", "q", `{"a":"1","b":"2"}`),
		"other arguments":   d("prompts/get", "p", `{"a":"1","b":"3"}`),
		"boundary moved":    d("prompts/ge", "tp", `{"a":"1","b":"2"}`),
		"tool of that name": mustDigest(t, "p", `{"a":"1","b":"2"}`),
	}
	seen := map[[32]byte]string{}
	for name, v := range distinct {
		if other, dup := seen[v]; dup {
			t.Errorf("%s and %s share a digest", name, other)
		}
		seen[v] = name
	}
	for _, bad := range []string{`{"a":1,"a":2}`, `{`, `{} {}`} {
		if _, err := OperationDigest("prompts/get", "p", []byte(bad)); !errors.Is(err, ErrArguments) {
			t.Errorf("OperationDigest(%q) = %v, want ErrArguments", bad, err)
		}
	}
	var b strings.Builder
	for _, v := range []struct{ method, name, args string }{
		{"prompts/get", "test_prompt_with_arguments", `{"arg1":"hello","arg2":"world"}`},
		{"resources/read", "test://static-text", ``},
	} {
		out := d(v.method, v.name, v.args)
		fmt.Fprintf(&b, "%q %q %q\n\t%s\n", v.method, v.name, v.args, hex.EncodeToString(out[:]))
	}
	golden.Check(t, "operation_digest.golden", []byte(b.String()))
}
