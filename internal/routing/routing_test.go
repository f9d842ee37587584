package routing

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wopinterop/wopinterop/interop"
)

func testSecret(fill byte) []byte { return bytes.Repeat([]byte{fill}, 32) }

// mustKeys returns keys for secret and version, with previous as the
// previous secret when given.
func mustKeys(t testing.TB, secret []byte, version string, previous ...[]byte) *Keys {
	t.Helper()
	var prev []byte
	if len(previous) > 0 {
		prev = previous[0]
	}
	return New(secret, prev, version)
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
		"too short":                     valid[:valueLen-1],
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
		if err != ErrUnknownValue {
			t.Errorf("%s: Resolve(%q) = %v, %v; want exactly ErrUnknownValue", name, r, got, err)
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
	if _, err := k.Resolve(valid, nil); err != ErrUnknownValue {
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
	during := mustKeys(t, newSecret, "1.0", oldSecret)
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
		if _, err := after.Resolve(oldR, visible); err != ErrUnknownValue {
			t.Fatalf("%s: old value still resolves after the previous secret is dropped: %v", a.ID, err)
		}
		if _, err := before.Resolve(newR, visible); err != ErrUnknownValue {
			t.Fatalf("%s: new value resolves under the old secret alone: %v", a.ID, err)
		}
	}
	third := mustKeys(t, testSecret('t'), "1.0")
	if _, err := during.Resolve(third.Derive("support"), visible); err != ErrUnknownValue {
		t.Fatalf("a value under an unrelated secret resolved: %v", err)
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
	if foreign != ErrUnknownValue || never != ErrUnknownValue {
		t.Fatalf("foreign %v, never-minted %v; want ErrUnknownValue for both", foreign, never)
	}
	if _, err := k.ResolveFrom(ctx, nil, acme, acmeR); err != ErrUnknownValue {
		t.Fatalf("nil inventory: %v", err)
	}
	for _, refusal := range []error{interop.ErrForbidden, fmt.Errorf("x: %w", interop.ErrNotFound)} {
		if _, err := k.ResolveFrom(ctx, inventory{err: refusal}, acme, acmeR); err != ErrUnknownValue {
			t.Fatalf("inventory refusal %v: %v", refusal, err)
		}
	}
	down := errors.New("inventory down")
	if _, err := k.ResolveFrom(ctx, inventory{err: down}, acme, acmeR); !errors.Is(err, down) || errors.Is(err, interop.ErrNotFound) {
		t.Fatalf("inventory fault: %v; want it wrapped, not a not-found", err)
	}
}

func TestRoutingKeysConcurrentUse(t *testing.T) {
	k := mustKeys(t, testSecret('a'), "1.0", testSecret('b'))
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
