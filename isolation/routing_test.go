package isolation

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
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
		if len(r) != routingValueLen || !routingRE.MatchString(r) || strings.ContainsAny(r, ".~=") {
			t.Fatalf("Derive = %q: want %d characters of the OpenWOP RFC 0202 §B grammar", r, routingValueLen)
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

func TestResolve(t *testing.T) {
	k := mustKeys(t, testSecret('a'), "1.0")
	visible := []interop.Agent{
		{ID: "support", Persona: "Support", Workflows: []string{"triage"}},
		{ID: "billing", Persona: "Billing", Workflows: []string{"invoice", "refund"}},
		{ID: "idle", Persona: "Idle"}, // no routed workflow: no R
		{ID: "research", Persona: "Research", Workflows: []string{"search"}},
	}
	for _, a := range visible {
		r, ok := k.ForAgent(a)
		if !ok {
			continue
		}
		got, err := k.Resolve(r, visible)
		if err != nil {
			t.Fatalf("Resolve(R of %s): %v", a.ID, err)
		}
		if diff := cmp.Diff(a, got); diff != "" {
			t.Fatalf("Resolve(R of %s) (-want +got):\n%s", a.ID, diff)
		}
	}

	valid := k.Derive("support")
	flipped := []byte(valid)
	flipped[3] ^= 0x20 // case flip: base64 is case-sensitive
	unknown := map[string]string{
		"another tenant's agent":        k.Derive("globex-only-agent"),
		"agent without routed workflow": k.Derive("idle"),
		"other host version":            mustKeys(t, testSecret('a'), "2.0").Derive("support"),
		"other host secret":             mustKeys(t, testSecret('z'), "1.0").Derive("support"),
		"never minted":                  "AAAAAAAAAAAAAAAAAAAAAAAA",
		"case flipped":                  string(flipped),
		"empty":                         "",
		"too short":                     valid[:routingValueLen-1],
		"too long":                      valid + "A",
		"grammar dot":                   valid[:23] + ".",
		"grammar tilde":                 valid[:23] + "~",
		"padding":                       valid[:22] + "==",
		"newline":                       valid[:12] + "\n" + valid[13:],
		"standard base64 alphabet":      strings.Repeat("+/", 12),
		"agent id itself":               "support",
		"unicode":                       valid[:22] + "é",
	}
	var msgs []string
	for name, r := range unknown {
		got, err := k.Resolve(r, visible)
		if err != ErrUnknownRoutingValue {
			t.Errorf("%s: Resolve(%q) = %v, %v; want exactly ErrUnknownRoutingValue", name, r, got, err)
			continue
		}
		if !errors.Is(err, interop.ErrNotFound) || got.ID != "" {
			t.Errorf("%s: not a not-found or returned an agent", name)
		}
		if r != "" && strings.Contains(err.Error(), r) {
			t.Errorf("%s: message %q echoes the value", name, err)
		}
		msgs = append(msgs, err.Error())
	}
	for _, m := range msgs {
		if m != msgs[0] {
			t.Fatalf("messages differ: %q vs %q", msgs[0], m)
		}
	}
	if _, err := k.Resolve(valid, nil); err != ErrUnknownRoutingValue {
		t.Fatalf("empty inventory: %v", err)
	}
}

// TestResolveSameAgentIDInTwoTenants: one agent id in two tenants shares R,
// and each caller resolves to its own entry, never the other's.
func TestResolveSameAgentIDInTwoTenants(t *testing.T) {
	k := mustKeys(t, testSecret('a'), "1.0")
	acme := []interop.Agent{{ID: "support", Persona: "Acme", Workflows: []string{"a"}}}
	globex := []interop.Agent{{ID: "support", Persona: "Globex", Workflows: []string{"g"}}}
	r := k.Derive("support")
	if a, err := k.Resolve(r, acme); err != nil || a.Persona != "Acme" {
		t.Fatalf("acme: %v, %v", a, err)
	}
	if a, err := k.Resolve(r, globex); err != nil || a.Persona != "Globex" {
		t.Fatalf("globex: %v, %v", a, err)
	}
}

func TestRotation(t *testing.T) {
	oldSecret, newSecret := testSecret('o'), testSecret('n')
	before := mustKeys(t, oldSecret, "1.0")
	during := mustKeys(t, newSecret, "1.0", WithPreviousSecret(oldSecret))
	after := mustKeys(t, newSecret, "1.0")
	visible := []interop.Agent{
		{ID: "support", Workflows: []string{"triage"}},
		{ID: "billing", Workflows: []string{"invoice"}},
	}
	for _, a := range visible {
		oldR, newR := before.Derive(a.ID), during.Derive(a.ID)
		if newR == oldR || newR != after.Derive(a.ID) {
			t.Fatalf("%s: during rotation values must be minted with the current secret", a.ID)
		}
		for _, r := range []string{oldR, newR} {
			got, err := during.Resolve(r, visible)
			if err != nil || got.ID != a.ID {
				t.Fatalf("%s: during rotation Resolve(%q) = %v, %v", a.ID, r, got, err)
			}
		}
		if _, err := after.Resolve(oldR, visible); err != ErrUnknownRoutingValue {
			t.Fatalf("%s: old value still resolves after the previous secret is dropped: %v", a.ID, err)
		}
		if _, err := before.Resolve(newR, visible); err != ErrUnknownRoutingValue {
			t.Fatalf("%s: new value resolves under the old secret alone: %v", a.ID, err)
		}
	}
	third := mustKeys(t, testSecret('t'), "1.0")
	if _, err := during.Resolve(third.Derive("support"), visible); err != ErrUnknownRoutingValue {
		t.Fatalf("a value under an unrelated secret resolved: %v", err)
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

// inventory is a per-tenant AgentInventory.
type inventory struct {
	byTenant map[string][]interop.Agent
	err      error
}

func (inv inventory) ListAgents(_ context.Context, s interop.Subject) ([]interop.Agent, error) {
	if inv.err != nil {
		return nil, inv.err
	}
	return inv.byTenant[s.Tenant], nil
}

func TestResolveFrom(t *testing.T) {
	ctx := context.Background()
	k := mustKeys(t, testSecret('a'), "1.0")
	inv := inventory{byTenant: map[string][]interop.Agent{
		"acme":   {{ID: "acme-support", Workflows: []string{"triage"}}},
		"globex": {{ID: "globex-sales", Workflows: []string{"quote"}}},
	}}
	acme := interop.Subject{Tenant: "acme", Authenticated: true}
	globex := interop.Subject{Tenant: "globex", Authenticated: true}
	acmeR := k.Derive("acme-support")

	if a, err := k.ResolveFrom(ctx, inv, acme, acmeR); err != nil || a.ID != "acme-support" {
		t.Fatalf("own agent: %v, %v", a, err)
	}
	// Another tenant's real R reads exactly like a never-minted one (OpenWOP
	// interop.md §Per-agent cards).
	_, foreign := k.ResolveFrom(ctx, inv, globex, acmeR)
	_, never := k.ResolveFrom(ctx, inv, globex, "AAAAAAAAAAAAAAAAAAAAAAAA")
	if foreign != ErrUnknownRoutingValue || never != ErrUnknownRoutingValue {
		t.Fatalf("foreign %v, never-minted %v; want ErrUnknownRoutingValue for both", foreign, never)
	}
	if _, err := k.ResolveFrom(ctx, nil, acme, acmeR); err != ErrUnknownRoutingValue {
		t.Fatalf("nil inventory: %v", err)
	}
	for _, refusal := range []error{interop.ErrForbidden, fmt.Errorf("x: %w", interop.ErrNotFound)} {
		if _, err := k.ResolveFrom(ctx, inventory{err: refusal}, acme, acmeR); err != ErrUnknownRoutingValue {
			t.Fatalf("inventory refusal %v: %v", refusal, err)
		}
	}
	down := errors.New("inventory down")
	if _, err := k.ResolveFrom(ctx, inventory{err: down}, acme, acmeR); !errors.Is(err, down) || errors.Is(err, interop.ErrNotFound) {
		t.Fatalf("inventory fault: %v; want it wrapped, not a not-found", err)
	}
}

func TestRoutingKeysConcurrentUse(t *testing.T) {
	k := mustKeys(t, testSecret('a'), "1.0", WithPreviousSecret(testSecret('b')))
	visible := []interop.Agent{{ID: "a", Workflows: []string{"w"}}, {ID: "b", Workflows: []string{"w"}}}
	want := k.Derive("b")
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			for range 200 {
				if k.Derive("b") != want {
					errs <- errors.New("Derive changed under concurrency")
					return
				}
				if a, err := k.Resolve(want, visible); err != nil || a.ID != "b" {
					errs <- fmt.Errorf("Resolve: %v, %v", a, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
