package memstore

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/interop"
)

// TestListRunsMatchesBruteForce drives a tenant's runs through random
// creations, status changes and retention purges, and after each step
// pages random queries through ListRuns, comparing every page's runs and
// Total with a brute-force filter and sort of all live runs: the index, its
// maintained counts and the keyset paging must never drift from the order
// the RunStore contract defines (newest status timestamp first, run id
// descending on ties).
func TestListRunsMatchesBruteForce(t *testing.T) {
	for seed := range uint64(8) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			checkAgainstBruteForce(t, rand.New(rand.NewPCG(seed, 15)))
		})
	}
}

func checkAgainstBruteForce(t *testing.T, rng *rand.Rand) {
	s := New()
	defer s.Close()
	ten := s.tenantForWrite(tenantA)
	var (
		live       []*runRecord // the reference: every run not purged
		workspaces = []string{"", "w1", "w2"}
		contexts   = []string{"", "c1", "c2", "c3"}
		workflows  = []string{"wf-a", "wf-b"}
		statuses   = interop.AllStatuses()
		nextID     = 0
		// Few distinct timestamps, so that ties on the status timestamp
		// are frequent and the id decides.
		at = func() time.Time { return time.Unix(1785240000, int64(rng.IntN(40))).UTC() }
	)
	pick := func(xs []string) string { return xs[rng.IntN(len(xs))] }
	for step := range 300 {
		ten.mu.Lock()
		switch op := rng.IntN(10); {
		case op < 5 || len(live) == 0: // create
			nextID++
			when := at()
			// A fresh contextId now and then, as A2A mints one per task:
			// a partition of one run, which may get company later.
			ctx := pick(contexts)
			if rng.IntN(3) == 0 {
				ctx = fmt.Sprint("solo-", nextID)
				contexts = append(contexts, ctx)
			}
			rec := &runRecord{
				tenant: ten,
				run: interop.Run{
					// Ids that do not sort in creation order.
					ID:     fmt.Sprintf("%s/%03d-%d", tenantA, rng.IntN(1000), nextID),
					Tenant: tenantA, Workspace: pick(workspaces), ContextID: ctx, WorkflowID: pick(workflows),
					Status: statuses[rng.IntN(len(statuses))], StatusAt: when, CreatedAt: when,
				},
			}
			ten.addRunLocked(rec)
			live = append(live, rec)
		case op < 8: // status change, to a later or an earlier timestamp
			rec := live[rng.IntN(len(live))]
			st := statuses[rng.IntN(len(statuses))]
			if st == rec.run.Status {
				st = interop.StatusCancelling
			}
			rec.setStatusLocked(st, at())
		default: // retention purge in small batches
			cutoff, limit := at().UnixNano(), 1+rng.IntN(4)
			ten.mu.Unlock()
			purged := 0
			for {
				n := ten.purgeRuns(cutoff, limit)
				purged += n
				if n < limit {
					break
				}
			}
			ten.mu.Lock()
			kept := slices.DeleteFunc(slices.Clone(live), func(rec *runRecord) bool {
				return rec.run.Status.Terminal() && rec.run.StatusAt.UnixNano() < cutoff
			})
			if purged != len(live)-len(kept) {
				t.Fatalf("step %d: purged %d runs, %d were expired", step, purged, len(live)-len(kept))
			}
			live = kept
		}
		ten.mu.Unlock()
		for range 4 {
			q := interop.ListRunsQuery{ContextID: pick(contexts), WorkflowID: pick(append(workflows, "")), PageSize: 1 + rng.IntN(7)}
			for _, st := range statuses {
				if rng.IntN(5) == 0 {
					q.Statuses = append(q.Statuses, st)
				}
			}
			if rng.IntN(3) == 0 {
				q.StatusAfter = at()
			}
			sub := inWorkspace(subject(tenantA, "alice"), pick(workspaces))
			checkPages(t, s, sub, q, bruteForce(live, sub, q), step)
		}
	}
	if len(live) > 0 && len(ten.index.parts) == 0 {
		t.Fatal("index is empty while runs are live")
	}
}

// bruteForce is ListRuns by definition: every readable run the query
// keeps, sorted by status timestamp descending and run id descending.
func bruteForce(live []*runRecord, sub interop.Subject, q interop.ListRunsQuery) []string {
	var keep []*runRecord
	for _, rec := range live {
		r := &rec.run
		if (sub.Workspace == "" || r.Workspace == sub.Workspace) &&
			(q.ContextID == "" || r.ContextID == q.ContextID) &&
			(q.WorkflowID == "" || r.WorkflowID == q.WorkflowID) &&
			(len(q.Statuses) == 0 || slices.Contains(q.Statuses, r.Status)) &&
			(q.StatusAfter.IsZero() || !r.StatusAt.Before(q.StatusAfter)) {
			keep = append(keep, rec)
		}
	}
	slices.SortFunc(keep, func(a, b *runRecord) int {
		if c := b.run.StatusAt.Compare(a.run.StatusAt); c != 0 {
			return c
		}
		return cmp.Compare(b.run.ID, a.run.ID)
	})
	ids := make([]string, len(keep))
	for i, rec := range keep {
		ids[i] = rec.run.ID
	}
	return ids
}

// checkPages pages q to the end and compares the runs and every page's
// Total with want.
func checkPages(t *testing.T, s *Store, sub interop.Subject, q interop.ListRunsQuery, want []string, step int) {
	t.Helper()
	var got []string
	for pages := 0; ; pages++ {
		page, err := s.ListRuns(context.Background(), sub, q)
		if err != nil {
			t.Fatalf("step %d: ListRuns(%+v): %v", step, q, err)
		}
		if page.Total != len(want) {
			t.Fatalf("step %d: ListRuns(%+v) as %q: Total = %d, want %d", step, q, sub.Workspace, page.Total, len(want))
		}
		if len(page.Runs) > q.PageSize || (page.NextCursor != "" && len(page.Runs) != q.PageSize) {
			t.Fatalf("step %d: page of %d runs for size %d (next %q)", step, len(page.Runs), q.PageSize, page.NextCursor)
		}
		for _, r := range page.Runs {
			got = append(got, r.ID)
		}
		if page.NextCursor == "" || pages > len(want) {
			break
		}
		q.Cursor = page.NextCursor
	}
	if !slices.Equal(got, want) {
		t.Fatalf("step %d: ListRuns(%+v) as %q listed\n%q\nwant\n%q", step, q, sub.Workspace, got, want)
	}
}

// A tenant's only run is kept in no tree (a lone partition entry); the
// retention purge still finds it once it is terminal, and only then.
func TestOldestTerminalFindsALoneRun(t *testing.T) {
	ten := newTenantState(tenantA)
	rec := &runRecord{tenant: ten, run: interop.Run{
		ID: tenantA + "/only", Tenant: tenantA, WorkflowID: "wf", Status: interop.StatusRunning, StatusAt: time.Unix(100, 0),
	}}
	ten.addRunLocked(rec)
	if got := ten.index.oldestTerminal(nil, time.Unix(200, 0).UnixNano(), 10); len(got) != 0 {
		t.Fatalf("running run offered for purge: %d", len(got))
	}
	rec.setStatusLocked(interop.StatusCompleted, time.Unix(150, 0))
	if got := ten.index.oldestTerminal(nil, time.Unix(200, 0).UnixNano(), 10); len(got) != 1 || got[0] != rec {
		t.Fatalf("completed run not offered: %d", len(got))
	}
	if got := ten.index.oldestTerminal(nil, time.Unix(120, 0).UnixNano(), 10); len(got) != 0 {
		t.Fatalf("run newer than the cutoff offered: %d", len(got))
	}
}

// A run alone in its contextId is kept out of the context's narrower
// partitions, which a second run in the context brings in; removing the
// runs leaves no partition behind.
func TestSoloContextRunSkipsNarrowerPartitions(t *testing.T) {
	ten := newTenantState(tenantA)
	newRun := func(id string, at int64) *runRecord {
		rec := &runRecord{tenant: ten, run: interop.Run{
			ID: tenantA + "/" + id, Tenant: tenantA, Workspace: "ws", ContextID: "ctx", WorkflowID: "wf",
			Status: interop.StatusRunning, StatusAt: time.Unix(at, 0),
		}}
		ten.addRunLocked(rec)
		return rec
	}
	first := newRun("first", 100)
	if got := len(ten.index.parts); got != 5 {
		t.Fatalf("a solo context run is in %d partitions, want 5 (all, workspace, context, workflow, workspace+workflow)", got)
	}
	first.setStatusLocked(interop.StatusCompleted, time.Unix(110, 0))
	if got := len(ten.index.parts); got != 5 {
		t.Fatalf("after a status change: %d partitions, want 5", got)
	}
	second := newRun("second", 120)
	if got := len(ten.index.parts); got != 8 {
		t.Fatalf("two runs in a context: %d partitions, want 8", got)
	}
	ten.dropRunLocked(first)
	ten.dropRunLocked(second)
	if got := len(ten.index.parts); got != 0 {
		t.Fatalf("%d partitions left after every run went", got)
	}
}

// A run alone in its context — every A2A message without a contextId
// starts one — costs its context's partition no allocation of its own:
// the partition is a map value holding the run, and its status changes
// move nothing.
func TestLoneContextPartitionAllocatesNothing(t *testing.T) {
	ten := newTenantState(tenantA)
	const n = 2000
	recs := make([]*runRecord, n)
	for i := range recs {
		recs[i] = &runRecord{tenant: ten, run: interop.Run{
			ID: fmt.Sprintf("%s/%06d", tenantA, i), Tenant: tenantA, ContextID: fmt.Sprintf("ctx-%06d", i),
			Status: interop.StatusRunning, StatusAt: time.Unix(int64(i), 0),
		}}
	}
	// The tenant-wide partition holds trees from the first two runs on.
	ten.addRunLocked(recs[0])
	ten.addRunLocked(recs[1])
	i := 2
	allocs := testing.AllocsPerRun(n-3, func() {
		rec := recs[i]
		i++
		ten.addRunLocked(rec)
		rec.setStatusLocked(interop.StatusCompleted, rec.run.StatusAt.Add(time.Second))
	})
	// B-tree nodes and map growth are shared by many runs; a partition
	// per run would be one allocation each.
	if allocs >= 0.5 {
		t.Fatalf("%.2f allocations per lone-context run", allocs)
	}
}
