package a2a

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine outlives its tests: every
// goroutine the server starts is owned and ends with what owns it.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
