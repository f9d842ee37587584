package mcp

// The binding: the one place where the mount turns what an operation
// returns into HTTP. Operations return an answer (a JSON result object, an
// acceptance, or a stream) or an error; nothing below serveHTTP writes to
// the ResponseWriter except through this file and its SSE framing
// (wire_sse.go). Status mapping:
//
//	-32700 parse error, -32600 invalid request      400
//	-32602, -32020, -32021, -32022                  400
//	-32601 method not found                         404
//	-32603 internal error (a panic too; recover.go) 500
//	-32603 while shutting down (Server.Drain)       503
//	refusals before the body (405, 401, 403, 413)   their own status, -32600, no id
//	a body too slow (BodyTimeout)                   408, -32600, no id
//	a notification                                  202, no body
//
// A request that owns a run (inflight.go) hands it over only when its
// whole answer reached the connection, so an answer to such a request is
// written through its flight.

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/wopinterop/wopinterop/internal/httpbody"
	"github.com/wopinterop/wopinterop/internal/jsonbytes"
	"github.com/wopinterop/wopinterop/internal/jsonrpc"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/mcp/internal/mount"
)

// JSON-RPC and MCP error codes the mount produces.
const (
	codeParseError        = jsonrpc.CodeParseError
	codeInvalidRequest    = jsonrpc.CodeInvalidRequest
	codeMethodNotFound    = jsonrpc.CodeMethodNotFound
	codeInvalidParams     = jsonrpc.CodeInvalidParams
	codeInternalError     = jsonrpc.CodeInternalError
	codeHeaderMismatch    = -32020
	codeMissingCapability = -32021
	codeUnsupportedVer    = -32022
)

// Error is a JSON-RPC error in MCP's shape: what the mount answers a
// request it refuses, and what host middleware in front of the mount hands
// [WriteError].
type Error struct {
	Code    int
	Message string
	// Data is the error's data member, already JSON; nil omits it.
	Data json.RawMessage
	// Status is the HTTP status the error is sent with; 0 maps it from the
	// code: -32601 is 404, -32603 is 500, every other code 400. A 401 is
	// sent with WWW-Authenticate, a 405 with Allow: POST.
	Status int
}

func (e *Error) Error() string { return "mcp: " + strconv.Itoa(e.Code) + " " + e.Message }

// httpStatus is the HTTP status the error is sent with.
func (e *Error) httpStatus() int {
	if e.Status != 0 {
		return e.Status
	}
	switch e.Code {
	case codeMethodNotFound:
		return http.StatusNotFound
	case codeInternalError:
		return http.StatusInternalServerError
	}
	return http.StatusBadRequest
}

func newError(code int, msg string) *Error { return &Error{Code: code, Message: msg} }

// withData returns e with data set to the JSON encoding of v.
func (e *Error) withData(v any) *Error {
	b, err := mount.Marshal(v)
	if err != nil { // every data value is a plain struct or map of strings
		panic("mcp: unencodable error data: " + err.Error())
	}
	e.Data = b
	return e
}

func errInvalidParams(msg string) *Error { return newError(codeInvalidParams, msg) }

func errInternal() *Error { return newError(codeInternalError, "Internal error") }

// errShuttingDown refuses a request that arrives after Server.Drain (or a
// listen request after Close).
var errShuttingDown = &Error{Code: codeInternalError, Message: "Server shutting down", Status: http.StatusServiceUnavailable}

// errCallDrained answers a blocking tools/call whose run was still working
// when Server.Drain was called; the run was cancelled.
var errCallDrained = &Error{Code: codeInternalError, Message: "Server shutting down: the tool call was cancelled", Status: http.StatusServiceUnavailable}

// Refusals a host's middleware shares with the mount's own guard.
var (
	errUnauthenticated = &Error{Code: codeInvalidRequest, Message: "Unauthorized: authentication required", Status: http.StatusUnauthorized}
	errForbidden       = &Error{Code: codeInvalidRequest, Message: "Forbidden: the credential may not use this MCP server", Status: http.StatusForbidden}
	errBodyTooLarge    = &Error{Code: codeInvalidRequest, Message: "Request body too large", Status: http.StatusRequestEntityTooLarge}
)

// errNoAnswer is what an operation returns when its client is gone: the
// binding writes nothing, and a run the request owned is cancelled as for
// any request that never delivered its answer.
var errNoAnswer = errors.New("mcp: the client is gone")

// errAs reports err as an *Error, turning anything else into the generic
// internal error (whose text never reaches the wire).
func errAs(err error) (*Error, bool) {
	if e, ok := errors.AsType[*Error](err); ok {
		return e, true
	}
	return errInternal(), false
}

// WriteError writes err as an MCP JSON-RPC error response, for host
// middleware mounted in front of [Server.Handler] that refuses a request
// before the mount runs (authentication, rate limits, body limits), so
// that every answer on the MCP endpoint stays in MCP's shape (JSON-RPC 2.0
// §5.1; MCP 2026-07-28 streamable HTTP transport).
//
// id is the request's id as raw JSON, if the middleware read it; nil, or
// anything but a JSON string or number, omits it, as the mount does for a
// request refused before its body is read.
//
// err may be an [*Error] (the middleware picks code, message, data and
// HTTP status: a rate limiter answers Status 429 and adds Retry-After),
// [interop.ErrUnauthenticated] (HTTP 401 with -32600 and
// `WWW-Authenticate: Bearer` unless the middleware set the header),
// [interop.ErrForbidden] (HTTP 403, -32600) or an [*http.MaxBytesError]
// (HTTP 413, -32600): the answers the mount's own guard gives. Anything
// else becomes HTTP 500 with -32603 "Internal error"; its text is never
// sent.
func WriteError(w http.ResponseWriter, id json.RawMessage, err error) {
	if !validID(id) {
		id = nil
	}
	var e *Error
	switch {
	case errors.Is(err, interop.ErrUnauthenticated):
		e = errUnauthenticated
	case errors.Is(err, interop.ErrForbidden):
		e = errForbidden
	default:
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			e = errBodyTooLarge
		} else {
			e, _ = errAs(err)
		}
	}
	if e.httpStatus() == http.StatusUnauthorized && w.Header().Get("WWW-Authenticate") == "" {
		w.Header().Set("WWW-Authenticate", "Bearer")
	}
	writeErrorBody(w, id, e)
}

// writeErrorBody writes e as the whole response; it reports whether the
// response reached the connection.
func writeErrorBody(w http.ResponseWriter, id json.RawMessage, e *Error) bool {
	if e.httpStatus() == http.StatusMethodNotAllowed {
		w.Header().Set("Allow", http.MethodPost)
	}
	if writeJSON(w, e.httpStatus(), appendError(nil, id, e)) != nil {
		return false
	}
	return http.NewResponseController(w).Flush() == nil
}

// answer is what an operation answers when it does not fail: exactly one
// of a result object, an acceptance or a stream.
type answer struct {
	// body is the JSON result object, without the server's _meta, which
	// the binding splices in.
	body []byte
	// accepted answers a notification: HTTP 202 without a body.
	accepted bool
	// stream, when set, is run on an SSE answer the binding opened (a
	// subscriptions/listen stream); it returns when the stream ends.
	stream func(st *stream)
}

// answerOf encodes v as an operation's result.
func answerOf(v any) (answer, error) {
	b, err := mount.Marshal(v)
	if err != nil {
		return answer{}, err
	}
	return answer{body: b}, nil
}

// serveHTTP is the mount's handler: it serves the request, then writes
// what the operation answered.
func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	x := &exchange{ResponseWriter: w, s: s}
	x.call.r = r
	defer s.recoverRequest(x)
	res, err := s.serve(x)
	s.reply(x, res, err)
}

// reply writes an operation's answer. A request that owns a run writes it
// through the run's flight, which cancels the run unless the whole answer
// reached the connection.
func (s *Server) reply(x *exchange, res answer, err error) {
	owner := x.call.owner
	if errors.Is(err, errNoAnswer) {
		if owner != nil {
			owner.abandon()
		}
		return
	}
	if owner != nil {
		if owner.deliver(func() bool { return s.write(x, res, err) }) && owner.handedOver != nil {
			owner.handedOver()
		}
		return
	}
	s.write(x, res, err)
}

// write turns an answer into bytes and reports whether the whole response
// reached the connection.
func (s *Server) write(x *exchange, res answer, err error) bool {
	id := x.call.id
	if x.sse != nil { // a native tool's progress opened an SSE answer
		defer x.sse.close()
		if err != nil {
			return x.sse.sendError(id, s.wireError(x.call.r.Context(), err))
		}
		return x.sse.sendRaw(s.appendResponse(nil, id, res.body))
	}
	switch {
	case err != nil:
		if !x.read {
			httpbody.Abandon(x, x.call.r) // refused before the body: never wait for it
		}
		e := s.wireError(x.call.r.Context(), err)
		if e.httpStatus() == http.StatusUnauthorized {
			x.Header().Set("WWW-Authenticate", s.opts.WWWAuthenticate)
		}
		return writeErrorBody(x, id, e)
	case res.accepted:
		x.WriteHeader(http.StatusAccepted)
		return true
	case res.stream != nil:
		st := s.openStream(x, id, keepAliveInterval)
		defer st.close()
		res.stream(st)
		return true
	}
	buf := s.replies.get(len(res.body) + 160)
	defer s.replies.put(buf)
	*buf = s.appendResponse(*buf, id, res.body)
	if writeJSON(x, http.StatusOK, *buf) != nil {
		return false
	}
	return http.NewResponseController(x).Flush() == nil
}

// replyBuffers recycles the buffers JSON answers are assembled in: a
// ResponseWriter does not keep what it is handed (io.Writer), so a buffer
// is free again once the answer is written.
type replyBuffers struct{ pool sync.Pool }

// maxReplyBuffer is the largest buffer kept for reuse; a rare long answer
// (a full tools/list page) does not pin its memory.
const maxReplyBuffer = 64 << 10

// get returns an empty buffer with room for n bytes.
func (p *replyBuffers) get(n int) *[]byte {
	if b, ok := p.pool.Get().(*[]byte); ok {
		*b = slices.Grow((*b)[:0], n)
		return b
	}
	b := make([]byte, 0, n)
	return &b
}

func (p *replyBuffers) put(b *[]byte) {
	if cap(*b) <= maxReplyBuffer {
		*b = (*b)[:0]
		p.pool.Put(b)
	}
}

// writePanicked answers a request whose handler panicked with -32603
// naming the request id when known: as the whole answer when nothing was
// written yet, as the last event of an SSE answer under way; a JSON answer
// already written stays as it is.
func (s *Server) writePanicked(x *exchange) {
	id := x.call.id
	switch {
	case !x.begun.Load():
		writeErrorBody(x, id, errInternal())
	case x.Header().Get("Content-Type") == contentTypeSSE:
		s.streamOn(x).sendError(id, errInternal())
	}
}

// wireError is err as it goes on the wire. An error that is not an *Error
// is a server fault: it is logged and answered with the generic internal
// error, never with its text.
func (s *Server) wireError(ctx context.Context, err error) *Error {
	e, ok := errAs(err)
	if !ok {
		s.log.ErrorContext(ctx, "mcp: request failed", "error", err)
	}
	return e
}

// exchange is one request as serveHTTP follows it: the ResponseWriter the
// binding writes through, which notes when the answer began, the request's
// call once guarded, and the SSE answer a native tool's progress opened —
// one allocation for all of them.
type exchange struct {
	http.ResponseWriter
	s *Server
	// begun is set by the first WriteHeader or Write; a native tool's
	// progress may write from the host's goroutine.
	begun atomic.Bool
	// read: the body was read (or its reading began), so a refusal need
	// not abandon it.
	read bool
	call call
	// sse is the progress stream of a native tool call, once opened.
	sse *stream
}

func (x *exchange) WriteHeader(status int) {
	x.begun.Store(true)
	x.ResponseWriter.WriteHeader(status)
}

func (x *exchange) Write(b []byte) (int, error) {
	x.begun.Store(true)
	return x.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (flushes,
// deadlines).
func (x *exchange) Unwrap() http.ResponseWriter { return x.ResponseWriter }

// notifier is a request's exchange as the sender of its notifications
// (a native tool's progress), and nothing more.
type notifier exchange

// Notify sends one notification ahead of the request's answer, answering
// the request as an SSE stream from the first one on. The extension
// serializes its calls and stops before the call answers.
func (n *notifier) Notify(method string, params []byte) {
	x := (*exchange)(n)
	if x.sse == nil {
		x.sse = x.s.openStream(x, nil, 0)
	}
	x.sse.notify(method, params)
}

// rpcMessage is one decoded JSON-RPC message. id and params alias the
// request body.
type rpcMessage struct {
	// id is the raw JSON id (a string or a number); nil for a notification.
	id     json.RawMessage
	method string
	// params are the members of the params object (none when absent).
	params mount.Params
}

func (m *rpcMessage) notification() bool { return m.id == nil }

// decodeMessage reads body as exactly one JSON-RPC 2.0 request or
// notification through the shared codec (internal/jsonrpc) under MCP's
// rules: ids are never null, batches are refused. Every refusal is an
// *Error; once the id is known it is returned with the error so the
// answer can echo it.
func decodeMessage(body []byte) (rpcMessage, *Error) {
	var msg rpcMessage
	body = jsonbytes.TrimSpace(body)
	if !jsonbytes.Valid(body) {
		return msg, newError(codeParseError, "Parse error: the body is not JSON")
	}
	switch body[0] {
	case '{':
	case '[':
		return msg, newError(codeInvalidRequest, "Invalid request: batches are not supported; send one message per POST")
	default:
		return msg, newError(codeInvalidRequest, "Invalid request: the body must be a JSON-RPC object")
	}
	q, problem := jsonrpc.Parse(body, jsonrpc.Rules{})
	msg.id = q.ID
	switch problem {
	case jsonrpc.OK:
	case jsonrpc.NotJSON:
		return rpcMessage{}, newError(codeParseError, "Parse error: the body is not JSON")
	case jsonrpc.BadID:
		return msg, newError(codeInvalidRequest, "Invalid request: id must be a string or a number")
	case jsonrpc.BadVersion:
		return msg, newError(codeInvalidRequest, `Invalid request: jsonrpc must be "2.0"`)
	case jsonrpc.BadMethod:
		return msg, newError(codeInvalidRequest, "Invalid request: method must be a string")
	default:
		return msg, newError(codeInvalidRequest, "Invalid request: params must be an object")
	}
	msg.method = methodName(&q)
	// jsonrpc.Parse checked that params, when present, is an object.
	msg.params = mount.ParamsOf(q.Params)
	return msg, nil
}

// paramMembers splits a params object into its members exactly as
// json.Unmarshal into a map[string]json.RawMessage would — names unquoted
// (invalid UTF-8 replaced by U+FFFD), the last of duplicated names kept —
// but in one pass over bytes the envelope check already validated, with
// the values aliasing params (as the id does the body) instead of copied.
func paramMembers(params []byte) (map[string]json.RawMessage, bool) {
	members := make(map[string]json.RawMessage, 4)
	sc := jsonbytes.Scanner{Data: params}
	err := sc.Members(func(name []byte, escaped bool, value []byte) error {
		key, known := knownName(name)
		if !known {
			var err error
			if key, err = jsonbytes.Unquote(name, escaped || !utf8.Valid(name)); err != nil {
				return err
			}
		}
		members[key] = value
		return nil
	})
	return members, err == nil
}

// knownName is the constant for a member name the guard and the tools
// read (raw, unescaped), so that splitting an ordinary request allocates
// no string per member.
func knownName(raw []byte) (string, bool) {
	switch string(raw) {
	case "_meta":
		return "_meta", true
	case "name":
		return "name", true
	case "arguments":
		return "arguments", true
	case "cursor":
		return "cursor", true
	case "taskId":
		return "taskId", true
	case metaProtocolVersion:
		return metaProtocolVersion, true
	case metaClientCapabilities:
		return metaClientCapabilities, true
	case "elicitation":
		return "elicitation", true
	case "sampling":
		return "sampling", true
	case "roots":
		return "roots", true
	case "extensions":
		return "extensions", true
	case TasksExtension:
		return TasksExtension, true
	}
	return "", false
}

// methodName is q's method, as the constant when the mount serves or
// refuses it by name, so that an ordinary request allocates no string for
// it.
func methodName(q *jsonrpc.Request) string {
	if !q.MethodEscaped {
		switch string(q.Method) {
		case methodToolsCall:
			return methodToolsCall
		case methodToolsList:
			return methodToolsList
		case methodDiscover:
			return methodDiscover
		case methodListen:
			return methodListen
		case methodTasksGet:
			return methodTasksGet
		case methodNotifyCancelled:
			return methodNotifyCancelled
		}
	}
	return q.MethodName()
}

// validID reports whether raw is a JSON string or number. MCP ids are
// never null.
func validID(raw json.RawMessage) bool { return jsonrpc.ValidID(raw, false) }

// appendResponse appends one JSON-RPC result response: the result object
// gets the server's _meta (serverInfo) spliced in as its first member.
func (s *Server) appendResponse(dst []byte, id json.RawMessage, result []byte) []byte {
	dst = jsonrpc.AppendResultStart(dst, id)
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
func appendError(dst []byte, id json.RawMessage, e *Error) []byte {
	dst = jsonrpc.AppendErrorStart(dst, id, jsonrpc.OmitID, e.Code, e.Message, false)
	if e.Data != nil {
		dst = append(dst, `,"data":`...)
		dst = append(dst, e.Data...)
	}
	return jsonrpc.AppendErrorEnd(dst)
}

// appendNotification appends one JSON-RPC notification with params, an
// encoded JSON object.
func appendNotification(dst []byte, method string, params []byte) []byte {
	return jsonrpc.AppendNotification(dst, method, params, false)
}

// writeJSON writes one application/json body.
func writeJSON(w http.ResponseWriter, status int, body []byte) error {
	// Both values in one backing array, as http.Header.Clone keeps them;
	// the keys are canonical, so they are set as Header.Set would.
	values := []string{"application/json", strconv.Itoa(len(body))}
	h := w.Header()
	h["Content-Type"] = values[0:1:1]
	h["Content-Length"] = values[1:2:2]
	w.WriteHeader(status)
	_, err := w.Write(body)
	return err
}
