package memstore

import (
	"context"

	"github.com/wopinterop/wopinterop/interop"
)

// Page sizes of ListRuns (OpenWOP interop map, a2a.operations).
const (
	DefaultPageSize = 50
	MaxPageSize     = 100
)

// listFilter is a validated ListRunsQuery plus the reader's workspace.
type listFilter struct {
	workspace   string
	contextID   string
	workflowID  string
	statuses    uint16 // bit per status in AllStatuses order; 0 = any
	statusAfter int64  // Unix nanoseconds, inclusive; valid when hasAfter
	hasAfter    bool
}

// numStatuses is the number of run statuses (interop.AllStatuses).
const numStatuses = 10

// statusIndex is st's position in AllStatuses order, which is also its bit
// in a status set; an unknown status is -1.
func statusIndex(st interop.RunStatus) int {
	switch st {
	case interop.StatusPending:
		return 0
	case interop.StatusRunning:
		return 1
	case interop.StatusPaused:
		return 2
	case interop.StatusWaitingApproval:
		return 3
	case interop.StatusWaitingInput:
		return 4
	case interop.StatusWaitingExternal:
		return 5
	case interop.StatusCompleted:
		return 6
	case interop.StatusFailed:
		return 7
	case interop.StatusCancelling:
		return 8
	case interop.StatusCancelled:
		return 9
	}
	return -1
}

// statusBit is st's bit in a status set, or 0 for an unknown status.
func statusBit(st interop.RunStatus) uint16 {
	if i := statusIndex(st); i >= 0 {
		return 1 << i
	}
	return 0
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
	var start *listKey
	if q.Cursor != "" {
		k, ok := s.cursors.decode(scope, q.Cursor)
		if !ok {
			return interop.RunPage{}, &interop.InputError{Field: "cursor", Reason: "not a cursor issued for this query"}
		}
		start = &k
	}

	t := s.tenant(sub.Tenant)
	if t == nil {
		return interop.RunPage{Runs: []interop.Run{}}, nil
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	// One more than the page tells whether a run follows it.
	var buf pageBuffers
	entries, total := t.index.page(&f, start, size+1, &buf)
	more := len(entries) > size
	if more {
		entries = entries[:size]
	}
	out := interop.RunPage{Runs: cloneEntries(entries), Total: total}
	if more {
		out.NextCursor = s.cursors.encode(scope, entries[len(entries)-1].key)
	}
	return out, nil
}
