package interoptest_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/interoptest"
	"github.com/wopinterop/wopinterop/interop/memstore"
)

// A host wires its own store into the kit from one of its tests. This is the
// whole of it for the embedded memstore; a database-backed store would open
// a fresh schema in NewStore instead.
func ExampleRunConformance() {
	testConformance := func(t *testing.T) {
		interoptest.RunConformance(t, interoptest.Harness{
			NewStore: func(t testing.TB) interop.RunStore {
				s := memstore.New()
				t.Cleanup(func() { _ = s.Close() })
				for _, tenant := range []string{"acme", "globex"} {
					if err := s.RegisterFixtures(tenant); err != nil {
						t.Fatal(err)
					}
				}
				return s
			},
			TenantA:     interop.Subject{Tenant: "acme", Principal: "alice", Authenticated: true},
			TenantA2:    interop.Subject{Tenant: "acme", Principal: "bob", Authenticated: true},
			TenantB:     interop.Subject{Tenant: "globex", Principal: "carol", Authenticated: true},
			Noop:        memstore.FixtureNoop,
			Approval:    memstore.FixtureApproval,
			Cancellable: memstore.FixtureCancellable,
		})
	}
	// In a host's store_test.go this is func TestConformance(t *testing.T).
	_ = testConformance
}

// Checks run on their own too: each returns the first violation it finds,
// or ErrMissingFixture when the harness lacks what it needs. Here the host
// offers no NonApprover, so the eligibility check cannot run.
func ExampleCheck_Run() {
	store := memstore.New()
	defer store.Close()
	for _, tenant := range []string{"acme", "globex"} {
		if err := store.RegisterFixtures(tenant); err != nil {
			fmt.Println(err)
			return
		}
	}
	h := interoptest.Harness{
		NewStore:    func(testing.TB) interop.RunStore { return store },
		TenantA:     interop.Subject{Tenant: "acme", Principal: "alice", Authenticated: true},
		TenantA2:    interop.Subject{Tenant: "acme", Principal: "bob", Authenticated: true},
		TenantB:     interop.Subject{Tenant: "globex", Principal: "carol", Authenticated: true},
		Noop:        memstore.FixtureNoop,
		Approval:    memstore.FixtureApproval,
		Cancellable: memstore.FixtureCancellable,
	}
	ctx, cancel := context.WithTimeout(context.Background(), interoptest.DefaultTimeout)
	defer cancel()
	for _, c := range interoptest.Checks() {
		err := c.Run(ctx, store, h)
		switch {
		case errors.Is(err, interoptest.ErrMissingFixture):
			fmt.Printf("%-24s skipped: needs %v\n", c.Name, h.Missing(c.Needs))
		case err != nil:
			fmt.Printf("%-24s FAIL: %v\n", c.Name, err)
		default:
			fmt.Printf("%-24s ok\n", c.Name)
		}
	}
	// Output:
	// unknown-ids              ok
	// create-and-read          ok
	// foreign-run-is-unknown   ok
	// idempotent-create        ok
	// list-order-and-filters   ok
	// list-cursor-stability    ok
	// cancel                   ok
	// resolve-at-most-once     ok
	// resolve-eligibility      skipped: needs [NonApprover]
	// event-documents          ok
	// watch                    ok
	// refuse-unknown-workflow  ok
	// refuse-invalid-inputs    ok
	// host-events              skipped: needs [HostEvents]
	// refuse-bad-resolution    ok
	// wait-run                 ok
	// audit-events             skipped: needs [HostEvents]
}

// Each check declares what it needs beyond a store and TenantA.
func ExampleChecks() {
	for _, c := range interoptest.Checks() {
		fmt.Println(c.Name, c.Needs)
	}
	// Output:
	// unknown-ids []
	// create-and-read [Noop]
	// foreign-run-is-unknown [TenantB Approval]
	// idempotent-create [Noop TenantA2 TenantB]
	// list-order-and-filters [Noop Approval TenantB]
	// list-cursor-stability [Noop TenantB]
	// cancel [Cancellable Noop]
	// resolve-at-most-once [Approval]
	// resolve-eligibility [Approval NonApprover]
	// event-documents [Noop Approval Cancellable]
	// watch [Approval TenantB]
	// refuse-unknown-workflow []
	// refuse-invalid-inputs [Cancellable]
	// host-events [TenantB HostEvents]
	// refuse-bad-resolution [Approval]
	// wait-run [Approval Cancellable TenantB]
	// audit-events [HostEvents Approval Noop]
}
