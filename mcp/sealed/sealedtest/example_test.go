package sealedtest_test

import (
	"fmt"
	"testing"

	"github.com/wopinterop/wopinterop/mcp/sealed"
	"github.com/wopinterop/wopinterop/mcp/sealed/sealedtest"
)

// A host runs the kit from one of its tests. This is the whole of it for
// the in-memory default; a database-backed ledger opens a second
// connection pool in Replica.
func ExampleRunConformance() {
	testLedger := func(t *testing.T) {
		sealedtest.RunConformance(t, sealedtest.Harness{
			NewLedger: func(testing.TB) sealed.Ledger { return sealed.NewMemoryLedger(sealed.MemoryLedgerConfig{}) },
		})
	}
	// In a host's ledger_test.go this is func TestLedger(t *testing.T).
	_ = testLedger
}

func ExampleChecks() {
	for _, c := range sealedtest.Checks() {
		fmt.Println(c.Name)
	}
	// Output:
	// ledger-single-use
	// ledger-single-use-concurrent
	// ledger-ids-independent
	// ledger-kept-until-expiry
	// ledger-expired-id-single-use
	// sealer-single-use
}
