package negotiate

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine outlives its tests: an
// Auditor's worker belongs to it between Start and Close.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
