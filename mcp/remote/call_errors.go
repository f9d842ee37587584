package remote

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/wopinterop/wopinterop/outbound"
)

// Errors a call ends in. Each is matched with errors.Is; the CallOutcome
// returned beside it says what is known about the server side.
var (
	// ErrCallRefused: the call is not covered by the admission or its
	// request is malformed; nothing was sent. The error is a [*CallError].
	ErrCallRefused = errors.New("remote: call refused before sending")
	// ErrRoundsExceeded: the server asked for one more input round than
	// Session.MaxRounds allows; the retry was never sent (OpenWOP
	// interop.md §The MCP round ceiling). The error is a [*RoundsError].
	ErrRoundsExceeded = errors.New("remote: input rounds exceed mcp.mrtr.maxRounds")
	// ErrInputRefused: the server asked for input and no answer was sent —
	// no decider, the decider declined or failed, a method or mode the call
	// did not declare, or an answer that does not fit the request. The
	// error is an [*InputError].
	ErrInputRefused = errors.New("remote: input request not answered")
	// ErrToolError: the tool ran and reported an error (isError). The
	// CallOutcome carries its result.
	ErrToolError = errors.New("remote: the tool reported an error")
	// ErrTimeout: Limits.Timeout (or the caller's deadline) passed before
	// the call settled. It never means nothing happened: the outcome says
	// failed-possible-effect. It also matches context.DeadlineExceeded.
	ErrTimeout = errors.New("remote: call timed out")
	// ErrDisconnected: the connection was lost while a request was in
	// flight; the server may still be working on it.
	ErrDisconnected = errors.New("remote: connection lost during the call")
	// ErrUnexpectedResult: the server answered with a result this call
	// did not ask for (a task, when the tasks extension was not declared).
	ErrUnexpectedResult = errors.New("remote: unexpected result type")
)

// CallError is a call refused before anything was sent.
type CallError struct {
	// Field names what was refused: "tool" or "arguments".
	Field string
	// Reason is a short explanation safe to show a caller.
	Reason string
}

func (e *CallError) Error() string {
	return "remote: call " + e.Field + " refused: " + e.Reason
}

// Is makes every CallError match ErrCallRefused.
func (e *CallError) Is(target error) bool { return target == ErrCallRefused }

// Project is the refusal in the OpenWOP error envelope: 400
// validation_error naming the field (OpenWOP errors.md §The envelope).
func (e *CallError) Project(runID string) *outbound.Error {
	return &outbound.Error{
		Status:  http.StatusBadRequest,
		Code:    outbound.CodeValidation,
		Message: "the tool call is not covered by the server's admission: " + e.Field,
		Details: runDetails(runID, map[string]any{"field": e.Field}),
		Err:     e,
	}
}

// RoundsError is an input round past Session.MaxRounds, refused before
// the retry was sent.
type RoundsError struct {
	// MaxRounds is the ceiling that was applied.
	MaxRounds int
	// Calls is how many tools/call requests the server saw for the
	// attempt: at most MaxRounds + 1.
	Calls int
}

func (e *RoundsError) Error() string {
	return ErrRoundsExceeded.Error() + " (" + strconv.Itoa(e.MaxRounds) + ")"
}

// Is makes every RoundsError match ErrRoundsExceeded.
func (e *RoundsError) Is(target error) bool { return target == ErrRoundsExceeded }

// Project is the refusal in the OpenWOP error envelope: 422
// mcp_mrtr_rounds_exceeded (OpenWOP errors.json; interop.md §The MCP round
// ceiling), naming the run whose log records the attempt in
// details.runId — never at the top level, the envelope is closed.
func (e *RoundsError) Project(runID string) *outbound.Error {
	return &outbound.Error{
		Status:  http.StatusUnprocessableEntity,
		Code:    outbound.CodeMRTRRoundsExceeded,
		Message: "the MCP server asked for more input rounds than mcp.mrtr.maxRounds allows",
		Details: runDetails(runID, nil),
		Err:     e,
	}
}

// InputReason says why an input round was not answered.
type InputReason string

// Why an input round ends a call.
const (
	// InputNoDecider: the call has no InputDecider.
	InputNoDecider InputReason = "no-decider"
	// InputUndeclared: the server asked with a method or an elicitation
	// mode the call did not declare (a conforming server answers -32021
	// instead; the client never answers what it did not declare).
	InputUndeclared InputReason = "undeclared"
	// InputDeclined: the decider returned an error.
	InputDeclined InputReason = "declined"
	// InputBadAnswer: the decider's answer does not fit the round: a
	// request left unanswered, an answer to a request not asked, an
	// unknown action, or content on a URL-mode answer.
	InputBadAnswer InputReason = "bad-answer"
)

// InputError is an input round the call did not answer.
type InputError struct {
	Reason InputReason
	// Request is the id of the input request concerned, when one is.
	Request string
	// Err is the decider's error for InputDeclined.
	Err error
}

func (e *InputError) Error() string {
	msg := "remote: input round not answered: " + string(e.Reason)
	if e.Request != "" {
		msg += " (" + strconv.Quote(e.Request) + ")"
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Is makes every InputError match ErrInputRefused.
func (e *InputError) Is(target error) bool { return target == ErrInputRefused }

func (e *InputError) Unwrap() error { return e.Err }

// runDetails is an envelope's details with the run named, or nil.
func runDetails(runID string, d map[string]any) map[string]any {
	if runID == "" {
		return d
	}
	if d == nil {
		d = map[string]any{}
	}
	d["runId"] = runID
	return d
}
