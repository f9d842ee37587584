package pushtest_test

import (
	"fmt"
	"testing"

	"github.com/wopinterop/wopinterop/push"
	"github.com/wopinterop/wopinterop/push/pushtest"
)

// A host runs the kit from one of its tests. This is the whole of it for
// the in-memory defaults; a database-backed host opens a fresh schema in
// NewOutbox and a second connection pool in the Replica functions.
func ExampleRunConformance() {
	testPushStores := func(t *testing.T) {
		pushtest.RunConformance(t, pushtest.Harness{
			NewConfigs: func(testing.TB) push.ConfigStore { return push.NewMemoryConfigs() },
			NewVault:   func(testing.TB) push.Vault { return push.NewMemoryVault() },
			NewOutbox:  func(testing.TB) push.Outbox { return push.NewMemoryOutbox() },
		})
	}
	// In a host's store_test.go this is func TestPushStores(t *testing.T).
	_ = testPushStores
}

// Every check belongs to one interface; a harness that builds only some
// of them runs only their checks.
func ExampleChecks() {
	for _, c := range pushtest.Checks() {
		fmt.Printf("%-11s %s\n", c.Of, c.Name)
	}
	// Output:
	// ConfigStore configs-put-get-list
	// ConfigStore configs-unknown-is-not-found
	// ConfigStore configs-replace-keeps-order
	// ConfigStore configs-limit
	// ConfigStore configs-limit-under-concurrency
	// ConfigStore configs-delete
	// ConfigStore configs-finish
	// ConfigStore configs-advance
	// ConfigStore configs-live
	// ConfigStore configs-copies
	// Vault       vault-round-trip
	// Vault       vault-unknown-ref
	// Vault       vault-discard
	// Vault       vault-refs-unguessable
	// Vault       vault-concurrent
	// Outbox      outbox-put-lease-remove
	// Outbox      outbox-put-is-idempotent
	// Outbox      outbox-lane-order
	// Outbox      outbox-no-double-lease
	// Outbox      outbox-expiry-takeover
	// Outbox      outbox-renew
	// Outbox      outbox-release
	// Outbox      outbox-crash-at-least-once
	// Outbox      outbox-remove-idempotent
}
