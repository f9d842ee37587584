package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopinterop/wopinterop/outbound"
)

// CallRequest is one tools/call a host makes on an admitted server on
// behalf of its run.
type CallRequest struct {
	// Tool is the admitted tool's name. A tool the admission does not name,
	// or whose definition changed since admission, is refused before
	// anything is sent (admission-boundaries §18.3).
	Tool string
	// Arguments is the tool's arguments, a JSON object of at most
	// Limits.MaxArgumentBytes, sent as is. Empty: {}.
	Arguments json.RawMessage
	// Elicitation is the elicitation capability the host declares for this
	// call, in _meta clientCapabilities (MCP 2026-07-28, SEP-2575): Form,
	// URL or both; an empty value means form only. Nil declares none, and
	// a server that needs input answers -32021 instead of asking. Only
	// what is declared is ever answered; sampling and roots are never
	// declared.
	Elicitation *mcp.ElicitationCapabilities
	// Decide answers the server's input requests, afresh for every round.
	// Required when Elicitation is declared.
	Decide InputDecider
}

// InputDecider is the host's decision on one input round of a call (MCP
// 2026-07-28 multi-round tool results, SEP-2322). It is called once per
// round with what the server asks, never with a previous round's answers:
// every round is a fresh decision under the host's policy
// (admission-boundaries §18.4). It returns one answer per request id.
// An error sends nothing and ends the call with ErrInputRefused.
//
// An answer's Action is "accept", "decline" or "cancel"; Content goes only
// with "accept" on a form-mode request. A URL-mode request is answered
// without content: the user completes it out of band and the host collects
// no data for it.
type InputDecider func(ctx context.Context, round InputRound) (map[string]*mcp.ElicitResult, error)

// InputRound is the host's view of one input_required answer.
type InputRound struct {
	AttemptID string
	Tool      string
	// Round counts the call's input rounds, from 1.
	Round int
	// Requests are what the server asks, sorted by ID.
	Requests []InputRequest
}

// InputRequest is one elicitation the server asks for. Everything in it
// comes from the server: untrusted content that confers no authority, and
// a URL the library never fetches.
type InputRequest struct {
	// ID is the server's key for the request; the answer goes back under it.
	ID string
	// Method is "elicitation/create".
	Method string
	// Mode is "form" or "url".
	Mode string
	// Message is the server's text for the user.
	Message string
	// RequestedSchema is the form's schema (form mode).
	RequestedSchema json.RawMessage
	// URL is where the user completes the request (url mode).
	URL string
	// ElicitationID names a URL-mode elicitation.
	ElicitationID string
}

// CallOutcome is what a call knows when it returns. Call returns one
// whenever it got as far as deciding to send, beside any error.
type CallOutcome struct {
	// AttemptID is the local id of the attempt (admission-boundaries
	// §18.9). The initial request and every retry are one attempt: one
	// logical invocation.
	AttemptID string
	// Calls is how many tools/call requests were sent: the initial one and
	// every retry. A request is never re-sent after a failure.
	Calls int
	// Rounds is how many input rounds were answered (retries sent).
	Rounds int
	// StateEchoed: a retry carried back a requestState the server issued.
	StateEchoed bool
	// Result is the tool's result as the run takes it; set when the server
	// answered with a final result.
	Result *Result
	// Raw is that final result exactly as the server sent it — the
	// JSON-RPC result of the last tools/call response: content,
	// structuredContent, isError and _meta unaltered (OpenWOP RFC 0204,
	// ctx.mcp.callTool). Set with Result on a session Connect made; it is
	// the server's untrusted content, and Result is its projection.
	Raw json.RawMessage
	// Reconciliation is what is known of the attempt's effect when it
	// ended without a result, or with an error result; "" for a success.
	Reconciliation outbound.Reconciliation
}

// Call calls an admitted tool: it checks the request against the
// admission, sends tools/call with the run's trace context and the
// capabilities declared for the call, answers input_required rounds only
// through req.Decide, and projects the final result for the run. The
// whole call, input rounds included, is bounded by Limits.Timeout.
//
// Round r is the r-th input_required answer; its retry is sent only when
// r <= MaxRounds, so the server sees at most MaxRounds + 1 requests (OpenWOP
// interop.md §The MCP round ceiling). Each retry repeats the request with
// the server's requestState echoed unchanged and the decider's answers;
// go-sdk gives it a new JSON-RPC id.
//
// Nothing is ever re-sent after a failure: a request that may have reached
// the server is not replayed (admission-boundaries §18.9). Cancelling ctx
// while a request is in flight makes go-sdk send notifications/cancelled.
//
// The error is nil only for a result without isError. Otherwise it is an
// [*AdmissionError] (nothing sent), matches one of the Err* values of this
// package or a context error, or is the server's JSON-RPC error (match it
// with errors.As and *jsonrpc.Error); [ProjectError] renders any of them.
// Call appends at most one translation-loss record and one reconciliation
// record to the run's log.
func (s *Session) Call(ctx context.Context, req CallRequest) (*CallOutcome, error) {
	args, err := s.checkCall(ctx, req)
	if err != nil {
		return nil, err
	}
	c := &call{
		s:         s,
		req:       req,
		args:      args,
		limits:    s.Admission.Limits.withDefaults(),
		attemptID: outbound.NewAttemptID(),
		maxRounds: s.maxRounds(),
	}
	// From 2026-07-28 on, a request's _meta carries the client's
	// capabilities (SEP-2575): this call declares exactly what its decider
	// answers, in place of the connection's defaults.
	if s.Version >= Revision {
		c.caps = map[string]any{}
		if req.Elicitation != nil {
			c.caps["elicitation"] = req.Elicitation
		}
	}
	out, err := c.run(ctx)
	s.recordLoss(ctx, c)
	s.recordReconciliation(ctx, out)
	return out, err
}

// checkCall refuses a request the admission does not cover, before
// anything naming the tool is sent: a tool not admitted, or listed now
// with another definition than the one admitted, is an [*AdmissionError].
func (s *Session) checkCall(ctx context.Context, req CallRequest) (json.RawMessage, error) {
	if s.call == nil {
		return nil, &CallError{Field: "session", Reason: "not connected"}
	}
	if _, err := s.admitted(ctx, req.Tool); err != nil {
		return nil, err
	}
	if req.Elicitation != nil && req.Decide == nil {
		return nil, &CallError{Field: "decider", Reason: "elicitation declared without an InputDecider"}
	}
	args := bytes.TrimSpace(req.Arguments)
	if len(args) == 0 {
		return json.RawMessage("{}"), nil
	}
	if int64(len(args)) > s.Admission.Limits.withDefaults().MaxArgumentBytes {
		return nil, &CallError{Field: "arguments", Reason: "larger than the admission's MaxArgumentBytes"}
	}
	if args[0] != '{' || !json.Valid(args) {
		return nil, &CallError{Field: "arguments", Reason: "not a JSON object"}
	}
	return json.RawMessage(args), nil
}

// maxRounds is MaxRounds within the facet's range; below 1 no input round
// is answered (fail closed).
func (s *Session) maxRounds() int { return min(max(s.MaxRounds, 0), maxRoundsCeiling) }

// call is one attempt in progress.
type call struct {
	s         *Session
	req       CallRequest
	args      json.RawMessage
	caps      map[string]any // nil below 2026-07-28
	limits    Limits
	attemptID string
	maxRounds int
	loss      lossTracker
	raw       *resultSlot // the result of the request last sent
}

// errTimeoutCause marks the deadline Call set itself.
var errTimeoutCause = errors.New("remote: Limits.Timeout passed")

func (c *call) run(ctx context.Context) (*CallOutcome, error) {
	ctx, c.raw = withResultSlot(ctx)
	dctx, stop := context.WithTimeoutCause(ctx, c.limits.Timeout, errTimeoutCause)
	defer stop()
	out := &CallOutcome{AttemptID: c.attemptID}
	var responses mcp.InputResponseMap
	var state requestState
	for {
		if dctx.Err() != nil {
			return c.stopped(ctx, dctx, out)
		}
		res, err := c.send(ctx, dctx, c.params(responses, state))
		out.Calls++
		out.StateEchoed = out.StateEchoed || state != ""
		if err != nil {
			return c.failed(ctx, dctx, out, err)
		}
		if !res.NeedsInput() {
			return c.settled(ctx, out, res)
		}
		c.loss.interim(res)
		if dctx.Err() != nil {
			return c.stopped(ctx, dctx, out)
		}
		round := out.Rounds + 1
		if round > c.maxRounds {
			// Refused here, before the decider is asked or anything is sent.
			out.Reconciliation = outbound.FailedPossibleEffect
			return out, &RoundsError{Alias: c.s.Admission.Alias, Tool: c.req.Tool, MaxRounds: c.maxRounds}
		}
		state = requestState(res.RequestState)
		c.s.logger().LogAttrs(ctx, slog.LevelDebug, "remote: input round",
			slog.String("attemptId", c.attemptID), slog.Int("round", round),
			slog.Int("requests", len(res.InputRequests)), slog.Any("requestState", state))
		responses, err = c.answer(dctx, round, res.InputRequests)
		if err != nil {
			if dctx.Err() != nil {
				return c.stopped(ctx, dctx, out)
			}
			// The round is abandoned: nothing is in flight, and what the
			// tool did before asking is the server's to know.
			out.Reconciliation = outbound.FailedPossibleEffect
			return out, err
		}
		out.Rounds = round
	}
}

// params is one request of the attempt. The initial request and every
// retry carry the same name, arguments and _meta keys (SEP-2322: a retry
// is the same logical invocation); a retry adds the answers and the
// requestState exactly as the server sent it. _meta is a fresh map each
// time because go-sdk writes its protocol keys into it.
func (c *call) params(responses mcp.InputResponseMap, state requestState) *mcp.CallToolParams {
	// The session's tap adds the run's trace context (tap.go).
	meta := make(mcp.Meta, 2)
	if c.caps != nil {
		meta[mcp.MetaKeyClientCapabilities] = c.caps
	}
	return &mcp.CallToolParams{
		Meta:           meta,
		Name:           c.req.Tool,
		Arguments:      c.args,
		InputResponses: responses,
		RequestState:   string(state),
	}
}

// send sends one request. By default it runs under dctx, so a timeout
// cancels it and go-sdk tells the server with notifications/cancelled.
// With Limits.NoCancelOnTimeout the request runs under ctx only: the call
// stops waiting at the deadline, and the request stays open until the
// server answers or ctx ends.
func (c *call) send(ctx, dctx context.Context, p *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	c.raw.reset()
	if !c.limits.NoCancelOnTimeout {
		return c.s.call.CallTool(dctx, p)
	}
	type answer struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan answer, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- answer{err: fmt.Errorf("remote: tools/call panicked: %v", r)}
			}
		}()
		res, err := c.s.call.CallTool(ctx, p)
		if dctx.Err() != nil {
			// The call already returned failed-possible-effect; say what
			// became of the request, without its content.
			c.s.logger().LogAttrs(ctx, slog.LevelInfo, "remote: answer after the timeout, not used",
				slog.String("attemptId", c.attemptID), slog.Bool("error", err != nil))
		}
		done <- answer{res, err}
	}()
	select {
	case a := <-done:
		return a.res, a.err
	case <-dctx.Done():
		return nil, context.Cause(dctx)
	}
}

// settled projects a final result.
func (c *call) settled(ctx context.Context, out *CallOutcome, res *mcp.CallToolResult) (*CallOutcome, error) {
	if unexpectedResult(res) {
		out.Reconciliation = outbound.FailedPossibleEffect
		return out, ErrUnexpectedResult
	}
	out.Result = c.loss.project(res)
	out.Raw = c.raw.get()
	if res.IsError {
		// The tool ran and failed: whatever it did stands.
		out.Reconciliation = outbound.FailedPossibleEffect
		return out, ErrToolError
	}
	if errors.Is(ctx.Err(), context.Canceled) {
		// The caller cancelled, but the result arrived first: it stands.
		out.Reconciliation = outbound.CompletedBeforeCancel
	}
	return out, nil
}

// unexpectedResult reports a result of a type the call never asked for:
// a CreateTaskResult (tasks extension, SEP-2663), which go-sdk decodes
// into an empty CallToolResult. Only an empty result is inspected.
func unexpectedResult(res *mcp.CallToolResult) bool {
	if len(res.Content) > 0 || res.StructuredContent != nil || res.IsError {
		return false
	}
	b, err := json.Marshal(res)
	if err != nil {
		return true
	}
	var rt struct {
		ResultType string `json:"resultType"`
	}
	return json.Unmarshal(b, &rt) != nil || (rt.ResultType != "" && rt.ResultType != "complete")
}

// logger is the session's logger, or one that discards.
func (s *Session) logger() *slog.Logger {
	if s.deps != nil && s.deps.log != nil {
		return s.deps.log
	}
	return slog.New(slog.DiscardHandler)
}
