package mcp

// The JSON-RPC framing of the mount: one message per POST, decoded strictly
// (member names are matched exactly, unlike encoding/json's struct
// decoding), and every answer written by exactly two functions: writeResult
// for results and writeError for everything else. Status mapping:
//
//	-32700 parse error, -32600 invalid request      400
//	-32602, -32020, -32021, -32022                  400
//	-32601 method not found                         404
//	-32603 internal error (a panic too; recover.go) 500
//	-32603 while shutting down (Server.Drain)       503
//	refusals before the body (405, 401, 403, 413)   their own status, -32600, no id
//	a body too slow (BodyTimeout)                   408, -32600, no id

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
)

// JSON-RPC and MCP error codes the mount produces.
const (
	codeParseError        = -32700
	codeInvalidRequest    = -32600
	codeMethodNotFound    = -32601
	codeInvalidParams     = -32602
	codeInternalError     = -32603
	codeHeaderMismatch    = -32020
	codeMissingCapability = -32021
	codeUnsupportedVer    = -32022
)

// rpcError is an error in JSON-RPC shape. Operations return it; writeError
// is the only place it becomes bytes.
type rpcError struct {
	code    int
	message string
	// data is the error's data member, already JSON; nil omits it.
	data json.RawMessage
	// status overrides the HTTP status the code maps to (401, 403, 405,
	// 408, 413); 0 means by code.
	status int
	// challenge is sent as WWW-Authenticate with a 401.
	challenge bool
}

func (e *rpcError) Error() string { return "mcp: " + strconv.Itoa(e.code) + " " + e.message }

// httpStatus is the HTTP status the error is sent with.
func (e *rpcError) httpStatus() int {
	if e.status != 0 {
		return e.status
	}
	switch e.code {
	case codeMethodNotFound:
		return http.StatusNotFound
	case codeInternalError:
		return http.StatusInternalServerError
	}
	return http.StatusBadRequest
}

func newError(code int, msg string) *rpcError { return &rpcError{code: code, message: msg} }

// withData returns e with data set to the JSON encoding of v.
func (e *rpcError) withData(v any) *rpcError {
	b, err := marshal(v)
	if err != nil { // every data value is a plain struct or map of strings
		panic("mcp: unencodable error data: " + err.Error())
	}
	e.data = b
	return e
}

func errInvalidParams(msg string) *rpcError { return newError(codeInvalidParams, msg) }

func errInternal() *rpcError { return newError(codeInternalError, "Internal error") }

// errShuttingDown refuses a request that arrives after Server.Drain (or a
// listen request after Close).
var errShuttingDown = &rpcError{code: codeInternalError, message: "Server shutting down", status: http.StatusServiceUnavailable}

// errCallDrained answers a blocking tools/call whose run was still working
// when Server.Drain was called; the run was cancelled.
var errCallDrained = &rpcError{code: codeInternalError, message: "Server shutting down: the tool call was cancelled", status: http.StatusServiceUnavailable}

// errAs reports err as an *rpcError, turning anything else into the
// generic internal error (whose text never reaches the wire).
func errAs(err error) (*rpcError, bool) {
	var e *rpcError
	if errors.As(err, &e) {
		return e, true
	}
	return errInternal(), false
}

// rpcMessage is one decoded JSON-RPC message. id and params alias the
// request body.
type rpcMessage struct {
	// id is the raw JSON id (a string or a number); nil for a notification.
	id     json.RawMessage
	method string
	// params are the members of the params object (nil when absent).
	params map[string]json.RawMessage
}

func (m *rpcMessage) notification() bool { return m.id == nil }

// decodeMessage reads body as exactly one JSON-RPC 2.0 request or
// notification. Every refusal is an *rpcError; once the id is known it is
// returned with the error so the answer can echo it.
func decodeMessage(body []byte) (rpcMessage, *rpcError) {
	var msg rpcMessage
	body = bytes.TrimLeft(body, " \t\r\n")
	if !json.Valid(body) {
		return msg, newError(codeParseError, "Parse error: the body is not JSON")
	}
	switch body[0] {
	case '{':
	case '[':
		return msg, newError(codeInvalidRequest, "Invalid request: batches are not supported; send one message per POST")
	default:
		return msg, newError(codeInvalidRequest, "Invalid request: the body must be a JSON-RPC object")
	}
	var env map[string]json.RawMessage
	if err := json.Unmarshal(body, &env); err != nil {
		return msg, newError(codeParseError, "Parse error: the body is not JSON")
	}
	if raw, ok := env["id"]; ok {
		if !validID(raw) {
			return msg, newError(codeInvalidRequest, "Invalid request: id must be a string or a number")
		}
		msg.id = raw
	}
	if v, ok := env["jsonrpc"]; !ok || string(v) != `"2.0"` {
		return msg, newError(codeInvalidRequest, `Invalid request: jsonrpc must be "2.0"`)
	}
	rawMethod, ok := env["method"]
	if !ok || json.Unmarshal(rawMethod, &msg.method) != nil || rawMethod[0] != '"' {
		return msg, newError(codeInvalidRequest, "Invalid request: method must be a string")
	}
	if p, ok := env["params"]; ok && string(p) != "null" {
		if p[0] != '{' {
			return msg, newError(codeInvalidRequest, "Invalid request: params must be an object")
		}
		if err := json.Unmarshal(p, &msg.params); err != nil {
			return msg, newError(codeInvalidRequest, "Invalid request: params must be an object")
		}
	}
	return msg, nil
}

// validID reports whether raw is a JSON string or number. MCP ids are
// never null.
func validID(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return false
	}
	switch c := raw[0]; {
	case c == '"':
		return true
	case c == '-' || '0' <= c && c <= '9':
		return true
	}
	return false
}

// marshal encodes v as compact JSON without HTML escaping (results carry
// workflow text; escaping < and & would only obscure it).
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	out := b.Bytes()
	return out[:len(out)-1], nil // Encode appends a newline
}

// appendResponse appends one JSON-RPC result response: the result object
// gets the server's _meta (serverInfo) spliced in as its first member.
func (s *Server) appendResponse(dst []byte, id json.RawMessage, result []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"result":`...)
	return s.appendResultObject(dst, result)
}

// appendResultObject appends result (a JSON object) with the server's
// _meta first.
func (s *Server) appendResultObject(dst, result []byte) []byte {
	dst = append(dst, `{"_meta":{"io.modelcontextprotocol/serverInfo":`...)
	dst = append(dst, s.serverInfo...)
	dst = append(dst, '}')
	if len(result) > 2 {
		dst = append(dst, ',')
		dst = append(dst, result[1:]...)
		return append(dst, '}')
	}
	return append(dst, '}')
}

// appendError appends one JSON-RPC error response. id nil omits the id
// member (MCP allows an error response without one when the id is unknown).
func appendError(dst []byte, id json.RawMessage, e *rpcError) []byte {
	dst = append(dst, `{"jsonrpc":"2.0",`...)
	if id != nil {
		dst = append(dst, `"id":`...)
		dst = append(dst, id...)
		dst = append(dst, ',')
	}
	dst = append(dst, `"error":{"code":`...)
	dst = strconv.AppendInt(dst, int64(e.code), 10)
	dst = append(dst, `,"message":`...)
	dst = appendString(dst, e.message)
	if e.data != nil {
		dst = append(dst, `,"data":`...)
		dst = append(dst, e.data...)
	}
	return append(dst, "}}"...)
}

// appendString appends s as a JSON string.
func appendString(dst []byte, s string) []byte {
	b, _ := marshal(s) // a string always encodes
	return append(dst, b...)
}

// writeError is the one function that turns an error into wire bytes. An
// error that is not an *rpcError is a server fault: it is logged and
// answered with the generic internal error, never with its text.
//
// It reports whether the whole response reached the connection.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, id json.RawMessage, err error) bool {
	e, ok := errAs(err)
	if !ok {
		s.log.ErrorContext(r.Context(), "mcp: request failed", "error", err)
	}
	h := w.Header()
	if e.challenge {
		h.Set("WWW-Authenticate", s.cfg.WWWAuthenticate)
	}
	if e.status == http.StatusMethodNotAllowed {
		h.Set("Allow", http.MethodPost)
	}
	if writeJSON(w, e.httpStatus(), appendError(nil, id, e)) != nil {
		return false
	}
	return http.NewResponseController(w).Flush() == nil
}

// writeJSON writes one application/json body.
func writeJSON(w http.ResponseWriter, status int, body []byte) error {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, err := w.Write(body)
	return err
}

// writeResult writes one result response and flushes it to the
// connection. It reports whether the whole response was handed to the
// connection: the point after which a request no longer owns its run
// (OpenWOP interop.md §MCP tasks and cancellation).
func (s *Server) writeResult(w http.ResponseWriter, r *http.Request, id json.RawMessage, result []byte) bool {
	body := s.appendResponse(make([]byte, 0, len(result)+160), id, result)
	if err := writeJSON(w, http.StatusOK, body); err != nil {
		return false
	}
	return http.NewResponseController(w).Flush() == nil
}

// writeResultValue encodes v as the result of c's request.
func (s *Server) writeResultValue(w http.ResponseWriter, r *http.Request, c *call, v any) bool {
	b, err := marshal(v)
	if err != nil {
		s.writeError(w, r, c.msg.id, fmt.Errorf("encode result: %w", err))
		return false
	}
	return s.writeResult(w, r, c.msg.id, b)
}
