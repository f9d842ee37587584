package a2apeers

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine outlives its tests: every
// peer, every execution it runs and every Node process end with the test
// that started them.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
