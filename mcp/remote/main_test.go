package remote

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine outlives its tests: a
// closed session owns none.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
