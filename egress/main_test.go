package egress

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine outlives its tests: the
// guard's clients leave nothing running once their connections close.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
