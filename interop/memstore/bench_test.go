package memstore

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/internal/processcpu"
	"github.com/wopinterop/wopinterop/interop"
)

// benchStore has n completed conformance-noop runs in tenantA.
func benchStore(b *testing.B, n int) (*Store, interop.Subject, []string) {
	b.Helper()
	s := newStore(b)
	sub := subject(tenantA, "alice")
	ids := make([]string, n)
	for i := range ids {
		ids[i] = mustCreate(b, s, sub, interop.CreateRunRequest{WorkflowID: FixtureNoop, ContextID: "ctx"}).ID
	}
	for _, id := range ids {
		events(b, s, sub, id)
	}
	return s, sub, ids
}

func BenchmarkCreateRun(b *testing.B) {
	s := newStore(b)
	var runs counter
	register(b, s, tenantA, "noop", runs.noop)
	sub := subject(tenantA, "alice")
	req := interop.CreateRunRequest{WorkflowID: "noop", Transport: interop.TransportA2A, ContextID: "ctx"}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := s.CreateRun(ctx, sub, req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCreateRunIdempotentRepeat(b *testing.B) {
	s := newStore(b)
	sub := subject(tenantA, "alice")
	req := interop.CreateRunRequest{WorkflowID: FixtureNoop, IdempotencyKey: "k"}
	ctx := context.Background()
	mustCreate(b, s, sub, req)
	b.ReportAllocs()
	for b.Loop() {
		if _, created, err := s.CreateRun(ctx, sub, req); err != nil || created {
			b.Fatal(created, err)
		}
	}
}

func BenchmarkGetRun(b *testing.B) {
	s, sub, ids := benchStore(b, 1000)
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := s.GetRun(ctx, sub, ids[i%len(ids)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func BenchmarkGetRunUnknown(b *testing.B) {
	s, _, ids := benchStore(b, 1000)
	ctx := context.Background()
	foreign := subject(tenantB, "bob")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.GetRun(ctx, foreign, ids[0]); err == nil {
			b.Fatal("foreign read succeeded")
		}
	}
}

func BenchmarkListRuns(b *testing.B) {
	s, sub, _ := benchStore(b, 1000)
	ctx := context.Background()
	first, err := s.ListRuns(ctx, sub, interop.ListRunsQuery{PageSize: 50})
	if err != nil || len(first.Runs) != 50 || first.Total != 1000 {
		b.Fatalf("setup page: %d runs, total %d, err %v", len(first.Runs), first.Total, err)
	}
	b.Run("first-page", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.ListRuns(ctx, sub, interop.ListRunsQuery{PageSize: 50}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("with-cursor", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.ListRuns(ctx, sub, interop.ListRunsQuery{PageSize: 50, Cursor: first.NextCursor}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("filtered", func(b *testing.B) {
		q := interop.ListRunsQuery{PageSize: 50, ContextID: "ctx", Statuses: []interop.RunStatus{interop.StatusCompleted}}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.ListRuns(ctx, sub, q); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkWatchCompletedRun(b *testing.B) {
	s, sub, ids := benchStore(b, 1)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		seq, err := s.WatchRun(ctx, sub, ids[0], -1)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for _, err := range seq {
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != 3 {
			b.Fatalf("%d events", n)
		}
	}
}

func BenchmarkPublishHostEvent(b *testing.B) {
	s := newStore(b, WithHostEventRetention(1000))
	ctx := context.Background()
	ev := durable("negotiation.decided", "")
	b.ReportAllocs()
	for b.Loop() {
		if err := s.PublishHostEvent(ctx, tenantA, ev); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCreateRunWithRetention is BenchmarkCreateRun on a store that
// purges: the purge runs on its own goroutine, so creation pays nothing
// for it.
func BenchmarkCreateRunWithRetention(b *testing.B) {
	s := newStore(b, WithRunRetention(time.Hour))
	var runs counter
	register(b, s, tenantA, "noop", runs.noop)
	sub := subject(tenantA, "alice")
	req := interop.CreateRunRequest{WorkflowID: "noop", Transport: interop.TransportA2A, ContextID: "ctx"}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := s.CreateRun(ctx, sub, req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPurgeRuns is the purge of 1000 expired runs from a tenant that
// also holds 1000 live ones; ns/run is the cost per purged run, paid on
// the purge goroutine under the tenant lock (at most purgeBatch runs per
// hold).
func BenchmarkPurgeRuns(b *testing.B) {
	const n = 1000
	clock := newManualClock()
	s := newStore(b, WithClock(clock.Now), WithRunRetention(time.Hour))
	sub := subject(tenantA, "alice")
	ctx := context.Background()
	for range n {
		if _, _, err := s.CreateRun(ctx, sub, interop.CreateRunRequest{WorkflowID: FixtureCancellable, Inputs: []byte(`{"delayMs":600000}`)}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		ids := make([]string, n)
		for j := range ids {
			run, _, err := s.CreateRun(ctx, sub, interop.CreateRunRequest{WorkflowID: FixtureNoop, IdempotencyKey: fmt.Sprint(i, "-", j)})
			if err != nil {
				b.Fatal(err)
			}
			ids[j] = run.ID
		}
		for _, id := range ids {
			events(b, s, sub, id)
		}
		clock.Advance(2 * time.Hour)
		b.StartTimer()
		if purged, _ := s.purgeExpired(); purged != n {
			b.Fatalf("purged %d", purged)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/run")
}

// listScales are the tenant sizes of the scaling benchmarks: a page of
// ListRuns and a CreateRun should cost the same at each.
var listScales = []int{1000, 10000, 100000}

// BenchmarkListRunsScale lists a page of 50 from one tenant of n runs:
// the first page, a page from the middle of the listing (deep-page), and
// the first page of a contextId filter.
func BenchmarkListRunsScale(b *testing.B) {
	for _, n := range listScales {
		b.Run(fmt.Sprintf("runs=%d", n), func(b *testing.B) {
			s, sub, _ := benchStore(b, n)
			ctx := context.Background()
			deep := interop.ListRunsQuery{PageSize: MaxPageSize}
			for range n / 2 / MaxPageSize {
				page, err := s.ListRuns(ctx, sub, deep)
				if err != nil || page.NextCursor == "" {
					b.Fatalf("paging to the middle: %v", err)
				}
				deep.Cursor = page.NextCursor
			}
			deep.PageSize = 50
			for _, bc := range []struct {
				name string
				q    interop.ListRunsQuery
			}{
				{"first-page", interop.ListRunsQuery{PageSize: 50}},
				{"deep-page", deep},
				{"context", interop.ListRunsQuery{PageSize: 50, ContextID: "ctx"}},
			} {
				b.Run(bc.name, func(b *testing.B) {
					b.ReportAllocs()
					// Process CPU, the garbage collector's included: a page
					// allocates, and the collector it triggers marks every
					// run the tenant holds.
					start := processcpu.Used()
					for b.Loop() {
						page, err := s.ListRuns(ctx, sub, bc.q)
						if err != nil || len(page.Runs) != 50 || page.Total != n {
							b.Fatalf("%d runs, total %d, err %v", len(page.Runs), page.Total, err)
						}
					}
					b.ReportMetric(float64(processcpu.Used()-start)/float64(b.N), "cpu-ns/op")
				})
			}
		})
	}
}

// BenchmarkCreateRunScale creates runs in a tenant that already holds n.
func BenchmarkCreateRunScale(b *testing.B) {
	for _, n := range listScales {
		b.Run(fmt.Sprintf("runs=%d", n), func(b *testing.B) {
			s, sub, _ := benchStore(b, n)
			req := interop.CreateRunRequest{WorkflowID: FixtureNoop, Transport: interop.TransportA2A, ContextID: "ctx"}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := s.CreateRun(ctx, sub, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkStoredRunBytes measures the heap a completed run keeps (see
// storedRunBytes) as B/run.
func BenchmarkStoredRunBytes(b *testing.B) {
	for b.Loop() {
		b.ReportMetric(storedRunBytes(b, 10000), "B/run")
	}
}

// storedRunBytes is the heap a completed run keeps: n conformance-noop
// runs started as A2A starts them (a fresh contextId, an idempotency key,
// the first message with its skillId metadata, a trace), all completed, then the live heap after a
// full GC divided by n. MEMSTORE_HEAP_PROFILE names a file to write the
// heap profile to, taken while the runs are live.
func storedRunBytes(tb testing.TB, n int) float64 {
	ctx := context.Background()
	s := newStore(tb)
	sub := subject(tenantA, "alice")
	msg := &interop.Message{
		ID: "m", Role: interop.RoleUser, Parts: []interop.Part{interop.TextPart("go")},
		Metadata: map[string]any{"skillId": FixtureNoop}, // how an A2A client picks the skill
	}
	before := liveHeap()
	ids := make([]string, n)
	for i := range ids {
		// Not mustCreate and events: their per-call test contexts would
		// stay live until cleanup and be counted.
		run, _, err := s.CreateRun(ctx, sub, interop.CreateRunRequest{
			WorkflowID:     FixtureNoop,
			Transport:      interop.TransportA2A,
			ContextID:      fmt.Sprintf("ctx-%016d", i),
			IdempotencyKey: fmt.Sprintf("a2a:m-%d", i),
			Trace:          interop.TraceContext{TraceParent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
			Message:        msg,
		})
		if err != nil {
			tb.Fatal(err)
		}
		ids[i] = run.ID
	}
	for _, id := range ids {
		seq, err := s.WatchRun(ctx, sub, id, -1)
		if err != nil {
			tb.Fatal(err)
		}
		for _, err := range seq {
			if err != nil {
				tb.Fatal(err)
			}
		}
	}
	ids = nil
	perRun := float64(liveHeap()-before) / float64(n)
	if path := os.Getenv("MEMSTORE_HEAP_PROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			tb.Fatal(err)
		}
		_ = pprof.WriteHeapProfile(f)
		f.Close()
	}
	runtime.KeepAlive(s)
	return perRun
}

// liveHeap is the heap in use after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
