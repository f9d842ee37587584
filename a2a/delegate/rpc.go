package delegate

// Our JSON-RPC transport for a2aclient (A2A 1.0 §9). a2aclient's own one
// (a2aclient.NewJSONRPCTransport) is where a2a-go is weakest as a client:
// it ignores the body of any non-200 answer (a 401 or 503 carrying a
// JSON-RPC error becomes "unexpected HTTP status"), fails the whole
// response when error.data is a legacy object (code and message lost),
// classifies by code only, reads bodies and decodes results without a
// size limit, accepts any result shape encoding/json can fill (missing
// ids, members in another case), and copies the peer's message into the
// error. This one reads error bodies on every status, identifies errors by
// code or ErrorInfo reason whatever shape data has, caps every body and
// stream event, decodes results strictly, and keeps nothing of the peer's
// text (OpenWOP RFC 0211 §F; interop map, a2a.errors and a2a.fields).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"iter"
	"mime"
	"net/http"
	"strconv"
	"sync/atomic"

	"github.com/wopinterop/wopinterop/internal/sseread"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/wopinterop/wopinterop/egress"
)

// The A2A 1.0 JSON-RPC method names (A2A 1.0 §9.4).
const (
	methodSendMessage      = "SendMessage"
	methodStreamMessage    = "SendStreamingMessage"
	methodGetTask          = "GetTask"
	methodListTasks        = "ListTasks"
	methodCancelTask       = "CancelTask"
	methodSubscribe        = "SubscribeToTask"
	methodCreatePushConfig = "CreateTaskPushNotificationConfig"
	methodGetPushConfig    = "GetTaskPushNotificationConfig"
	methodListPushConfigs  = "ListTaskPushNotificationConfigs"
	methodDeletePushConfig = "DeleteTaskPushNotificationConfig"
	methodExtendedCard     = "GetExtendedAgentCard"
)

// rpcTransport is an a2aclient.Transport over one JSON-RPC interface.
type rpcTransport struct {
	p   *target
	seq atomic.Uint64
}

var _ a2aclient.Transport = (*rpcTransport)(nil)

func (t *rpcTransport) nextID() string { return "wop-" + strconv.FormatUint(t.seq.Add(1), 10) }

// send posts one request and returns the response; the caller closes its
// body. The request is built here whole — envelope, params with the
// interface's tenant, headers — so nothing a caller passes can alter what
// the connection sends.
func (t *rpcTransport) send(ctx context.Context, params a2aclient.ServiceParams, method string, req any, stream bool) (*http.Response, string, error) {
	p, err := json.Marshal(req)
	if err != nil {
		return nil, "", err
	}
	id := t.nextID()
	body := appendRequest(make([]byte, 0, len(p)+96), id, method, p)
	hr, err := newRequest(ctx, t.p.url, body)
	if err != nil {
		return nil, "", err
	}
	hr.Header.Set("Content-Type", "application/json")
	if stream {
		hr.Header.Set("Accept", "text/event-stream")
	} else {
		hr.Header.Set("Accept", "application/json")
	}
	if err := t.p.setHeaders(ctx, hr.Header, params); err != nil {
		return nil, "", err
	}
	resp, err := t.p.http.Do(hr)
	if err != nil {
		return nil, "", stripURL(err)
	}
	noteResponse(ctx, resp.Header)
	return resp, id, nil
}

// call makes one unary call and returns its result (nil when the response
// had none), or the peer's error, or an *InvalidResponseError.
func (t *rpcTransport) call(ctx context.Context, params a2aclient.ServiceParams, method string, req any) ([]byte, error) {
	ctx, cancel := t.p.unaryContext(ctx)
	defer cancel()
	resp, id, err := t.send(ctx, params, method, req, false)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := egress.ReadAll(resp.Body, t.p.maxBytes)
	if err != nil {
		return nil, readError(err)
	}
	return readResponse(resp.StatusCode, body, id)
}

// readError is a failure to read a response body: over the limit is an
// invalid response, anything else the transport's own error.
func readError(err error) error {
	if errors.Is(err, egress.ErrTooLarge) {
		return &InvalidResponseError{Problem: "the response is over the size limit", Err: err}
	}
	return err
}

// readResponse judges one response body by its status: a JSON-RPC
// response on any status is read (a 401 or a 503 may carry the error that
// says why), and a non-200 without a readable error is an error of its
// status alone, never a result.
func readResponse(status int, body []byte, id string) ([]byte, error) {
	raw, err := decodeResponse(body, id)
	if pe := (*PeerError)(nil); errors.As(err, &pe) {
		pe.HTTPStatus = status
		return nil, pe
	}
	if status == http.StatusOK {
		return raw, err
	}
	return nil, statusError(status)
}

func (t *rpcTransport) SendMessage(ctx context.Context, params a2aclient.ServiceParams, req *wire.SendMessageRequest) (wire.SendMessageResult, error) {
	r := *req
	r.Tenant = t.p.tenant
	raw, err := t.call(ctx, params, methodSendMessage, &r)
	if err != nil {
		return nil, err
	}
	ev, err := decodeEvent(raw, sendResult)
	if err != nil {
		return nil, err
	}
	return ev.(wire.SendMessageResult), nil
}

func (t *rpcTransport) GetTask(ctx context.Context, params a2aclient.ServiceParams, req *wire.GetTaskRequest) (*wire.Task, error) {
	r := *req
	r.Tenant = t.p.tenant
	raw, err := t.call(ctx, params, methodGetTask, &r)
	if err != nil {
		return nil, err
	}
	return decodeTask(raw)
}

func (t *rpcTransport) CancelTask(ctx context.Context, params a2aclient.ServiceParams, req *wire.CancelTaskRequest) (*wire.Task, error) {
	r := *req
	r.Tenant = t.p.tenant
	raw, err := t.call(ctx, params, methodCancelTask, &r)
	if err != nil {
		return nil, err
	}
	return decodeTask(raw)
}

func (t *rpcTransport) ListTasks(ctx context.Context, params a2aclient.ServiceParams, req *wire.ListTasksRequest) (*wire.ListTasksResponse, error) {
	r := *req
	r.Tenant = t.p.tenant
	raw, err := t.call(ctx, params, methodListTasks, &r)
	if err != nil {
		return nil, err
	}
	var out wire.ListTasksResponse
	if err := decodeStrict(raw, &out, "a task list"); err != nil {
		return nil, err
	}
	for _, task := range out.Tasks {
		if p := checkTask(task); p != "" {
			return nil, invalid(p)
		}
	}
	return &out, nil
}

func (t *rpcTransport) SendStreamingMessage(ctx context.Context, params a2aclient.ServiceParams, req *wire.SendMessageRequest) iter.Seq2[wire.Event, error] {
	r := *req
	r.Tenant = t.p.tenant
	return t.stream(ctx, params, methodStreamMessage, &r)
}

func (t *rpcTransport) SubscribeToTask(ctx context.Context, params a2aclient.ServiceParams, req *wire.SubscribeToTaskRequest) iter.Seq2[wire.Event, error] {
	r := *req
	r.Tenant = t.p.tenant
	return t.stream(ctx, params, methodSubscribe, &r)
}

// stream makes one streaming call: an SSE body whose every event is a
// JSON-RPC response carrying one StreamResponse (A2A 1.0 §9.4.2). A peer
// that answers with a single JSON body instead (an error before the
// stream, or a server that does not stream) is read as that one response.
// The iterator ends after the first error it yields.
func (t *rpcTransport) stream(ctx context.Context, params a2aclient.ServiceParams, method string, req any) iter.Seq2[wire.Event, error] {
	return func(yield func(wire.Event, error) bool) {
		resp, id, err := t.send(ctx, params, method, req, true)
		if err != nil {
			yield(nil, err)
			return
		}
		defer resp.Body.Close()
		mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		if resp.StatusCode != http.StatusOK || mt != "text/event-stream" {
			body, err := egress.ReadAll(resp.Body, t.p.maxBytes)
			if err != nil {
				yield(nil, readError(err))
				return
			}
			raw, err := readResponse(resp.StatusCode, body, id)
			if err == nil {
				var ev wire.Event
				if ev, err = decodeEvent(raw, streamEvent); err == nil {
					yield(ev, nil)
					return
				}
			}
			yield(nil, err)
			return
		}
		for data, err := range sseread.Data(resp.Body, t.p.maxBytes) {
			if err != nil {
				yield(nil, readError(err))
				return
			}
			raw, err := readResponse(http.StatusOK, data, id)
			var ev wire.Event
			if err == nil {
				ev, err = decodeEvent(raw, streamEvent)
			}
			if err != nil {
				yield(nil, err)
				return
			}
			if !yield(ev, nil) {
				return
			}
		}
		if err := ctx.Err(); err != nil {
			yield(nil, err)
		}
	}
}

func (t *rpcTransport) GetTaskPushConfig(ctx context.Context, params a2aclient.ServiceParams, req *wire.GetTaskPushConfigRequest) (*wire.PushConfig, error) {
	r := *req
	r.Tenant = t.p.tenant
	return t.pushConfig(ctx, params, methodGetPushConfig, &r)
}

func (t *rpcTransport) CreateTaskPushConfig(ctx context.Context, params a2aclient.ServiceParams, req *wire.PushConfig) (*wire.PushConfig, error) {
	r := *req
	r.Tenant = t.p.tenant
	return t.pushConfig(ctx, params, methodCreatePushConfig, &r)
}

func (t *rpcTransport) pushConfig(ctx context.Context, params a2aclient.ServiceParams, method string, req any) (*wire.PushConfig, error) {
	raw, err := t.call(ctx, params, method, req)
	if err != nil {
		return nil, err
	}
	var out wire.PushConfig
	if err := decodeStrict(raw, &out, "a push config"); err != nil {
		return nil, err
	}
	if p := checkPushConfig(&out); p != "" {
		return nil, invalid(p)
	}
	return &out, nil
}

func (t *rpcTransport) ListTaskPushConfigs(ctx context.Context, params a2aclient.ServiceParams, req *wire.ListTaskPushConfigRequest) ([]*wire.PushConfig, error) {
	r := *req
	r.Tenant = t.p.tenant
	raw, err := t.call(ctx, params, methodListPushConfigs, &r)
	if err != nil {
		return nil, err
	}
	var out wire.ListTaskPushConfigResponse
	if err := decodeStrict(raw, &out, "a push config list"); err != nil {
		return nil, err
	}
	for _, c := range out.Configs {
		if p := checkPushConfig(c); p != "" {
			return nil, invalid(p)
		}
	}
	return out.Configs, nil
}

func (t *rpcTransport) DeleteTaskPushConfig(ctx context.Context, params a2aclient.ServiceParams, req *wire.DeleteTaskPushConfigRequest) error {
	r := *req
	r.Tenant = t.p.tenant
	// Delete has no result to read; a response without one is success.
	_, err := t.call(ctx, params, methodDeletePushConfig, &r)
	return err
}

func (t *rpcTransport) GetExtendedAgentCard(ctx context.Context, params a2aclient.ServiceParams, req *wire.GetExtendedAgentCardRequest) (*wire.AgentCard, error) {
	r := *req
	r.Tenant = t.p.tenant
	raw, err := t.call(ctx, params, methodExtendedCard, &r)
	if err != nil {
		return nil, err
	}
	card, legacy, problem := decodeCard(raw)
	if problem == "" && legacy != "" {
		problem = "is in the 0.3 shape"
	}
	if problem != "" {
		return nil, invalid("the extended card: " + problem)
	}
	return card, nil
}

// Destroy releases nothing: connections belong to the Client's pool.
func (t *rpcTransport) Destroy() error { return nil }

// newRequest is a POST of body to url under ctx.
func newRequest(ctx context.Context, url string, body []byte) (*http.Request, error) {
	return http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
}
