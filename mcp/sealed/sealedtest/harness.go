package sealedtest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/mcp/sealed"
)

// DefaultTimeout bounds one check when [Harness.Timeout] is zero.
const DefaultTimeout = 10 * time.Second

// ErrInvalidHarness reports a harness that cannot run any check.
var ErrInvalidHarness = errors.New("sealedtest: invalid harness")

// Harness is what a host fills to run the kit against its ledger.
type Harness struct {
	// NewLedger returns a ledger for one check. Required.
	NewLedger func(t testing.TB) sealed.Ledger
	// Replica, when set, returns a second handle on first's records —
	// another connection pool on the same database, as a second replica
	// would open. Unset, the checks use one handle.
	Replica func(t testing.TB, first sealed.Ledger) sealed.Ledger
	// Timeout bounds one check in RunConformance; zero means
	// DefaultTimeout.
	Timeout time.Duration
}

// Validate reports a harness that cannot run any check.
func (h Harness) Validate() error {
	switch {
	case h.NewLedger == nil:
		return fmt.Errorf("%w: NewLedger is nil", ErrInvalidHarness)
	case h.Timeout < 0:
		return fmt.Errorf("%w: negative Timeout", ErrInvalidHarness)
	}
	return nil
}

func (h Harness) timeout() time.Duration {
	if h.Timeout > 0 {
		return h.Timeout
	}
	return DefaultTimeout
}
