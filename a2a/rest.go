package a2a

// The HTTP+JSON binding (A2A 1.0.1 §5.3, §9.4; OpenWOP RFC 0211 §B, §C; interop map, a2a.operations): a router over the
// A2A 1.0.1 paths, the request decoding of each route, and the one
// function that writes a google.rpc.Status error body.

import (
	"bytes"
	"encoding/json"
	"errors"
	"iter"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/internal/httpbody"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/isolation"
)

// HTTPJSON returns the handler of the HTTP+JSON interface
// (Config.HTTPJSONURL). It routes on the request's escaped path relative to
// where it is mounted, so mount it with [http.StripPrefix]:
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
// over Config.MaxBodyBytes is 413, one still arriving after
// Config.BodyTimeout 408 DEADLINE_EXCEEDED (reason INVALID_REQUEST), a
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
	bufs sync.Pool // of *restBuffers
}

// restRoute is a matched HTTP+JSON request.
type restRoute struct {
	method string
	// tenant is the percent-decoded /{tenant} segment; "" on the host
	// interface.
	tenant string
	// task is the task id as it arrived (still to be parsed).
	task string
	// config is the percent-decoded push config id.
	config string
}

// restRefusal is an unmatched request: its error and, for a wrong verb, the
// Allow header.
type restRefusal struct {
	err   *Error
	allow string
}

// Top-level path segments. A routing value this library mints is always 24
// characters (isolation.RoutingValueLen), so it can never be one of them.
const (
	segSend      = "message:send"
	segStream    = "message:stream"
	segTasks     = "tasks"
	segCard      = "extendedAgentCard"
	segPush      = "pushNotificationConfigs"
	actionCancel = "cancel"
	actionSub    = "subscribe"
)

// matchREST maps a verb and an escaped path to an A2A method.
func matchREST(verb, path string) (restRoute, *restRefusal) {
	var rt restRoute
	path = strings.TrimPrefix(path, "/")
	first, rest, more := strings.Cut(path, "/")
	switch first {
	case segSend, segStream, segTasks, segCard:
	case "":
		return rt, &restRefusal{err: routeNotFound()}
	default:
		tenant, err := url.PathUnescape(first)
		if err != nil {
			// Kept as sent: it resolves to nothing and is answered like any
			// never-minted value.
			tenant = first
		}
		rt.tenant = tenant
		first, rest, more = strings.Cut(rest, "/")
	}
	switch {
	case first == segSend && !more:
		return rt.with(methodSendMessage), onlyVerb(verb, http.MethodPost)
	case first == segStream && !more:
		return rt.with(methodSendStreamingMessage), onlyVerb(verb, http.MethodPost)
	case first == segCard && !more:
		return rt.with(methodGetExtendedAgentCard), onlyVerb(verb, http.MethodGet)
	case first == segTasks && !more:
		return rt.with(methodListTasks), onlyVerb(verb, http.MethodGet)
	case first == segTasks:
		return matchTaskPath(rt, verb, rest)
	}
	return rt, &restRefusal{err: routeNotFound()}
}

func (rt restRoute) with(method string) restRoute { rt.method = method; return rt }

func onlyVerb(verb, want string) *restRefusal {
	if verb == want {
		return nil
	}
	return &restRefusal{err: methodNotAllowed(), allow: want}
}

// matchTaskPath matches what follows /tasks/: {id}, {id}:cancel,
// {id}:subscribe, {id}/pushNotificationConfigs[/{cid}], where {id} is one
// segment or the two segments of an unescaped bound id.
func matchTaskPath(rt restRoute, verb, rest string) (restRoute, *restRefusal) {
	var segs [5]string
	n := 0
	for n < len(segs) {
		seg, tail, more := strings.Cut(rest, "/")
		if seg == "" {
			return rt, &restRefusal{err: routeNotFound()}
		}
		segs[n] = seg
		n++
		if !more {
			break
		}
		rest = tail
		if n == len(segs) {
			return rt, &restRefusal{err: routeNotFound()}
		}
	}
	push := slices.Index(segs[1:n], segPush) + 1 // 0 when absent
	if push > 0 {
		if push > 2 {
			return rt, &restRefusal{err: routeNotFound()}
		}
		rt.task = joinIDSegments(segs[:push])
		switch n - push - 1 {
		case 0:
			switch verb {
			case http.MethodGet:
				return rt.with(methodListPushConfigs), nil
			case http.MethodPost:
				return rt.with(methodCreatePushConfig), nil
			}
			return rt, &restRefusal{err: methodNotAllowed(), allow: "GET, POST"}
		case 1:
			cid, err := url.PathUnescape(segs[push+1])
			if err != nil {
				cid = segs[push+1]
			}
			rt.config = cid
			switch verb {
			case http.MethodGet:
				return rt.with(methodGetPushConfig), nil
			case http.MethodDelete:
				return rt.with(methodDeletePushConfig), nil
			}
			return rt, &restRefusal{err: methodNotAllowed(), allow: "GET, DELETE"}
		}
		return rt, &restRefusal{err: routeNotFound()}
	}
	if n > 2 {
		return rt, &restRefusal{err: routeNotFound()}
	}
	last := segs[n-1]
	action := ""
	if i := strings.LastIndexByte(last, ':'); i >= 0 {
		switch last[i+1:] {
		case actionCancel, actionSub:
			action, segs[n-1] = last[i+1:], last[:i]
		}
	}
	rt.task = joinIDSegments(segs[:n])
	switch action {
	case actionCancel:
		return rt.with(methodCancelTask), onlyVerb(verb, http.MethodPost)
	case actionSub:
		if verb == http.MethodGet || verb == http.MethodPost {
			return rt.with(methodSubscribeToTask), nil
		}
		return rt, &restRefusal{err: methodNotAllowed(), allow: "GET, POST"}
	}
	return rt.with(methodGetTask), onlyVerb(verb, http.MethodGet)
}

// joinIDSegments returns the task id of one segment as sent (ParseID
// decodes it), or of two segments percent-decoded and joined with '/'. A
// segment that does not decode yields an id that does not parse.
func joinIDSegments(segs []string) string {
	if len(segs) == 1 {
		return segs[0]
	}
	t, err1 := url.PathUnescape(segs[0])
	o, err2 := url.PathUnescape(segs[1])
	if err1 != nil || err2 != nil {
		return ""
	}
	return t + "/" + o
}

func (h *restHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s := h.s
	rt, refusal := matchREST(r.Method, r.URL.EscapedPath())
	if refusal != nil {
		if refusal.allow != "" {
			w.Header().Set("Allow", refusal.allow)
		}
		s.writeStatusError(w, refusal.err)
		return
	}
	b, _ := h.bufs.Get().(*restBuffers)
	if b == nil {
		b = new(restBuffers)
		b.enc = json.NewEncoder(&b.out)
	}
	defer h.release(b)
	b.rw = trackedWriter{ResponseWriter: w}
	tw := &b.rw
	defer s.recoverResponse(r.Context(), "HTTP+JSON request", tw, func() { s.writeStatusError(tw, internalError()) })

	// The caller is authenticated (prepare) before a byte of a body is
	// read.
	var result any
	c, err := s.prepare(r)
	if err == nil {
		err = s.gate(rt.method)
	}
	if err == nil {
		result, err = s.serveREST(tw, r, c, rt, &b.body)
	} else {
		// Refused before its body was read: never wait for the rest.
		httpbody.Abandon(tw, r)
	}
	if err == nil && result != nil {
		err = writeJSON(tw, b, result)
	}
	if err != nil {
		s.writeStatusError(tw, s.edgeError(r, err))
	}
}

// restBuffers are one request's pooled buffers: the request body, the
// response with its encoder, and the writer the response goes through.
type restBuffers struct {
	body bytes.Buffer
	out  bytes.Buffer
	enc  *json.Encoder
	rw   trackedWriter
}

// release pools b again, unless one large request grew it: a pooled
// buffer never keeps a peak.
func (h *restHandler) release(b *restBuffers) {
	if b.body.Cap() > httpbody.MaxPooled || b.out.Cap() > httpbody.MaxPooled {
		return
	}
	b.body.Reset()
	b.out.Reset()
	b.rw = trackedWriter{}
	h.bufs.Put(b)
}

// writeJSON writes a 200 application/json response, encoding into the
// pooled buffer so that the body is not copied once more.
func writeJSON(w http.ResponseWriter, b *restBuffers, v any) error {
	if err := b.enc.Encode(v); err != nil {
		return err
	}
	body := b.out.Bytes()
	body = body[:len(body)-1] // Encode's newline
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
	return nil
}

// edgeError turns an operation's error into the *Error to write, logging
// what never reaches the wire.
func (s *Server) edgeError(r *http.Request, err error) *Error {
	e := asError(err)
	if e.Code == codeInternal && !errors.As(err, new(*Error)) {
		s.log.ErrorContext(r.Context(), "a2a: HTTP+JSON request failed", "error", err)
	}
	return e
}

// serveREST decodes the route's request (its body read into body),
// resolves its routing value and runs the operation. It returns the result
// to encode, or the refusal; a stream is written here and returns neither.
func (s *Server) serveREST(w http.ResponseWriter, r *http.Request, c *call, rt restRoute, body *bytes.Buffer) (any, error) {
	ctx := r.Context()
	switch rt.method {
	case methodSendMessage, methodSendStreamingMessage:
		req := new(wire.SendMessageRequest)
		if err := s.decodeRESTBody(w, r, body, req, shapeSendMessageRequest, false); err != nil {
			return nil, err
		}
		if req.Message == nil || req.Message.TaskID == "" {
			// Only a new task is routed (see routingHint).
			tenant, err := s.routingValue(rt.tenant, req.Tenant)
			if err != nil {
				return nil, err
			}
			req.Tenant = tenant
		}
		if err := s.rpcSendTarget(ctx, c, req); err != nil {
			return nil, err
		}
		if rt.method == methodSendMessage {
			task, err := s.sendMessage(ctx, c, req)
			if err != nil {
				return nil, err
			}
			return sendMessageResponse{Task: task}, nil
		}
		events, err := s.streamMessage(ctx, c, req)
		if err != nil {
			return nil, err
		}
		s.writeRESTStream(w, r, rt.method, events)
		return nil, nil

	case methodGetTask:
		req := &wire.GetTaskRequest{Tenant: rt.tenant}
		q := r.URL.Query()
		if v, ok := queryValue(q, "historyLength"); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				return nil, s.errs.invalidParams("historyLength", "historyLength must be an integer")
			}
			req.HistoryLength = &n
		}
		if err := s.taskAddressed(rt, &req.ID); err != nil {
			return nil, err
		}
		task, err := s.getTask(ctx, c, req)
		if err != nil {
			return nil, err
		}
		return task, nil

	case methodListTasks:
		req, err := s.listTasksQuery(r.URL.Query())
		if err != nil {
			return nil, err
		}
		req.Tenant = rt.tenant
		if err := s.routingHint(ctx, c, rt.tenant); err != nil {
			return nil, err
		}
		resp, err := s.listTasks(ctx, c, req)
		if err != nil {
			return nil, err
		}
		if resp.Tasks == nil {
			resp.Tasks = []*wire.Task{}
		}
		return resp, nil

	case methodCancelTask:
		req := &wire.CancelTaskRequest{Tenant: rt.tenant}
		var sent wire.CancelTaskRequest
		if err := s.decodeRESTBody(w, r, body, &sent, shapeCancelTaskRequest, true); err != nil {
			return nil, err
		}
		req.Metadata = sent.Metadata
		if err := s.taskAddressed(rt, &req.ID); err != nil {
			return nil, err
		}
		task, err := s.cancelTask(ctx, c, req)
		if err != nil {
			return nil, err
		}
		return task, nil

	case methodSubscribeToTask:
		req := &wire.SubscribeToTaskRequest{Tenant: rt.tenant}
		if r.Method == http.MethodPost {
			var sent wire.SubscribeToTaskRequest
			if err := s.decodeRESTBody(w, r, body, &sent, shapeSubscribeRequest, true); err != nil {
				return nil, err
			}
		}
		if err := s.taskAddressed(rt, &req.ID); err != nil {
			return nil, err
		}
		events, err := s.subscribe(ctx, c, req)
		if err != nil {
			return nil, err
		}
		s.writeRESTStream(w, r, rt.method, events)
		return nil, nil

	case methodCreatePushConfig:
		req := new(wire.PushConfig)
		if err := s.decodeRESTBody(w, r, body, req, shapePushConfig, false); err != nil {
			return nil, err
		}
		req.Tenant = rt.tenant
		if err := s.taskAddressed(rt, &req.TaskID); err != nil {
			return nil, err
		}
		cfg, err := s.createPushConfig(ctx, c, req)
		if err != nil {
			return nil, err
		}
		return cfg, nil

	case methodGetPushConfig:
		req := &wire.GetTaskPushConfigRequest{Tenant: rt.tenant, ID: rt.config}
		if err := s.taskAddressed(rt, &req.TaskID); err != nil {
			return nil, err
		}
		cfg, err := s.getPushConfig(ctx, c, req)
		if err != nil {
			return nil, err
		}
		return cfg, nil

	case methodListPushConfigs:
		req := &wire.ListTaskPushConfigRequest{Tenant: rt.tenant}
		q := r.URL.Query()
		if v, ok := queryValue(q, "pageSize"); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				return nil, s.errs.invalidParams("pageSize", "pageSize must be an integer")
			}
			req.PageSize = n
		}
		req.PageToken, _ = queryValue(q, "pageToken")
		if err := s.taskAddressed(rt, &req.TaskID); err != nil {
			return nil, err
		}
		resp, err := s.listPushConfigs(ctx, c, req)
		if err != nil {
			return nil, err
		}
		if resp.Configs == nil {
			resp.Configs = []*wire.PushConfig{}
		}
		return resp, nil

	case methodDeletePushConfig:
		req := &wire.DeleteTaskPushConfigRequest{Tenant: rt.tenant, ID: rt.config}
		if err := s.taskAddressed(rt, &req.TaskID); err != nil {
			return nil, err
		}
		if err := s.deletePushConfig(ctx, c, req); err != nil {
			return nil, err
		}
		return struct{}{}, nil

	case methodGetExtendedAgentCard:
		if err := s.withAgent(ctx, c, rt.tenant); err != nil {
			return nil, neverMinted(err, s.errs.extendedCardNotConfigured())
		}
		card, err := s.extendedCard(ctx, c, &wire.GetExtendedAgentCardRequest{Tenant: rt.tenant})
		if err != nil {
			return nil, err
		}
		return card, nil
	}
	return nil, routeNotFound()
}

// writeRESTStream answers a streaming route: text/event-stream with one
// `data: <StreamResponse>` event per event of seq (OpenWOP interop map, a2a.operations). The stream
// starts with the first event, so an error before it is a plain
// google.rpc.Status with its own HTTP status; an error after it is a final
// `data: {"error":{…}}` event in the same google.rpc.Status shape, which
// is how a2a-go's REST client reads a stream error, a panic in seq
// included. It ends when seq does or the client goes away (a write fails,
// after Config.StreamWriteTimeout when the client stopped reading).
func (s *Server) writeRESTStream(w http.ResponseWriter, r *http.Request, method string, seq iter.Seq2[wire.Event, error]) {
	ctx := r.Context()
	var sw *sseWriter
	fail := func(err error) {
		if ctx.Err() != nil {
			return // the client is gone; nobody reads an answer
		}
		e := s.edgeError(r, err)
		if sw == nil {
			s.writeStatusError(w, e)
			return
		}
		frame, encErr := json.Marshal(statusOf(e))
		if encErr == nil {
			_ = sw.data(frame)
		}
	}
	for ev, err := range s.safeEvents(ctx, "HTTP+JSON stream", method, seq) {
		if err == nil && ev == nil {
			err = errNoResult
		}
		if err != nil {
			fail(err)
			return
		}
		frame, err := json.Marshal(wire.StreamResponse{Event: ev})
		if err != nil {
			fail(err)
			return
		}
		if sw == nil {
			var ok bool
			if sw, ok = newSSE(w, s.cfg.StreamWriteTimeout); !ok {
				s.log.ErrorContext(ctx, "a2a: the ResponseWriter cannot flush; streaming is impossible")
				s.writeStatusError(w, internalError())
				return
			}
			stop := sw.heartbeat(sseHeartbeat, func(p any) { s.logPanic(ctx, "HTTP+JSON stream heartbeat", method, p) })
			defer stop()
		}
		if sw.data(frame) != nil {
			return // the client is gone; leaving the loop stops the sequence
		}
	}
	if sw == nil {
		// A sequence that ended before its first event (the Task) broke
		// the operation's contract.
		fail(errNoResult)
	}
}

// taskAddressed reads the task id of a task-addressed route. A malformed
// id is answered exactly like an unknown task (OpenWOP interop.md
// §Isolation). The /{tenant}
// segment is not read: on an existing task it is a routing hint the id
// makes moot (see routingHint).
func (s *Server) taskAddressed(rt restRoute, id *wire.TaskID) error {
	bound, err := isolation.ParseID(rt.task)
	if err != nil {
		return s.errs.taskNotFound()
	}
	*id = wire.TaskID(bound)
	return nil
}

// routingValue reconciles the path's /{tenant} segment with a body's
// tenant member: either may carry it, and when both do they must agree.
// The refusal depends only on the two strings, never on what they resolve
// to, so it discloses nothing.
func (s *Server) routingValue(path, body string) (string, error) {
	switch {
	case body == "" || body == path:
		return path, nil
	case path == "":
		return body, nil
	}
	return "", s.errs.invalidParams("tenant", "tenant in the body differs from the path")
}

// queryValue returns the first value of a query parameter.
func queryValue(q url.Values, name string) (string, bool) {
	vs, ok := q[name]
	if !ok || len(vs) == 0 {
		return "", false
	}
	return vs[0], true
}

// listTasksQuery reads ListTasks' query parameters (A2A 1.0.1 §11.3.4).
// statusTimestampAfter is also read as lastUpdatedAfter, the name a2a-go's
// REST client sends.
func (s *Server) listTasksQuery(q url.Values) (*wire.ListTasksRequest, error) {
	req := new(wire.ListTasksRequest)
	req.ContextID, _ = queryValue(q, "contextId")
	if v, ok := queryValue(q, "status"); ok {
		req.Status = wire.TaskState(v)
	}
	req.PageToken, _ = queryValue(q, "pageToken")
	if v, ok := queryValue(q, "pageSize"); ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			return nil, s.errs.invalidParams("pageSize", "pageSize must be an integer")
		}
		req.PageSize = n
	}
	if v, ok := queryValue(q, "historyLength"); ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			return nil, s.errs.invalidParams("historyLength", "historyLength must be an integer")
		}
		req.HistoryLength = &n
	}
	v, ok := queryValue(q, "statusTimestampAfter")
	if !ok {
		v, ok = queryValue(q, "lastUpdatedAfter")
	}
	if ok {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return nil, s.errs.invalidParams("statusTimestampAfter", "statusTimestampAfter must be an RFC 3339 timestamp")
		}
		req.StatusTimestampAfter = &t
	}
	if v, ok := queryValue(q, "includeArtifacts"); ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, s.errs.invalidParams("includeArtifacts", "includeArtifacts must be true or false")
		}
		req.IncludeArtifacts = b
	}
	return req, nil
}

// sendMessageResponse is SendMessageResponse with its task member.
type sendMessageResponse struct {
	Task *wire.Task `json:"task"`
}

// decodeRESTBody reads a request body into buf through internal/httpbody,
// within Config.MaxBodyBytes and Config.BodyTimeout, and decodes it into
// v. optional admits an empty body (the task routes, whose path says
// everything).
func (s *Server) decodeRESTBody(w http.ResponseWriter, r *http.Request, buf *bytes.Buffer, v any, sh shape, optional bool) error {
	if err := httpbody.Read(w, r, buf, s.cfg.MaxBodyBytes, s.cfg.BodyTimeout); err != nil {
		return bodyError(err, invalidRequest("request body could not be read"))
	}
	body := buf.Bytes()
	if optional && len(trimJSONSpace(body)) == 0 {
		return nil
	}
	return s.decodeStrict(body, v, sh)
}

// decodeStrict decodes a JSON object of shape sh into v: a body that is not
// JSON is a parse error; anything but an object, a member spelled in
// another case (member names are case-sensitive) or a value encoding/json
// cannot place is an invalid parameter, decoded exactly as JSON-RPC params
// are.
func (s *Server) decodeStrict(body []byte, v any, sh shape) error {
	if !json.Valid(body) {
		return parseError()
	}
	if b := trimJSONSpace(body); b[0] != '{' {
		return s.errs.invalidParams("", "request body must be a JSON object")
	}
	return s.rpcParams(body, sh, v)
}

// restStatusDomain is the ErrorInfo domain of every A2A error.
const restStatusDomain = wire.ProtocolDomain

// Detail type URLs.
const (
	typeErrorInfo  = "type.googleapis.com/google.rpc.ErrorInfo"
	typeBadRequest = "type.googleapis.com/google.rpc.BadRequest"
)

type statusBody struct {
	Error statusError `json:"error"`
}

type statusError struct {
	Code    int    `json:"code"`
	Status  string `json:"status"`
	Message string `json:"message"`
	Details []any  `json:"details"`
}

type errorInfoDetail struct {
	Type     string            `json:"@type"`
	Reason   string            `json:"reason"`
	Domain   string            `json:"domain"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

type badRequestDetail struct {
	Type            string           `json:"@type"`
	FieldViolations []fieldViolation `json:"fieldViolations"`
}

type fieldViolation struct {
	Field       string `json:"field"`
	Description string `json:"description"`
}

// statusOf is the google.rpc.Status of e (OpenWOP RFC 0211 §B). The HTTP status and
// gRPC name come from e; a host-built *Error with neither gets 500 INTERNAL
// and UNKNOWN rather than an invalid status line.
func statusOf(e *Error) statusBody {
	code := e.HTTP
	if code < 400 || code > 599 {
		code = http.StatusInternalServerError
	}
	status := e.GRPC
	if status == "" {
		status = "UNKNOWN"
	}
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(code)
	}
	details := make([]any, 0, 2)
	if e.Reason != "" {
		details = append(details, errorInfoDetail{Type: typeErrorInfo, Reason: e.Reason, Domain: restStatusDomain, Metadata: e.Metadata})
	}
	if e.Field != "" {
		details = append(details, badRequestDetail{Type: typeBadRequest, FieldViolations: []fieldViolation{{Field: e.Field, Description: msg}}})
	}
	return statusBody{Error: statusError{Code: code, Status: status, Message: msg, Details: details}}
}

// writeStatus is the one function that writes an HTTP+JSON error
// (OpenWOP RFC 0211 §B, §C). A 401 carries challenge as WWW-Authenticate unless the
// caller already set one.
func writeStatus(w http.ResponseWriter, e *Error, challenge string) {
	body := statusOf(e)
	out, err := json.Marshal(body)
	if err != nil {
		// Only host-built metadata could get here; answer without it.
		body.Error.Details = []any{}
		out, _ = json.Marshal(body)
	}
	h := w.Header()
	if body.Error.Code == http.StatusUnauthorized && h.Get("WWW-Authenticate") == "" {
		h.Set("WWW-Authenticate", challenge)
	}
	h.Set("Content-Type", "application/json")
	h.Del("Content-Length")
	w.WriteHeader(body.Error.Code)
	_, _ = w.Write(out)
}

// writeStatusError writes e with the challenges of the configured security
// schemes.
func (s *Server) writeStatusError(w http.ResponseWriter, e *Error) {
	writeStatus(w, e, s.authChallenge())
}

// WriteHTTPJSONError writes err as an HTTP+JSON google.rpc.Status, for
// host middleware that refuses a request before it reaches the handler of
// [Server.HTTPJSON] (authentication, rate limiting, body limits), so that
// every answer on the interface URL keeps the binding's shape (OpenWOP RFC 0211 §C).
//
// err may be an [*Error] (any code, gRPC name and HTTP status the
// middleware needs, e.g. 429 RESOURCE_EXHAUSTED), [interop.ErrUnauthenticated]
// (401 UNAUTHENTICATED), [interop.ErrForbidden] (403 PERMISSION_DENIED) or
// an [*http.MaxBytesError] (413). Anything else is written as 500 INTERNAL
// with a generic message; its text is never sent. A 401 carries
// `WWW-Authenticate: Bearer` unless the middleware set the header first.
func WriteHTTPJSONError(w http.ResponseWriter, err error) {
	writeStatus(w, edgeErrorOf(err), "Bearer")
}

// edgeErrorOf maps the errors host middleware may hold onto *Error.
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

// authChallenge is the WWW-Authenticate value of a 401: one challenge per
// HTTP-auth, OAuth 2 or OpenID Connect scheme on the card (the last two
// present bearer tokens), in name order, and Bearer when the card declares
// none of them.
func (s *Server) authChallenge() string {
	names := make([]string, 0, len(s.cfg.Card.SecuritySchemes))
	for name := range s.cfg.Card.SecuritySchemes {
		names = append(names, string(name))
	}
	slices.Sort(names)
	var challenges []string
	for _, name := range names {
		var c string
		switch v := s.cfg.Card.SecuritySchemes[wire.SecuritySchemeName(name)].(type) {
		case wire.HTTPAuthSecurityScheme:
			c = v.Scheme
		case wire.OAuth2SecurityScheme, wire.OpenIDConnectSecurityScheme:
			c = "Bearer"
		}
		if c != "" && !slices.ContainsFunc(challenges, func(x string) bool { return strings.EqualFold(x, c) }) {
			challenges = append(challenges, c)
		}
	}
	if len(challenges) == 0 {
		return "Bearer"
	}
	return strings.Join(challenges, ", ")
}

// routeNotFound answers a path that is no A2A operation.
func routeNotFound() *Error {
	return &Error{Code: codeMethodNotFound, GRPC: "NOT_FOUND", HTTP: http.StatusNotFound, Reason: "METHOD_NOT_FOUND", Message: "no A2A operation at this path"}
}

// methodNotAllowed answers a known path with the wrong HTTP verb.
func methodNotAllowed() *Error {
	return &Error{Code: codeMethodNotFound, GRPC: "UNIMPLEMENTED", HTTP: http.StatusMethodNotAllowed, Reason: "METHOD_NOT_FOUND", Message: "HTTP method not allowed on this path"}
}
