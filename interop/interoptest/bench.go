package interoptest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/wopinterop/wopinterop/interop"
)

// benchListSize is how many runs the listing benchmarks seed: four pages of
// 50, so cursors are exercised.
const benchListSize = 200

// RunBenchmarks runs the shared RunStore benchmarks as sub-benchmarks of b,
// so that every driver reports comparable numbers. They need h.Noop; with it
// unset RunBenchmarks skips. Each sub-benchmark uses a fresh store.
//
//   - CreateRun: a Noop run per iteration, no idempotency key.
//   - CreateRunRepeatKey: the same key every iteration (the dedupe path).
//   - GetRun, GetRunParallel: one completed run read over and over.
//   - ListRunsFirstPage: the first page of 50 among benchListSize runs.
//   - ListRunsContextFilter: one contextId's 10 runs among benchListSize.
//   - ListRunsAllPages: every page of 50 via cursors.
func RunBenchmarks(b *testing.B, h Harness) {
	if err := h.Validate(); err != nil {
		b.Fatal(err)
	}
	if missing := h.Missing([]Need{NeedNoop}); len(missing) > 0 {
		b.Skipf("harness lacks %v", missing)
	}
	a := h.TenantA
	newKit := func(b *testing.B) *kit { return &kit{h: h, s: h.NewStore(b)} }
	noop := func(key, contextID string) interop.CreateRunRequest {
		return interop.CreateRunRequest{
			WorkflowID: h.Noop, Inputs: json.RawMessage(emptyInputs), IdempotencyKey: key,
			Transport: interop.TransportA2A, ContextID: contextID, TrustBoundary: interop.TrustUntrusted,
		}
	}

	b.Run("CreateRun", func(b *testing.B) {
		k := newKit(b)
		ctx := b.Context()
		req := noop("", unique("ctx"))
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := k.s.CreateRun(ctx, a, req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("CreateRunRepeatKey", func(b *testing.B) {
		k := newKit(b)
		ctx := b.Context()
		req := noop(unique("key"), unique("ctx"))
		if _, _, err := k.s.CreateRun(ctx, a, req); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, created, err := k.s.CreateRun(ctx, a, req); err != nil || created {
				b.Fatalf("repeat CreateRun = created %v, %v", created, err)
			}
		}
	})
	getSetup := func(b *testing.B) (*kit, string) {
		k := newKit(b)
		runs, err := k.startCompleted(b.Context(), a, unique("ctx"), 1)
		if err != nil {
			b.Fatal(err)
		}
		return k, runs[0].ID
	}
	b.Run("GetRun", func(b *testing.B) {
		k, id := getSetup(b)
		ctx := b.Context()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := k.s.GetRun(ctx, a, id); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("GetRunParallel", func(b *testing.B) {
		k, id := getSetup(b)
		ctx := b.Context()
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := k.s.GetRun(ctx, a, id); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})

	listSetup := func(b *testing.B) (*kit, string) {
		k := newKit(b)
		ctx := b.Context()
		target := unique("ctx")
		ids := make([]string, 0, benchListSize)
		for i := range benchListSize {
			contextID := unique("ctx")
			if i%(benchListSize/10) == 0 {
				contextID = target
			}
			run, _, err := k.s.CreateRun(ctx, a, noop("", contextID))
			if err != nil {
				b.Fatal(err)
			}
			ids = append(ids, run.ID)
		}
		// Measure a quiet store: no run changes status under the timer.
		for _, id := range ids {
			if _, err := k.waitStatus(ctx, a, id, interop.StatusCompleted); err != nil {
				b.Fatal(err)
			}
		}
		return k, target
	}
	list := func(name string, q interop.ListRunsQuery, allPages bool) {
		b.Run(name, func(b *testing.B) {
			k, target := listSetup(b)
			if q.ContextID != "" {
				q.ContextID = target
			}
			ctx := b.Context()
			b.ReportAllocs()
			for b.Loop() {
				if allPages {
					if n := pageThrough(ctx, b, k.s, a, q); n != benchListSize {
						b.Fatalf("paging listed %d runs, want %d", n, benchListSize)
					}
					continue
				}
				if _, err := k.s.ListRuns(ctx, a, q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	list("ListRunsFirstPage", interop.ListRunsQuery{PageSize: 50}, false)
	list("ListRunsContextFilter", interop.ListRunsQuery{ContextID: "set in setup", PageSize: 50}, false)
	list("ListRunsAllPages", interop.ListRunsQuery{PageSize: 50}, true)
}

// pageThrough follows the cursors of q and returns how many runs it saw.
func pageThrough(ctx context.Context, b *testing.B, s interop.RunStore, sub interop.Subject, q interop.ListRunsQuery) int {
	n := 0
	for range benchListSize + 1 {
		p, err := s.ListRuns(ctx, sub, q)
		if err != nil {
			b.Fatal(err)
		}
		n += len(p.Runs)
		if p.NextCursor == "" {
			return n
		}
		q.Cursor = p.NextCursor
	}
	b.Fatal("ListRuns cursors never end")
	return n
}
