package delegate

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine outlives its tests: a
// connection owns none, and every stream's body is closed when its
// iterator ends.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
