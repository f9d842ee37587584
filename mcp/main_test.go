package mcp

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine outlives its tests: every
// goroutine the mount starts is owned by a request or counted as the
// Server's work, which Close waits for.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
