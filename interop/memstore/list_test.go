package memstore

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wopinterop/wopinterop/interop"
)

// park is a workflow that runs until cancelled, so its run's status (and
// list position) never changes by itself.
func park(ctx context.Context, _ *RunContext) (json.RawMessage, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// parkedRuns creates n parked runs and returns their ids in creation order.
func parkedRuns(t *testing.T, s *Store, sub interop.Subject, n int, req interop.CreateRunRequest) []string {
	t.Helper()
	if req.WorkflowID == "" {
		req.WorkflowID = "park"
	}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = mustCreate(t, s, sub, req).ID
	}
	return ids
}

// listAll pages through a query and returns the ids in list order.
func listAll(t *testing.T, s *Store, sub interop.Subject, q interop.ListRunsQuery) []string {
	t.Helper()
	var ids []string
	for range 1000 {
		page, err := s.ListRuns(testCtx(t), sub, q)
		if err != nil {
			t.Fatalf("ListRuns: %v", err)
		}
		for _, r := range page.Runs {
			ids = append(ids, r.ID)
		}
		if page.NextCursor == "" {
			return ids
		}
		q.Cursor = page.NextCursor
	}
	t.Fatal("paging never ended")
	return nil
}

func TestListRunsOrderAndPaging(t *testing.T) {
	s := newStore(t, WithClock(newStepClock(time.Millisecond).Now))
	register(t, s, tenantA, "park", park)
	sub := subject(tenantA, "alice")
	created := parkedRuns(t, s, sub, 120, interop.CreateRunRequest{})
	newestFirst := slices.Clone(created)
	slices.Reverse(newestFirst)

	var got []string
	q := interop.ListRunsQuery{}
	for i, wantLen := range []int{50, 50, 20} {
		page, err := s.ListRuns(testCtx(t), sub, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Runs) != wantLen || page.Total != 120 {
			t.Fatalf("page %d: %d runs, total %d; want %d, 120", i, len(page.Runs), page.Total, wantLen)
		}
		if (page.NextCursor == "") != (i == 2) {
			t.Fatalf("page %d: next cursor %q", i, page.NextCursor)
		}
		for j := 1; j < len(page.Runs); j++ {
			if page.Runs[j-1].StatusAt.Before(page.Runs[j].StatusAt) {
				t.Fatalf("page %d not newest first at %d", i, j)
			}
		}
		for _, r := range page.Runs {
			got = append(got, r.ID)
		}
		q.Cursor = page.NextCursor
	}
	if diff := cmp.Diff(newestFirst, got); diff != "" {
		t.Fatalf("list order (-want +got):\n%s", diff)
	}
}

func TestListRunsTiesOrderByIDDescending(t *testing.T) {
	s := newStore(t, WithClock(newStepClock(0).Now)) // every timestamp equal
	register(t, s, tenantA, "park", park)
	sub := subject(tenantA, "alice")
	created := parkedRuns(t, s, sub, 23, interop.CreateRunRequest{})
	want := slices.Clone(created)
	slices.Sort(want)
	slices.Reverse(want)
	got := listAll(t, s, sub, interop.ListRunsQuery{PageSize: 4})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("tie order (-want +got):\n%s", diff)
	}
}

func TestListRunsCursorStableWhileRunsAreAdded(t *testing.T) {
	s := newStore(t, WithClock(newStepClock(time.Millisecond).Now))
	register(t, s, tenantA, "park", park)
	sub := subject(tenantA, "alice")
	created := parkedRuns(t, s, sub, 30, interop.CreateRunRequest{})
	want := slices.Clone(created)
	slices.Reverse(want)

	first, err := s.ListRuns(testCtx(t), sub, interop.ListRunsQuery{PageSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	added := parkedRuns(t, s, sub, 5, interop.CreateRunRequest{}) // newer than everything listed
	got := []string{}
	for _, r := range first.Runs {
		got = append(got, r.ID)
	}
	got = append(got, listAll(t, s, sub, interop.ListRunsQuery{PageSize: 10, Cursor: first.NextCursor})...)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("paging across inserts (-want +got):\n%s", diff)
	}
	page, _ := s.ListRuns(testCtx(t), sub, interop.ListRunsQuery{PageSize: 10, Cursor: first.NextCursor})
	if page.Total != 35 {
		t.Fatalf("Total = %d, want 35 (it counts the current matches)", page.Total)
	}
	fresh := listAll(t, s, sub, interop.ListRunsQuery{})
	if fresh[0] != added[4] || len(fresh) != 35 {
		t.Fatalf("a new listing starts with %s (len %d), want the newest run %s", fresh[0], len(fresh), added[4])
	}
}

func TestListRunsNeverRepeatsARunWhileStatusesChange(t *testing.T) {
	s := newStore(t, WithClock(newStepClock(time.Millisecond).Now))
	register(t, s, tenantA, "park", park)
	sub := subject(tenantA, "alice")
	created := parkedRuns(t, s, sub, 20, interop.CreateRunRequest{})
	first, _ := s.ListRuns(testCtx(t), sub, interop.ListRunsQuery{PageSize: 5})
	// Runs already listed and runs not yet listed change status (and move
	// to the head of the order).
	for _, id := range []string{first.Runs[0].ID, created[3]} {
		if _, err := s.CancelRun(testCtx(t), sub, id, ""); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	for _, r := range first.Runs {
		seen[r.ID] = true
	}
	for _, id := range listAll(t, s, sub, interop.ListRunsQuery{PageSize: 5, Cursor: first.NextCursor}) {
		if seen[id] {
			t.Fatalf("run %s listed twice", id)
		}
		seen[id] = true
	}
	if len(seen) != 19 { // created[3] moved ahead of the cursor
		t.Fatalf("saw %d distinct runs, want 19", len(seen))
	}
}

func TestListRunsFilters(t *testing.T) {
	clock := newStepClock(time.Millisecond)
	s := newStore(t, WithClock(clock.Now))
	register(t, s, tenantA, "park", park)
	alice := subject(tenantA, "alice")
	ws1 := inWorkspace(alice, "ws-1")

	ctxRuns := parkedRuns(t, s, alice, 3, interop.CreateRunRequest{ContextID: "ctx-1"})
	wsRuns := parkedRuns(t, s, ws1, 2, interop.CreateRunRequest{})
	done := mustCreate(t, s, alice, interop.CreateRunRequest{WorkflowID: FixtureNoop})
	events(t, s, alice, done.ID)
	failed := mustCreate(t, s, alice, interop.CreateRunRequest{WorkflowID: FixtureFailure, ContextID: "ctx-1"})
	events(t, s, alice, failed.ID)
	doneRun, _ := s.GetRun(testCtx(t), alice, done.ID)

	newestFirst := func(ids ...string) []string {
		out := slices.Clone(ids)
		slices.SortFunc(out, func(a, b string) int {
			ra, _ := s.GetRun(testCtx(t), alice, a)
			rb, _ := s.GetRun(testCtx(t), alice, b)
			return rb.StatusAt.Compare(ra.StatusAt)
		})
		return out
	}
	tests := []struct {
		name string
		sub  interop.Subject
		q    interop.ListRunsQuery
		want []string
	}{
		{name: "context", sub: alice, q: interop.ListRunsQuery{ContextID: "ctx-1"}, want: newestFirst(append(slices.Clone(ctxRuns), failed.ID)...)},
		{name: "unknown context", sub: alice, q: interop.ListRunsQuery{ContextID: "ctx-2"}, want: nil},
		{name: "one status", sub: alice, q: interop.ListRunsQuery{Statuses: []interop.RunStatus{interop.StatusCompleted}}, want: []string{done.ID}},
		{name: "two statuses", sub: alice, q: interop.ListRunsQuery{Statuses: []interop.RunStatus{interop.StatusFailed, interop.StatusCompleted}}, want: newestFirst(done.ID, failed.ID)},
		{name: "status and context", sub: alice, q: interop.ListRunsQuery{ContextID: "ctx-1", Statuses: []interop.RunStatus{interop.StatusRunning}}, want: newestFirst(ctxRuns...)},
		{name: "workflow", sub: alice, q: interop.ListRunsQuery{WorkflowID: FixtureFailure}, want: []string{failed.ID}},
		{name: "status after is inclusive", sub: alice, q: interop.ListRunsQuery{StatusAfter: doneRun.StatusAt}, want: newestFirst(done.ID, failed.ID)},
		{name: "workspace subject", sub: ws1, q: interop.ListRunsQuery{}, want: newestFirst(wsRuns...)},
		{name: "workspace subject and context", sub: ws1, q: interop.ListRunsQuery{ContextID: "ctx-1"}, want: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := listAll(t, s, tc.sub, tc.q)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("ids (-want +got):\n%s", diff)
			}
			page, _ := s.ListRuns(testCtx(t), tc.sub, tc.q)
			if page.Total != len(tc.want) {
				t.Fatalf("Total = %d, want %d", page.Total, len(tc.want))
			}
		})
	}
}

func TestListRunsPageSize(t *testing.T) {
	s := newStore(t)
	register(t, s, tenantA, "park", park)
	sub := subject(tenantA, "alice")
	parkedRuns(t, s, sub, 130, interop.CreateRunRequest{})
	tests := []struct{ size, want int }{{0, DefaultPageSize}, {1, 1}, {100, 100}, {101, MaxPageSize}, {5000, MaxPageSize}}
	for _, tc := range tests {
		page, err := s.ListRuns(testCtx(t), sub, interop.ListRunsQuery{PageSize: tc.size})
		if err != nil || len(page.Runs) != tc.want {
			t.Fatalf("PageSize %d: %d runs (err %v), want %d", tc.size, len(page.Runs), err, tc.want)
		}
	}
	_, err := s.ListRuns(testCtx(t), sub, interop.ListRunsQuery{PageSize: -1})
	wantInputError(t, err, "pageSize")
	_, err = s.ListRuns(testCtx(t), sub, interop.ListRunsQuery{Statuses: []interop.RunStatus{"done"}})
	wantInputError(t, err, "statuses")
}

func TestListRunsRefusesCursorsItDidNotIssue(t *testing.T) {
	s := newStore(t)
	register(t, s, tenantA, "park", park)
	alice := subject(tenantA, "alice")
	parkedRuns(t, s, alice, 5, interop.CreateRunRequest{})
	page, err := s.ListRuns(testCtx(t), alice, interop.ListRunsQuery{PageSize: 2})
	if err != nil || page.NextCursor == "" {
		t.Fatalf("no cursor: %v", err)
	}
	cur := page.NextCursor

	other := New()
	defer other.Close()
	if err := other.Register(tenantA, WorkflowDef{Workflow: interop.Workflow{ID: "park"}, Run: park}); err != nil {
		t.Fatal(err)
	}
	parkedRuns(t, other, alice, 5, interop.CreateRunRequest{})
	otherPage, _ := other.ListRuns(testCtx(t), alice, interop.ListRunsQuery{PageSize: 2})

	flip := func(s string, i int) string {
		b := []byte(s)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		return string(b)
	}
	tests := []struct {
		name   string
		sub    interop.Subject
		q      interop.ListRunsQuery
		cursor string
	}{
		{name: "first byte changed", sub: alice, q: interop.ListRunsQuery{PageSize: 2}, cursor: flip(cur, 0)},
		{name: "middle byte changed", sub: alice, q: interop.ListRunsQuery{PageSize: 2}, cursor: flip(cur, len(cur)/2)},
		{name: "last byte changed", sub: alice, q: interop.ListRunsQuery{PageSize: 2}, cursor: flip(cur, len(cur)-1)},
		{name: "truncated", sub: alice, q: interop.ListRunsQuery{PageSize: 2}, cursor: cur[:len(cur)-1]},
		{name: "extended", sub: alice, q: interop.ListRunsQuery{PageSize: 2}, cursor: cur + "A"},
		{name: "newline added", sub: alice, q: interop.ListRunsQuery{PageSize: 2}, cursor: cur[:4] + "\n" + cur[4:]},
		{name: "padded", sub: alice, q: interop.ListRunsQuery{PageSize: 2}, cursor: cur + "="},
		{name: "not base64", sub: alice, q: interop.ListRunsQuery{PageSize: 2}, cursor: "%%%%"},
		{name: "a run id", sub: alice, q: interop.ListRunsQuery{PageSize: 2}, cursor: page.Runs[0].ID},
		{name: "huge", sub: alice, q: interop.ListRunsQuery{PageSize: 2}, cursor: strings.Repeat("A", 5000)},
		{name: "other store", sub: alice, q: interop.ListRunsQuery{PageSize: 2}, cursor: otherPage.NextCursor},
		{name: "other filter", sub: alice, q: interop.ListRunsQuery{PageSize: 2, Statuses: []interop.RunStatus{interop.StatusRunning}}, cursor: cur},
		{name: "other context filter", sub: alice, q: interop.ListRunsQuery{PageSize: 2, ContextID: "x"}, cursor: cur},
		{name: "other tenant", sub: subject(tenantB, "alice"), q: interop.ListRunsQuery{PageSize: 2}, cursor: cur},
		{name: "other workspace", sub: inWorkspace(alice, "ws-1"), q: interop.ListRunsQuery{PageSize: 2}, cursor: cur},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := tc.q
			q.Cursor = tc.cursor
			_, err := s.ListRuns(testCtx(t), tc.sub, q)
			wantInputError(t, err, "cursor")
		})
	}
	// The genuine cursor still works, with any page size.
	if _, err := s.ListRuns(testCtx(t), alice, interop.ListRunsQuery{PageSize: 3, Cursor: cur}); err != nil {
		t.Fatalf("genuine cursor refused: %v", err)
	}
}
