// Package pushtest is the conformance kit for the stores a host
// implements for A2A push delivery (package push): [push.ConfigStore],
// [push.Vault] and [push.Outbox], in the style of go-cloud's drivertest.
// A host fills a [Harness] with constructors for the stores it
// implements and runs [RunConformance] from one of its own tests:
//
//	func TestPushStores(t *testing.T) {
//		pushtest.RunConformance(t, pushtest.Harness{
//			NewConfigs: func(t testing.TB) push.ConfigStore { return newConfigsForTest(t) },
//			NewVault:   func(t testing.TB) push.Vault { return newVaultForTest(t) },
//			NewOutbox:  func(t testing.TB) push.Outbox { return newEmptyOutboxForTest(t) },
//			// A second handle on the same data, as another replica opens it.
//			OutboxReplica: func(t testing.TB, first push.Outbox) push.Outbox { return reopen(t, first) },
//		})
//	}
//
// Each guarantee the delivery worker relies on — the ones the interfaces'
// documentation states — is one named [Check] of one interface. A check
// returns an error describing the first violation it finds instead of
// failing a test itself, so it can run on its own, and so this package
// can prove that every check fails against a store that breaks exactly
// its guarantee (broken_test.go). A harness that leaves an interface's
// constructor nil skips its checks: [ConfigStoreChecks], [VaultChecks]
// and [OutboxChecks] list them per interface.
//
// The ConfigStore and Vault checks scope what they write with random ids,
// so the store may be shared with other data and other checks. The Outbox
// checks lease every head there is, so NewOutbox must return an empty
// outbox of the check's own (a fresh schema or a truncated table). The
// checks that matter across replicas — the per-task limit under
// concurrent registrations, no delivery leased twice, per-config order
// across owners, takeover after a lease expires, a secret sealed on one
// replica opening on another — use both handles when the harness opens a
// second one. The outbox checks wait out leases of half a second; the
// whole kit runs in a few seconds.
//
// Sources: OpenWOP RFC 0214 (§A secrets held by reference and discarded
// after the final push; §C at least one attempt per push), webhooks.md
// §Durability, and the Idempotency-Key a receiver dedupes on
// (draft-ietf-httpapi-idempotency-key-header). Per-config order and the
// lease contract are this library's (package push, [push.Outbox]).
package pushtest
