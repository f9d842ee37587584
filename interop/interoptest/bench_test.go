package interoptest_test

import (
	"testing"

	"github.com/wopinterop/wopinterop/interop/interoptest"
)

// BenchmarkMemstore reports the shared RunStore numbers for the embedded
// store; other drivers call RunBenchmarks the same way.
func BenchmarkMemstore(b *testing.B) {
	interoptest.RunBenchmarks(b, memHarness())
}
