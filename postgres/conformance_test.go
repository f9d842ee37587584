package postgres

import (
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/interoptest"
)

// harness runs the kit with a fresh database per check.
func harness(opts ...Option) interoptest.Harness {
	return interoptest.Harness{
		NewStore:    func(t testing.TB) interop.RunStore { return newStore(t, opts...) },
		TenantA:     alice(),
		TenantA2:    bob(),
		TenantB:     carol(),
		NonApprover: mallory(),
		Noop:        FixtureNoop,
		Approval:    restrictedApproval,
		Cancellable: FixtureCancellable,
		HostEvents:  true,
	}
}

func TestConformance(t *testing.T) {
	// The kit's wait-run check holds a store to the RunWaiter contract
	// only when it implements it.
	if _, ok := harness().NewStore(t).(interop.RunWaiter); !ok {
		t.Fatal("the kit's store is no interop.RunWaiter: its wait-run check would pass without checking")
	}
	interoptest.RunConformance(t, harness())
}

// TestConformanceTiedClock runs the kit where every timestamp ties, which
// exercises the run-id tie-break of list order and cursors in SQL (byte
// order, COLLATE "C").
func TestConformanceTiedClock(t *testing.T) {
	at := time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)
	interoptest.RunConformance(t, harness(WithClock(func() time.Time { return at })))
}

// TestConformancePollingOnly runs the kit with LISTEN/NOTIFY off: every
// wait is ended by the poll alone, so a lost notification costs latency,
// never an event.
func TestConformancePollingOnly(t *testing.T) {
	interoptest.RunConformance(t, harness(WithoutNotifications(), WithPollInterval(10*time.Millisecond)))
}
