package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wopinterop/wopinterop/interop"
)

// seedRuns inserts n completed conformance-noop runs of alice straight
// into the database (the trigger counts them), one millisecond apart, in
// contexts "seed-0" … "seed-99", and vacuums and analyses the tables.
func seedRuns(tb testing.TB, pool *pgxpool.Pool, tenant string, n int) {
	tb.Helper()
	ctx := context.Background()
	_, err := pool.Exec(ctx, `
		INSERT INTO wopinterop_runs (id, tenant, principal, workflow_id, status, status_at, created_at,
			last_event_at, transport, context_id, inputs, last_sequence)
		SELECT $1 || '/seed' || lpad(g::text, 22, '0'), $1, 'alice', $2, 'completed',
			t, t, t, 'a2a', 'seed-' || (g % 100), '{}', 0
		FROM generate_series(1, $3::int) AS g,
			LATERAL (SELECT timestamptz '2026-01-01' + g * interval '1 millisecond' AS t) at`,
		tenant, FixtureNoop, n)
	if err != nil {
		tb.Fatalf("seed %d runs: %v", n, err)
	}
	// The steady state autovacuum keeps: the counter rows' dead versions
	// (one per counted insert) gone, statistics fresh.
	for _, table := range []string{"wopinterop_runs", "wopinterop_run_counts"} {
		if _, err := pool.Exec(ctx, `VACUUM ANALYZE `+table); err != nil {
			tb.Fatal(err)
		}
	}
}

// planNode is the part of EXPLAIN (FORMAT JSON) the test reads.
type planNode struct {
	NodeType   string     `json:"Node Type"`
	ActualRows float64    `json:"Actual Rows"`
	IndexName  string     `json:"Index Name"`
	Plans      []planNode `json:"Plans"`
}

func (n planNode) walk(f func(planNode)) {
	f(n)
	for _, c := range n.Plans {
		c.walk(f)
	}
}

// TestListPageCostsAPage: on 20,000 runs, a page of 50 — the first, and
// one from a cursor deep in the list — is an index range scan that reads
// 51 rows and sorts nothing, and its Total reads the counts, not the runs.
func TestListPageCostsAPage(t *testing.T) {
	s := newStore(t)
	const n, size = 20000, 50
	seedRuns(t, s.pool, tenantA, n)
	ctx := testCtx(t)
	middle := listKey{at: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(n / 2 * time.Millisecond), id: fmt.Sprintf("%s/seed%022d", tenantA, n/2)}
	for name, start := range map[string]*listKey{"first page": nil, "cursor page": &middle} {
		t.Run(name, func(t *testing.T) {
			lq := listQuery{tenant: tenantA}
			sql, args := lq.statement(start, size+1, true)
			var raw []byte
			if err := s.pool.QueryRow(ctx, `EXPLAIN (ANALYZE, FORMAT JSON) `+sql, args...).Scan(&raw); err != nil {
				t.Fatal(err)
			}
			var plans []struct{ Plan planNode }
			if err := json.Unmarshal(raw, &plans); err != nil {
				t.Fatal(err)
			}
			usedListing := false
			plans[0].Plan.walk(func(p planNode) {
				if p.NodeType == "Sort" {
					t.Errorf("plan sorts: %s", raw)
				}
				if p.ActualRows > size+1 {
					t.Errorf("plan node %s (%s) produced %v rows, more than a page: %s", p.NodeType, p.IndexName, p.ActualRows, raw)
				}
				usedListing = usedListing || p.IndexName == "wopinterop_runs_listing"
			})
			if !usedListing {
				t.Errorf("plan does not scan wopinterop_runs_listing: %s", raw)
			}
		})
	}
	page, err := s.ListRuns(ctx, alice(), interop.ListRunsQuery{PageSize: size})
	if err != nil || len(page.Runs) != size || page.Total != n {
		t.Fatalf("ListRuns = %d runs, Total %d, %v; want %d of %d", len(page.Runs), page.Total, err, size, n)
	}
}

// TestListTotalsMatchTheRuns: after creations, completions, failures,
// cancellations and suspensions in several workspaces, every listing's
// Total (from the trigger's counts where the filters allow) equals a count
// of the matching runs.
func TestListTotalsMatchTheRuns(t *testing.T) {
	s := newStore(t)
	ctx := testCtx(t)
	ws := func(w string) interop.Subject { sub := alice(); sub.Workspace = w; return sub }
	for _, sub := range []interop.Subject{alice(), ws("w1"), ws("w2"), bob()} {
		for _, wf := range []string{FixtureNoop, FixtureFailure, FixtureApproval, FixtureCancellable} {
			run := mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: wf, ContextID: "totals"})
			switch wf {
			case FixtureNoop:
				waitStatus(t, s, sub, run.ID, interop.StatusCompleted)
			case FixtureFailure:
				waitStatus(t, s, sub, run.ID, interop.StatusFailed)
			case FixtureApproval:
				waitStatus(t, s, sub, run.ID, interop.StatusWaitingApproval)
			case FixtureCancellable:
				if _, err := s.CancelRun(ctx, sub, run.ID, "totals"); err != nil {
					t.Fatal(err)
				}
				waitStatus(t, s, sub, run.ID, interop.StatusCancelled)
			}
		}
	}
	queries := []interop.ListRunsQuery{
		{},
		{Statuses: []interop.RunStatus{interop.StatusCompleted}},
		{Statuses: []interop.RunStatus{interop.StatusCancelled, interop.StatusWaitingApproval}},
		{Statuses: []interop.RunStatus{interop.StatusCancelling, interop.StatusRunning}},
		{WorkflowID: FixtureFailure},
		{WorkflowID: FixtureApproval, Statuses: []interop.RunStatus{interop.StatusWaitingApproval}},
		{ContextID: "totals", Statuses: []interop.RunStatus{interop.StatusFailed}},
	}
	for _, sub := range []interop.Subject{alice(), ws("w1"), carol()} {
		for _, q := range queries {
			page, err := s.ListRuns(ctx, sub, q)
			if err != nil {
				t.Fatal(err)
			}
			var want int
			statuses := []string{}
			for _, st := range q.Statuses {
				statuses = append(statuses, string(st))
			}
			err = s.pool.QueryRow(ctx, `SELECT count(*) FROM wopinterop_runs WHERE tenant = $1
				AND ($2 = '' OR workspace = $2) AND ($3 = '' OR workflow_id = $3) AND ($4 = '' OR context_id = $4)
				AND (cardinality($5::text[]) = 0 OR status = ANY($5))`,
				sub.Tenant, sub.Workspace, q.WorkflowID, q.ContextID, statuses).Scan(&want)
			if err != nil {
				t.Fatal(err)
			}
			if page.Total != want || len(page.Runs) != want {
				t.Errorf("%s/%s %+v: Total %d, %d runs; the table holds %d", sub.Tenant, sub.Workspace, q, page.Total, len(page.Runs), want)
			}
		}
	}
}
