// Package sealedtest is the conformance kit for [sealed.Ledger]
// implementations — the record of consumed MCP requestState ids that
// makes each state single use across every replica of a host — in the
// style of go-cloud's drivertest. A host fills a [Harness] and runs
// [RunConformance] from one of its own tests:
//
//	func TestLedger(t *testing.T) {
//		sealedtest.RunConformance(t, sealedtest.Harness{
//			NewLedger: func(t testing.TB) sealed.Ledger { return newLedgerForTest(t) },
//			// A second handle on the same table, as another replica opens it.
//			Replica: func(t testing.TB, first sealed.Ledger) sealed.Ledger { return reopen(t, first) },
//		})
//	}
//
// Each guarantee of the [sealed.Ledger] contract is one named [Check],
// which returns the first violation it finds instead of failing a test,
// so this package can prove that every check fails against a ledger that
// breaks exactly its guarantee (broken_test.go). The checks consume
// random ids of their own, so the ledger may be shared with other data
// and other checks. With a Replica function, the checks spread their
// calls over both handles: single use must hold across replicas.
//
// Source: the OpenWOP interop map, mcp.mrtr, "requestState (host as
// server)": single use, a second retry with the same state MUST fail.
package sealedtest
