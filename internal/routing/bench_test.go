package routing

import (
	"fmt"
	"testing"

	"github.com/wopinterop/wopinterop/interop"
)

func BenchmarkRoutingResolve(b *testing.B) {
	for _, n := range []int{1, 10, 100} {
		for _, rotating := range []bool{false, true} {
			var previous [][]byte
			if rotating {
				previous = append(previous, testSecret('b'))
			}
			k := mustKeys(b, testSecret('a'), "1.0", previous...)
			agents := make([]interop.Agent, n)
			for i := range agents {
				agents[i] = interop.Agent{ID: fmt.Sprintf("agent-%d", i), Workflows: []string{"w"}}
			}
			r := k.Derive(agents[n-1].ID)
			b.Run(fmt.Sprintf("agents=%d/previous=%t", n, rotating), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := k.Resolve(r, agents); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
