package pushservice

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine outlives its tests: every
// watcher and lane belongs to a Service, and Close waits for them.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
