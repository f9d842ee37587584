package a2a

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/wopinterop/wopinterop/internal/httpbody"
	"github.com/wopinterop/wopinterop/internal/interopmap"
	"github.com/wopinterop/wopinterop/internal/jsonrpc"
	"github.com/wopinterop/wopinterop/interop"
)

// Error is an A2A protocol error on its way to the wire: the JSON-RPC code,
// the gRPC status name and HTTP status of its row, the ErrorInfo reason, a
// short safe message and ErrorInfo metadata. Nothing below the bindings
// writes HTTP; the bindings turn an *Error into bytes in exactly one
// function each (appendRPCError in jsonrpc_codec.go, appendStatus in
// status.go), around the one encoding of its details (errordetail.go).
//
// Host middleware builds one with [NewError] and writes it with
// [WriteJSONRPCError] or [WriteHTTPJSONError].
//
// Messages are fixed strings chosen here, never an error chain, a peer body
// or a credential (OpenWOP interop map, a2a.fields).
type Error struct {
	// Code is the JSON-RPC error code.
	Code int
	// GRPC is the gRPC status name, the google.rpc.Status "status" member.
	GRPC string
	// HTTP is the HTTP status of the HTTP+JSON binding. On the JSON-RPC
	// binding it is used only for refusals before dispatch (401, 403, 413).
	HTTP int
	// Reason is the ErrorInfo reason; empty for -32602, which carries no A2A
	// reason (OpenWOP RFC 0211 §A).
	Reason string
	// Message is short and safe to show.
	Message string
	// Metadata becomes ErrorInfo.metadata (e.g. supportedVersions).
	Metadata map[string]string
	// Field names the offending request member of a -32602, reported as a
	// google.rpc.BadRequest field violation.
	Field string
}

func (e *Error) Error() string { return fmt.Sprintf("a2a error %d: %s", e.Code, e.Message) }

// NewError returns the error host middleware answers with, in front of the
// handlers, in the binding's own shape (OpenWOP RFC 0211 §C): a rate
// limit (429), a maintenance window (503), a refusal of its own (403).
// reason is the ErrorInfo reason (UPPER_SNAKE_CASE, e.g. RATE_LIMITED) and
// message a short text safe to show; an empty message is the status text.
//
// The rest follows from httpStatus. The gRPC status name is the one
// google.rpc.Code maps onto it (400 INVALID_ARGUMENT, 401
// UNAUTHENTICATED, 403 PERMISSION_DENIED, 404 NOT_FOUND, 408 and 504
// DEADLINE_EXCEEDED, 409 ABORTED, 413 INVALID_ARGUMENT, 429
// RESOURCE_EXHAUSTED, 499 CANCELLED, 500 INTERNAL, 501 UNIMPLEMENTED, 503
// UNAVAILABLE; UNKNOWN otherwise). The JSON-RPC code is the one the
// library itself answers such a refusal with: -31401 for 401, -31403 for
// 403, -32600 for 400, 408 and 413, -32603 for 500, and -32000, JSON-RPC
// 2.0's implementation-defined server error (§5.1), for the rest. A
// status outside 400–599 is 500. On JSON-RPC, 401, 403, 408, 413, 429 and
// 503 keep their HTTP status and every other code travels with 200, as
// the binding's own refusals do. Set Metadata for ErrorInfo.metadata
// (e.g. the retry delay).
//
// a2a-go's HTTP+JSON client reads such an error by its reason (an A2A
// reason it knows, such as UNAUTHENTICATED, becomes that error; any other
// its ErrInternalError); its JSON-RPC client reads a 200 response by its
// code and any other status as a transport error.
func NewError(httpStatus int, reason, message string) *Error {
	if httpStatus < 400 || httpStatus > 599 {
		httpStatus = http.StatusInternalServerError
	}
	if message == "" {
		message = http.StatusText(httpStatus)
	}
	grpc, code := hostCodes(httpStatus)
	return &Error{Code: code, GRPC: grpc, HTTP: httpStatus, Reason: reason, Message: message}
}

// grpcNames are the google.rpc.Code names by their HTTP mapping
// (google/rpc/code.proto), with 408 and 413 as the bindings answer them.
var grpcNames = map[int]string{
	400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
	408: "DEADLINE_EXCEEDED", 409: "ABORTED", 413: "INVALID_ARGUMENT", 429: "RESOURCE_EXHAUSTED",
	499: "CANCELLED", 500: "INTERNAL", 501: "UNIMPLEMENTED", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED",
}

// hostCodes are the gRPC status name and the JSON-RPC code of a host
// refusal with HTTP status.
func hostCodes(status int) (grpc string, code int) {
	grpc, ok := grpcNames[status]
	if !ok {
		grpc = "UNKNOWN"
	}
	switch status {
	case http.StatusBadRequest, http.StatusRequestTimeout, http.StatusRequestEntityTooLarge:
		return grpc, codeInvalidRequest
	case http.StatusUnauthorized:
		return grpc, codeUnauthenticated
	case http.StatusForbidden:
		return grpc, codeForbidden
	case http.StatusInternalServerError:
		return grpc, codeInternal
	}
	return grpc, codeServerError
}

// JSON-RPC codes outside the interop map's A2A error table: the standard
// ones (JSON-RPC 2.0 §5.1, internal/jsonrpc) and a2a-go's.
const (
	codeParseError     = jsonrpc.CodeParseError
	codeInvalidRequest = jsonrpc.CodeInvalidRequest
	codeMethodNotFound = jsonrpc.CodeMethodNotFound
	codeInvalidParams  = jsonrpc.CodeInvalidParams
	codeInternal       = jsonrpc.CodeInternalError
	// codeUnauthenticated and codeForbidden follow a2a-go, whose client maps
	// them to its ErrUnauthenticated and ErrUnauthorized.
	codeUnauthenticated = -31401
	codeForbidden       = -31403
	// codeServerError is the first of JSON-RPC 2.0's implementation-defined
	// server errors (§5.1), the one A2A leaves unused; a2a-go maps it to
	// its ErrServerError.
	codeServerError = -32000
)

// errors holds the constructors, built from the interop map's rows so the
// codes, gRPC names, HTTP statuses and reasons are the map's (OpenWOP interop map, a2a.errors).
type errorTable struct {
	rows map[int]interopmap.ErrorRow
}

func newErrorTable(m *interopmap.Map) (*errorTable, error) {
	t := &errorTable{rows: map[int]interopmap.ErrorRow{}}
	for _, code := range []int{-32001, -32002, -32003, -32004, -32005, -32006, -32007, -32008, -32009, -32602} {
		row, ok := m.A2AError(code)
		if !ok {
			return nil, fmt.Errorf("a2a: the interop map has no error row %d", code)
		}
		t.rows[code] = row
	}
	return t, nil
}

func (t *errorTable) row(code int, msg string) *Error {
	r := t.rows[code]
	return &Error{Code: r.JSONRPC, GRPC: r.GRPC, HTTP: r.HTTP, Reason: r.Reason, Message: msg}
}

// Row errors. Their messages are deliberately generic: the not-found message
// is identical for unknown and unreadable ids (OpenWOP RFC 0211 §D).
func (t *errorTable) taskNotFound() *Error { return t.row(-32001, "task not found") }
func (t *errorTable) notCancelable() *Error {
	return t.row(-32002, "task is in a terminal state and cannot be canceled")
}
func (t *errorTable) pushNotSupported() *Error {
	return t.row(-32003, "push notifications are not supported")
}
func (t *errorTable) unsupported(msg string) *Error { return t.row(-32004, msg) }
func (t *errorTable) contentType(msg string) *Error { return t.row(-32005, msg) }
func (t *errorTable) extendedCardNotConfigured() *Error {
	return t.row(-32007, "extended agent card is not configured")
}
func (t *errorTable) extensionRequired(msg string) *Error { return t.row(-32008, msg) }

// versionNotSupported carries the interface's versions comma-joined
// (OpenWOP RFC 0211 §E).
func (t *errorTable) versionNotSupported(supported string) *Error {
	e := t.row(-32009, "A2A-Version is not supported")
	e.Metadata = map[string]string{"supportedVersions": supported}
	return e
}

func (t *errorTable) invalidParams(field, msg string) *Error {
	e := t.row(-32602, msg)
	e.Reason = "" // -32602 carries no A2A reason
	e.Field = field
	return e
}

func parseError() *Error {
	return &Error{Code: codeParseError, GRPC: "INVALID_ARGUMENT", HTTP: 400, Reason: "PARSE_ERROR", Message: "request body is not valid JSON"}
}

func invalidRequest(msg string) *Error {
	return &Error{Code: codeInvalidRequest, GRPC: "INVALID_ARGUMENT", HTTP: 400, Reason: "INVALID_REQUEST", Message: msg}
}

func methodNotFound() *Error {
	return &Error{Code: codeMethodNotFound, GRPC: "UNIMPLEMENTED", HTTP: 404, Reason: "METHOD_NOT_FOUND", Message: "method not found"}
}

func internalError() *Error {
	return &Error{Code: codeInternal, GRPC: "INTERNAL", HTTP: 500, Reason: "INTERNAL_ERROR", Message: "internal error"}
}

func unauthenticated() *Error {
	return &Error{Code: codeUnauthenticated, GRPC: "UNAUTHENTICATED", HTTP: 401, Reason: "UNAUTHENTICATED", Message: "authentication required"}
}

func forbidden() *Error {
	return &Error{Code: codeForbidden, GRPC: "PERMISSION_DENIED", HTTP: 403, Reason: "PERMISSION_DENIED", Message: "not allowed"}
}

// unavailable refuses a request that arrives after [Server.Drain]. 503 and
// UNAVAILABLE tell clients and load balancers to retry elsewhere or later;
// the reason is the one a2a-go reads as ErrServerError on both bindings.
func unavailable() *Error {
	return &Error{Code: codeServerError, GRPC: "UNAVAILABLE", HTTP: http.StatusServiceUnavailable, Reason: "SERVER_ERROR", Message: "the server is shutting down; retry the request"}
}

func payloadTooLarge() *Error {
	return &Error{Code: codeInvalidRequest, GRPC: "INVALID_ARGUMENT", HTTP: 413, Reason: "INVALID_REQUEST", Message: "request body too large"}
}

// bodyTooSlow refuses a body that did not arrive within
// Options.BodyTimeout: HTTP 408 on both bindings.
func bodyTooSlow() *Error {
	return &Error{Code: codeInvalidRequest, GRPC: "DEADLINE_EXCEEDED", HTTP: http.StatusRequestTimeout, Reason: "INVALID_REQUEST", Message: "request body not received in time"}
}

// batchTooLarge refuses a JSON-RPC batch of more than max requests; the
// limit travels as ErrorInfo metadata so a client can split the batch.
func batchTooLarge(max int) *Error {
	e := invalidRequest("a batch may hold at most " + strconv.Itoa(max) + " requests")
	e.Metadata = map[string]string{"maxBatchSize": strconv.Itoa(max)}
	return e
}

// routeNotFound answers an HTTP+JSON path that is no A2A operation.
func routeNotFound() *Error {
	return &Error{Code: codeMethodNotFound, GRPC: "NOT_FOUND", HTTP: http.StatusNotFound, Reason: "METHOD_NOT_FOUND", Message: "no A2A operation at this path"}
}

// methodNotAllowed answers a known path with the wrong HTTP verb.
func methodNotAllowed() *Error {
	return &Error{Code: codeMethodNotFound, GRPC: "UNIMPLEMENTED", HTTP: http.StatusMethodNotAllowed, Reason: "METHOD_NOT_FOUND", Message: "HTTP method not allowed on this path"}
}

// unknownTenant is the refusal of a routing value outside the caller's
// inventory where no task is addressed.
func (t *errorTable) unknownTenant() *Error {
	return t.invalidParams("tenant", "tenant is not a routing value of this host")
}

// bodyError is the refusal of a body httpbody.Read did not deliver:
// incomplete is the binding's answer to a body the client stopped
// sending.
func bodyError(err error, incomplete *Error) *Error {
	switch {
	case errors.Is(err, httpbody.ErrTooLarge):
		return payloadTooLarge()
	case errors.Is(err, httpbody.ErrTooSlow):
		return bodyTooSlow()
	}
	return incomplete
}

// errNoResult reports an operation that returned neither a result nor an
// error, or a stream that ended before its first event: a server fault.
var errNoResult = errors.New("a2a: operation returned no result")

// asError turns any error reaching a binding into an *Error. An *Error
// passes through; everything else is an internal error whose text never
// reaches the wire (the binding logs it).
func asError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return internalError()
}

// edgeErrorOf maps the errors host middleware may hold onto *Error
// ([WriteJSONRPCError], [WriteHTTPJSONError]).
func edgeErrorOf(err error) *Error {
	var e *Error
	switch {
	case errors.As(err, &e):
		return e
	case errors.Is(err, interop.ErrUnauthenticated):
		return unauthenticated()
	case errors.Is(err, interop.ErrForbidden):
		return forbidden()
	}
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return payloadTooLarge()
	}
	return internalError()
}

// fault answers a server fault: logged with msg and args, answered as an
// internal error whose text never reaches the wire. A request whose caller
// went away returns the context's error instead, logged as nothing.
func (s *Server) fault(ctx context.Context, msg string, args ...any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.log.ErrorContext(ctx, msg, args...)
	return internalError()
}

// failure turns an operation's error into the *Error a binding sends,
// logging what never reaches the wire: an error that is not an *Error is a
// server fault, logged with the method and answered -32603 (HTTP+JSON 500
// INTERNAL). A request whose client went away is not logged as a fault.
func (s *Server) failure(ctx context.Context, method string, err error) *Error {
	e := asError(err)
	if e.Code == codeInternal && !errors.As(err, new(*Error)) && ctx.Err() == nil {
		s.log.ErrorContext(ctx, "a2a: operation failed", "method", method, "error", err)
	}
	return e
}
