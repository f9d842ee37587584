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
	// ErrInputRefused: the server asked for input and no answer was sent —
	// a method or mode the call did not declare, the decider declined or
	// failed, or an answer that does not fit the request. The error is an
	// [*InputError].
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
	// Field names what was refused: "arguments", "decider" or "session".
	Field string
	// Reason is a short explanation safe to show a caller.
	Reason string
}

func (e *CallError) Error() string {
	return "remote: call " + e.Field + " refused: " + e.Reason
}

// Is makes every CallError match ErrCallRefused.
func (e *CallError) Is(target error) bool { return target == ErrCallRefused }

// InputReason says why an input round was not answered.
type InputReason string

// Why an input round ends a call.
const (
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

// projectCall is the OpenWOP error of the call path's own refusals, for
// ProjectError (OpenWOP errors.md §The envelope); ok is false for any
// other error:
//
//	a request refused before sending ([*CallError])     400 validation_error
//	an input round not answered ([*InputError])         422 capability_required
//	a result of a type the call did not ask for         503 runner_unavailable
//
// A tool error (ErrToolError) is not an exchange failure: the tool
// answered, and its result is in the CallOutcome.
func projectCall(runID string, err error) (*outbound.Error, bool) {
	var ce *CallError
	var ie *InputError
	status, code, msg := 0, "", ""
	switch {
	case errors.As(err, &ce):
		status, code, msg = http.StatusBadRequest, outbound.CodeValidation, "the tool call was refused before it was sent: "+ce.Field
	case errors.As(err, &ie):
		status, code, msg = http.StatusUnprocessableEntity, outbound.CodeCapabilityRequired, "the MCP server asked for input the host did not give"
	case errors.Is(err, ErrUnexpectedResult):
		status, code, msg = http.StatusServiceUnavailable, outbound.CodeRunnerUnavailable, "the MCP server answered with a result the call did not ask for"
	default:
		return nil, false
	}
	return &outbound.Error{Status: status, Code: code, Message: msg, Details: details(runID), Err: err}, true
}
