package a2a

// What both bindings do with a request body: read it into pooled memory
// through internal/httpbody, and decode it strictly — the member-case walk
// (strict.go), the data parts' bytes kept (data.go), then encoding/json —
// into an a2a-go request type.

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"sync"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/internal/httpbody"
	"github.com/wopinterop/wopinterop/internal/jsonbytes"
	"github.com/wopinterop/wopinterop/isolation"
)

// buffers are one request's pooled buffers: the request body, the decoded
// request, the response with an encoder bound to it (results are encoded
// in place), and the writer the response goes through.
type buffers struct {
	body bytes.Buffer
	reqs requests
	out  bytes.Buffer
	enc  *json.Encoder
	rw   trackedWriter
}

// requests hold one request of each A2A method, so that decoding one costs
// no allocation of its own: a row decodes into its slot, zeroed first
// (operations.go). A request lives no longer than its HTTP request, a
// stream's included: operations copy what they keep (ids, strings, the
// pointers encoding/json allocated inside it) and never keep the request.
type requests struct {
	send      wire.SendMessageRequest
	get       wire.GetTaskRequest
	list      wire.ListTasksRequest
	cancel    wire.CancelTaskRequest
	subscribe wire.SubscribeToTaskRequest
	create    wire.PushConfig
	getPush   wire.GetTaskPushConfigRequest
	listPush  wire.ListTaskPushConfigRequest
	delete    wire.DeleteTaskPushConfigRequest
	card      wire.GetExtendedAgentCardRequest
}

// The slots of the table's rows: each zeroes its request and returns it
// with where it holds its task id (nil when it addresses no task).

func (r *requests) sendMessage() (any, *wire.TaskID) {
	r.send = wire.SendMessageRequest{}
	return &r.send, nil
}

func (r *requests) getTask() (any, *wire.TaskID) {
	r.get = wire.GetTaskRequest{}
	return &r.get, &r.get.ID
}

func (r *requests) listTasks() (any, *wire.TaskID) {
	r.list = wire.ListTasksRequest{}
	return &r.list, nil
}

func (r *requests) cancelTask() (any, *wire.TaskID) {
	r.cancel = wire.CancelTaskRequest{}
	return &r.cancel, &r.cancel.ID
}

func (r *requests) subscribeToTask() (any, *wire.TaskID) {
	r.subscribe = wire.SubscribeToTaskRequest{}
	return &r.subscribe, &r.subscribe.ID
}

func (r *requests) createPushConfig() (any, *wire.TaskID) {
	r.create = wire.PushConfig{}
	return &r.create, &r.create.TaskID
}

func (r *requests) getPushConfig() (any, *wire.TaskID) {
	r.getPush = wire.GetTaskPushConfigRequest{}
	return &r.getPush, &r.getPush.TaskID
}

func (r *requests) listPushConfigs() (any, *wire.TaskID) {
	r.listPush = wire.ListTaskPushConfigRequest{}
	return &r.listPush, &r.listPush.TaskID
}

func (r *requests) deletePushConfig() (any, *wire.TaskID) {
	r.delete = wire.DeleteTaskPushConfigRequest{}
	return &r.delete, &r.delete.TaskID
}

func (r *requests) extendedCard() (any, *wire.TaskID) {
	r.card = wire.GetExtendedAgentCardRequest{}
	return &r.card, nil
}

// bufferPool pools buffers across the requests of one handler.
type bufferPool struct{ pool sync.Pool }

// get returns pooled buffers whose tracked writer wraps w (nil for
// buffers that answer no HTTP request of their own).
func (p *bufferPool) get(w http.ResponseWriter) *buffers {
	b, ok := p.pool.Get().(*buffers)
	if !ok {
		b = &buffers{}
		b.enc = json.NewEncoder(&b.out)
	}
	b.rw = trackedWriter{ResponseWriter: w}
	return b
}

// put pools b again, unless one large request grew it: a pooled buffer
// never keeps a peak.
func (p *bufferPool) put(b *buffers) {
	if b.body.Cap() > httpbody.MaxPooled || b.out.Cap() > httpbody.MaxPooled {
		return
	}
	b.body.Reset()
	b.out.Reset()
	b.rw = trackedWriter{}
	p.pool.Put(b)
}

// readBody reads r's body into dst within Options.MaxBodyBytes and
// Options.BodyTimeout. incomplete is the binding's answer to a body the
// client stopped sending.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request, dst *bytes.Buffer, incomplete *Error) *Error {
	if err := httpbody.Read(w, r, dst, s.cfg.MaxBodyBytes, s.cfg.BodyTimeout); err != nil {
		return bodyError(err, incomplete)
	}
	return nil
}

// decodeParams decodes params, a JSON object (nil: {}), into v after the
// member-case check. Nothing in params is ever a parse error: the body is
// valid JSON, so every refusal here is -32602. A SendMessage request's
// data parts keep the bytes they were sent as (data.go), which takes
// params to be the binding's to change. SendMessage params are decoded by
// hand when they can be (send_decode.go).
func (s *Server) decodeParams(params []byte, sh shape, v any) error {
	if params == nil {
		params = []byte("{}")
	}
	if req, ok := v.(*wire.SendMessageRequest); ok && sh == shapeSendMessageRequest && decodeSendMessage(params, req) {
		return nil
	}
	return s.decodeGeneral(params, sh, v)
}

// decodeGeneral is decodeParams for any request: the member-case walk,
// the data parts' bytes taken out, then encoding/json.
func (s *Server) decodeGeneral(params []byte, sh shape, v any) error {
	w := walker{Scanner: jsonbytes.Scanner{Data: params}}
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

// decodeBody decodes a request body of shape sh into v: a body that is not
// JSON is a parse error; anything but an object, a member spelled in
// another case (member names are case-sensitive) or a value encoding/json
// cannot place is an invalid parameter, decoded exactly as JSON-RPC params
// are.
func (s *Server) decodeBody(body []byte, sh shape, v any) error {
	if !jsonbytes.Valid(body) {
		return parseError()
	}
	if b := jsonbytes.TrimSpace(body); b[0] != '{' {
		return s.errs.invalidParams("", "request body must be a JSON object")
	}
	return s.decodeParams(body, sh, v)
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

// bindTaskID reads a task id in any accepted form (bound, projected,
// percent-encoded) into its bound form in *id. An id that is not a
// tenant-bound id answers exactly like an unknown task (OpenWOP interop.md
// §Isolation): unreadable is unknown.
func (s *Server) bindTaskID(raw string, id *wire.TaskID) error {
	bound, err := isolation.ParseID(raw)
	if err != nil {
		return s.errs.taskNotFound()
	}
	*id = wire.TaskID(bound)
	return nil
}
