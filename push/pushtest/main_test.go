package pushtest_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine outlives its tests: the
// checks wait for every goroutine they start.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
