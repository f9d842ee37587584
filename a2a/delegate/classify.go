package delegate

import (
	"net/http"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
)

// A peer's error is identified by its JSON-RPC code or by the reason of
// the ErrorInfo in its data (OpenWOP RFC 0211 §F; A2A 1.0 §5.4 for the
// table). The A2A-specific codes are unambiguous and win; a peer that
// answers a generic code (-32603, -32000, a vendor code) with an A2A
// reason is read by the reason; the JSON-RPC standard codes come last.

// a2aError is one row of the A2A error table.
type a2aError struct {
	code   int
	reason string
	kind   error
}

// a2aErrors are the errors A2A 1.0 defines, with their ErrorInfo reasons
// (the error name in UPPER_SNAKE_CASE without "Error", A2A 1.0 §10.6) and
// a2a-go's sentinels.
var a2aErrors = [...]a2aError{
	{-32001, "TASK_NOT_FOUND", wire.ErrTaskNotFound},
	{-32002, "TASK_NOT_CANCELABLE", wire.ErrTaskNotCancelable},
	{-32003, "PUSH_NOTIFICATION_NOT_SUPPORTED", wire.ErrPushNotificationNotSupported},
	{-32004, "UNSUPPORTED_OPERATION", wire.ErrUnsupportedOperation},
	{-32005, "CONTENT_TYPE_NOT_SUPPORTED", wire.ErrUnsupportedContentType},
	{-32006, "INVALID_AGENT_RESPONSE", wire.ErrInvalidAgentResponse},
	{-32007, "EXTENDED_AGENT_CARD_NOT_CONFIGURED", wire.ErrExtendedCardNotConfigured},
	{-32008, "EXTENSION_SUPPORT_REQUIRED", wire.ErrExtensionSupportRequired},
	{-32009, "VERSION_NOT_SUPPORTED", wire.ErrVersionNotSupported},
	{-31401, "UNAUTHENTICATED", wire.ErrUnauthenticated},
	{-31403, "UNAUTHORIZED", wire.ErrUnauthorized},
}

// jsonrpcErrors are JSON-RPC 2.0 §5.1's codes (and -32000, the
// implementation-defined server error), with the reasons a2a-go writes.
var jsonrpcErrors = [...]a2aError{
	{-32700, "PARSE_ERROR", wire.ErrParseError},
	{-32600, "INVALID_REQUEST", wire.ErrInvalidRequest},
	{-32601, "METHOD_NOT_FOUND", wire.ErrMethodNotFound},
	{-32602, "INVALID_PARAMS", wire.ErrInvalidParams},
	{-32603, "INTERNAL_ERROR", wire.ErrInternalError},
	{-32000, "SERVER_ERROR", wire.ErrServerError},
}

// classify returns the code and sentinel of the error a peer named with
// code and reason; (code, nil) for one the library does not know.
func classify(code int, reason string) (int, error) {
	for _, e := range a2aErrors {
		if e.code == code {
			return e.code, e.kind
		}
	}
	if reason != "" {
		for _, e := range a2aErrors {
			if e.reason == reason {
				return e.code, e.kind
			}
		}
	}
	for _, e := range jsonrpcErrors {
		if e.code == code {
			return e.code, e.kind
		}
	}
	if reason != "" {
		for _, e := range jsonrpcErrors {
			if e.reason == reason {
				return e.code, e.kind
			}
		}
	}
	return code, nil
}

// statusError is the error of a response that carries no readable error
// body: what its HTTP status says, and nothing more.
func statusError(status int) *PeerError {
	e := &PeerError{HTTPStatus: status}
	switch {
	case status == http.StatusUnauthorized:
		e.Code, e.kind = -31401, wire.ErrUnauthenticated
	case status == http.StatusForbidden:
		e.Code, e.kind = -31403, wire.ErrUnauthorized
	case status == http.StatusNotFound || status == http.StatusMethodNotAllowed:
		// The interface URL does not serve the binding.
		e.Code, e.kind = -32601, wire.ErrMethodNotFound
	case status >= 400 && status < 500 && status != http.StatusTooManyRequests && status != http.StatusRequestTimeout:
		e.Code, e.kind = -32600, wire.ErrInvalidRequest
	default:
		// 408, 429, 5xx and anything else: the agent could not serve.
		e.Code, e.kind = -32000, wire.ErrServerError
	}
	return e
}

// validReason reports whether r is an ErrorInfo reason token
// (UPPER_SNAKE_CASE, A2A 1.0 §10.6), so that a reason kept in a
// [PeerError] can never carry free text from the peer.
func validReason(r string) bool {
	if r == "" || len(r) > 64 {
		return false
	}
	for i := 0; i < len(r); i++ {
		if c := r[i]; !('A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}
