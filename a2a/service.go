package a2a

// The operations, one per A2A method, over the host's RunStore. They take
// decoded a2a-go request types and return a2a-go results or an *Error; the
// bindings (jsonrpc.go, rest.go) own decoding and encoding, and call
// prepare and withAgent first. Rules per row are the interop map's
// a2a.operations rows (OpenWOP interop.md §The operation mappings, §A2A
// multi-turn).
//
// Every refusal is decided before the first write, so a refused request
// changes nothing: no run, no resolution, no event (OpenWOP interop map, a2a.operations; interop.md §A2A multi-turn). An
// inbound request never appends to a run's log.

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"slices"
	"strconv"
	"strings"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/internal/tracecontext"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/isolation"
)

// Fixed values of the A2A surface.
const (
	// idempotencyPrefix scopes the messageId seed of a new task, so that it
	// never collides with an Idempotency-Key the host's REST surface
	// received (OpenWOP interop map, a2a.operations).
	idempotencyPrefix = "a2a:"
	// contextPrefix starts a contextId the server mints.
	contextPrefix = "ctx-"
	// cancelReason is the reason CancelTask gives cancelRun.
	cancelReason = "a2a-cancel-task"
	// skillIDField is where a client names the skill of a new task.
	skillIDField = "message.metadata.skillId"
)

// Page sizes of ListTasks (OpenWOP interop map, a2a.operations).
const (
	defaultPageSize = 50
	maxPageSize     = 100
)

// inbound is a SendMessage request that passed validation.
type inbound struct {
	msg     *wire.Message
	host    interop.Message
	history *int
	// accepted is configuration.acceptedOutputModes.
	accepted []string
	// push is configuration.taskPushNotificationConfig: reserved just
	// before the message is applied, committed on the task after.
	push *inlinePush
}

// sendMessage: without taskId it starts a run of the resolved workflow
// (messageId is the idempotency seed per principal, contextId assigned and
// persisted, blocks until terminal / input-required / auth-required /
// BlockTimeout; returnImmediately only with DurableTasks, else -32004). With
// taskId: a suspended run resolves its open interrupt; a running run uses
// the store's InputDeliverer or is -32004; a retained terminal run is
// -32004 with nothing appended; contextId inferred when absent, a mismatch
// is -32602 with nothing changed; unknown or unreadable is -32001.
func (s *Server) sendMessage(ctx context.Context, c *call, req *wire.SendMessageRequest) (*wire.Task, error) {
	in, err := s.checkSend(req)
	if err != nil {
		return nil, err
	}
	immediate := req.Config != nil && req.Config.ReturnImmediately
	if immediate && !s.cfg.Capabilities.DurableTasks {
		return nil, s.errs.unsupported("returnImmediately requires durable tasks, which this host does not offer")
	}
	run, err := s.deliver(ctx, c, in)
	if err != nil {
		return nil, err
	}
	if err := s.commitInline(ctx, c, &run, in); err != nil {
		return nil, err
	}
	if !immediate && !settled(run.Status) {
		if run, err = s.awaitSettled(ctx, c, run); err != nil {
			return nil, err
		}
	}
	return s.projectOrFail(ctx, &run, taskView{history: in.history, artifacts: true})
}

// settled reports whether a blocking SendMessage stops waiting at st:
// terminal, or interrupted (INPUT_REQUIRED and AUTH_REQUIRED; OpenWOP interop map, a2a.operations).
func settled(st interop.RunStatus) bool { return st.Terminal() || st.Suspended() }

// awaitSettled follows the run's log from the write's sequence until it
// settles, BlockTimeout passes (or the call's waitUntil, the deadline of
// its batch) or the server drains, then reads the run as it is. A call
// whose waitUntil has passed answers the run as the write left it.
func (s *Server) awaitSettled(ctx context.Context, c *call, run interop.Run) (interop.Run, error) {
	timeout := s.cfg.BlockTimeout
	if !c.waitUntil.IsZero() {
		if timeout = min(timeout, time.Until(c.waitUntil)); timeout <= 0 {
			return run, nil
		}
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	defer context.AfterFunc(s.drain, cancel)()
	events, err := s.cfg.Store.WatchRun(wctx, c.subject, run.ID, run.LastSequence)
	if err == nil {
		for ev, err := range events {
			if err != nil || settled(ev.Status) {
				break
			}
		}
	} else if wctx.Err() == nil {
		return interop.Run{}, s.taskRefusal(ctx, "WatchRun", err)
	}
	if err := ctx.Err(); err != nil {
		return interop.Run{}, err // the caller went away
	}
	latest, err := s.cfg.Store.GetRun(ctx, c.subject, run.ID)
	if err != nil {
		return interop.Run{}, s.taskRefusal(ctx, "GetRun", err)
	}
	return latest, nil
}

// checkSend validates a SendMessage request before anything is read or
// written: the message itself (OpenWOP interop map, a2a.fields) and historyLength; a push config
// is taken along and judged by reserveInline.
func (s *Server) checkSend(req *wire.SendMessageRequest) (inbound, error) {
	if req == nil || req.Message == nil {
		return inbound{}, s.errs.invalidParams("message", "message is required")
	}
	m := req.Message
	switch {
	case m.ID == "":
		return inbound{}, s.errs.invalidParams("message.messageId", "messageId is required")
	case m.Role != wire.MessageRoleUser && m.Role != wire.MessageRoleAgent:
		return inbound{}, s.errs.invalidParams("message.role", "role must be ROLE_USER or ROLE_AGENT")
	case len(m.Parts) == 0:
		return inbound{}, s.errs.invalidParams("message.parts", "a message needs at least one part")
	}
	host, bad := hostMessage(m)
	if bad >= 0 {
		return inbound{}, s.errs.invalidParams("message.parts["+strconv.Itoa(bad)+"]", "a part holds exactly one of text, raw, url or data")
	}
	in := inbound{msg: m, host: host}
	if cfg := req.Config; cfg != nil {
		if cfg.HistoryLength != nil && *cfg.HistoryLength < 0 {
			return inbound{}, s.errs.invalidParams("configuration.historyLength", "historyLength must not be negative")
		}
		in.history = cfg.HistoryLength
		in.accepted = cfg.AcceptedOutputModes
		if cfg.PushConfig != nil {
			// Reserved just before the message is applied; refused (never
			// dropped) while push is off.
			in.push = &inlinePush{spec: pushSpec(cfg.PushConfig)}
		}
	}
	return in, nil
}

// deliver performs the write of a SendMessage: a new run, or the message
// applied to the addressed run. It returns the run as the write left it.
func (s *Server) deliver(ctx context.Context, c *call, in inbound) (interop.Run, error) {
	if in.msg.TaskID == "" {
		return s.startRun(ctx, c, in)
	}
	return s.continueRun(ctx, c, in)
}

// startRun creates the run of a new task (OpenWOP interop map, a2a.operations and a2a.fields; interop.md §Trace context).
func (s *Server) startRun(ctx context.Context, c *call, in inbound) (interop.Run, error) {
	workflow, err := s.selectWorkflow(ctx, c, in.msg)
	if err != nil {
		return interop.Run{}, err
	}
	w, err := s.workflow(ctx, c.subject, workflow)
	switch {
	case errors.Is(err, errWorkflowUnknown):
		// Routed, but not a workflow this caller may start.
		return interop.Run{}, s.errs.invalidParams("", "the requested skill is not available")
	case err != nil:
		return interop.Run{}, s.storeFault(ctx, "ListWorkflows", err)
	}
	if err := s.checkContent(w, &in); err != nil {
		return interop.Run{}, err
	}
	inputs, part, ok := runInputs(in.msg)
	if !ok {
		return interop.Run{}, s.errs.invalidParams("message.parts["+strconv.Itoa(part)+"].data", "the first data part must hold a JSON object, the task's inputs")
	}
	if err := s.checkInputs(w, inputs, part); err != nil {
		return interop.Run{}, err
	}
	contextID := in.msg.ContextID
	if contextID == "" {
		contextID = contextPrefix + isolation.NewOpaque()
	}
	return s.written(ctx, in, "", func() (interop.Run, error) {
		run, _, err := s.cfg.Store.CreateRun(ctx, c.subject, interop.CreateRunRequest{
			WorkflowID:     workflow,
			Inputs:         inputs,
			IdempotencyKey: idempotencyPrefix + in.msg.ID,
			Transport:      interop.TransportA2A,
			ContextID:      contextID,
			Trace:          traceOf(c, in.msg),
			TrustBoundary:  interop.TrustUntrusted,
			Message:        &in.host,
		})
		if err != nil {
			return interop.Run{}, s.createRefusal(ctx, err)
		}
		return run, nil
	})
}

// createRefusal maps an error of CreateRun.
func (s *Server) createRefusal(ctx context.Context, err error) error {
	var inputErr *interop.InputError
	switch {
	case errors.Is(err, interop.ErrNotFound):
		// Routed, but not a workflow this caller may start.
		return s.errs.invalidParams("", "the requested skill is not available")
	case errors.As(err, &inputErr):
		return s.errs.invalidParams(inputErr.Field, "the task's inputs were refused: "+inputErr.Reason)
	case errors.Is(err, interop.ErrInvalidInput):
		return s.errs.invalidParams("", "the task's inputs were refused")
	case errors.Is(err, interop.ErrForbidden):
		return forbidden()
	}
	return s.storeFault(ctx, "CreateRun", err)
}

// selectWorkflow resolves the workflow of a new task among its candidates:
// the routed workflows of the host interface, or the agent's routed
// workflows the caller may start, in the agent's order. A single routed
// workflow of the host interface needs no selector. Otherwise, among more
// than one candidate SelectWorkflow picks when configured; else the skill
// id in message.metadata.skillId must name a candidate. Through an agent a
// message that names no skill starts the agent's default workflow, the
// first candidate: a per-agent card is an agent one can talk to without
// choosing a skill (OpenWOP interop.md §Per-agent cards).
func (s *Server) selectWorkflow(ctx context.Context, c *call, msg *wire.Message) (string, error) {
	var candidates []string
	if c.agent == nil {
		if len(s.cfg.Routed) == 1 {
			return s.cfg.Routed[0].ID, nil
		}
		candidates = make([]string, len(s.cfg.Routed))
		for i, w := range s.cfg.Routed {
			candidates[i] = w.ID
		}
	} else {
		startable, err := s.cfg.Store.ListWorkflows(ctx, c.subject)
		if err != nil {
			return "", s.storeFault(ctx, "ListWorkflows", err)
		}
		for _, id := range c.agent.Workflows {
			if !slices.Contains(candidates, id) && slices.ContainsFunc(startable, func(w interop.Workflow) bool { return w.ID == id }) {
				candidates = append(candidates, id)
			}
		}
	}
	skill, named := msg.Metadata["skillId"]
	switch {
	case len(candidates) == 0:
		return "", s.errs.invalidParams("", "the requested skill is not available")
	case s.cfg.SelectWorkflow != nil && len(candidates) > 1:
		picked, err := s.cfg.SelectWorkflow(msg, slices.Clone(candidates))
		if err != nil {
			var e *Error
			if errors.As(err, &e) {
				return "", e
			}
			return "", s.errs.invalidParams(skillIDField, "the message does not select one of the agent's skills")
		}
		if slices.Contains(candidates, picked) {
			return picked, nil
		}
	case named:
		if id, _ := skill.(string); slices.Contains(candidates, id) {
			return id, nil
		}
	case c.agent != nil:
		return candidates[0], nil
	}
	return "", s.errs.invalidParams(skillIDField, "name one of the agent's skills in message.metadata.skillId")
}

// runInputs is the first data part's object and that part's index, or {}
// and -1 when the message has no data part. ok is false when the first
// data part is not an object: run inputs are an object by contract.
func runInputs(m *wire.Message) (inputs json.RawMessage, part int, ok bool) {
	for i, p := range m.Parts {
		d, isData := p.Content.(wire.Data)
		if !isData {
			continue
		}
		raw, err := rawJSON(d.Value)
		if err != nil || !isObject(raw) {
			return nil, i, false
		}
		return raw, i, true
	}
	return json.RawMessage(`{}`), -1, true
}

// traceOf is the trace context passed to a new run: a well-formed
// message.metadata.openwop.traceparent (with its tracestate) wins over the
// request header; a malformed one is ignored (OpenWOP interop.md §Trace context).
func traceOf(c *call, m *wire.Message) interop.TraceContext {
	ow, _ := m.Metadata[metadataKeyOpenWOP].(map[string]any)
	if tp, _ := ow["traceparent"].(string); tracecontext.ValidParent(tp) {
		tc := interop.TraceContext{TraceParent: tp}
		if ts, _ := ow["tracestate"].(string); tracecontext.ValidState(ts) {
			tc.TraceState = ts
		}
		return tc
	}
	return c.trace
}

// continueRun applies a message with taskId to its run (OpenWOP
// interop map, a2a.operations; interop.md §A2A multi-turn). Every refusal is decided on a read, before the write.
func (s *Server) continueRun(ctx context.Context, c *call, in inbound) (interop.Run, error) {
	run, err := s.readRun(ctx, c, string(in.msg.TaskID))
	if err != nil {
		return interop.Run{}, err
	}
	if in.msg.ContextID != "" && in.msg.ContextID != contextOf(&run) {
		return interop.Run{}, s.errs.invalidParams("message.contextId", "contextId does not match the task's contextId")
	}
	if run.Status.Terminal() {
		return interop.Run{}, s.errs.unsupported("the task is in a terminal state and accepts no more messages")
	}
	w, err := s.judgedBy(ctx, c, &run)
	if err != nil {
		return interop.Run{}, err
	}
	if err := s.checkContent(w, &in); err != nil {
		return interop.Run{}, err
	}
	if run.Status.Suspended() {
		return s.resolve(ctx, c, &run, in)
	}
	deliverer, ok := s.cfg.Store.(interop.InputDeliverer)
	if !ok {
		return interop.Run{}, s.errs.unsupported("the task is working and accepts no messages until it asks for input")
	}
	return s.written(ctx, in, run.ID, func() (interop.Run, error) {
		next, err := deliverer.DeliverInput(ctx, c.subject, run.ID, in.host)
		if err != nil {
			return interop.Run{}, s.writeRefusal(ctx, "DeliverInput", err)
		}
		return next, nil
	})
}

// written performs write — the one store call of a SendMessage that
// creates or changes its task, on task taskID ("" for a new one) — inside
// the reservation of the message's push config: a config that would be
// refused is refused before write, and released when write fails, so a
// refused message changes nothing (OpenWOP interop map, a2a.operations;
// interop.md §A2A multi-turn).
func (s *Server) written(ctx context.Context, in inbound, taskID string, write func() (interop.Run, error)) (interop.Run, error) {
	if err := s.reserveInline(ctx, taskID, in); err != nil {
		return interop.Run{}, err
	}
	run, err := write()
	if err != nil {
		in.releaseInline(ctx)
		return interop.Run{}, err
	}
	return run, nil
}

// resolve answers the run's open interrupt with the message (OpenWOP interop map, a2a.operations).
func (s *Server) resolve(ctx context.Context, c *call, run *interop.Run, in inbound) (interop.Run, error) {
	open, ok := run.OpenInterrupt()
	if !ok {
		return interop.Run{}, s.errs.unsupported("the task has no open interrupt to answer")
	}
	value, action, err := resumeValue(in.msg, &open)
	if err != nil {
		return interop.Run{}, s.errs.invalidParams("message", "the resume value is not a JSON document")
	}
	outcome := interop.OutcomeAccept
	if open.Kind == interop.InterruptApproval && action == "reject" {
		outcome = interop.OutcomeDecline
	}
	return s.written(ctx, in, run.ID, func() (interop.Run, error) {
		next, err := s.cfg.Store.ResolveInterrupt(ctx, c.subject, interop.ResolveRequest{
			RunID:       run.ID,
			InterruptID: open.ID,
			Outcome:     outcome,
			Value:       value,
			Message:     &in.host,
		})
		if err != nil {
			return interop.Run{}, s.writeRefusal(ctx, "ResolveInterrupt", err)
		}
		return next, nil
	})
}

// resumeValue is what a message answers an interrupt with:
// metadata.openwop.interrupt when it is an object, else the first data
// part's value, else from the text parts: on an approval, {"action": text}
// when the whole text (trimmed) is exactly one of the actions offered,
// which is what a chat client sends; on a clarification, {"text": the text
// parts joined by newlines}. action is the approval action named in it, if
// any.
func resumeValue(m *wire.Message, open *interop.Interrupt) (value json.RawMessage, action string, err error) {
	var v any
	ow, _ := m.Metadata[metadataKeyOpenWOP].(map[string]any)
	if obj, ok := ow["interrupt"].(map[string]any); ok {
		v = obj
	} else {
		for _, p := range m.Parts {
			if d, ok := p.Content.(wire.Data); ok {
				v = d.Value
				break
			}
		}
	}
	if v == nil {
		var texts []string
		for _, p := range m.Parts {
			if t, ok := p.Content.(wire.Text); ok {
				texts = append(texts, string(t))
			}
		}
		text := strings.Join(texts, "\n")
		switch {
		case len(texts) == 0:
		case open.Kind == interop.InterruptClarification:
			v = map[string]any{"text": text}
		case open.Kind == interop.InterruptApproval && slices.Contains(open.Actions, strings.TrimSpace(text)):
			v = map[string]any{"action": strings.TrimSpace(text)}
		}
	}
	if v == nil {
		return nil, "", nil
	}
	if value, err = rawJSON(v); err != nil {
		return nil, "", err
	}
	// A map keeps member names exact: "Action" is not "action".
	var members map[string]json.RawMessage
	if json.Unmarshal(value, &members) == nil {
		_ = json.Unmarshal(members["action"], &action)
	}
	return value, action, nil
}

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
// nextPageToken always present. Called through one of the caller's agents
// (c.agent, see routingHint) it lists only the runs of the workflows routed
// to that agent, started through any surface: a filter on the one run
// store, not a record of its own.
func (s *Server) listTasks(ctx context.Context, c *call, req *wire.ListTasksRequest) (*wire.ListTasksResponse, error) {
	size := req.PageSize
	switch {
	case size == 0:
		size = defaultPageSize
	case size < 1 || size > maxPageSize:
		return nil, s.errs.invalidParams("pageSize", "pageSize must be between 1 and 100")
	}
	if req.HistoryLength != nil && *req.HistoryLength < 0 {
		return nil, s.errs.invalidParams("historyLength", "historyLength must not be negative")
	}
	q := interop.ListRunsQuery{ContextID: req.ContextID, PageSize: size, Cursor: req.PageToken}
	if req.StatusTimestampAfter != nil {
		q.StatusAfter = *req.StatusTimestampAfter
	}
	// keep decides, run by run, what the store's query cannot express.
	var keep []func(*interop.Run) bool
	if status := req.Status; status != wire.TaskStateUnspecified && status != statusUnrecognized {
		statuses, exact, ok := s.statusFilter(status)
		if !ok {
			return nil, s.errs.invalidParams("status", "status is not a task state this host reports")
		}
		q.Statuses = statuses
		if exact {
			keep = append(keep, func(r *interop.Run) bool { return s.projectsTo(r, status) })
		}
	}
	if c.agent != nil {
		workflows := c.agent.Workflows
		if len(workflows) == 1 {
			q.WorkflowID = workflows[0]
		} else {
			keep = append(keep, func(r *interop.Run) bool { return slices.Contains(workflows, r.WorkflowID) })
		}
	}
	var (
		runs  []interop.Run
		next  string
		total int
		err   error
	)
	if len(keep) > 0 {
		runs, next, total, err = s.listFiltered(ctx, c, q, func(r *interop.Run) bool {
			for _, k := range keep {
				if !k(r) {
					return false
				}
			}
			return true
		})
	} else {
		var page interop.RunPage
		page, err = s.cfg.Store.ListRuns(ctx, c.subject, q)
		runs, next, total = page.Runs, page.NextCursor, page.Total
	}
	if err != nil {
		return nil, s.listRefusal(ctx, err)
	}
	view := taskView{history: req.HistoryLength, artifacts: req.IncludeArtifacts}
	boxes := make([]taskBox, len(runs))
	out := &wire.ListTasksResponse{
		Tasks:         make([]*wire.Task, len(runs)),
		TotalSize:     total,
		PageSize:      size,
		NextPageToken: next,
	}
	for i := range runs {
		if err := s.projectInto(&boxes[i], &runs[i], view); err != nil {
			return nil, s.storeFault(ctx, "project", err)
		}
		out.Tasks[i] = &boxes[i].task
	}
	return out, nil
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
func (s *Server) listFiltered(ctx context.Context, c *call, q interop.ListRunsQuery, keep func(*interop.Run) bool) (runs []interop.Run, next string, total int, err error) {
	size := q.PageSize
	runs = make([]interop.Run, 0, size)
	for {
		q.PageSize = size - len(runs)
		page, err := s.cfg.Store.ListRuns(ctx, c.subject, q)
		if err != nil {
			return nil, "", 0, err
		}
		for i := range page.Runs {
			if keep(&page.Runs[i]) {
				runs = append(runs, page.Runs[i])
			}
		}
		next = page.NextCursor
		if len(runs) == size || next == "" {
			break
		}
		q.Cursor = next
	}
lookAhead:
	for ahead := next; ahead != ""; {
		q.Cursor, q.PageSize = ahead, maxPageSize
		page, err := s.cfg.Store.ListRuns(ctx, c.subject, q)
		if err != nil {
			return nil, "", 0, err
		}
		for i := range page.Runs {
			if keep(&page.Runs[i]) {
				break lookAhead
			}
		}
		if ahead = page.NextCursor; ahead == "" {
			next = "" // nothing after this page matches
		}
	}
	q.Cursor, q.PageSize = "", maxPageSize
	for {
		page, err := s.cfg.Store.ListRuns(ctx, c.subject, q)
		if err != nil {
			return nil, "", 0, err
		}
		for i := range page.Runs {
			if keep(&page.Runs[i]) {
				total++
			}
		}
		if page.NextCursor == "" {
			return runs, next, total, nil
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

// streamMessage is sendMessage streamed (requires a2a.streaming): the Task
// first, then a statusUpdate per status change and an artifactUpdate per
// artifact chunk, ending after the terminal statusUpdate (or an interrupted
// one). Errors before the first event are returned, not streamed.
func (s *Server) streamMessage(ctx context.Context, c *call, req *wire.SendMessageRequest) (iter.Seq2[wire.Event, error], error) {
	if err := s.gate(methodSendStreamingMessage); err != nil {
		return nil, err
	}
	in, err := s.checkSend(req)
	if err != nil {
		return nil, err
	}
	run, err := s.deliver(ctx, c, in)
	if err != nil {
		return nil, err
	}
	if err := s.commitInline(ctx, c, &run, in); err != nil {
		return nil, err
	}
	return s.follow(ctx, c, run, taskView{history: in.history, artifacts: true}, true)
}

// subscribe is the read-only re-attachment (requires a2a.streaming and
// a2a.durableTasks): the current Task first, then the run's changes; a
// terminal task is -32004.
func (s *Server) subscribe(ctx context.Context, c *call, req *wire.SubscribeToTaskRequest) (iter.Seq2[wire.Event, error], error) {
	if err := s.gate(methodSubscribeToTask); err != nil {
		return nil, err
	}
	run, err := s.readRun(ctx, c, string(req.ID))
	if err != nil {
		return nil, err
	}
	if run.Status.Terminal() {
		return nil, s.errs.unsupported("the task is in a terminal state; read it with GetTask")
	}
	return s.follow(ctx, c, run, taskView{artifacts: true}, false)
}

// taskID reads a task id as a client sent it and applies the read gate.
// Malformed, unknown and another tenant's ids all get the one not-found
// answer (OpenWOP RFC 0211 §D; interop.md §Isolation).
func (s *Server) taskID(c *call, raw string) (string, error) {
	id, err := isolation.ParseID(raw)
	if err != nil || isolation.CheckReadable(c.subject, id) != nil {
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
// whatever says the run is not the caller's is -32001 (isolation.GateError
// folds a store's forbidden into not-found; OpenWOP interop.md §Isolation).
func (s *Server) taskRefusal(ctx context.Context, op string, err error) error {
	if errors.Is(isolation.GateError(err), interop.ErrNotFound) {
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
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	s.log.ErrorContext(ctx, "a2a: run store failed", "operation", op, "error", err)
	return internalError()
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
