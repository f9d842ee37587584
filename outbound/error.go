package outbound

import (
	"net/http"
)

// Error is an outbound exchange the library refused or could not complete,
// in the terms of the OpenWOP REST error envelope (OpenWOP errors.md §The
// envelope): the host writes {"error": Code, "message": Message,
// "details": Details} with Status. Message is safe to show a caller: it
// never carries a peer's body, a credential or a stack (OpenWOP interop.md
// §Errors). Details never carries the peer's host in clear.
type Error struct {
	Status  int
	Code    string
	Message string
	Details map[string]any
	// Err is the cause, for errors.Is/As and the host's logs; it is never
	// rendered.
	Err error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Code + ": " + e.Message + ": " + e.Err.Error()
	}
	return e.Code + ": " + e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Codes of the OpenWOP error registry an outbound exchange ends in.
const (
	CodeVersionUnsupported = "interop_version_unsupported" // 400
	CodeValidation         = "validation_error"            // 400
	CodeMRTRRoundsExceeded = "mcp_mrtr_rounds_exceeded"    // 422
	CodeInternal           = "internal_error"              // 500

	// The host-as-client projections of a peer's A2A errors (OpenWOP
	// interop map, a2a.errors clientProjection) and of the outbound
	// failures that are no peer error.
	CodeNotFound            = "not_found"            // 404
	CodeRunTerminal         = "run_terminal"         // 409
	CodeCapabilityRequired  = "capability_required"  // 422
	CodeCredentialRequired  = "credential_required"  // 422
	CodeCredentialForbidden = "credential_forbidden" // 403
	CodeCredentialNotFound  = "credential_not_found" // 404
	CodeForbidden           = "forbidden"            // 403
	CodeRunnerUnavailable   = "runner_unavailable"   // 503
)

// VersionUnsupported is a negotiation that fails closed on the host-as-client
// side (OpenWOP interop.md §The floor): 400 interop_version_unsupported,
// naming the protocol ("a2a" or "mcp") and the run whose log carries the
// negotiation.decided record in details, never at the top level, because the
// envelope is closed.
func VersionUnsupported(protocol, runID string, cause error) *Error {
	d := map[string]any{"protocol": protocol}
	if runID != "" {
		d["runId"] = runID
	}
	return &Error{
		Status:  http.StatusBadRequest,
		Code:    CodeVersionUnsupported,
		Message: "the peer offers no protocol version this host accepts",
		Details: d,
		Err:     cause,
	}
}
