package isolation

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/wopinterop/wopinterop/interop"
)

func testSecret(fill byte) []byte { return bytes.Repeat([]byte{fill}, MinRoutingSecretLen) }

func mustKeys(t testing.TB, secret []byte, version string, opts ...RoutingOption) *RoutingKeys {
	t.Helper()
	k, err := NewRoutingKeys(secret, version, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestNewRoutingKeysRefusesShortSecrets(t *testing.T) {
	for _, n := range []int{0, 1, 16, 31} {
		secret := bytes.Repeat([]byte("S"), n)
		k, err := NewRoutingKeys(secret, "1.0")
		if !errors.Is(err, ErrRoutingSecretTooShort) || k != nil {
			t.Fatalf("%d-byte secret: %v, %v; want ErrRoutingSecretTooShort", n, k, err)
		}
		if !strings.Contains(err.Error(), fmt.Sprintf("has %d", n)) || !strings.Contains(err.Error(), "32") {
			t.Errorf("error %q does not state the length and the minimum", err)
		}
	}
	if _, err := NewRoutingKeys(testSecret('a'), "1.0"); err != nil {
		t.Fatalf("32-byte secret: %v", err)
	}
	for _, prev := range [][]byte{{}, bytes.Repeat([]byte("P"), 31)} {
		_, err := NewRoutingKeys(testSecret('a'), "1.0", WithPreviousSecret(prev))
		if !errors.Is(err, ErrRoutingSecretTooShort) || !strings.Contains(err.Error(), "previous") {
			t.Errorf("%d-byte previous secret: %v", len(prev), err)
		}
	}
	if _, err := NewRoutingKeys(testSecret('a'), "1.0", WithPreviousSecret(nil)); err != nil {
		t.Errorf("nil previous secret means none: %v", err)
	}
}

func TestDeriveShape(t *testing.T) {
	k := mustKeys(t, testSecret('a'), "1.0")
	for i := range 500 {
		r := k.Derive(fmt.Sprintf("agent-%d", i))
		if len(r) != 24 || !routingRE.MatchString(r) || strings.ContainsAny(r, ".~=") {
			t.Fatalf("Derive = %q: want %d characters of the OpenWOP RFC 0202 §B grammar", r, 24)
		}
	}
}

// TestDeriveMatchesDocumentedConstruction recomputes R from the documented
// formula with a separate encoder, so the derivation cannot drift from its
// documentation.
func TestDeriveMatchesDocumentedConstruction(t *testing.T) {
	secret := []byte("0123456789abcdef0123456789abcdef")
	var msg bytes.Buffer
	for _, f := range []string{"a2a-tenant", "2.4.1", "support-bot"} {
		_ = binary.Write(&msg, binary.BigEndian, uint32(len(f)))
		msg.WriteString(f)
	}
	m := hmac.New(sha256.New, secret)
	m.Write(msg.Bytes())
	want := base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:18])
	if got := mustKeys(t, secret, "2.4.1").Derive("support-bot"); got != want {
		t.Fatalf("Derive = %q, want %q", got, want)
	}
}

// TestDeriveGolden pins the values: changing them would strand every R a
// peer holds, so it must be a visible, deliberate change.
func TestDeriveGolden(t *testing.T) {
	secret := make([]byte, 32)
	for i := range secret {
		secret[i] = byte(i)
	}
	var b strings.Builder
	for _, v := range []string{"1.0.0", "1.0.1"} {
		k := mustKeys(t, secret, v)
		for _, agent := range []string{"support-bot", "billing:v2", "a", strings.Repeat("x", 128)} {
			fmt.Fprintf(&b, "%s\t%s\t%s\n", v, agent, k.Derive(agent))
		}
	}
	golden(t, "routing.golden", []byte(b.String()))
}

func TestDeriveIsStableAndDistinct(t *testing.T) {
	a := mustKeys(t, testSecret('a'), "1.0")
	replica := mustKeys(t, testSecret('a'), "1.0")
	otherVersion := mustKeys(t, testSecret('a'), "1.1")
	otherSecret := mustKeys(t, testSecret('b'), "1.0")

	seen := make(map[string]string)
	for i := range 5000 {
		id := fmt.Sprintf("agent-%d", i)
		r := a.Derive(id)
		if r != a.Derive(id) || r != replica.Derive(id) {
			t.Fatalf("R for %s is not stable across calls and replicas", id)
		}
		if r == otherVersion.Derive(id) {
			t.Fatalf("R for %s survives a host version change", id)
		}
		if r == otherSecret.Derive(id) {
			t.Fatalf("R for %s does not depend on the secret", id)
		}
		if prev, dup := seen[r]; dup {
			t.Fatalf("agents %s and %s share R %s", prev, id, r)
		}
		seen[r] = id
	}
	// Fields are length-prefixed: version "1.2" + agent "3x" is not version
	// "1.23" + agent "x".
	if mustKeys(t, testSecret('a'), "1.2").Derive("3x") == mustKeys(t, testSecret('a'), "1.23").Derive("x") {
		t.Fatal("version and agent id run together")
	}
}

func TestDeriveCopiesTheSecret(t *testing.T) {
	secret := testSecret('a')
	k := mustKeys(t, secret, "1.0")
	before := k.Derive("agent")
	secret[0] ^= 0xFF
	if k.Derive("agent") != before {
		t.Fatal("mutating the caller's slice changed the keys")
	}
}

// TestForAgentDependsOnlyOnTheID shows R carries no tenant, workspace or
// principal: nothing but the agent id reaches it (OpenWOP RFC 0202 §B).
func TestForAgentDependsOnlyOnTheID(t *testing.T) {
	k := mustKeys(t, testSecret('a'), "1.0")
	inAcme := interop.Agent{ID: "support", Persona: "Acme Support", PackVersion: "1", Label: "acme", Workflows: []string{"triage"}}
	inGlobex := interop.Agent{ID: "support", Persona: "Globex Helper", PackVersion: "9", Description: "globex", Workflows: []string{"other"}}
	r1, ok1 := k.ForAgent(inAcme)
	r2, ok2 := k.ForAgent(inGlobex)
	if !ok1 || !ok2 || r1 != r2 || r1 != k.Derive("support") {
		t.Fatalf("ForAgent = %q/%t, %q/%t; want both Derive(\"support\")", r1, ok1, r2, ok2)
	}
	if r, ok := k.ForAgent(interop.Agent{ID: "idle"}); ok || r != "" {
		t.Fatalf("agent without routed workflow got R %q", r)
	}
}

func TestRoutingKeysNeverPrintSecrets(t *testing.T) {
	cur, prev := []byte("CURRENT-SECRET-0123456789abcdefXY"), []byte("PREVIOUS-SECRET-0123456789abcdefXY")
	k := mustKeys(t, cur, "1.0", WithPreviousSecret(prev))
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("keys", "keys", k, "value", *k)
	outputs := []string{
		fmt.Sprint(k), fmt.Sprint(*k),
		fmt.Sprintf("%v %+v %#v %s", k, k, k, k),
		fmt.Sprintf("%v %+v %#v %s", *k, *k, *k, *k),
		logged.String(),
	}
	for _, out := range outputs {
		for _, secret := range [][]byte{cur, prev} {
			if strings.Contains(out, string(secret[:14])) || strings.Contains(out, fmt.Sprint(secret[:4])[1:8]) {
				t.Fatalf("output leaks a secret: %s", out)
			}
		}
		if !strings.Contains(out, "1.0") {
			t.Fatalf("output %q lost the non-secret host version", out)
		}
	}
}
