package interoptest_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/interoptest"
	"github.com/wopinterop/wopinterop/interop/memstore"
)

// Subjects of the memstore harness: alice, bob and mallory in tenant acme,
// carol in tenant globex.
func alice() interop.Subject   { return subject("acme", "alice") }
func bob() interop.Subject     { return subject("acme", "bob") }
func mallory() interop.Subject { return subject("acme", "mallory") }
func carol() interop.Subject   { return subject("globex", "carol") }

func subject(tenant, principal string) interop.Subject {
	return interop.Subject{Tenant: tenant, Principal: principal, Authenticated: true}
}

// restrictedApproval is an approval workflow only alice and bob may resolve,
// so that the kit's eligibility check has a non-approver to try.
const restrictedApproval = "interoptest-restricted-approval"

func restrictedApprovalDef() memstore.WorkflowDef {
	return memstore.WorkflowDef{
		Workflow: interop.Workflow{
			ID:          restrictedApproval,
			Name:        "Restricted approval",
			Description: "Suspends on one approval interrupt that alice or bob may resolve.",
			InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false}`),
		},
		Run: func(ctx context.Context, rc *memstore.RunContext) (json.RawMessage, error) {
			res, err := rc.Interrupt(ctx, interop.Interrupt{
				Kind:      interop.InterruptApproval,
				Key:       "approve",
				NodeID:    "gate",
				Message:   "Approve?",
				Actions:   []string{"accept", "reject"},
				Approvers: []string{alice().Principal, bob().Principal},
			})
			if err != nil {
				return nil, err
			}
			if res.Outcome != interop.OutcomeAccept {
				return nil, memstore.Fail("rejected")
			}
			return json.RawMessage(`{"approved":true}`), nil
		},
	}
}

// newMemstore builds a store with the fixtures in both tenants, closed when
// the test ends.
func newMemstore(t testing.TB, opts ...memstore.Option) *memstore.Store {
	s := memstore.New(opts...)
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("memstore Close: %v", err)
		}
	})
	for _, tenant := range []string{alice().Tenant, carol().Tenant} {
		if err := s.RegisterFixtures(tenant); err != nil {
			t.Fatalf("RegisterFixtures(%s): %v", tenant, err)
		}
		if err := s.Register(tenant, restrictedApprovalDef()); err != nil {
			t.Fatalf("Register(%s, restricted approval): %v", tenant, err)
		}
	}
	return s
}

// memHarness is the harness of the embedded store, with the conformance
// fixtures memstore ships.
func memHarness(opts ...memstore.Option) interoptest.Harness {
	return interoptest.Harness{
		NewStore:    func(t testing.TB) interop.RunStore { return newMemstore(t, opts...) },
		TenantA:     alice(),
		TenantA2:    bob(),
		TenantB:     carol(),
		NonApprover: mallory(),
		Noop:        "conformance-noop",
		Approval:    restrictedApproval,
		Cancellable: "conformance-cancellable",
		HostEvents:  true,
	}
}

func TestMemstoreConformance(t *testing.T) {
	interoptest.RunConformance(t, memHarness())
}

// TestMemstoreConformanceShippedApproval runs the kit with memstore's own
// approval fixture, which any principal of the tenant may resolve (so the
// eligibility check has no non-approver and is skipped).
func TestMemstoreConformanceShippedApproval(t *testing.T) {
	h := memHarness()
	h.Approval = "conformance-approval"
	h.NonApprover = interop.Subject{}
	interoptest.RunConformance(t, h)
}

// frozenClock returns the same instant forever, so every run has the same
// status time and list order falls to the run-id tie-break.
func frozenClock() func() time.Time {
	at := time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)
	return func() time.Time { return at }
}

// TestMemstoreConformanceTiedClock runs the kit where every status time
// ties, which exercises the id tie-break of list order and cursors.
func TestMemstoreConformanceTiedClock(t *testing.T) {
	interoptest.RunConformance(t, memHarness(memstore.WithClock(frozenClock())))
}

func TestHandMadeCheckIsRefused(t *testing.T) {
	err := interoptest.Check{Name: "mine"}.Run(t.Context(), newMemstore(t), memHarness())
	if err == nil || !strings.Contains(err.Error(), `check "mine" was not obtained from Checks`) {
		t.Errorf("Run of a hand-made Check = %v, want a refusal naming it", err)
	}
	if err := interoptest.Checks()[0].Run(t.Context(), nil, memHarness()); !errors.Is(err, interoptest.ErrInvalidHarness) {
		t.Errorf("Run with a nil store = %v, want ErrInvalidHarness", err)
	}
}

func TestChecksAreNamedUniquely(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range interoptest.Checks() {
		if c.Name == "" || c.Guarantee == "" {
			t.Errorf("check %q has no name or guarantee", c.Name)
		}
		if seen[c.Name] {
			t.Errorf("check name %q repeats", c.Name)
		}
		seen[c.Name] = true
	}
}

func TestHarnessValidate(t *testing.T) {
	valid := memHarness()
	tests := []struct {
		name   string
		modify func(*interoptest.Harness)
	}{
		{"no NewStore", func(h *interoptest.Harness) { h.NewStore = nil }},
		{"anonymous TenantA", func(h *interoptest.Harness) { h.TenantA.Authenticated = false }},
		{"TenantA without principal", func(h *interoptest.Harness) { h.TenantA.Principal = "" }},
		{"TenantA2 in another tenant", func(h *interoptest.Harness) { h.TenantA2 = carol() }},
		{"TenantA2 is TenantA", func(h *interoptest.Harness) { h.TenantA2 = alice() }},
		{"TenantB in TenantA's tenant", func(h *interoptest.Harness) { h.TenantB = bob() }},
		{"NonApprover in another tenant", func(h *interoptest.Harness) { h.NonApprover = carol() }},
		{"negative Timeout", func(h *interoptest.Harness) { h.Timeout = -time.Second }},
	}
	if err := valid.Validate(); err != nil {
		t.Fatalf("valid harness: Validate = %v", err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := valid
			tt.modify(&h)
			if err := h.Validate(); !errors.Is(err, interoptest.ErrInvalidHarness) {
				t.Errorf("Validate = %v, want ErrInvalidHarness", err)
			}
			store := newMemstore(t)
			if err := interoptest.Checks()[0].Run(t.Context(), store, h); !errors.Is(err, interoptest.ErrInvalidHarness) {
				t.Errorf("Check.Run with an invalid harness = %v, want ErrInvalidHarness", err)
			}
		})
	}
}

// TestWithoutFixtures shows that a host with no fixture workflows still runs
// the checks that need none, and that the others refuse with
// ErrMissingFixture naming what is missing.
func TestWithoutFixtures(t *testing.T) {
	h := interoptest.Harness{
		NewStore: func(t testing.TB) interop.RunStore { return newMemstore(t) },
		TenantA:  alice(),
	}
	var ran []string
	for _, c := range interoptest.Checks() {
		missing := h.Missing(c.Needs)
		err := c.Run(t.Context(), newMemstore(t), h)
		if len(missing) > 0 {
			if !errors.Is(err, interoptest.ErrMissingFixture) {
				t.Errorf("%s without %v = %v, want ErrMissingFixture", c.Name, missing, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s needs no fixture but failed: %v", c.Name, err)
		}
		ran = append(ran, c.Name)
	}
	if want := []string{"unknown-ids", "refuse-unknown-workflow"}; !slices.Equal(ran, want) {
		t.Errorf("fixture-free checks = %v, want %v", ran, want)
	}
}

func TestMissing(t *testing.T) {
	h := interoptest.Harness{TenantA: alice(), Noop: "n"}
	all := []interoptest.Need{
		interoptest.NeedTenantA2, interoptest.NeedTenantB, interoptest.NeedNonApprover,
		interoptest.NeedNoop, interoptest.NeedApproval, interoptest.NeedCancellable,
	}
	got := h.Missing(all)
	want := []interoptest.Need{
		interoptest.NeedTenantA2, interoptest.NeedTenantB, interoptest.NeedNonApprover,
		interoptest.NeedApproval, interoptest.NeedCancellable,
	}
	if !slices.Equal(got, want) {
		t.Errorf("Missing = %v, want %v", got, want)
	}
	if got := memHarness().Missing(all); len(got) != 0 {
		t.Errorf("full harness Missing = %v, want none", got)
	}
}

// TestChecksShareAStore runs every check against one store, concurrently:
// the checks scope what they create, so a host can run the kit against a
// shared database.
func TestChecksShareAStore(t *testing.T) {
	h := memHarness()
	store := newMemstore(t)
	ctx, cancel := context.WithTimeout(t.Context(), interoptest.DefaultTimeout)
	defer cancel()
	var wg sync.WaitGroup
	for _, c := range interoptest.Checks() {
		// Checks comparing an unfiltered Total before and after need the
		// tenant to themselves.
		if c.Name == "refuse-unknown-workflow" || c.Name == "refuse-invalid-inputs" {
			continue
		}
		wg.Go(func() {
			if err := c.Run(ctx, store, h); err != nil {
				t.Errorf("%s on a shared store: %v", c.Name, err)
			}
		})
	}
	wg.Wait()
}
