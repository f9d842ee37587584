package postgres

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/interoptest"
	"github.com/wopinterop/wopinterop/interop/memstore"
)

// The benchmarks run the PostgreSQL store and the embedded memstore side
// by side in one run, so their ratios compare like with like:
//
//	go test -run '^$' -bench . -benchmem ./
//
// PostgreSQL is the throw-away test cluster (loopback TCP, fsync off).

// BenchmarkKit is the conformance kit's shared RunStore benchmarks on both
// stores.
func BenchmarkKit(b *testing.B) {
	b.Run("memstore", func(b *testing.B) {
		interoptest.RunBenchmarks(b, interoptest.Harness{
			NewStore: func(t testing.TB) interop.RunStore { return newMemstore(t) },
			TenantA:  alice(), Noop: memstore.FixtureNoop,
		})
	})
	b.Run("postgres", func(b *testing.B) {
		interoptest.RunBenchmarks(b, interoptest.Harness{
			NewStore: func(t testing.TB) interop.RunStore { return newStore(t) },
			TenantA:  alice(), Noop: FixtureNoop,
		})
	})
}

func newMemstore(tb testing.TB) *memstore.Store {
	s := memstore.New()
	tb.Cleanup(func() { _ = s.Close() })
	if err := s.RegisterFixtures(tenantA); err != nil {
		tb.Fatal(err)
	}
	return s
}

// seedMemstore creates n conformance-noop runs in s and waits until the
// last one completed (they complete in creation order or close to it).
func seedMemstore(b *testing.B, s *memstore.Store, n int) {
	ctx := context.Background()
	if n == 0 {
		return
	}
	var last string
	for i := range n {
		run, _, err := s.CreateRun(ctx, alice(), interop.CreateRunRequest{WorkflowID: memstore.FixtureNoop, ContextID: fmt.Sprint("seed-", i%100)})
		if err != nil {
			b.Fatal(err)
		}
		last = run.ID
	}
	for {
		p, err := s.ListRuns(ctx, alice(), interop.ListRunsQuery{Statuses: []interop.RunStatus{interop.StatusRunning}, PageSize: 1})
		if err != nil {
			b.Fatal(err)
		}
		if p.Total == 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := s.GetRun(ctx, alice(), last); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkStores measures what a task surface costs per call on each
// store: GetTask (GetRun of a completed run), SendMessage of the no-op
// workflow (CreateRun; the run completes in the background), and a
// ListTasks page of 50 among 1,000 and 100,000 runs of one tenant — the
// first page and one from a cursor halfway down. A keyset page on an index
// with counted totals costs the same at both sizes.
func BenchmarkStores(b *testing.B) {
	ctx := context.Background()
	type store struct {
		name string
		open func(b *testing.B, seed int) interop.RunStore
	}
	stores := []store{
		{"memstore", func(b *testing.B, seed int) interop.RunStore {
			s := newMemstore(b)
			seedMemstore(b, s, seed)
			return s
		}},
		{"postgres", func(b *testing.B, seed int) interop.RunStore {
			s := newStore(b)
			seedRuns(b, s.pool, tenantA, seed)
			return s
		}},
	}
	for _, st := range stores {
		b.Run(st.name, func(b *testing.B) {
			b.Run("GetTask", func(b *testing.B) {
				s := st.open(b, 1000)
				page, err := s.ListRuns(ctx, alice(), interop.ListRunsQuery{PageSize: 1})
				if err != nil || len(page.Runs) != 1 {
					b.Fatal(page, err)
				}
				id := page.Runs[0].ID
				b.ReportAllocs()
				for b.Loop() {
					if _, err := s.GetRun(ctx, alice(), id); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("SendMessageNoop", func(b *testing.B) {
				s := st.open(b, 0)
				req := interop.CreateRunRequest{WorkflowID: FixtureNoop, Transport: interop.TransportA2A, ContextID: "bench"}
				b.ReportAllocs()
				for b.Loop() {
					if _, _, err := s.CreateRun(ctx, alice(), req); err != nil {
						b.Fatal(err)
					}
				}
			})
			for _, n := range []int{1000, 100000} {
				b.Run(fmt.Sprintf("ListTasks50/runs=%d", n), func(b *testing.B) {
					s := st.open(b, n)
					first, err := s.ListRuns(ctx, alice(), interop.ListRunsQuery{PageSize: 50})
					if err != nil || first.Total != n || first.NextCursor == "" {
						b.Fatalf("setup page: %d runs, total %d, %v", len(first.Runs), first.Total, err)
					}
					// A cursor halfway down the list.
					q := interop.ListRunsQuery{PageSize: 50, Cursor: first.NextCursor}
					for range n / 100 {
						p, err := s.ListRuns(ctx, alice(), q)
						if err != nil {
							b.Fatal(err)
						}
						q.Cursor = p.NextCursor
					}
					b.Run("first", func(b *testing.B) {
						b.ReportAllocs()
						for b.Loop() {
							if _, err := s.ListRuns(ctx, alice(), interop.ListRunsQuery{PageSize: 50}); err != nil {
								b.Fatal(err)
							}
						}
					})
					b.Run("middle", func(b *testing.B) {
						b.ReportAllocs()
						for b.Loop() {
							if _, err := s.ListRuns(ctx, alice(), q); err != nil {
								b.Fatal(err)
							}
						}
					})
				})
			}
		})
	}
}
