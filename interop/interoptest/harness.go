package interoptest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/interop"
)

// DefaultTimeout bounds one check when [Harness.Timeout] is zero.
const DefaultTimeout = 10 * time.Second

// ErrMissingFixture is returned by [Check.Run] when the harness lacks
// something the check needs (see [Check.Needs]).
var ErrMissingFixture = errors.New("interoptest: harness lacks a fixture the check needs")

// ErrInvalidHarness reports a harness that cannot run any check.
var ErrInvalidHarness = errors.New("interoptest: invalid harness")

// Harness is what a host fills to run the kit against its store. Only
// NewStore and TenantA are required; every other field enables the checks
// that need it (see [Need]).
type Harness struct {
	// NewStore returns a store for one check, with the fixture workflows
	// below available to TenantA, TenantA2 and TenantB. RunConformance
	// calls it once per check. Register cleanup with t.Cleanup; a store that
	// owns goroutines should stop them there (the kit leaves some runs
	// suspended or running).
	NewStore func(t testing.TB) interop.RunStore

	// TenantA is the main caller. Required.
	TenantA interop.Subject
	// TenantA2 is another principal of TenantA's tenant (same Tenant and
	// Workspace, different Principal).
	TenantA2 interop.Subject
	// TenantB is a caller of another tenant.
	TenantB interop.Subject
	// NonApprover is a caller of TenantA's tenant the Approval fixture's
	// interrupt does not accept as a resolver: ResolveInterrupt by it must be
	// ErrNotEligible. Leave it zero when every principal of the tenant may
	// approve.
	NonApprover interop.Subject

	// Noop is a workflow that completes on its own, quickly, with inputs {}.
	Noop string
	// Approval is a workflow that, with inputs {}, suspends at
	// waiting-approval on exactly one approval interrupt that TenantA may
	// resolve. Resolving it with outcome accept and resume value
	// {"action":"accept"} completes the run; the resume value
	// {"action":"interoptest-no-such-action"} is refused with ErrInvalidInput.
	Approval string
	// Cancellable is a workflow taking inputs {"delayMs": N}: it runs until it
	// is cancelled or N milliseconds pass, then completes. The kit uses N = 0
	// and N = 600000 (ten minutes, which no check waits out). Inputs whose
	// delayMs is not an integer, or that are not a JSON object, are refused
	// with ErrInvalidInput.
	Cancellable string

	// HostEvents says that the store NewStore returns also implements
	// interop.EventSink and interop.HostEventFeed (the feed behind GET
	// /host/events); it enables the host-events and audit-events checks.
	HostEvents bool

	// Timeout bounds one check in RunConformance; zero means
	// DefaultTimeout.
	Timeout time.Duration
}

// Need names something a check requires from the [Harness].
type Need string

// The needs a check can declare; each is the name of the Harness field that
// satisfies it.
const (
	NeedTenantA2    Need = "TenantA2"
	NeedTenantB     Need = "TenantB"
	NeedNonApprover Need = "NonApprover"
	NeedNoop        Need = "Noop"
	NeedApproval    Need = "Approval"
	NeedCancellable Need = "Cancellable"
	NeedHostEvents  Need = "HostEvents"
)

// Validate reports a harness that cannot run any check, or whose subjects
// contradict their roles. Unset optional fields are not errors.
func (h Harness) Validate() error {
	if h.NewStore == nil {
		return fmt.Errorf("%w: NewStore is nil", ErrInvalidHarness)
	}
	if !present(h.TenantA) {
		return fmt.Errorf("%w: TenantA needs Tenant, Principal and Authenticated", ErrInvalidHarness)
	}
	if present(h.TenantA2) && (h.TenantA2.Tenant != h.TenantA.Tenant || h.TenantA2.Principal == h.TenantA.Principal) {
		return fmt.Errorf("%w: TenantA2 must share TenantA's tenant with another principal", ErrInvalidHarness)
	}
	if present(h.TenantB) && h.TenantB.Tenant == h.TenantA.Tenant {
		return fmt.Errorf("%w: TenantB must be another tenant than TenantA", ErrInvalidHarness)
	}
	if present(h.NonApprover) && h.NonApprover.Tenant != h.TenantA.Tenant {
		return fmt.Errorf("%w: NonApprover must be in TenantA's tenant", ErrInvalidHarness)
	}
	if h.Timeout < 0 {
		return fmt.Errorf("%w: negative Timeout", ErrInvalidHarness)
	}
	return nil
}

// Missing returns the needs the harness does not satisfy, in the order
// given.
func (h Harness) Missing(needs []Need) []Need {
	var out []Need
	for _, n := range needs {
		if !h.has(n) {
			out = append(out, n)
		}
	}
	return out
}

func (h Harness) has(n Need) bool {
	switch n {
	case NeedTenantA2:
		return present(h.TenantA2)
	case NeedTenantB:
		return present(h.TenantB)
	case NeedNonApprover:
		return present(h.NonApprover)
	case NeedNoop:
		return h.Noop != ""
	case NeedApproval:
		return h.Approval != ""
	case NeedCancellable:
		return h.Cancellable != ""
	case NeedHostEvents:
		return h.HostEvents
	}
	return false
}

func (h Harness) timeout() time.Duration {
	if h.Timeout > 0 {
		return h.Timeout
	}
	return DefaultTimeout
}

// present reports whether a Subject field was filled in.
func present(s interop.Subject) bool {
	return s.Tenant != "" && s.Principal != "" && s.Authenticated
}
