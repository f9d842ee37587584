package a2a

// The JSON-RPC 2.0 binding (A2A 1.0.1 §9; OpenWOP interop map, a2a.operations, a2a.fields and
// a2a.errors; RFC 0211). Every
// answer on the interface URL is a JSON-RPC response, including the
// refusals before dispatch (OpenWOP RFC 0211 §C):
//
//	wrong HTTP method           405 + Allow: POST, -32600, id null
//	no or bad credential        401 + WWW-Authenticate, -31401, id null (403, -31403 when forbidden)
//	after Drain                 503, -32000 SERVER_ERROR, id null
//	body over MaxBodyBytes      413, -32600, id null
//	body slower than BodyTimeout 408, -32600, id null
//	not JSON                    200, -32700, id null
//	not a request object        200, -32600 (id echoed when it is readable)
//	batch over MaxBatch         200, -32600 with metadata.maxBatchSize, id null
//	A2A-Version not served      200, -32009 with metadata.supportedVersions
//	unknown method              200, -32601 METHOD_NOT_FOUND
//	facet off                   200, the row's error (-32003 push, -32004 streaming)
//	bad params                  200, -32602 (google.rpc.BadRequest when a field is known)
//	a panic, a server fault     200, -32603 INTERNAL_ERROR
//	everything else             200, the operation's error
//
// Streaming methods answer text/event-stream once their first event exists;
// a refusal before that is a plain JSON-RPC error response.
//
// Request handling: the caller is authenticated first (prepare), so the
// refusals that answer the HTTP request as a whole (401, 403, 503) come
// before a byte of the body is read, with id null. Then the body is read
// whole (body.go) and validated as JSON; the envelope is read in place
// (jsonrpc_envelope.go), the method looked up in the operation table
// (operations.go), and its params decoded strictly into the method's
// a2a-go request. A batch (JSON array) holds at most MaxBatch requests and
// is answered element by element in order, one authentication and version
// decision for the HTTP request (jsonrpc_batch.go). Notifications are
// never executed and get no response (see notification); a request with
// only notifications is answered 204 No Content.

import (
	"bytes"
	"context"
	"encoding/json"
	"iter"
	"net/http"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/internal/httpbody"
	"github.com/wopinterop/wopinterop/internal/jsonbytes"
)

// JSONRPC returns the handler of the JSON-RPC 2.0 interface. Mount it at
// the path of Deps.JSONRPCURL; it serves POST only. The handler owns a
// pool of buffers reused across requests.
func (s *Server) JSONRPC() http.Handler { return &rpcHandler{s: s} }

// WriteJSONRPCError writes err as a JSON-RPC 2.0 error response, for host
// middleware mounted in front of [Server.JSONRPC] that refuses a request
// before the handler runs (authentication, rate limits, body limits), so
// that every answer on the interface URL stays in the binding's shape
// (OpenWOP RFC 0211 §C).
//
// id is the request's id as raw JSON, if the middleware read it; nil, or
// anything but a JSON string, number or null, is written as null.
//
// err may be an [*Error] (from [NewError]: the middleware picks the HTTP
// status, reason and message), [interop.ErrUnauthenticated] (-31401, HTTP
// 401 with `WWW-Authenticate: Bearer` unless the middleware set the
// header), [interop.ErrForbidden] (-31403, HTTP 403) or an
// [*http.MaxBytesError] (-32600, HTTP 413). Anything else becomes -32603
// "internal error"; its text is never sent. An *Error whose HTTP is 408,
// 413, 429 or 503 is sent with that status (so that a rate limiter can
// pair 429 with Retry-After); every other code is sent with status 200,
// as the binding itself does.
func WriteJSONRPCError(w http.ResponseWriter, id json.RawMessage, err error) {
	if !validID(id) {
		id = nil
	}
	e := edgeErrorOf(err)
	out := appendRPCError(make([]byte, 0, 256), id, e)
	writeRPCBody(w, rpcStatus(e, true), out, "Bearer")
}

// rpcHandler serves one JSON-RPC interface.
type rpcHandler struct {
	s    *Server
	bufs bufferPool
}

// rpcRequest is one request object of the envelope, read in place: id and
// params alias the request body.
type rpcRequest struct {
	id []byte // raw JSON; nil when absent (a notification)
	// op is the method's row; nil for an unknown method.
	op     *operation
	params []byte // raw JSON object; nil when absent or null
}

// notification reports a request object without an id. A notification is
// never executed, alone or in a batch, and gets no response (JSON-RPC 2.0
// §4.1: the server must not reply to one). Every A2A method either changes
// state (SendMessage creates or continues a task, CancelTask, the
// push-config Create and Delete) — which a client that asked for no answer
// could neither see nor safely retry: it would never learn the task it
// created or that it was refused — or only reads, which without an answer
// does nothing. The HTTP request is still authenticated (401 and 403
// answer it); a request of notifications only is answered 204 No Content.
func (q *rpcRequest) notification() bool { return q.id == nil }

// method is the request's method name for logs; "" when unknown.
func (q *rpcRequest) method() string {
	if q.op == nil {
		return ""
	}
	return q.op.method
}

// streams reports a streaming method.
func (q *rpcRequest) streams() bool { return q.op != nil && q.op.events != nil }

// ServeHTTP answers the request, then writes its stream when it opened
// one. The stream runs beneath this small frame alone, once the large
// frames of reading and dispatching the request are gone: an open stream
// waits on this goroutine for as long as its task is idle, and the runtime
// shrinks a waiting goroutine's stack only when little of it is in use.
func (h *rpcHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if st := h.serveRequest(w, r); st != nil {
		st.serve(r.Context())
	}
}

// serveRequest answers the request, or returns the stream it opened,
// which then owns the request's buffers.
func (h *rpcHandler) serveRequest(w http.ResponseWriter, r *http.Request) (st *rpcFrames) {
	s := h.s
	if r.Method != http.MethodPost {
		httpbody.Abandon(w, r)
		w.Header().Set("Allow", http.MethodPost)
		s.writeRPC(w, http.StatusMethodNotAllowed, appendRPCError(nil, nil, invalidRequest("only POST is allowed")))
		return nil
	}
	ctx := r.Context()
	b := h.bufs.get(w)
	defer func() {
		if st == nil {
			h.bufs.put(b)
		}
	}()
	tw := &b.rw
	defer s.recoverResponse(ctx, "JSON-RPC request", tw, func() {
		b.out.Reset()
		s.writeRPC(tw, http.StatusOK, appendRPCError(b.out.AvailableBuffer(), nil, internalError()))
	})

	// The caller is authenticated before a byte of the body is read.
	c, err := s.prepare(r)
	var refusal *Error
	if err != nil {
		refusal = s.failure(ctx, "", err)
		if c == nil {
			// A caller the resolver did not accept (401, 403, a drain's
			// 503, a fault) is answered at once: nothing of its request
			// is buffered, and its id, never read, is null (JSON-RPC 2.0
			// §5; OpenWOP RFC 0211 §C) — nor is the rest of its body
			// waited for.
			httpbody.Abandon(tw, r)
			s.writeRPC(tw, rpcStatus(refusal, true), appendRPCError(b.out.AvailableBuffer(), nil, refusal))
			return nil
		}
		// A version the caller may not use is answered per request.
	} else {
		echoExtensions(tw, c)
	}
	if e := s.readBody(tw, r, &b.body, parseError()); e != nil {
		// A body the client stopped sending is not a request.
		s.writeRPC(tw, rpcStatus(e, true), appendRPCError(b.out.AvailableBuffer(), nil, e))
		return nil
	}
	body := jsonbytes.TrimSpace(b.body.Bytes())
	if !jsonbytes.Valid(body) {
		s.writeRPC(tw, http.StatusOK, appendRPCError(b.out.AvailableBuffer(), nil, parseError()))
		return nil
	}
	switch body[0] {
	case '[':
		h.serveBatch(tw, r, b, body, c, refusal)
	case '{':
		return h.serveOne(tw, r, b, body, c, refusal)
	default:
		s.writeRPC(tw, http.StatusOK, appendRPCError(b.out.AvailableBuffer(), nil, invalidRequest("request must be a JSON object")))
	}
	return nil
}

// serveOne answers a single request object, or returns the stream it
// opened. refusal, when set, is the answer prepare gave the HTTP request.
func (h *rpcHandler) serveOne(w *trackedWriter, r *http.Request, b *buffers, raw []byte, c *call, refusal *Error) *rpcFrames {
	s := h.s
	q, bad := parseEnvelope(raw)
	switch {
	case bad != nil:
		s.writeRPC(w, http.StatusOK, appendRPCError(b.out.AvailableBuffer(), q.id, bad))
		return nil
	case q.notification():
		// Not executed, never answered (see notification).
		w.WriteHeader(http.StatusNoContent)
		return nil
	case refusal != nil:
		s.writeRPC(w, http.StatusOK, appendRPCError(b.out.AvailableBuffer(), q.id, refusal))
		return nil
	}
	ctx := r.Context()
	if q.streams() {
		_, events, err := s.invoke(ctx, "JSON-RPC request", c, q.op, &b.reqs, func(req any, id *wire.TaskID) error { return h.params(&q, req, id) })
		if err != nil {
			e := s.failure(ctx, q.method(), err)
			s.writeRPC(w, http.StatusOK, appendRPCError(b.out.AvailableBuffer(), q.id, e))
			return nil
		}
		return &rpcFrames{s: s, pool: &h.bufs, b: b, id: q.id, method: q.method(), events: events, rw: *w}
	}
	h.answer(ctx, c, &q, b)
	s.writeRPC(w, http.StatusOK, b.out.Bytes())
	return nil
}

// answer runs one unary request and appends its response to b.out.
func (h *rpcHandler) answer(ctx context.Context, c *call, q *rpcRequest, b *buffers) {
	s := h.s
	var res any
	var err error
	if q.op == nil {
		err = methodNotFound()
	} else {
		res, _, err = s.invoke(ctx, "JSON-RPC request", c, q.op, &b.reqs, func(req any, id *wire.TaskID) error { return h.params(q, req, id) })
	}
	if err == nil {
		mark := b.out.Len()
		if err = appendRPCResult(b, q.id, q.op.result, res); err != nil {
			b.out.Truncate(mark)
		}
	}
	if err != nil {
		e := s.failure(ctx, q.method(), err)
		b.out.Write(appendRPCError(b.out.AvailableBuffer(), q.id, e))
	}
}

// params decodes q's params into req, its method's request: the strict
// decoding, then, for a task-addressed method, the task id at id, required
// and bound. The params' tenant is not read here: the operation decides what
// it selects (call.go, routingHint).
func (h *rpcHandler) params(q *rpcRequest, req any, id *wire.TaskID) error {
	s, op := h.s, q.op
	if err := s.decodeParams(q.params, op.shape, req); err != nil {
		return err
	}
	if id == nil {
		return nil
	}
	if *id == "" {
		return s.errs.invalidParams(op.taskField, op.taskField+" is required")
	}
	return s.bindTaskID(string(*id), id)
}

// rpcFrames is one stream of the binding: every event is a whole JSON-RPC
// response echoing the request id, with one StreamResponse as result
// (OpenWOP interop map, a2a.operations); an error is a JSON-RPC error
// response. An open stream may idle for long, so it holds no pooled
// buffers while it waits: the request's (the body the id aliases, the
// decoded request the sequence opens from) encode the first event and go
// back to the pool once it is written; every later event is encoded in
// buffers of the pool taken for it and given back once it is written.
// The stream answers through a tracked writer of its own, as the
// request's goes back to the pool with its buffers.
type rpcFrames struct {
	s      *Server
	pool   *bufferPool
	b      *buffers // the request's, until the first event is written
	id     []byte
	method string
	events iter.Seq2[wire.Event, error]
	rw     trackedWriter
	ev     *buffers // the event's, between event and written
}

// serve writes the stream: ServeHTTP's, once the request is read.
func (f *rpcFrames) serve(ctx context.Context) {
	defer f.release()
	defer f.s.recoverResponse(ctx, "JSON-RPC request", &f.rw, func() {
		f.s.writeRPC(&f.rw, http.StatusOK, appendRPCError(nil, nil, internalError()))
	})
	f.s.writeEvents(ctx, &f.rw, "JSON-RPC stream", f.method, f.events, f)
}

func (f *rpcFrames) event(ev wire.Event) ([]byte, error) {
	if f.ev = f.b; f.ev == nil {
		f.ev = f.pool.get(nil)
	}
	if err := appendRPCResult(f.ev, f.id, resultPlain, wire.StreamResponse{Event: ev}); err != nil {
		f.written()
		return nil, err
	}
	return f.ev.out.Bytes(), nil
}

func (f *rpcFrames) written() {
	if f.ev == nil {
		return
	}
	if f.ev == f.b {
		// The sequence has opened (its operation copied what it keeps of
		// the request): only the id, which aliases the body, is kept.
		f.id = bytes.Clone(f.id)
		f.b = nil
	}
	f.pool.put(f.ev)
	f.ev = nil
}

// release gives the request's buffers back if no event took them.
func (f *rpcFrames) release() {
	f.written()
	if f.b != nil {
		f.pool.put(f.b)
		f.b = nil
	}
}

func (f *rpcFrames) failure(e *Error) []byte {
	if f.b == nil {
		return appendRPCError(nil, f.id, e)
	}
	f.b.out.Reset()
	return appendRPCError(f.b.out.AvailableBuffer(), f.id, e)
}

func (f *rpcFrames) refuse(w http.ResponseWriter, e *Error) {
	f.s.writeRPC(w, http.StatusOK, f.failure(e))
}

// writeRPC writes a complete JSON-RPC response body.
func (s *Server) writeRPC(w http.ResponseWriter, status int, body []byte) {
	challenge := ""
	if status == http.StatusUnauthorized {
		challenge = s.authChallenge()
	}
	writeRPCBody(w, status, body, challenge)
}

func writeRPCBody(w http.ResponseWriter, status int, body []byte, challenge string) {
	hd := w.Header()
	if status == http.StatusUnauthorized && hd.Get("WWW-Authenticate") == "" {
		hd.Set("WWW-Authenticate", challenge)
	}
	hd.Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// rpcStatus is the HTTP status of a JSON-RPC error response. JSON-RPC
// errors travel with 200, except the refusals before dispatch that HTTP
// intermediaries and clients act on: 401 (with a challenge), 403 for a
// caller the resolver forbids the surface, 413 for an oversized body, 408
// for one too slow to arrive, 429 for a host rate limit and 503 for a
// request after Drain.
func rpcStatus(e *Error, beforeDispatch bool) int {
	switch {
	case e.Code == codeUnauthenticated:
		return http.StatusUnauthorized
	case e.Code == codeForbidden && beforeDispatch:
		return http.StatusForbidden
	case e.HTTP == http.StatusRequestEntityTooLarge, e.HTTP == http.StatusRequestTimeout,
		e.HTTP == http.StatusTooManyRequests, e.HTTP == http.StatusServiceUnavailable:
		return e.HTTP
	}
	return http.StatusOK
}
