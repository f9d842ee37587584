package interoptest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/wopinterop/wopinterop/interop"
)

// listOrder is the contract's order: status time descending, then run id
// descending.
func listOrder(x, y interop.Run) int {
	if c := y.StatusAt.Compare(x.StatusAt); c != 0 {
		return c
	}
	return cmp.Compare(y.ID, x.ID)
}

func checkListOrderAndFilters(ctx context.Context, k *kit) error {
	a, b := k.h.TenantA, k.h.TenantB
	contextID := unique("ctx")

	// Interleave kinds so that status order and creation order differ by
	// workflow.
	var runs []interop.Run
	for i := range 5 {
		if i%2 == 1 {
			run, _, err := k.startSuspended(ctx, a, contextID)
			if err != nil {
				return err
			}
			runs = append(runs, run)
			continue
		}
		done, err := k.startCompleted(ctx, a, contextID, 1)
		if err != nil {
			return err
		}
		runs = append(runs, done...)
	}
	// Noise the filters must leave out: the same caller in another
	// contextId, and another tenant in the same contextId.
	if _, err := k.startCompleted(ctx, a, unique("ctx"), 1); err != nil {
		return err
	}
	foreign, err := k.startCompleted(ctx, b, contextID, 1)
	if err != nil {
		return err
	}

	ordered := slices.Clone(runs)
	slices.SortFunc(ordered, listOrder)

	full, err := k.s.ListRuns(ctx, a, interop.ListRunsQuery{ContextID: contextID, PageSize: 100})
	if err != nil {
		return fmt.Errorf("ListRuns(contextId): %w", err)
	}
	for i := 1; i < len(full.Runs); i++ {
		if listOrder(full.Runs[i-1], full.Runs[i]) > 0 {
			x, y := full.Runs[i-1], full.Runs[i]
			return fmt.Errorf("ListRuns order: %s (status at %s) before %s (status at %s); want status time descending, then id descending",
				x.ID, x.StatusAt.Format(time.RFC3339Nano), y.ID, y.StatusAt.Format(time.RFC3339Nano))
		}
	}
	if err := samePage("ListRuns(contextId)", full, ordered, len(ordered)); err != nil {
		return err
	}
	byID := map[string]interop.Run{}
	for _, r := range runs {
		byID[r.ID] = r
	}
	for _, r := range full.Runs {
		if want := byID[r.ID]; r.Status != want.Status || !r.StatusAt.Equal(want.StatusAt) {
			return fmt.Errorf("ListRuns shows run %s at %s/%s but GetRun at %s/%s", r.ID, r.Status, r.StatusAt, want.Status, want.StatusAt)
		}
	}

	pivot := ordered[len(ordered)/2].StatusAt
	filters := []struct {
		name string
		q    interop.ListRunsQuery
		keep func(interop.Run) bool
	}{
		{"statuses=[waiting-approval]", interop.ListRunsQuery{Statuses: []interop.RunStatus{interop.StatusWaitingApproval}},
			func(r interop.Run) bool { return r.Status == interop.StatusWaitingApproval }},
		{"statuses=[completed]", interop.ListRunsQuery{Statuses: []interop.RunStatus{interop.StatusCompleted}},
			func(r interop.Run) bool { return r.Status == interop.StatusCompleted }},
		{"statuses=[completed,waiting-approval]", interop.ListRunsQuery{Statuses: []interop.RunStatus{interop.StatusCompleted, interop.StatusWaitingApproval}},
			func(interop.Run) bool { return true }},
		{"statuses=[cancelled]", interop.ListRunsQuery{Statuses: []interop.RunStatus{interop.StatusCancelled}},
			func(interop.Run) bool { return false }},
		{"workflow=Approval", interop.ListRunsQuery{WorkflowID: k.h.Approval},
			func(r interop.Run) bool { return r.WorkflowID == k.h.Approval }},
		{"statusAfter=middle run's status time (inclusive)", interop.ListRunsQuery{StatusAfter: pivot},
			func(r interop.Run) bool { return !r.StatusAt.Before(pivot) }},
		{"statusAfter=just after the middle run", interop.ListRunsQuery{StatusAfter: pivot.Add(time.Nanosecond)},
			func(r interop.Run) bool { return r.StatusAt.After(pivot) }},
		{"statuses=[completed] and statusAfter=middle", interop.ListRunsQuery{Statuses: []interop.RunStatus{interop.StatusCompleted}, StatusAfter: pivot},
			func(r interop.Run) bool { return r.Status == interop.StatusCompleted && !r.StatusAt.Before(pivot) }},
	}
	for _, f := range filters {
		q := f.q
		q.ContextID, q.PageSize = contextID, 100
		page, err := k.s.ListRuns(ctx, a, q)
		if err != nil {
			return fmt.Errorf("ListRuns(%s): %w", f.name, err)
		}
		want := slices.DeleteFunc(slices.Clone(ordered), func(r interop.Run) bool { return !f.keep(r) })
		if err := samePage("ListRuns("+f.name+")", page, want, len(want)); err != nil {
			return err
		}
	}

	small, err := k.s.ListRuns(ctx, a, interop.ListRunsQuery{ContextID: contextID, PageSize: 2})
	if err != nil {
		return fmt.Errorf("ListRuns(pageSize=2): %w", err)
	}
	if err := samePage("ListRuns(pageSize=2)", small, ordered[:2], len(ordered)); err != nil {
		return err
	}
	if small.NextCursor == "" {
		return fmt.Errorf("ListRuns(pageSize=2) of %d runs has no next cursor", len(ordered))
	}

	theirs, err := k.s.ListRuns(ctx, b, interop.ListRunsQuery{ContextID: contextID, PageSize: 100})
	if err != nil {
		return fmt.Errorf("ListRuns(contextId) as the other tenant: %w", err)
	}
	return samePage("ListRuns(shared contextId) as the other tenant", theirs, foreign, 1)
}

// samePage compares a page with the runs expected on it and the expected
// Total.
func samePage(op string, got interop.RunPage, want []interop.Run, total int) error {
	if g, w := ids(got.Runs), ids(want); !slices.Equal(g, w) {
		return fmt.Errorf("%s = %v, want %v", op, g, w)
	}
	if got.Total != total {
		return fmt.Errorf("%s: Total = %d, want %d", op, got.Total, total)
	}
	if len(got.Runs) == total && got.NextCursor != "" {
		return fmt.Errorf("%s: last page has NextCursor %q, want empty", op, got.NextCursor)
	}
	return nil
}

func checkListCursorStability(ctx context.Context, k *kit) error {
	a, b := k.h.TenantA, k.h.TenantB
	contextID := unique("ctx")
	const n, size = 7, 2
	if _, err := k.startCompleted(ctx, a, contextID, n); err != nil {
		return err
	}
	if _, err := k.startCompleted(ctx, a, unique("ctx"), 1); err != nil {
		return err
	}
	full, err := k.s.ListRuns(ctx, a, interop.ListRunsQuery{ContextID: contextID, PageSize: 100})
	if err != nil {
		return fmt.Errorf("ListRuns(contextId): %w", err)
	}
	if len(full.Runs) != n {
		return fmt.Errorf("ListRuns(contextId) = %d runs, want the %d created", len(full.Runs), n)
	}
	reference := ids(full.Runs)

	// Quiet paging visits exactly the reference, in order.
	q := interop.ListRunsQuery{ContextID: contextID, PageSize: size}
	var visited []string
	var firstCursor string
	for page := 0; ; page++ {
		if page > n {
			return fmt.Errorf("paging %d runs by %d took more than %d pages", n, size, n)
		}
		p, err := k.s.ListRuns(ctx, a, q)
		if err != nil {
			return fmt.Errorf("ListRuns page %d: %w", page, err)
		}
		if len(p.Runs) > size {
			return fmt.Errorf("ListRuns page %d has %d runs, more than pageSize %d", page, len(p.Runs), size)
		}
		if p.Total != n {
			return fmt.Errorf("ListRuns page %d: Total = %d, want %d", page, p.Total, n)
		}
		visited = append(visited, ids(p.Runs)...)
		if page == 0 {
			firstCursor = p.NextCursor
		}
		if p.NextCursor == "" {
			break
		}
		if len(p.Runs) == 0 {
			return fmt.Errorf("ListRuns page %d is empty but has a next cursor", page)
		}
		q.Cursor = p.NextCursor
	}
	if !slices.Equal(visited, reference) {
		return fmt.Errorf("paging by %d visited %v, want each run once in list order %v", size, visited, reference)
	}

	// Runs created between pages: no older run is repeated or skipped.
	q = interop.ListRunsQuery{ContextID: contextID, PageSize: size}
	first, err := k.s.ListRuns(ctx, a, q)
	if err != nil {
		return fmt.Errorf("ListRuns first page: %w", err)
	}
	added, err := k.startCompleted(ctx, a, contextID, 3)
	if err != nil {
		return err
	}
	visited = ids(first.Runs)
	q.Cursor = first.NextCursor
	for page := 1; q.Cursor != ""; page++ {
		if page > 2*n {
			return fmt.Errorf("paging while runs were added took more than %d pages", 2*n)
		}
		p, err := k.s.ListRuns(ctx, a, q)
		if err != nil {
			return fmt.Errorf("ListRuns page %d after runs were added: %w", page, err)
		}
		visited = append(visited, ids(p.Runs)...)
		q.Cursor = p.NextCursor
	}
	newIDs := ids(added)
	older := slices.DeleteFunc(slices.Clone(visited), func(id string) bool { return slices.Contains(newIDs, id) })
	if !slices.Equal(older, reference) {
		return fmt.Errorf("paging while %d runs were added visited the older runs as %v, want each once in order %v", len(added), older, reference)
	}
	for i, id := range visited {
		if slices.Contains(visited[:i], id) {
			return fmt.Errorf("paging while runs were added visited %s twice", id)
		}
	}

	// Cursors the store did not issue to this caller are refused.
	if firstCursor == "" {
		return errors.New("ListRuns(pageSize=2) of 7 runs returned no next cursor")
	}
	bad := []struct {
		what   string
		s      interop.Subject
		cursor string
	}{
		{"a made-up cursor", a, unique("not-a-cursor")},
		{"a truncated cursor", a, firstCursor[:len(firstCursor)/2]},
		{"a cursor with bytes appended", a, firstCursor + "~!~"},
		{"another tenant's cursor", b, firstCursor},
	}
	for _, c := range bad {
		if c.cursor == "" {
			continue // a one-byte cursor has no truncation; the other cases still apply
		}
		_, err := k.s.ListRuns(ctx, c.s, interop.ListRunsQuery{ContextID: contextID, PageSize: size, Cursor: c.cursor})
		if err == nil {
			return fmt.Errorf("ListRuns with %s succeeded, want ErrInvalidInput", c.what)
		}
		if !errors.Is(err, interop.ErrInvalidInput) {
			return fmt.Errorf("ListRuns with %s = %v, want ErrInvalidInput", c.what, err)
		}
	}
	return nil
}
