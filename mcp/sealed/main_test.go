package sealed

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine outlives its tests: the
// sealer and the ledger start none.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
