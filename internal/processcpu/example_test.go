package processcpu_test

import (
	"fmt"

	"github.com/wopinterop/wopinterop/internal/processcpu"
)

// CPU per operation, as the benchmarks report it.
func Example() {
	start := processcpu.Used()
	sum := 0
	for i := range 1000 {
		sum += i
	}
	perOp := (processcpu.Used() - start) / 1000
	fmt.Println(sum, perOp >= 0)
	// Output: 499500 true
}
