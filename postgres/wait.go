package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/wopinterop/wopinterop/interop"
)

var _ interop.RunWaiter = (*Store)(nil)

// WaitRun returns the run, as GetRun reads it, once settled reports true
// for its status or the run is terminal, or ctx.Err() when ctx is done
// first; an unknown or unreadable run is ErrNotFound, as in GetRun. It is
// what a blocking A2A SendMessage or MCP tools/call waits on (OpenWOP
// interop map, a2a.operations and mcp.methods), so it reads the run's
// status alone — never its event log — and the whole run once, when the
// status settles. Between looks it waits like WatchRun, whichever replica
// changes the run: on this replica's wake-up for the run (a local write
// or a notification) or, when none comes, the poll interval.
func (s *Store) WaitRun(ctx context.Context, sub interop.Subject, runID string, settled func(interop.RunStatus) bool) (interop.Run, error) {
	if err := ctx.Err(); err != nil {
		return interop.Run{}, err
	}
	// Joined before the first look: a change committed after a look
	// closes the channel taken before it, so it is never missed.
	w := s.hub.join(runKey(runID))
	defer w.leave()
	for {
		ch := w.C()
		status, err := readStatus(ctx, s.pool, sub, runID)
		if err == nil && (status.Terminal() || settled(status)) {
			var run interop.Run
			run, err = readRun(ctx, s.pool, sub, runID)
			// The run may have moved on between the two reads; its
			// answer must be a settled one all the same.
			if err == nil && (run.Status.Terminal() || settled(run.Status)) {
				return run, nil
			}
		}
		switch {
		case ctx.Err() != nil:
			return interop.Run{}, ctx.Err()
		case err != nil:
			return interop.Run{}, err
		}
		if err := s.wait(ctx, ch); err != nil {
			return interop.Run{}, err
		}
	}
}

// readStatus reads the status of a run the Subject may read, scoped like
// readRun: anything else is errRunNotFound, exactly like an id never
// minted.
func readStatus(ctx context.Context, q querier, sub interop.Subject, runID string) (interop.RunStatus, error) {
	var status string
	err := q.QueryRow(ctx, `SELECT status FROM wopinterop_runs
		WHERE id = $1 AND tenant = $2 AND ($3 = '' OR workspace = $3)`, runID, sub.Tenant, sub.Workspace).Scan(&status)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return "", errRunNotFound
	case err != nil:
		return "", fmt.Errorf("postgres: read run status: %w", err)
	}
	return interop.RunStatus(status), nil
}
