package a2a

// GetTask, ListTasks, CancelTask and SubscribeToTask over the host's
// RunStore (OpenWOP interop map, a2a.operations), and what every
// task-addressed operation shares: the read gate and the mapping of store
// errors. Unreadable is unknown (OpenWOP interop.md §Isolation).

import (
	"context"
	"errors"
	"iter"
	"slices"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/internal/readgate"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/isolation"
)

// Page sizes of ListTasks (OpenWOP interop map, a2a.operations).
const (
	defaultPageSize = 50
	maxPageSize     = 100
)

// getTask projects the run; historyLength truncates the response only.
func (s *Server) getTask(ctx context.Context, c *call, req *wire.GetTaskRequest) (*wire.Task, error) {
	if req.HistoryLength != nil && *req.HistoryLength < 0 {
		return nil, s.errs.invalidParams("historyLength", "historyLength must not be negative")
	}
	run, err := s.readRun(ctx, c, string(req.ID))
	if err != nil {
		return nil, err
	}
	return s.projectOrFail(ctx, &run, taskView{history: req.HistoryLength, artifacts: true})
}

// listTasks is listRuns for the same Subject with the contextId, status and
// statusTimestampAfter filters, newest first, pageSize 1–100 default 50,
// nextPageToken always present, never a null list. With a tenant that is
// one of the caller's routing values (see routingHint; any other is
// ignored) it lists only the runs of the workflows routed to that agent,
// started through any surface: a filter on the one run store, not a record
// of its own.
func (s *Server) listTasks(ctx context.Context, c *call, req *wire.ListTasksRequest) (*wire.ListTasksResponse, error) {
	if err := s.routingHint(ctx, c, req.Tenant); err != nil {
		return nil, err
	}
	q, keep, err := s.listQuery(c, req)
	if err != nil {
		return nil, err
	}
	var page interop.RunPage
	if keep != nil {
		page, err = s.listFiltered(ctx, c, q, keep)
	} else {
		page, err = s.cfg.Store.ListRuns(ctx, c.subject, q)
	}
	if err != nil {
		return nil, s.listRefusal(ctx, err)
	}
	view := taskView{history: req.HistoryLength, artifacts: req.IncludeArtifacts}
	boxes := make([]taskBox, len(page.Runs))
	out := &wire.ListTasksResponse{
		Tasks:         make([]*wire.Task, len(page.Runs)),
		TotalSize:     page.Total,
		PageSize:      q.PageSize,
		NextPageToken: page.NextCursor,
	}
	for i := range page.Runs {
		if err := s.projectInto(&boxes[i], &page.Runs[i], view, nil); err != nil {
			return nil, s.storeFault(ctx, "project", err)
		}
		out.Tasks[i] = &boxes[i].task
	}
	return out, nil
}

// listQuery is the store query of a ListTasks request and, when the store
// cannot express all of it, keep, which decides run by run what the query
// cannot: a status that a credential override may project elsewhere, an
// agent with more than one workflow.
func (s *Server) listQuery(c *call, req *wire.ListTasksRequest) (q interop.ListRunsQuery, keep func(*interop.Run) bool, err error) {
	size := req.PageSize
	switch {
	case size == 0:
		size = defaultPageSize
	case size < 1 || size > maxPageSize:
		return q, nil, s.errs.invalidParams("pageSize", "pageSize must be between 1 and 100")
	}
	if req.HistoryLength != nil && *req.HistoryLength < 0 {
		return q, nil, s.errs.invalidParams("historyLength", "historyLength must not be negative")
	}
	q = interop.ListRunsQuery{ContextID: req.ContextID, PageSize: size, Cursor: req.PageToken}
	if req.StatusTimestampAfter != nil {
		q.StatusAfter = *req.StatusTimestampAfter
	}
	var status func(*interop.Run) bool
	if want := req.Status; want != wire.TaskStateUnspecified && want != statusUnrecognized {
		statuses, exact, ok := s.statusFilter(want)
		if !ok {
			return q, nil, s.errs.invalidParams("status", "status is not a task state this host reports")
		}
		q.Statuses = statuses
		if exact {
			status = func(r *interop.Run) bool { return s.projectsTo(r, want) }
		}
	}
	var routed func(*interop.Run) bool
	if c.agent != nil {
		workflows := c.agent.Workflows
		if len(workflows) == 1 {
			q.WorkflowID = workflows[0]
		} else {
			routed = func(r *interop.Run) bool { return slices.Contains(workflows, r.WorkflowID) }
		}
	}
	switch {
	case status != nil && routed != nil:
		keep = func(r *interop.Run) bool { return status(r) && routed(r) }
	case status != nil:
		keep = status
	default:
		keep = routed
	}
	return q, keep, nil
}

// statusUnrecognized is what @a2a-js/sdk 1.3.0 sends over JSON-RPC as the
// ListTasks status when the caller set none (its taskStateToJSON of an
// absent enum). It is no task state, so it filters nothing.
const statusUnrecognized wire.TaskState = "UNRECOGNIZED"

// statusFilter is the inverse of the forward projection for one wire
// state: the run statuses any of whose rows emits it, and whether a run in
// those statuses may still project to another state (the credential
// override), so that each run's projection must decide. A state no row
// emits (TASK_STATE_REJECTED, unknown values) is not ok.
func (s *Server) statusFilter(want wire.TaskState) (statuses []interop.RunStatus, exact, ok bool) {
	rows := s.m.TaskStateRows()
	for _, r := range rows {
		if r.Wire == want && !slices.Contains(statuses, r.RunStatus) {
			statuses = append(statuses, r.RunStatus)
		}
	}
	for _, r := range rows {
		if r.Wire != want && slices.Contains(statuses, r.RunStatus) {
			exact = true
		}
	}
	return statuses, exact, len(statuses) > 0
}

// listFiltered pages a filter the store cannot express exactly: it keeps
// the runs keep accepts, reading store pages until the page is full, so the
// token it returns is always the store's own cursor, and only when a
// matching run follows (the last page's token is ""). The total counts
// every matching run, which costs a pass over the query; only the
// INPUT_REQUIRED and AUTH_REQUIRED filters and an agent with more than one
// workflow take this path.
func (s *Server) listFiltered(ctx context.Context, c *call, q interop.ListRunsQuery, keep func(*interop.Run) bool) (interop.RunPage, error) {
	var out interop.RunPage
	size := q.PageSize
	out.Runs = make([]interop.Run, 0, size)
	for {
		q.PageSize = size - len(out.Runs)
		page, err := s.cfg.Store.ListRuns(ctx, c.subject, q)
		if err != nil {
			return interop.RunPage{}, err
		}
		for i := range page.Runs {
			if keep(&page.Runs[i]) {
				out.Runs = append(out.Runs, page.Runs[i])
			}
		}
		out.NextCursor = page.NextCursor
		if len(out.Runs) == size || out.NextCursor == "" {
			break
		}
		q.Cursor = out.NextCursor
	}
	var err error
	if out.NextCursor, err = s.matchesFrom(ctx, c, q, out.NextCursor, keep); err != nil {
		return interop.RunPage{}, err
	}
	q.Cursor = ""
	out.Total, err = s.countMatching(ctx, c, q, keep)
	return out, err
}

// matchesFrom returns cursor when a run keep accepts lies at it or after
// it, and "" when none does: the last page has no token.
func (s *Server) matchesFrom(ctx context.Context, c *call, q interop.ListRunsQuery, cursor string, keep func(*interop.Run) bool) (string, error) {
	for ahead := cursor; ahead != ""; {
		q.Cursor, q.PageSize = ahead, maxPageSize
		page, err := s.cfg.Store.ListRuns(ctx, c.subject, q)
		if err != nil {
			return "", err
		}
		for i := range page.Runs {
			if keep(&page.Runs[i]) {
				return cursor, nil
			}
		}
		ahead = page.NextCursor
	}
	return "", nil
}

// countMatching counts the runs of q, from its cursor on, that keep
// accepts.
func (s *Server) countMatching(ctx context.Context, c *call, q interop.ListRunsQuery, keep func(*interop.Run) bool) (int, error) {
	total := 0
	q.PageSize = maxPageSize
	for {
		page, err := s.cfg.Store.ListRuns(ctx, c.subject, q)
		if err != nil {
			return 0, err
		}
		for i := range page.Runs {
			if keep(&page.Runs[i]) {
				total++
			}
		}
		if page.NextCursor == "" {
			return total, nil
		}
		q.Cursor = page.NextCursor
	}
}

func (s *Server) projectsTo(run *interop.Run, want wire.TaskState) bool {
	state, _, _, err := s.stateOf(run)
	return err == nil && state == want
}

// listRefusal maps a ListRuns error: a cursor the store did not issue is
// a bad pageToken.
func (s *Server) listRefusal(ctx context.Context, err error) error {
	var inputErr *interop.InputError
	switch {
	case errors.As(err, &inputErr) && inputErr.Field == "cursor":
		return s.errs.invalidParams("pageToken", "pageToken is not a token this server issued for this query")
	case errors.As(err, &inputErr):
		return s.errs.invalidParams(inputErr.Field, "the list query was refused: "+inputErr.Reason)
	case errors.Is(err, interop.ErrInvalidInput):
		return s.errs.invalidParams("", "the list query was refused")
	}
	return s.storeFault(ctx, "ListRuns", err)
}

// cancelTask answers WORKING while cancelling, CANCELED once cancelled, and
// -32002 on a terminal run.
func (s *Server) cancelTask(ctx context.Context, c *call, req *wire.CancelTaskRequest) (*wire.Task, error) {
	id, err := s.taskID(c, string(req.ID))
	if err != nil {
		return nil, err
	}
	run, err := s.cfg.Store.CancelRun(ctx, c.subject, id, cancelReason)
	if err != nil {
		if errors.Is(err, interop.ErrRunTerminal) {
			return nil, s.errs.notCancelable()
		}
		return nil, s.taskRefusal(ctx, "CancelRun", err)
	}
	return s.projectOrFail(ctx, &run, taskView{artifacts: true})
}

// subscribeToTask is the read-only re-attachment (requires a2a.streaming
// and a2a.durableTasks): the current Task first, then the run's changes; a
// terminal task is -32004. A refusal is the stream's only element.
func (s *Server) subscribeToTask(ctx context.Context, c *call, req *wire.SubscribeToTaskRequest) iter.Seq2[wire.Event, error] {
	return lazily(func() (iter.Seq2[wire.Event, error], error) {
		run, err := s.readRun(ctx, c, string(req.ID))
		if err != nil {
			return nil, err
		}
		if run.Status.Terminal() {
			return nil, s.errs.unsupported("the task is in a terminal state; read it with GetTask")
		}
		return s.follow(ctx, c, run, taskView{artifacts: true}, false)
	})
}

// taskID reads a task id as a client sent it and applies the read gate.
// Malformed, unknown and another tenant's ids all get the one not-found
// answer (OpenWOP RFC 0211 §D; interop.md §Isolation).
func (s *Server) taskID(c *call, raw string) (string, error) {
	id, err := isolation.ParseID(raw)
	if err != nil || readgate.CheckReadable(c.subject, id) != nil {
		return "", s.errs.taskNotFound()
	}
	return id, nil
}

// readRun reads the run a task id names, or answers -32001.
func (s *Server) readRun(ctx context.Context, c *call, raw string) (interop.Run, error) {
	id, err := s.taskID(c, raw)
	if err != nil {
		return interop.Run{}, err
	}
	run, err := s.cfg.Store.GetRun(ctx, c.subject, id)
	if err != nil {
		return interop.Run{}, s.taskRefusal(ctx, "GetRun", err)
	}
	return run, nil
}

// taskRefusal maps an error of a store call that addresses one run:
// whatever says the run is not the caller's is -32001 (readgate.GateError
// folds a store's forbidden into not-found; OpenWOP interop.md §Isolation).
func (s *Server) taskRefusal(ctx context.Context, op string, err error) error {
	if errors.Is(readgate.GateError(err), interop.ErrNotFound) {
		return s.errs.taskNotFound()
	}
	return s.storeFault(ctx, op, err)
}

// writeRefusal maps an error of a store call that applies a message to a
// run (ResolveInterrupt, DeliverInput).
func (s *Server) writeRefusal(ctx context.Context, op string, err error) error {
	var inputErr *interop.InputError
	switch {
	case errors.Is(err, interop.ErrRunTerminal):
		return s.errs.unsupported("the task is in a terminal state and accepts no more messages")
	case errors.Is(err, interop.ErrAlreadyResolved):
		return s.errs.unsupported("the task's interrupt was already answered")
	case errors.Is(err, interop.ErrNotEligible):
		return forbidden()
	case errors.As(err, &inputErr):
		return s.errs.invalidParams(inputErr.Field, "the answer was refused: "+inputErr.Reason)
	case errors.Is(err, interop.ErrInvalidInput):
		return s.errs.invalidParams("", "the answer was refused")
	}
	return s.taskRefusal(ctx, op, err)
}

// storeFault is any other store error: logged, answered as an internal
// error whose text never reaches the wire. A request whose caller went
// away returns the context's error.
func (s *Server) storeFault(ctx context.Context, op string, err error) error {
	return s.fault(ctx, "a2a: run store failed", "operation", op, "error", err)
}

// projectOrFail projects run, turning a host bug (a status outside the
// enum) into a logged internal error.
func (s *Server) projectOrFail(ctx context.Context, run *interop.Run, v taskView) (*wire.Task, error) {
	t, err := s.project(run, v)
	if err != nil {
		return nil, s.storeFault(ctx, "project", err)
	}
	return t, nil
}
