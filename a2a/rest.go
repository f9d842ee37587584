package a2a

// The HTTP+JSON binding (A2A 1.0.1 §5.3, §9.4, §11; OpenWOP RFC 0211 §B,
// §C; interop map, a2a.operations): the route of a request picks its row
// of the operation table (rest_routes.go), the row's decoder fills the
// a2a-go request from the path, the query and the body (rest_decode.go),
// and the result is written as JSON, a stream as text/event-stream, an
// error as a google.rpc.Status (status.go).

import (
	"bytes"
	"context"
	"iter"
	"net/http"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/internal/httpbody"
	"github.com/wopinterop/wopinterop/internal/jsonbytes"
	"github.com/wopinterop/wopinterop/internal/wirejson"
)

// HTTPJSON returns the handler of the HTTP+JSON interface
// (Options.HTTPJSONURL). It routes on the request's escaped path relative
// to where it is mounted, so mount it with [http.StripPrefix]:
//
//	mux.Handle("/a2a/rest/", http.StripPrefix("/a2a/rest", srv.HTTPJSON()))
//
// Routes (A2A 1.0.1 §11), each also under a leading /{tenant} segment that
// carries a per-agent routing value:
//
//	POST   /message:send                                 SendMessage
//	POST   /message:stream                               SendStreamingMessage (SSE)
//	GET    /tasks/{id}                                   GetTask (?historyLength)
//	GET    /tasks                                        ListTasks (query filters)
//	POST   /tasks/{id}:cancel                            CancelTask
//	POST   /tasks/{id}:subscribe, GET too (OpenWOP interop map, a2a.operations)    SubscribeToTask (SSE)
//	POST   /tasks/{id}/pushNotificationConfigs           CreateTaskPushNotificationConfig
//	GET    /tasks/{id}/pushNotificationConfigs           ListTaskPushNotificationConfigs
//	GET    /tasks/{id}/pushNotificationConfigs/{cid}     GetTaskPushNotificationConfig
//	DELETE /tasks/{id}/pushNotificationConfigs/{cid}     DeleteTaskPushNotificationConfig
//	GET    /extendedAgentCard                            GetExtendedAgentCard
//
// A task id is accepted as one path segment in the projected form
// (acme~2Fr…) or percent-encoded (acme%2Fr…), and, because a2a-go's REST
// client writes the bound id into the path unescaped, as the two segments
// acme/r…. A malformed id is answered like an unknown one.
//
// A first segment other than message:send, message:stream, tasks and
// extendedAgentCard is the routing value (so /v1/tasks reads as ListTasks
// for routing value "v1"), read exactly as params.tenant on the JSON-RPC
// binding. Where it selects what the request acts on — GetExtendedAgentCard
// and SendMessage without taskId — it is resolved after authentication,
// and one the caller may not use is answered exactly like a never-minted
// one (OpenWOP interop.md §Non-disclosure): -32007, and 400 with a
// BadRequest on "tenant". On
// ListTasks it is a hint: one of the caller's agents narrows the list to
// that agent's tasks, any other value is ignored. A route naming an
// existing task ignores it. A SendMessage body may carry the routing value
// of a new task in its tenant member instead; both must agree.
//
// Query parameters: GetTask reads historyLength; ListTasks reads contextId,
// status, pageSize, pageToken, historyLength, statusTimestampAfter (also
// under a2a-go's name lastUpdatedAfter) and includeArtifacts;
// ListTaskPushNotificationConfigs reads pageSize and pageToken. A value
// that does not parse is 400 naming the parameter.
//
// Every response that is not a success is a google.rpc.Status
// (OpenWOP RFC 0211 §B, §C), written by one function:
//
//	{"error":{"code":<http status>,"status":<gRPC code name>,"message":<short, safe>,"details":[…]}}
//
// details holds one google.rpc.ErrorInfo (domain a2a-protocol.org) for
// every error with an A2A or JSON-RPC reason, and a google.rpc.BadRequest
// naming the field for an invalid parameter; it is [] otherwise, never
// absent. Refusals before dispatch are in the same shape: an unknown path is
// 404 NOT_FOUND with reason METHOD_NOT_FOUND (a route that does not exist
// is a resource that does not exist, as gRPC-gateway answers it), a known
// path with the wrong verb is 405 UNIMPLEMENTED with reason METHOD_NOT_FOUND
// and an Allow header, a missing or invalid credential is 401 with
// WWW-Authenticate (decided before a byte of the body is read), a body
// over Options.MaxBodyBytes is 413, one still arriving after
// Options.BodyTimeout 408 DEADLINE_EXCEEDED (reason INVALID_REQUEST), a
// body that is not JSON 400 INVALID_ARGUMENT with reason PARSE_ERROR, and
// a panic or a server fault 500 INTERNAL (reason INTERNAL_ERROR).
//
// Successes are application/json (a2a-go's REST client reads any content
// type on success but decodes error bodies only when they are
// application/json, so errors must be). SendMessage answers a
// SendMessageResponse {"task":…}; the streaming routes answer
// text/event-stream with one `data: <StreamResponse>` frame per event, and
// a refusal before the first event is a plain non-200 google.rpc.Status.
func (s *Server) HTTPJSON() http.Handler { return &restHandler{s: s} }

type restHandler struct {
	s    *Server
	bufs bufferPool
}

// ServeHTTP answers the request, then writes its stream when it opened
// one, beneath this small frame alone (see rpcHandler.ServeHTTP).
func (h *restHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if st := h.serveRequest(w, r); st != nil {
		st.serve(r.Context())
	}
}

// serveRequest answers the request, or returns the stream it opened,
// which then owns the request's buffers.
func (h *restHandler) serveRequest(w http.ResponseWriter, r *http.Request) (st *restStream) {
	s := h.s
	rt, refusal := matchREST(r.Method, r.URL.EscapedPath())
	if refusal != nil {
		if refusal.allow != "" {
			w.Header().Set("Allow", refusal.allow)
		}
		s.writeStatusError(w, refusal.err)
		return nil
	}
	b := h.bufs.get(w)
	defer func() {
		if st == nil {
			h.bufs.put(b)
		}
	}()
	tw, ctx := &b.rw, r.Context()
	defer s.recoverResponse(ctx, "HTTP+JSON request", tw, func() { s.writeStatusError(tw, internalError()) })

	// The caller is authenticated (prepare) before a byte of a body is
	// read.
	in := restInput{s: s, w: tw, r: r, route: rt, body: &b.body}
	var result any
	var events iter.Seq2[wire.Event, error]
	c, err := s.prepare(r)
	if err == nil {
		echoExtensions(tw, c)
		result, events, err = s.invoke(ctx, "HTTP+JSON request", c, rt.op, &b.reqs, in.decode)
	}
	switch {
	case err != nil:
		if !in.decoding {
			// Refused before its body was read: never wait for the rest.
			httpbody.Abandon(tw, r)
		}
		s.writeStatusError(tw, s.failure(ctx, rt.op.method, err))
	case events != nil:
		return &restStream{restFrames: restFrames{s}, pool: &h.bufs, b: b, method: rt.op.method, events: events, rw: *tw}
	default:
		if err := writeJSON(tw, b, rt.op.result, result); err != nil {
			s.writeStatusError(tw, s.failure(ctx, rt.op.method, err))
		}
	}
	return nil
}

// restStream is one stream of the binding. The request's buffers (the
// decoded request the sequence opens from) go back to the pool once the
// first event is written, so an open stream holds none while it waits; it
// answers through a tracked writer of its own.
type restStream struct {
	restFrames
	pool   *bufferPool
	b      *buffers // the request's, until the first event is written
	method string
	events iter.Seq2[wire.Event, error]
	rw     trackedWriter
}

// serve writes the stream: ServeHTTP's, once the request is read.
func (st *restStream) serve(ctx context.Context) {
	defer st.written()
	defer st.s.recoverResponse(ctx, "HTTP+JSON request", &st.rw, func() { st.s.writeStatusError(&st.rw, internalError()) })
	st.s.writeEvents(ctx, &st.rw, "HTTP+JSON stream", st.method, st.events, st)
}

// written gives the request's buffers back: the sequence has opened, and
// its operation copied what it keeps of the request.
func (st *restStream) written() {
	if st.b != nil {
		st.pool.put(st.b)
		st.b = nil
	}
}

// writeJSON writes a 200 application/json response, encoding into the
// pooled buffer so that the body is not copied once more.
func writeJSON(w http.ResponseWriter, b *buffers, kind resultKind, v any) error {
	switch kind {
	case resultInTask:
		v = sendMessageResponse{Task: v.(*wire.Task)}
	case resultEmpty:
		v = struct{}{}
	}
	if err := encodeResult(b, v); err != nil {
		return err
	}
	body := b.out.Bytes()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
	return nil
}

// sendMessageResponse is SendMessageResponse with its task member.
type sendMessageResponse struct {
	Task *wire.Task `json:"task"`
}

// restFrames encodes a stream: one `data: <StreamResponse>` event per
// event (OpenWOP interop map, a2a.operations), and an error after the
// first as a final `data: {"error":{…}}` event in the google.rpc.Status
// shape, which is how a2a-go's REST client reads a stream error.
type restFrames struct{ s *Server }

func (f restFrames) event(ev wire.Event) ([]byte, error) {
	return wirejson.AppendStreamResponse(nil, ev)
}

func (f restFrames) written() {}

func (f restFrames) failure(e *Error) []byte {
	frame, _ := appendStatus(nil, e)
	return frame
}

func (f restFrames) refuse(w http.ResponseWriter, e *Error) { f.s.writeStatusError(w, e) }

// restInput is what an HTTP+JSON request carries for its row's decoder.
type restInput struct {
	s     *Server
	w     http.ResponseWriter
	r     *http.Request
	route restRoute
	body  *bytes.Buffer
	// decoding is set once decode starts: a refusal before it (the gate)
	// leaves the body unread.
	decoding bool
}

// decode fills req, the row's request, from the request: the row's
// decoder, then the task id of the path, bound into id.
func (in *restInput) decode(req any, id *wire.TaskID) error {
	in.decoding = true
	if err := in.route.op.fromREST(*in, req); err != nil {
		return err
	}
	if id == nil {
		return nil
	}
	return in.s.bindTaskID(in.route.task, id)
}

// readBody reads the body and decodes it into v, of the row's shape.
// optional admits an empty body (the task routes, whose path says
// everything).
func (in *restInput) readBody(v any, optional bool) error {
	if e := in.s.readBody(in.w, in.r, in.body, invalidRequest("request body could not be read")); e != nil {
		return e
	}
	body := in.body.Bytes()
	if optional && len(jsonbytes.TrimSpace(body)) == 0 {
		return nil
	}
	return in.s.decodeBody(body, in.route.op.shape, v)
}
