package memstore

import (
	"context"
	"sort"

	"github.com/wopinterop/wopinterop/interop"
)

// Page sizes of ListRuns (OpenWOP interop map, a2a.operations).
const (
	DefaultPageSize = 50
	MaxPageSize     = 100
)

// runIndex keeps a tenant's runs in ListRuns order: status timestamp
// newest first, run id descending on ties. Keeping it sorted on every
// status change makes a list page a binary search plus a scan, with no
// sorting or allocation on the read path.
type runIndex struct{ recs []*runRecord }

// listKey is a position in ListRuns order.
type listKey struct {
	at int64 // StatusAt in Unix nanoseconds
	id string
}

func keyOf(rec *runRecord) listKey { return listKey{at: rec.run.StatusAt.UnixNano(), id: rec.id} }

// before reports whether a is listed before b.
func (a listKey) before(b listKey) bool {
	if a.at != b.at {
		return a.at > b.at
	}
	return a.id > b.id
}

// search returns the index of the first run not listed before k.
func (x *runIndex) search(k listKey) int {
	return sort.Search(len(x.recs), func(i int) bool { return !keyOf(x.recs[i]).before(k) })
}

func (x *runIndex) insert(rec *runRecord) {
	i := x.search(keyOf(rec))
	x.recs = append(x.recs, nil)
	copy(x.recs[i+1:], x.recs[i:])
	x.recs[i] = rec
}

func (x *runIndex) remove(rec *runRecord) {
	i := x.search(keyOf(rec))
	if i < len(x.recs) && x.recs[i] == rec {
		x.recs = append(x.recs[:i], x.recs[i+1:]...)
	}
}

// listFilter is a validated ListRunsQuery plus the reader's workspace.
type listFilter struct {
	workspace   string
	contextID   string
	workflowID  string
	statuses    uint16 // bit per status in AllStatuses order; 0 = any
	statusAfter int64  // Unix nanoseconds, inclusive; valid when hasAfter
	hasAfter    bool
}

// statusBit is st's bit in a status set, or 0 for an unknown status.
func statusBit(st interop.RunStatus) uint16 {
	switch st {
	case interop.StatusPending:
		return 1 << 0
	case interop.StatusRunning:
		return 1 << 1
	case interop.StatusPaused:
		return 1 << 2
	case interop.StatusWaitingApproval:
		return 1 << 3
	case interop.StatusWaitingInput:
		return 1 << 4
	case interop.StatusWaitingExternal:
		return 1 << 5
	case interop.StatusCompleted:
		return 1 << 6
	case interop.StatusFailed:
		return 1 << 7
	case interop.StatusCancelling:
		return 1 << 8
	case interop.StatusCancelled:
		return 1 << 9
	}
	return 0
}

func (f *listFilter) match(rec *runRecord) bool {
	r := &rec.run
	return (f.workspace == "" || r.Workspace == f.workspace) &&
		(f.contextID == "" || r.ContextID == f.contextID) &&
		(f.workflowID == "" || r.WorkflowID == f.workflowID) &&
		(f.statuses == 0 || f.statuses&statusBit(r.Status) != 0) &&
		(!f.hasAfter || r.StatusAt.UnixNano() >= f.statusAfter)
}

// ListRuns lists the runs GetRun would return to sub, filtered by q,
// newest status timestamp first with run id descending as tie-breaker
// (OpenWOP interop map, a2a.operations). PageSize 0 means DefaultPageSize; larger than MaxPageSize is
// clamped; negative is an *interop.InputError. The cursor is keyset: it
// names the last run's position, so pages stay consistent while runs are
// added (new runs sort before it). It is signed with a per-store key and
// bound to the Subject's tenant and workspace and to the filters; any other
// cursor is an *interop.InputError on "cursor".
func (s *Store) ListRuns(ctx context.Context, sub interop.Subject, q interop.ListRunsQuery) (interop.RunPage, error) {
	if err := ctx.Err(); err != nil {
		return interop.RunPage{}, err
	}
	size := q.PageSize
	switch {
	case size < 0:
		return interop.RunPage{}, &interop.InputError{Field: "pageSize", Reason: "must not be negative"}
	case size == 0:
		size = DefaultPageSize
	case size > MaxPageSize:
		size = MaxPageSize
	}
	f := listFilter{workspace: sub.Workspace, contextID: q.ContextID, workflowID: q.WorkflowID}
	for _, st := range q.Statuses {
		bit := statusBit(st)
		if bit == 0 {
			return interop.RunPage{}, &interop.InputError{Field: "statuses", Reason: "unknown run status"}
		}
		f.statuses |= bit
	}
	if !q.StatusAfter.IsZero() {
		f.statusAfter, f.hasAfter = q.StatusAfter.UnixNano(), true
	}
	scope := cursorScope{tenant: sub.Tenant, filter: &f}
	var start listKey
	hasStart := q.Cursor != ""
	if hasStart {
		var ok bool
		if start, ok = s.cursors.decode(scope, q.Cursor); !ok {
			return interop.RunPage{}, &interop.InputError{Field: "cursor", Reason: "not a cursor issued for this query"}
		}
	}

	t := s.tenant(sub.Tenant)
	if t == nil {
		return interop.RunPage{Runs: []interop.Run{}}, nil
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	recs := t.byStatusAt.recs
	from := 0
	if hasStart {
		// First run listed strictly after the cursor position.
		from = sort.Search(len(recs), func(i int) bool { return start.before(keyOf(recs[i])) })
	}
	// One pass: count every match (Total), collect the page, and note
	// whether a match follows it.
	var (
		total int
		buf   [MaxPageSize]*runRecord // the page stays on the stack
		page  = buf[:0]
		more  bool
	)
	for i, rec := range recs {
		if !f.match(rec) {
			continue
		}
		total++
		if i < from {
			continue
		}
		if len(page) < size {
			page = append(page, rec)
		} else {
			more = true
		}
	}
	out := interop.RunPage{Runs: cloneRecs(page), Total: total}
	if more {
		out.NextCursor = s.cursors.encode(scope, keyOf(page[len(page)-1]))
	}
	return out, nil
}
