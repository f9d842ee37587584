package memstore

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine outlives its tests: every
// run's workflow goroutine belongs to a Store, and Close waits for it.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
