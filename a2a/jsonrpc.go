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
// whole through internal/httpbody — within MaxBodyBytes and BodyTimeout,
// into pooled memory that grows with the bytes received — and validated as
// JSON; the envelope is read in place by the same walker as the
// member-case check (strict.go): "jsonrpc" must be the string "2.0", "id"
// a string, number or null (absent: a notification), "method" a string,
// "params" an object (absent or null: {}). Envelope member names are
// case-sensitive; unknown members are ignored; a duplicated member counts
// once, the last one, as encoding/json would read it. A batch (JSON array)
// holds at most MaxBatch requests and is answered element by element in
// order, one authentication and version decision for the HTTP request;
// streaming methods cannot be batched. Notifications are never executed
// and get no response (see notification); a request with only
// notifications is answered 204 No Content.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"iter"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/internal/httpbody"
	"github.com/wopinterop/wopinterop/isolation"
)

// JSONRPC returns the handler of the JSON-RPC 2.0 interface. Mount it at
// the path of Config.JSONRPCURL; it serves POST only. The handler owns a
// pool of buffers reused across requests.
func (s *Server) JSONRPC() http.Handler {
	h := &rpcHandler{s: s}
	h.bufs.New = func() any { return newRPCBuffers() }
	return h
}

// WriteJSONRPCError writes err as a JSON-RPC 2.0 error response, for host
// middleware mounted in front of [Server.JSONRPC] that refuses a request
// before the handler runs (authentication, rate limits, body limits), so
// that every answer on the interface URL stays in the binding's shape
// (OpenWOP RFC 0211 §C).
//
// id is the request's id as raw JSON, if the middleware read it; nil, or
// anything but a JSON string, number or null, is written as null.
//
// err may be an [*Error] (the middleware picks code, reason and message),
// [interop.ErrUnauthenticated] (-31401, HTTP 401 with
// `WWW-Authenticate: Bearer` unless the middleware set the header),
// [interop.ErrForbidden] (-31403, HTTP 403) or an [*http.MaxBytesError]
// (-32600, HTTP 413). Anything else becomes -32603 "internal error"; its
// text is never sent. An *Error whose HTTP is 429 is sent with status 429
// so that a rate limiter can pair it with Retry-After; every other code is
// sent with status 200, as the binding itself does.
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
	bufs sync.Pool // of *rpcBuffers
}

// rpcBuffers are the per-request buffers, pooled by the handler: the
// request body, the response, an encoder bound to the response so results
// are encoded in place, and the writer the response goes through.
type rpcBuffers struct {
	body bytes.Buffer
	out  bytes.Buffer
	enc  *json.Encoder
	rw   trackedWriter
}

func newRPCBuffers() *rpcBuffers {
	b := &rpcBuffers{}
	b.enc = json.NewEncoder(&b.out)
	return b
}

// release pools b again, unless one large request grew it: a pooled
// buffer never keeps a peak.
func (h *rpcHandler) release(b *rpcBuffers) {
	if b.body.Cap() > httpbody.MaxPooled || b.out.Cap() > httpbody.MaxPooled {
		return
	}
	b.body.Reset()
	b.out.Reset()
	b.rw = trackedWriter{}
	h.bufs.Put(b)
}

// rpcRequest is one request object of the envelope, read in place: id and
// params alias the request body.
type rpcRequest struct {
	id     []byte // raw JSON; nil when absent (a notification)
	method string // a method constant, or "" for an unknown method
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

func (h *rpcHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s := h.s
	if r.Method != http.MethodPost {
		httpbody.Abandon(w, r)
		w.Header().Set("Allow", http.MethodPost)
		s.writeRPC(w, http.StatusMethodNotAllowed, appendRPCError(nil, nil, invalidRequest("only POST is allowed")))
		return
	}
	b := h.bufs.Get().(*rpcBuffers)
	defer h.release(b)
	b.rw = trackedWriter{ResponseWriter: w}
	tw := &b.rw
	ctx := r.Context()
	defer s.recoverResponse(ctx, "JSON-RPC request", tw, func() {
		b.out.Reset()
		s.writeRPC(tw, http.StatusOK, appendRPCError(b.out.AvailableBuffer(), nil, internalError()))
	})

	// The caller is authenticated before a byte of the body is read.
	c, err := s.prepare(r)
	var refusal *Error
	if err != nil {
		refusal = s.rpcFailure(ctx, "", err)
		if c == nil {
			// A caller the resolver did not accept (401, 403, a drain's
			// 503, a fault) is answered at once: nothing of its request
			// is buffered, and its id, never read, is null (JSON-RPC 2.0
			// §5; OpenWOP RFC 0211 §C) — nor is the rest of its body
			// waited for.
			httpbody.Abandon(tw, r)
			s.writeRPC(tw, rpcStatus(refusal, true), appendRPCError(b.out.AvailableBuffer(), nil, refusal))
			return
		}
		// A version the caller may not use is answered per request.
	}
	if err := httpbody.Read(tw, r, &b.body, s.cfg.MaxBodyBytes, s.cfg.BodyTimeout); err != nil {
		// A body the client stopped sending is not a request.
		e := bodyError(err, parseError())
		s.writeRPC(tw, rpcStatus(e, true), appendRPCError(b.out.AvailableBuffer(), nil, e))
		return
	}
	body := trimJSONSpace(b.body.Bytes())
	if !json.Valid(body) {
		s.writeRPC(tw, http.StatusOK, appendRPCError(b.out.AvailableBuffer(), nil, parseError()))
		return
	}
	switch body[0] {
	case '[':
		h.serveBatch(tw, r, b, body, c, refusal)
	case '{':
		h.serveOne(tw, r, b, body, c, refusal)
	default:
		s.writeRPC(tw, http.StatusOK, appendRPCError(b.out.AvailableBuffer(), nil, invalidRequest("request must be a JSON object")))
	}
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

// serveOne answers a single request object. refusal, when set, is the
// answer prepare gave the HTTP request.
func (h *rpcHandler) serveOne(w http.ResponseWriter, r *http.Request, b *rpcBuffers, raw []byte, c *call, refusal *Error) {
	s := h.s
	q, bad := parseEnvelope(raw)
	switch {
	case bad != nil:
		s.writeRPC(w, http.StatusOK, appendRPCError(b.out.AvailableBuffer(), q.id, bad))
		return
	case q.notification():
		// Not executed, never answered (see notification).
		w.WriteHeader(http.StatusNoContent)
		return
	case refusal != nil:
		s.writeRPC(w, http.StatusOK, appendRPCError(b.out.AvailableBuffer(), q.id, refusal))
		return
	}
	if q.method == methodSendStreamingMessage || q.method == methodSubscribeToTask {
		seq, err := h.openStream(r.Context(), c, &q)
		if err != nil {
			e := s.rpcFailure(r.Context(), q.method, err)
			s.writeRPC(w, http.StatusOK, appendRPCError(b.out.AvailableBuffer(), q.id, e))
			return
		}
		h.stream(w, r, b, &q, seq)
		return
	}
	h.answer(r.Context(), c, &q, b)
	s.writeRPC(w, http.StatusOK, b.out.Bytes())
}

// batchItem is one element of a batch on its way to its answer.
type batchItem struct {
	q rpcRequest
	// out is the element's response; nil for a notification, which has
	// none.
	out []byte
}

// serveBatch answers a JSON array of requests (JSON-RPC 2.0 §6). A batch
// of more than Config.MaxBatch elements is refused whole before any of
// them runs. The others are decided first — refused, or notifications
// (not executed) — then the rest run at most Config.BatchConcurrency at a
// time, each on its own copy of the call, and every blocking SendMessage
// among them waits until one deadline, BlockTimeout after the batch began:
// a batch holds its connection about as long as one request does.
// Responses keep the order of the requests.
func (h *rpcHandler) serveBatch(w http.ResponseWriter, r *http.Request, b *rpcBuffers, raw []byte, c *call, refusal *Error) {
	s := h.s
	elems, err := splitArray(raw, s.cfg.MaxBatch)
	switch {
	case errors.Is(err, errBatchTooLarge):
		s.writeRPC(w, http.StatusOK, appendRPCError(b.out.AvailableBuffer(), nil, batchTooLarge(s.cfg.MaxBatch)))
		return
	case err != nil || len(elems) == 0:
		s.writeRPC(w, http.StatusOK, appendRPCError(b.out.AvailableBuffer(), nil, invalidRequest("a batch must hold at least one request")))
		return
	}
	items := make([]batchItem, len(elems))
	var runs []int // the elements to run
	for i, elem := range elems {
		it := &items[i]
		bad := invalidRequest("request must be a JSON object")
		if elem[0] == '{' {
			it.q, bad = parseEnvelope(elem)
		}
		switch {
		case bad != nil:
			it.out = appendRPCError(nil, it.q.id, bad)
		case it.q.notification():
		case refusal != nil:
			it.out = appendRPCError(nil, it.q.id, refusal)
		case it.q.method == methodSendStreamingMessage || it.q.method == methodSubscribeToTask:
			it.out = appendRPCError(nil, it.q.id, invalidRequest("streaming methods cannot be batched"))
		default:
			runs = append(runs, i)
		}
	}
	if len(runs) > 0 {
		bc := *c
		bc.waitUntil = time.Now().Add(s.cfg.BlockTimeout)
		h.runBatch(r.Context(), &bc, items, runs)
	}
	b.out.WriteByte('[')
	answered := 0
	for i := range items {
		if items[i].out == nil {
			continue
		}
		if answered > 0 {
			b.out.WriteByte(',')
		}
		b.out.Write(items[i].out)
		answered++
	}
	if answered == 0 {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	b.out.WriteByte(']')
	s.writeRPC(w, http.StatusOK, b.out.Bytes())
}

// runBatch answers items[runs] with at most Config.BatchConcurrency
// goroutines, this one included. Every goroutine has ended when it
// returns.
func (h *rpcHandler) runBatch(ctx context.Context, c *call, items []batchItem, runs []int) {
	var next atomic.Int64
	work := func() {
		scratch := h.bufs.Get().(*rpcBuffers)
		defer h.release(scratch)
		for {
			n := int(next.Add(1)) - 1
			if n >= len(runs) {
				return
			}
			it := &items[runs[n]]
			// Each element resolves its own routing value on its own copy
			// of the call.
			ec := *c
			h.answerContained(ctx, &ec, &it.q, scratch)
			it.out = bytes.Clone(scratch.out.Bytes())
			scratch.out.Reset()
		}
	}
	var wg sync.WaitGroup
	for range min(h.s.cfg.BatchConcurrency, len(runs)) - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
}

// answerContained is answer for a batch element: a panic anywhere in it
// (the operation recovers its own; this covers encoding the result) is
// the element's internal error, never the process's crash — the element
// may run on a goroutine of its own.
func (h *rpcHandler) answerContained(ctx context.Context, c *call, q *rpcRequest, b *rpcBuffers) {
	mark := b.out.Len()
	defer func() {
		if p := recover(); p != nil {
			h.s.logPanic(ctx, "JSON-RPC batch element", q.method, p)
			b.out.Truncate(mark)
			b.out.Write(appendRPCError(b.out.AvailableBuffer(), q.id, internalError()))
		}
	}()
	h.answer(ctx, c, q, b)
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

// rpcFailure turns an operation's error into the *Error to send, logging
// what never reaches the wire: an error that is not an *Error is a server
// fault, logged with the method and answered -32603. A request whose
// client went away is not logged as a fault.
func (s *Server) rpcFailure(ctx context.Context, method string, err error) *Error {
	e := asError(err)
	if e.Code == codeInternal && !errors.As(err, new(*Error)) && ctx.Err() == nil {
		s.log.ErrorContext(ctx, "a2a: JSON-RPC method failed", "method", method, "error", err)
	}
	return e
}

// answer runs one unary request and appends its response to b.out.
func (h *rpcHandler) answer(ctx context.Context, c *call, q *rpcRequest, b *rpcBuffers) {
	s := h.s
	res, err := h.invoke(ctx, c, q)
	if err == nil {
		mark := b.out.Len()
		if err = appendRPCResult(b, q.id, res); err != nil {
			b.out.Truncate(mark)
		}
	}
	if err != nil {
		e := s.rpcFailure(ctx, q.method, err)
		b.out.Write(appendRPCError(b.out.AvailableBuffer(), q.id, e))
	}
}

// rpcResult is a unary method's result on its way to the wire.
type rpcResult struct {
	value any
	// inTask wraps value as SendMessageResponse {"task": value}.
	inTask bool
	// empty is the google.protobuf.Empty result {} of a delete.
	empty bool
}

// appendRPCResult writes a success response around the encoded result. The
// envelope is written by hand so the result is encoded once, in place.
func appendRPCResult(b *rpcBuffers, id []byte, res rpcResult) error {
	out := &b.out
	out.WriteString(`{"jsonrpc":"2.0","id":`)
	out.Write(id)
	out.WriteString(`,"result":`)
	if res.empty {
		out.WriteString(`{}}`)
		return nil
	}
	if res.inTask {
		out.WriteString(`{"task":`)
	}
	if err := b.enc.Encode(res.value); err != nil {
		return err
	}
	out.Truncate(out.Len() - 1) // Encode's newline
	if res.inTask {
		out.WriteByte('}')
	}
	out.WriteByte('}')
	return nil
}

// invoke decodes the params of a unary method and runs it. A panic in it
// is the request's internal error.
func (h *rpcHandler) invoke(ctx context.Context, c *call, q *rpcRequest) (res rpcResult, err error) {
	s := h.s
	defer s.recoverInto(ctx, "JSON-RPC request", q.method, &err)
	if q.method == "" {
		return rpcResult{}, methodNotFound()
	}
	if err := s.gate(q.method); err != nil {
		return rpcResult{}, err
	}
	switch q.method {
	case methodSendMessage:
		p := new(wire.SendMessageRequest)
		if err := s.rpcParams(q.params, shapeSendMessageRequest, p); err != nil {
			return rpcResult{}, err
		}
		if err := s.rpcSendTarget(ctx, c, p); err != nil {
			return rpcResult{}, err
		}
		task, err := s.sendMessage(ctx, c, p)
		return rpcResult{value: task, inTask: true}, resultErr(task == nil, err)

	case methodGetTask:
		p := new(wire.GetTaskRequest)
		if err := s.rpcTaskParams(q.params, shapeGetTaskRequest, p, &p.ID, "id"); err != nil {
			return rpcResult{}, err
		}
		task, err := s.getTask(ctx, c, p)
		return rpcResult{value: task}, resultErr(task == nil, err)

	case methodListTasks:
		p := new(wire.ListTasksRequest)
		if err := s.rpcParams(q.params, shapeListTasksRequest, p); err != nil {
			return rpcResult{}, err
		}
		if err := s.routingHint(ctx, c, p.Tenant); err != nil {
			return rpcResult{}, err
		}
		list, err := s.listTasks(ctx, c, p)
		if err == nil && list != nil && list.Tasks == nil {
			list.Tasks = []*wire.Task{} // never null (OpenWOP interop map, a2a.operations)
		}
		return rpcResult{value: list}, resultErr(list == nil, err)

	case methodCancelTask:
		p := new(wire.CancelTaskRequest)
		if err := s.rpcTaskParams(q.params, shapeCancelTaskRequest, p, &p.ID, "id"); err != nil {
			return rpcResult{}, err
		}
		task, err := s.cancelTask(ctx, c, p)
		return rpcResult{value: task}, resultErr(task == nil, err)

	case methodGetExtendedAgentCard:
		p := new(wire.GetExtendedAgentCardRequest)
		if err := s.rpcParams(q.params, shapeExtendedCardRequest, p); err != nil {
			return rpcResult{}, err
		}
		if err := s.withAgent(ctx, c, p.Tenant); err != nil {
			return rpcResult{}, neverMinted(err, s.errs.extendedCardNotConfigured())
		}
		card, err := s.extendedCard(ctx, c, p)
		return rpcResult{value: card}, resultErr(card == nil, err)

	case methodCreatePushConfig:
		p := new(wire.PushConfig)
		if err := s.rpcTaskParams(q.params, shapePushConfig, p, &p.TaskID, "taskId"); err != nil {
			return rpcResult{}, err
		}
		cfg, err := s.createPushConfig(ctx, c, p)
		return rpcResult{value: cfg}, resultErr(cfg == nil, err)

	case methodGetPushConfig:
		p := new(wire.GetTaskPushConfigRequest)
		if err := s.rpcTaskParams(q.params, shapeGetPushConfigRequest, p, &p.TaskID, "taskId"); err != nil {
			return rpcResult{}, err
		}
		cfg, err := s.getPushConfig(ctx, c, p)
		return rpcResult{value: cfg}, resultErr(cfg == nil, err)

	case methodListPushConfigs:
		p := new(wire.ListTaskPushConfigRequest)
		if err := s.rpcTaskParams(q.params, shapeListPushConfigsRequest, p, &p.TaskID, "taskId"); err != nil {
			return rpcResult{}, err
		}
		list, err := s.listPushConfigs(ctx, c, p)
		if err == nil && list != nil && list.Configs == nil {
			list.Configs = []*wire.PushConfig{}
		}
		return rpcResult{value: list}, resultErr(list == nil, err)

	case methodDeletePushConfig:
		p := new(wire.DeleteTaskPushConfigRequest)
		if err := s.rpcTaskParams(q.params, shapeDeletePushConfigRequest, p, &p.TaskID, "taskId"); err != nil {
			return rpcResult{}, err
		}
		return rpcResult{empty: true}, s.deletePushConfig(ctx, c, p)
	}
	return rpcResult{}, methodNotFound()
}

// errNoResult reports an operation that returned neither a result nor an
// error: a server fault.
var errNoResult = errors.New("a2a: operation returned no result")

func resultErr(missing bool, err error) error {
	if err == nil && missing {
		return errNoResult
	}
	return err
}

// openStream decodes a streaming method's params and opens its event
// sequence. Every refusal happens here, before anything is streamed; a
// panic here is the request's internal error.
func (h *rpcHandler) openStream(ctx context.Context, c *call, q *rpcRequest) (seq iter.Seq2[wire.Event, error], err error) {
	s := h.s
	defer s.recoverInto(ctx, "JSON-RPC request", q.method, &err)
	if err := s.gate(q.method); err != nil {
		return nil, err
	}
	if q.method == methodSubscribeToTask {
		p := new(wire.SubscribeToTaskRequest)
		if err := s.rpcTaskParams(q.params, shapeSubscribeRequest, p, &p.ID, "id"); err != nil {
			return nil, err
		}
		return s.subscribe(ctx, c, p)
	}
	p := new(wire.SendMessageRequest)
	if err := s.rpcParams(q.params, shapeSendMessageRequest, p); err != nil {
		return nil, err
	}
	if err := s.rpcSendTarget(ctx, c, p); err != nil {
		return nil, err
	}
	return s.streamMessage(ctx, c, p)
}

// stream answers a streaming method: an event stream whose every event is a
// whole JSON-RPC response echoing the request id, with one StreamResponse as
// result (OpenWOP interop map, a2a.operations). The stream starts with the first event; an error
// before it is a plain JSON-RPC error response, an error after it the final
// event, a panic in the sequence included. It ends when the sequence does
// or the client goes away (the request context ends, or a write fails —
// after Config.StreamWriteTimeout when the client stopped reading — and
// the sequence is abandoned).
func (h *rpcHandler) stream(w http.ResponseWriter, r *http.Request, b *rpcBuffers, q *rpcRequest, seq iter.Seq2[wire.Event, error]) {
	s := h.s
	ctx := r.Context()
	var sw *sseWriter
	for ev, err := range s.safeEvents(ctx, "JSON-RPC stream", q.method, seq) {
		b.out.Reset()
		if err == nil && ev == nil {
			err = errNoResult
		}
		if err != nil {
			if ctx.Err() != nil {
				return // the client is gone; nobody reads an answer
			}
			e := s.rpcFailure(ctx, q.method, err)
			frame := appendRPCError(b.out.AvailableBuffer(), q.id, e)
			if sw == nil {
				s.writeRPC(w, http.StatusOK, frame)
				return
			}
			_ = sw.data(frame)
			return
		}
		if encErr := appendRPCResult(b, q.id, rpcResult{value: wire.StreamResponse{Event: ev}}); encErr != nil {
			e := s.rpcFailure(ctx, q.method, encErr)
			b.out.Reset()
			frame := appendRPCError(b.out.AvailableBuffer(), q.id, e)
			if sw == nil {
				s.writeRPC(w, http.StatusOK, frame)
			} else {
				_ = sw.data(frame)
			}
			return
		}
		if sw == nil {
			var ok bool
			if sw, ok = newSSE(w, s.cfg.StreamWriteTimeout); !ok {
				s.log.ErrorContext(ctx, "a2a: the ResponseWriter cannot flush; streaming is impossible", "method", q.method)
				s.writeRPC(w, http.StatusOK, appendRPCError(nil, q.id, internalError()))
				return
			}
			method := q.method // q stays on the stack
			stop := sw.heartbeat(sseHeartbeat, func(p any) { s.logPanic(ctx, "JSON-RPC stream heartbeat", method, p) })
			defer stop()
		}
		if sw.data(b.out.Bytes()) != nil {
			return // the client is gone; leaving the loop stops the sequence
		}
	}
	if sw == nil && ctx.Err() == nil {
		// A sequence that ended before its first event (the Task) broke
		// the operation's contract.
		e := s.rpcFailure(ctx, q.method, errNoResult)
		s.writeRPC(w, http.StatusOK, appendRPCError(b.out.AvailableBuffer(), q.id, e))
	}
}

// rpcParams decodes params (nil: {}) into v after the member-case check.
// Nothing in params is ever a parse error: the body is valid JSON, so every
// refusal here is -32602. A SendMessage request's data parts keep the
// bytes they were sent as (data.go), which takes params to be the
// binding's to change.
func (s *Server) rpcParams(params []byte, sh shape, v any) error {
	if params == nil {
		params = []byte("{}")
	}
	w := walker{data: params}
	if err := w.check(sh); err != nil {
		return s.errs.memberCaseError(err)
	}
	data := takeDataBytes(params, w.spans)
	if err := json.Unmarshal(params, v); err != nil {
		if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok && safeField(te.Field) {
			return s.errs.invalidParams(te.Field, te.Field+" has the wrong type")
		}
		return s.errs.invalidParams("", "params do not match the method's request")
	}
	if req, ok := v.(*wire.SendMessageRequest); ok {
		keepDataBytes(req.Message, data)
	}
	return nil
}

// safeField reports whether an encoding/json field path is made of wire
// member names only, and so safe to echo.
func safeField(f string) bool {
	if f == "" || len(f) > 128 {
		return false
	}
	for i := 0; i < len(f); i++ {
		c := f[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '[' || c == ']') {
			return false
		}
	}
	return true
}

// rpcTaskParams decodes the params of a task-addressed method and reads
// its task id in any accepted form into the bound form. An id that is not
// a tenant-bound id answers exactly like an unknown task (OpenWOP
// interop.md §Isolation):
// unreadable is unknown. The params' tenant is not read: on an existing
// task it is a routing hint the id makes moot (see routingHint).
func (s *Server) rpcTaskParams(params []byte, sh shape, v any, id *wire.TaskID, field string) error {
	if err := s.rpcParams(params, sh, v); err != nil {
		return err
	}
	if *id == "" {
		return s.errs.invalidParams(field, field+" is required")
	}
	bound, err := isolation.ParseID(string(*id))
	if err != nil {
		return s.errs.taskNotFound()
	}
	*id = wire.TaskID(bound)
	return nil
}

// rpcSendTarget checks a SendMessage request's message and resolves the
// routing value of a new task: an R outside the caller's inventory is
// -32602 (field tenant), the same for never-minted and foreign values
// (OpenWOP interop.md §Non-disclosure). A message to an existing task
// ignores tenant (see
// routingHint).
func (s *Server) rpcSendTarget(ctx context.Context, c *call, p *wire.SendMessageRequest) error {
	if p.Message == nil {
		return s.errs.invalidParams("message", "message is required")
	}
	if p.Message.TaskID != "" {
		return nil
	}
	if err := s.withAgent(ctx, c, p.Tenant); err != nil {
		return neverMinted(err, s.errs.unknownTenant())
	}
	return nil
}

// unknownTenant is the refusal of a routing value outside the caller's
// inventory where no task is addressed.
func (t *errorTable) unknownTenant() *Error {
	return t.invalidParams("tenant", "tenant is not a routing value of this host")
}

// parseEnvelope reads one request object (raw is valid JSON starting with
// '{'). On a refusal the returned request still carries the id when it was
// readable, so the error can echo it.
func parseEnvelope(raw []byte) (rpcRequest, *Error) {
	var q rpcRequest
	var version, method, params, id []byte
	var versionEsc, methodEsc, hasVersion, hasMethod, hasID, caseErr bool
	var badType *Error
	w := walker{data: raw, pos: 1}
	w.space()
	if w.pos < len(raw) && raw[w.pos] == '}' {
		return q, invalidRequest("jsonrpc must be \"2.0\"")
	}
	for {
		w.space()
		key, keyEsc, err := w.str()
		if err != nil {
			return rpcRequest{}, parseError()
		}
		w.space()
		w.pos++ // ':'
		w.space()
		start := w.pos
		if err := w.skip(); err != nil {
			return rpcRequest{}, parseError()
		}
		val := raw[start:w.pos]
		name := string(key)
		if keyEsc {
			if name, err = keyName(key, true); err != nil {
				return rpcRequest{}, parseError()
			}
		}
		switch name {
		case "jsonrpc":
			hasVersion = true
			version, versionEsc = nil, false
			if val[0] == '"' {
				version, versionEsc = val[1:len(val)-1], bytes.IndexByte(val, '\\') >= 0
			}
		case "id":
			hasID, id = true, val
		case "method":
			hasMethod = true
			method, methodEsc = nil, false
			if val[0] == '"' {
				method, methodEsc = val[1:len(val)-1], bytes.IndexByte(val, '\\') >= 0
			}
		case "params":
			params = val
		default:
			if _, ok := shapeEnvelopeMatch(name); ok {
				caseErr = true
			}
		}
		w.space()
		if w.pos >= len(raw) || raw[w.pos] != ',' {
			break
		}
		w.pos++
	}
	if hasID {
		if validID(id) {
			q.id = id
		} else {
			badType = invalidRequest("id must be a string, a number or null")
		}
	}
	switch {
	case badType != nil:
		return q, badType
	case caseErr:
		return q, invalidRequest("member names are case-sensitive")
	case !hasVersion || !stringIs(version, versionEsc, "2.0"):
		return q, invalidRequest("jsonrpc must be \"2.0\"")
	case !hasMethod || method == nil:
		return q, invalidRequest("method must be a string")
	case params != nil && params[0] != '{' && !bytes.Equal(params, []byte("null")):
		return q, invalidRequest("params must be an object")
	}
	if params != nil && params[0] == '{' {
		q.params = params
	}
	q.method = knownMethod(method, methodEsc)
	return q, nil
}

// shapeEnvelopeMatch reports an envelope member spelled in another case,
// folding as encoding/json does.
func shapeEnvelopeMatch(name string) (string, bool) {
	for _, n := range [...]string{"jsonrpc", "id", "method", "params"} {
		if n != name && strings.EqualFold(n, name) {
			return n, true
		}
	}
	return "", false
}

// stringIs reports whether the raw contents of a JSON string equal want.
func stringIs(raw []byte, escaped bool, want string) bool {
	if raw == nil {
		return false
	}
	if !escaped {
		return string(raw) == want
	}
	s, err := keyName(raw, true)
	return err == nil && s == want
}

// knownMethod maps a method name onto its constant without allocating; an
// unknown name is "". A name written with escapes is decoded first.
func knownMethod(raw []byte, escaped bool) string {
	if escaped {
		name, err := keyName(raw, true)
		if err != nil {
			return ""
		}
		return knownMethod([]byte(name), false)
	}
	switch string(raw) {
	case methodSendMessage:
		return methodSendMessage
	case methodSendStreamingMessage:
		return methodSendStreamingMessage
	case methodGetTask:
		return methodGetTask
	case methodListTasks:
		return methodListTasks
	case methodCancelTask:
		return methodCancelTask
	case methodSubscribeToTask:
		return methodSubscribeToTask
	case methodCreatePushConfig:
		return methodCreatePushConfig
	case methodGetPushConfig:
		return methodGetPushConfig
	case methodListPushConfigs:
		return methodListPushConfigs
	case methodDeletePushConfig:
		return methodDeletePushConfig
	case methodGetExtendedAgentCard:
		return methodGetExtendedAgentCard
	}
	return ""
}

// validID reports whether raw is a JSON-RPC id: a string, a number or null.
func validID(raw []byte) bool {
	if len(raw) == 0 {
		return false
	}
	switch c := raw[0]; {
	case c == '"', c == '-', '0' <= c && c <= '9':
		return json.Valid(raw)
	}
	return bytes.Equal(raw, []byte("null"))
}

// errBatchTooLarge reports an array of more elements than allowed.
var errBatchTooLarge = errors.New("a2a: batch too large")

// splitArray returns the raw elements of a JSON array (raw is valid JSON
// starting with '['), or errBatchTooLarge as soon as it finds more than
// max of them.
func splitArray(raw []byte, max int) ([][]byte, error) {
	w := walker{data: raw, pos: 1}
	w.space()
	if w.pos < len(raw) && raw[w.pos] == ']' {
		return nil, nil
	}
	var elems [][]byte
	for {
		if len(elems) == max {
			return nil, errBatchTooLarge
		}
		w.space()
		start := w.pos
		if err := w.skip(); err != nil {
			return nil, err
		}
		elems = append(elems, raw[start:w.pos])
		w.space()
		if w.pos >= len(raw) || raw[w.pos] != ',' {
			return elems, nil
		}
		w.pos++
	}
}

// Detail type URLs and the ErrorInfo domain of JSON-RPC errors.
const (
	rpcErrorInfoType  = "type.googleapis.com/google.rpc.ErrorInfo"
	rpcBadRequestType = "type.googleapis.com/google.rpc.BadRequest"
	rpcErrorDomain    = wire.ProtocolDomain
)

// appendRPCError is the one function that turns an error into JSON-RPC
// wire bytes, for single responses, batch elements and stream frames alike
// (OpenWOP RFC 0211 §A, §D; interop map, a2a.fields):
//
//	{"jsonrpc":"2.0","id":<id|null>,"error":{"code":<code>,"message":<message>,"data":[<detail>]}}
//
// The detail is exactly one google.rpc.ErrorInfo {"@type","reason","domain"
// "a2a-protocol.org","metadata"?} — metadata keys sorted, never a
// timestamp — or, for -32602 naming a field, one google.rpc.BadRequest with
// that field violation. An error without reason or field has no data. The
// message is the *Error's fixed text, never an error chain.
func appendRPCError(dst []byte, id []byte, e *Error) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	if id == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, id...)
	}
	dst = append(dst, `,"error":{"code":`...)
	dst = appendInt(dst, e.Code)
	dst = append(dst, `,"message":`...)
	dst = appendJSONString(dst, e.Message)
	switch {
	case e.Field != "" && e.Code == codeInvalidParams:
		dst = append(dst, `,"data":[{"@type":"`+rpcBadRequestType+`","fieldViolations":[{"field":`...)
		dst = appendJSONString(dst, e.Field)
		dst = append(dst, `,"description":`...)
		dst = appendJSONString(dst, e.Message)
		dst = append(dst, `}]}]`...)
	case e.Reason != "":
		dst = append(dst, `,"data":[{"@type":"`+rpcErrorInfoType+`","reason":`...)
		dst = appendJSONString(dst, e.Reason)
		dst = append(dst, `,"domain":"`+rpcErrorDomain+`"`...)
		if len(e.Metadata) > 0 {
			dst = append(dst, `,"metadata":{`...)
			for i, k := range slices.Sorted(maps.Keys(e.Metadata)) {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = appendJSONString(dst, k)
				dst = append(dst, ':')
				dst = appendJSONString(dst, e.Metadata[k])
			}
			dst = append(dst, '}')
		}
		dst = append(dst, `}]`...)
	}
	return append(dst, `}}`...)
}

func appendInt(dst []byte, n int) []byte {
	if n < 0 {
		dst = append(dst, '-')
		n = -n
	}
	var digits [20]byte
	i := len(digits)
	for {
		i--
		digits[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	return append(dst, digits[i:]...)
}

// appendJSONString appends s as a JSON string, escaping as encoding/json
// does (control characters, quote, backslash, <, >, &, U+2028, U+2029) and
// replacing invalid UTF-8 with U+FFFD.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c == '\b':
				dst = append(dst, '\\', 'b')
			case c == '\f':
				dst = append(dst, '\\', 'f')
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}
