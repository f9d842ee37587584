package a2a

// SendMessage and SendStreamingMessage over the host's RunStore (OpenWOP
// interop map, a2a.operations and a2a.fields; interop.md §The operation
// mappings, §A2A multi-turn). Every refusal is decided before the first
// write, so a refused message changes nothing: no run, no resolution, no
// event. An inbound request never appends to a run's log.

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

	"github.com/wopinterop/wopinterop/internal/settle"
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
	in, err := s.acceptSend(ctx, c, req)
	if err != nil {
		return nil, err
	}
	immediate := req.Config != nil && req.Config.ReturnImmediately
	if immediate && !s.served.DurableTasks {
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

// sendStreamingMessage is sendMessage streamed (requires a2a.streaming):
// the Task first, then a statusUpdate per status change and an
// artifactUpdate per artifact chunk, ending after the terminal
// statusUpdate (or an interrupted one). A refusal is the stream's only
// element.
func (s *Server) sendStreamingMessage(ctx context.Context, c *call, req *wire.SendMessageRequest) iter.Seq2[wire.Event, error] {
	return lazily(func() (iter.Seq2[wire.Event, error], error) {
		in, err := s.acceptSend(ctx, c, req)
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
	})
}

// acceptSend resolves a SendMessage's target (sendTarget) and validates
// it (checkSend), before anything is read or written. The host message
// carries the extensions the request activated.
func (s *Server) acceptSend(ctx context.Context, c *call, req *wire.SendMessageRequest) (inbound, error) {
	if err := s.sendTarget(ctx, c, req); err != nil {
		return inbound{}, err
	}
	in, err := s.checkSend(req)
	in.host.ActivatedExtensions = c.activated
	return in, err
}

// sendTarget resolves the routing value (tenant) of a message that starts
// a new task: an R outside the caller's inventory is -32602 (field
// tenant), the same for never-minted and foreign values (OpenWOP
// interop.md §Non-disclosure). A message to an existing task ignores
// tenant (see routingHint).
func (s *Server) sendTarget(ctx context.Context, c *call, req *wire.SendMessageRequest) error {
	if req.Message == nil {
		return s.errs.invalidParams("message", "message is required")
	}
	if req.Message.TaskID != "" {
		return nil
	}
	if err := s.withAgent(ctx, c, req.Tenant); err != nil {
		return neverMinted(err, s.errs.unknownTenant())
	}
	return nil
}

// settled reports whether a blocking SendMessage stops waiting at st:
// terminal, or interrupted (INPUT_REQUIRED and AUTH_REQUIRED; OpenWOP interop map, a2a.operations).
func settled(st interop.RunStatus) bool { return st.Terminal() || st.Suspended() }

// awaitSettled waits (internal/settle) until the run settles, BlockTimeout
// passes (or the call's waitUntil, the deadline of its batch) or the
// server drains, then answers the run as it is. A call whose waitUntil
// has passed answers the run as the write left it.
func (s *Server) awaitSettled(ctx context.Context, c *call, run interop.Run) (interop.Run, error) {
	limit := s.cfg.BlockTimeout
	if !c.waitUntil.IsZero() {
		limit = min(limit, time.Until(c.waitUntil))
	}
	run, err := settle.Run(ctx, s.cfg.Store, c.subject, run, settle.Wait{Settled: settled, Limit: limit, Stop: s.drain})
	if se, ok := errors.AsType[*settle.Error](err); ok {
		return interop.Run{}, s.taskRefusal(ctx, se.Op, se.Err)
	}
	return run, err
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
