package mcp

// The Tasks extension (io.modelcontextprotocol/tasks; OpenWOP interop.md §MCP tasks and
// cancellation).
// A task is the host's run: taskId is the runId in its projected wire form
// (OpenWOP interop.md §MCP tasks and cancellation), status comes from the OpenWOP interop map (mcp.tasks.status), and every tasks/*
// method reads and writes the run through the RunStore with the caller's
// Subject, so a foreign or purged task answers exactly like one that never
// existed (OpenWOP RFC 0198 §C.6).

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/wopinterop/wopinterop/internal/interopmap"
	"github.com/wopinterop/wopinterop/internal/readgate"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/isolation"
	"github.com/wopinterop/wopinterop/mcp/internal/mount"
)

// taskJSON is a Task and its derived shapes: CreateTaskResult (resultType
// "task"), the DetailedTask of tasks/get (resultType "complete") and the
// params of notifications/tasks (no resultType).
type taskJSON struct {
	Meta           *notificationMeta       `json:"_meta,omitempty"`
	ResultType     string                  `json:"resultType,omitempty"`
	TaskID         string                  `json:"taskId"`
	Status         interopmap.TaskStatus   `json:"status"`
	StatusMessage  string                  `json:"statusMessage,omitempty"`
	CreatedAt      string                  `json:"createdAt"`
	LastUpdatedAt  string                  `json:"lastUpdatedAt"`
	TTLMs          *int64                  `json:"ttlMs"`
	PollIntervalMs int64                   `json:"pollIntervalMs,omitempty"`
	InputRequests  map[string]inputRequest `json:"inputRequests,omitempty"`
	Result         json.RawMessage         `json:"result,omitempty"`
	Error          *taskError              `json:"error,omitempty"`
}

type taskError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// notificationMeta carries the subscription id on listen-stream
// notifications.
type notificationMeta struct {
	SubscriptionID json.RawMessage `json:"io.modelcontextprotocol/subscriptionId"`
}

// timestamp formats an ISO 8601 time in UTC with milliseconds.
func timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }

// task fills the Task members of run.
func (s *Server) task(run *interop.Run, status interopmap.TaskStatus) taskJSON {
	t := taskJSON{
		TaskID:        isolation.Project(run.ID),
		Status:        status,
		CreatedAt:     timestamp(run.CreatedAt),
		LastUpdatedAt: timestamp(run.StatusAt),
	}
	if s.opts.TaskTTL > 0 {
		ms := s.opts.TaskTTL.Milliseconds()
		t.TTLMs = &ms
	}
	if s.opts.PollInterval > 0 {
		t.PollIntervalMs = s.opts.PollInterval.Milliseconds()
	}
	return t
}

// createTaskResult answers a tools/call whose run is not terminal
// (OpenWOP RFC 0198 §B). The run already exists, so tasks/get resolves it at once (MCP 2026-07-28 Tasks extension §Task Creation).
func (s *Server) createTaskResult(run *interop.Run) ([]byte, error) {
	status, err := s.taskStatus(run)
	if err != nil {
		return nil, err
	}
	t := s.task(run, status)
	t.ResultType = "task"
	return mount.Marshal(t)
}

// detailedTask projects run as tasks/get would (OpenWOP interop map, mcp.tasks.status): inputRequests
// while input is required (no requestState), the CallToolResult once
// completed (a failed run is completed with isError true), and an error
// object only for the host-fault status failed.
func (s *Server) detailedTask(ctx context.Context, sub interop.Subject, run *interop.Run) (taskJSON, error) {
	status, err := s.taskStatus(run)
	if err != nil {
		return taskJSON{}, err
	}
	t := s.task(run, status)
	switch status {
	case interopmap.TaskInputRequired:
		p := s.project(ctx, sub, run, mount.Caps{}, true)
		t.InputRequests = p.requests
		if t.InputRequests == nil {
			t.InputRequests = map[string]inputRequest{}
		}
		if p.outOfBand != "" {
			t.StatusMessage = p.outOfBand
		}
	case interopmap.TaskCompleted:
		res, err := s.callToolResult(run)
		if err != nil {
			return taskJSON{}, err
		}
		t.Result = res
	case interopmap.TaskFailed:
		t.Error = &taskError{Code: codeInternalError, Message: "The task failed in the host."}
		if required := requiredByReason(run.CancelReason); required != "" {
			e := missingCapability(required)
			t.Error = &taskError{Code: e.Code, Message: e.Message, Data: e.Data}
		}
	}
	return t, nil
}

// taskStatus is run's task status (OpenWOP interop map, mcp.tasks.status): the interop map's
// projection, except for the two protocol-level failures that are status
// failed with an error object rather than a task the client could read a
// result from (SEP-2663 error semantics): a run that failed in the host
// (Run.Fault), and a run the mount cancelled because the call that
// created the task declared no capability for the input it then needed
// (guardInput): its error is the -32021 the blocking call would have got.
func (s *Server) taskStatus(run *interop.Run) (interopmap.TaskStatus, error) {
	if run.Status == interop.StatusFailed && run.Fault ||
		run.Status == interop.StatusCancelled && requiredByReason(run.CancelReason) != "" {
		return interopmap.TaskFailed, nil
	}
	status, ok := s.m.MCPTaskStatus(run.Status)
	if !ok {
		return "", errors.New("mcp: no task status for run status " + string(run.Status))
	}
	return status, nil
}

// guardInput follows the run of a task handed to a call that declared no
// form elicitation, until the run ends or the server closes. The need for
// input is known only when a run suspends, usually after the task was
// answered, and a task's client answers inputRequests through tasks/update
// with the capabilities it declared on the call. Should the run suspend on
// input that call could not answer — the decision that refuses a blocking
// call with -32021 (outcome) — nobody holding the task ever could: the
// run is cancelled, with the reason naming the missing capability, and
// tasks/get reports the task failed with that -32021, which the client
// can act on by calling again with the capability. No run is left waiting
// for an answer that cannot come. The guard lives in this process: runs
// that suspend after Close are not followed.
func (s *Server) guardInput(sub interop.Subject, run interop.Run, caps mount.Caps) {
	if !s.begin() {
		return
	}
	go func() {
		defer s.end()
		// A panic leaves this one task unguarded (recover.go).
		defer s.recoverIn("task input guard", nil)
		ctx := s.life
		if s.stopUnanswerable(ctx, sub, run, caps) {
			return
		}
		events, err := s.deps.Store.WatchRun(ctx, sub, run.ID, run.LastSequence)
		if err != nil {
			return
		}
		for ev, err := range events {
			if err != nil || ev.Terminal() {
				return
			}
			if ev.Type != interop.EventNodeSuspended {
				continue
			}
			latest, err := s.deps.Store.GetRun(ctx, sub, run.ID)
			if err != nil || s.stopUnanswerable(ctx, sub, latest, caps) {
				return
			}
		}
	}()
}

// stopUnanswerable cancels run when it waits on input caps cannot answer,
// and reports whether the guard is done (the run ended or was cancelled).
func (s *Server) stopUnanswerable(ctx context.Context, sub interop.Subject, run interop.Run, caps mount.Caps) bool {
	if run.Status.Terminal() {
		return true
	}
	if run.Status != interop.StatusWaitingApproval && run.Status != interop.StatusWaitingInput {
		return false
	}
	required := s.project(ctx, sub, &run, caps, false).required
	if required == "" {
		return false
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelTimeout)
	defer cancel()
	if _, err := s.deps.Store.CancelRun(cctx, sub, run.ID, missingCapabilityReason(required)); err != nil && !errors.Is(err, interop.ErrRunTerminal) {
		s.log.Warn("mcp: cancelling a run nobody can answer failed", "error", err)
	}
	return true
}

// errUnknownTask answers every taskId the caller cannot read: unknown,
// purged, malformed or another tenant's, byte for byte alike (OpenWOP RFC 0198 §C.6).
var errUnknownTask = errInvalidParams("Invalid params: unknown task")

// taskRun reads the run a tasks/* request names. It first checks that the
// request declared the extension (-32021; OpenWOP interop map, mcp.meta).
func (s *Server) taskRun(ctx context.Context, c *call) (interop.Run, error) {
	if !c.Caps.Tasks {
		return interop.Run{}, missingCapability(requiredTasks)
	}
	var taskID string
	if raw, _ := c.Params.Get("taskId"); json.Unmarshal(raw, &taskID) != nil {
		return interop.Run{}, errUnknownTask
	}
	runID, err := isolation.ParseID(taskID)
	if err != nil || readgate.CheckReadable(c.Subject, runID) != nil {
		return interop.Run{}, errUnknownTask
	}
	run, err := s.deps.Store.GetRun(ctx, c.Subject, runID)
	if err != nil {
		if errors.Is(readgate.GateError(err), interop.ErrNotFound) {
			return interop.Run{}, errUnknownTask
		}
		return interop.Run{}, err
	}
	return run, nil
}

// tasksGet answers tasks/get: a read that appends nothing (OpenWOP interop.md §MCP tasks and cancellation).
func (s *Server) tasksGet(ctx context.Context, c *call) (answer, error) {
	run, err := s.taskRun(ctx, c)
	if err != nil {
		return answer{}, err
	}
	t, err := s.detailedTask(ctx, c.Subject, &run)
	if err != nil {
		return answer{}, err
	}
	t.ResultType = "complete"
	return answerOf(t)
}

// ack is the empty acknowledgement of tasks/update and tasks/cancel.
var ack = []byte(`{"resultType":"complete"}`)

// tasksUpdate answers tasks/update (OpenWOP RFC 0198 §E): each inputResponses entry
// keyed by an open interrupt resolves it as an MRTR retry would, with the
// caller as resolver; keys that are not open (never issued, already
// answered, withdrawn) resolve nothing. A refusal the store gives the
// caller (not an eligible approver, a value it refuses) is -32602.
func (s *Server) tasksUpdate(ctx context.Context, c *call) (answer, error) {
	run, err := s.taskRun(ctx, c)
	if err != nil {
		return answer{}, err
	}
	var responses map[string]json.RawMessage
	raw, ok := c.Params.Get("inputResponses")
	if !ok || len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &responses) != nil {
		return answer{}, errMalformedResponses
	}
	answers := map[string]elicitResult{}
	for _, in := range run.Interrupts {
		raw, ok := responses[in.ID]
		if !ok {
			continue
		}
		er, ok := parseElicitResult(raw)
		if !ok {
			return answer{}, errMalformedResponses
		}
		answers[in.ID] = er
	}
	for _, in := range run.Interrupts {
		er, ok := answers[in.ID]
		if !ok {
			continue
		}
		outcome, value := resolution(in, er)
		_, err := s.deps.Store.ResolveInterrupt(ctx, c.Subject, interop.ResolveRequest{RunID: run.ID, InterruptID: in.ID, Outcome: outcome, Value: value})
		if err != nil {
			if e := resolveError(in, err); e != nil {
				return answer{}, e
			}
		}
	}
	return answer{body: ack}, nil
}

// tasksCancel answers tasks/cancel (OpenWOP interop map, mcp.tasks): an acknowledgement that
// cancels the run as cancelRun would; a finished run is acknowledged and
// nothing is appended.
func (s *Server) tasksCancel(ctx context.Context, c *call) (answer, error) {
	run, err := s.taskRun(ctx, c)
	if err != nil {
		return answer{}, err
	}
	if !run.Status.Terminal() {
		_, err = s.deps.Store.CancelRun(context.WithoutCancel(ctx), c.Subject, run.ID, ReasonTaskCancelled)
		switch {
		case err == nil, errors.Is(err, interop.ErrRunTerminal):
		case errors.Is(readgate.GateError(err), interop.ErrNotFound):
			return answer{}, errUnknownTask
		default:
			return answer{}, err
		}
	}
	return answer{body: ack}, nil
}
