package pushtest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/push"
)

// DefaultTimeout bounds one check when [Harness.Timeout] is zero.
const DefaultTimeout = 20 * time.Second

// ErrMissingStore is returned by [Check.Run] when the harness builds no
// store of the interface the check is about.
var ErrMissingStore = errors.New("pushtest: harness builds no store the check needs")

// ErrInvalidHarness reports a harness that cannot run any check.
var ErrInvalidHarness = errors.New("pushtest: invalid harness")

// Harness is what a host fills to run the kit against its stores. Each
// New function enables the checks of its interface; the others are
// skipped, so a host that implements only an Outbox sets only NewOutbox.
//
// A store over a database stands for every replica of the host. The
// Replica functions, when set, open a second handle on the same data —
// another connection pool on the same database, as a second replica
// would — and the checks that run two owners or concurrent writers spread
// them over both handles; unset, they share one handle.
type Harness struct {
	// NewConfigs returns a ConfigStore for one check. The checks use
	// task ids of their own, so it may hold other records.
	NewConfigs func(t testing.TB) push.ConfigStore
	// ConfigsReplica returns a second handle on first's records.
	ConfigsReplica func(t testing.TB, first push.ConfigStore) push.ConfigStore

	// NewVault returns a Vault for one check. The checks seal secrets of
	// their own, so it may hold others.
	NewVault func(t testing.TB) push.Vault
	// VaultReplica returns a second handle on first's secrets: a secret
	// sealed through one must open through the other.
	VaultReplica func(t testing.TB, first push.Vault) push.Vault

	// NewOutbox returns an empty Outbox for one check, which nothing else
	// uses while the check runs: the checks lease every head there is.
	NewOutbox func(t testing.TB) push.Outbox
	// OutboxReplica returns a second handle on first's queue.
	OutboxReplica func(t testing.TB, first push.Outbox) push.Outbox

	// Timeout bounds one check in RunConformance; zero means
	// DefaultTimeout. The outbox checks wait out leases of under a second.
	Timeout time.Duration
}

// Validate reports a harness that builds no store, or whose Replica
// function has no store to open a handle on.
func (h Harness) Validate() error {
	switch {
	case h.NewConfigs == nil && h.NewVault == nil && h.NewOutbox == nil:
		return fmt.Errorf("%w: NewConfigs, NewVault and NewOutbox are all nil", ErrInvalidHarness)
	case h.ConfigsReplica != nil && h.NewConfigs == nil:
		return fmt.Errorf("%w: ConfigsReplica without NewConfigs", ErrInvalidHarness)
	case h.VaultReplica != nil && h.NewVault == nil:
		return fmt.Errorf("%w: VaultReplica without NewVault", ErrInvalidHarness)
	case h.OutboxReplica != nil && h.NewOutbox == nil:
		return fmt.Errorf("%w: OutboxReplica without NewOutbox", ErrInvalidHarness)
	case h.Timeout < 0:
		return fmt.Errorf("%w: negative Timeout", ErrInvalidHarness)
	}
	return nil
}

// Builds reports whether the harness builds stores of interface of.
func (h Harness) Builds(of Interface) bool {
	switch of {
	case ConfigStore:
		return h.NewConfigs != nil
	case Vault:
		return h.NewVault != nil
	case Outbox:
		return h.NewOutbox != nil
	}
	return false
}

func (h Harness) timeout() time.Duration {
	if h.Timeout > 0 {
		return h.Timeout
	}
	return DefaultTimeout
}
