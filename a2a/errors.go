package a2a

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/wopinterop/wopinterop/mapping"
)

// Error is an A2A protocol error on its way to the wire: the JSON-RPC code,
// the gRPC status name and HTTP status of its row, the ErrorInfo reason, a
// short safe message and ErrorInfo metadata. Nothing below the bindings
// writes HTTP; the bindings turn an *Error into bytes in exactly one
// function each (appendRPCError in jsonrpc.go, writeStatus in rest.go).
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

// JSON-RPC codes outside the interop map's A2A error table.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeInternal       = -32603
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
	rows map[int]mapping.ErrorRow
}

func newErrorTable(m *mapping.Map) (*errorTable, error) {
	t := &errorTable{rows: map[int]mapping.ErrorRow{}}
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
// Config.BodyTimeout: HTTP 408 on both bindings.
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
