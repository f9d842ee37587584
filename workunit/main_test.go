package workunit_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine outlives its tests: the
// round trips start servers, clients and runs, and each must end with its
// test.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
