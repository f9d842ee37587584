package mcppeers

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine outlives its tests: every
// server, every tool call it runs and every client session end with the
// test that started them.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
