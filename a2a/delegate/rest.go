package delegate

// The HTTP+JSON binding (A2A 1.0 §10) is a2aclient's REST transport over
// the guarded client, wrapped so that it keeps the same guarantees as our
// JSON-RPC transport where a wrapper can give them:
//
//   - every request leaves through the egress guard, with only the
//     connection's headers (A2A-Version, the credential, A2A-Extensions);
//   - every response body is capped at MaxResponseBytes and every stream
//     event at the same size (a2a-go's own stream reader allows 10 MB);
//   - every result is checked for the members A2A 1.0 requires, and a
//     result a2a-go could not decode is an InvalidAgentResponseError;
//   - a peer's error is read here, as on JSON-RPC, never by a2a-go: by the
//     reason of the ErrorInfo in its google.rpc.Status details, whatever
//     its metadata hold, else by its HTTP status — whatever its
//     Content-Type (problem+json, a gateway's page) — and keeps only its
//     kind (no message, no details). a2a-go reads an error body only as
//     application/json and only by an a2a-protocol.org ErrorInfo whose
//     metadata values are all strings; any other error (a Status without
//     a reason, a 403 problem+json) would reach the caller as a bare
//     internal or server error, its status lost.
//
// What a wrapper cannot give, and why JSON-RPC is preferred when a card
// offers both: a2a-go decodes HTTP+JSON results with encoding/json alone
// (member names matched case-insensitively).

import (
	"context"
	"errors"
	"io"
	"iter"
	"mime"
	"net/http"
	"net/url"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/wopinterop/wopinterop/egress"
)

// restTransport is a2aclient's REST transport with our checks around it.
type restTransport struct {
	p    *target
	base a2aclient.Transport
}

var _ a2aclient.Transport = (*restTransport)(nil)

func newRESTTransport(p *target) (*restTransport, error) {
	u, err := url.Parse(p.url)
	if err != nil {
		return nil, &CardError{Problem: "has an interface URL that is not a URL"}
	}
	hc := &http.Client{
		Transport:     &restRoundTripper{p: p, next: p.http.Transport},
		CheckRedirect: p.http.CheckRedirect,
	}
	return &restTransport{p: p, base: a2aclient.NewRESTTransport(u, hc)}, nil
}

// restRoundTripper replaces the headers a2a-go sets with the connection's
// own, and caps what comes back.
type restRoundTripper struct {
	p    *target
	next http.RoundTripper
}

func (rt *restRoundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	in := r.Header
	out := http.Header{}
	for _, h := range [...]string{"Content-Type", "Accept"} {
		if v := in.Get(h); v != "" {
			out.Set(h, v)
		}
	}
	params := a2aclient.ServiceParams{}
	if vs := in.Values(wire.SvcParamExtensions); len(vs) > 0 {
		params.Append(wire.SvcParamExtensions, vs...)
	}
	if err := rt.p.setHeaders(r.Context(), out, params); err != nil {
		if r.Body != nil {
			_ = r.Body.Close()
		}
		return nil, err
	}
	r = r.Clone(r.Context())
	r.Header = out
	resp, err := rt.next.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	noteResponse(r.Context(), resp.Header)
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode >= 400 {
		// The error is ours to read (see the top of this file); restError
		// finds it inside the *url.Error net/http wraps it in.
		err := readRESTError(resp, mt, rt.p.maxBytes)
		_ = resp.Body.Close()
		return nil, err
	}
	if mt == "text/event-stream" {
		resp.Body = &readCloser{Reader: &eventLimitReader{r: resp.Body, limit: rt.p.maxBytes}, Closer: resp.Body}
	} else {
		resp.Body = &readCloser{Reader: egress.LimitReader(resp.Body, rt.p.maxBytes), Closer: resp.Body}
	}
	return resp, nil
}

// readRESTError reads an HTTP+JSON error answer (a google.rpc.Status,
// {"error":{"code","status","message","details"}}; OpenWOP RFC 0211 §B):
// the kind its ErrorInfo reason names, with the versions a
// VERSION_NOT_SUPPORTED lists, else the kind its HTTP status implies —
// also for a body in another shape, which a client tolerates (OpenWOP RFC
// 0211 §B: application/problem+json).
func readRESTError(resp *http.Response, mediaType string, limit int64) *PeerError {
	var reason string
	var supported []string
	if mediaType == "application/json" {
		if body, err := egress.ReadAll(resp.Body, limit); err == nil {
			if top, ok := members(body); ok {
				if status, ok := members(top["error"]); ok {
					reason, supported = errorData(status["details"])
				}
			}
		}
	}
	if validReason(reason) {
		if code, kind := classify(0, reason); kind != nil {
			e := &PeerError{Code: code, Reason: reason, HTTPStatus: resp.StatusCode, kind: kind}
			if kind == wire.ErrVersionNotSupported {
				e.SupportedVersions = supported
			}
			return e
		}
	}
	e := statusError(resp.StatusCode)
	if validReason(reason) {
		e.Reason = reason
	}
	return e
}

type readCloser struct {
	io.Reader
	io.Closer
}

// eventLimitReader fails once one SSE event (the bytes since the last
// blank line) grows past limit.
type eventLimitReader struct {
	r      io.Reader
	limit  int64
	since  int64
	lineLF bool // the last byte ended a line
}

func (e *eventLimitReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	for i, b := range p[:n] {
		switch {
		case b == '\n' && e.lineLF:
			e.since = 0
		case b == '\n':
			e.lineLF = true
		case b != '\r':
			e.lineLF = false
		}
		e.since++
		if e.since > e.limit {
			return i, &egress.TooLargeError{Limit: e.limit}
		}
	}
	return n, err
}

// restError turns what a2a-go's REST transport returns into the errors of
// this package: a transport failure as it is (without its URL), a peer's
// error as a *PeerError of its kind, anything else — a body a2a-go could
// not decode, a body over the limit — as an *InvalidResponseError.
func restError(err error) error {
	var ue *url.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ue):
		return ue.Err
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.Is(err, egress.ErrTooLarge):
		return &InvalidResponseError{Problem: "the response is over the size limit", Err: err}
	}
	var ae *wire.Error
	if errors.As(err, &ae) || isSentinel(err) {
		e := &PeerError{}
		for _, row := range append(a2aErrors[:], jsonrpcErrors[:]...) {
			if errors.Is(err, row.kind) {
				e.Code, e.Reason, e.kind = row.code, row.reason, row.kind
				break
			}
		}
		if ae != nil && e.kind == wire.ErrVersionNotSupported {
			if info := ae.ErrorInfo(); info != nil {
				if m, ok := info.Value["metadata"].(map[string]string); ok {
					e.SupportedVersions = splitVersions(m["supportedVersions"])
				}
			}
		}
		return e
	}
	return invalid("the result could not be decoded")
}

// isSentinel reports an a2a-go error sentinel returned bare (its REST
// transport answers an error body it cannot read with ErrServerError).
func isSentinel(err error) bool {
	for _, row := range append(a2aErrors[:], jsonrpcErrors[:]...) {
		if err == row.kind {
			return true
		}
	}
	return false
}

func (t *restTransport) SendMessage(ctx context.Context, params a2aclient.ServiceParams, req *wire.SendMessageRequest) (wire.SendMessageResult, error) {
	r := *req
	r.Tenant = t.p.tenant
	ctx, cancel := t.p.unaryContext(ctx)
	defer cancel()
	res, err := t.base.SendMessage(ctx, params, &r)
	if err != nil {
		return nil, restError(err)
	}
	if res == nil {
		return nil, invalid("the result is empty")
	}
	if p := checkEvent(res); p != "" {
		return nil, invalid(p)
	}
	return res, nil
}

func (t *restTransport) GetTask(ctx context.Context, params a2aclient.ServiceParams, req *wire.GetTaskRequest) (*wire.Task, error) {
	r := *req
	r.Tenant = t.p.tenant
	ctx, cancel := t.p.unaryContext(ctx)
	defer cancel()
	return checkedTask(t.base.GetTask(ctx, params, &r))
}

func (t *restTransport) CancelTask(ctx context.Context, params a2aclient.ServiceParams, req *wire.CancelTaskRequest) (*wire.Task, error) {
	r := *req
	r.Tenant = t.p.tenant
	ctx, cancel := t.p.unaryContext(ctx)
	defer cancel()
	return checkedTask(t.base.CancelTask(ctx, params, &r))
}

func checkedTask(task *wire.Task, err error) (*wire.Task, error) {
	if err != nil {
		return nil, restError(err)
	}
	if p := checkTask(task); p != "" {
		return nil, invalid(p)
	}
	return task, nil
}

func (t *restTransport) ListTasks(ctx context.Context, params a2aclient.ServiceParams, req *wire.ListTasksRequest) (*wire.ListTasksResponse, error) {
	r := *req
	r.Tenant = t.p.tenant
	ctx, cancel := t.p.unaryContext(ctx)
	defer cancel()
	out, err := t.base.ListTasks(ctx, params, &r)
	if err != nil {
		return nil, restError(err)
	}
	for _, task := range out.Tasks {
		if p := checkTask(task); p != "" {
			return nil, invalid(p)
		}
	}
	return out, nil
}

func (t *restTransport) SendStreamingMessage(ctx context.Context, params a2aclient.ServiceParams, req *wire.SendMessageRequest) iter.Seq2[wire.Event, error] {
	r := *req
	r.Tenant = t.p.tenant
	return checkedEvents(t.base.SendStreamingMessage(ctx, params, &r))
}

func (t *restTransport) SubscribeToTask(ctx context.Context, params a2aclient.ServiceParams, req *wire.SubscribeToTaskRequest) iter.Seq2[wire.Event, error] {
	r := *req
	r.Tenant = t.p.tenant
	return checkedEvents(t.base.SubscribeToTask(ctx, params, &r))
}

func checkedEvents(events iter.Seq2[wire.Event, error]) iter.Seq2[wire.Event, error] {
	return func(yield func(wire.Event, error) bool) {
		for ev, err := range events {
			if err == nil && ev == nil {
				err = invalid("an empty event")
			} else if err == nil {
				if p := checkEvent(ev); p != "" {
					err = invalid(p)
				}
			} else {
				err = restError(err)
			}
			if err != nil {
				yield(nil, err)
				return
			}
			if !yield(ev, nil) {
				return
			}
		}
	}
}

func (t *restTransport) GetTaskPushConfig(ctx context.Context, params a2aclient.ServiceParams, req *wire.GetTaskPushConfigRequest) (*wire.PushConfig, error) {
	r := *req
	r.Tenant = t.p.tenant
	ctx, cancel := t.p.unaryContext(ctx)
	defer cancel()
	return checkedPushConfig(t.base.GetTaskPushConfig(ctx, params, &r))
}

func (t *restTransport) CreateTaskPushConfig(ctx context.Context, params a2aclient.ServiceParams, req *wire.PushConfig) (*wire.PushConfig, error) {
	r := *req
	r.Tenant = t.p.tenant
	ctx, cancel := t.p.unaryContext(ctx)
	defer cancel()
	return checkedPushConfig(t.base.CreateTaskPushConfig(ctx, params, &r))
}

func checkedPushConfig(c *wire.PushConfig, err error) (*wire.PushConfig, error) {
	if err != nil {
		return nil, restError(err)
	}
	if p := checkPushConfig(c); p != "" {
		return nil, invalid(p)
	}
	return c, nil
}

func (t *restTransport) ListTaskPushConfigs(ctx context.Context, params a2aclient.ServiceParams, req *wire.ListTaskPushConfigRequest) ([]*wire.PushConfig, error) {
	r := *req
	r.Tenant = t.p.tenant
	ctx, cancel := t.p.unaryContext(ctx)
	defer cancel()
	out, err := t.base.ListTaskPushConfigs(ctx, params, &r)
	if err != nil {
		return nil, restError(err)
	}
	for _, c := range out {
		if p := checkPushConfig(c); p != "" {
			return nil, invalid(p)
		}
	}
	return out, nil
}

func (t *restTransport) DeleteTaskPushConfig(ctx context.Context, params a2aclient.ServiceParams, req *wire.DeleteTaskPushConfigRequest) error {
	r := *req
	r.Tenant = t.p.tenant
	ctx, cancel := t.p.unaryContext(ctx)
	defer cancel()
	return restError(t.base.DeleteTaskPushConfig(ctx, params, &r))
}

func (t *restTransport) GetExtendedAgentCard(ctx context.Context, params a2aclient.ServiceParams, req *wire.GetExtendedAgentCardRequest) (*wire.AgentCard, error) {
	r := *req
	r.Tenant = t.p.tenant
	ctx, cancel := t.p.unaryContext(ctx)
	defer cancel()
	card, err := t.base.GetExtendedAgentCard(ctx, params, &r)
	if err != nil {
		return nil, restError(err)
	}
	if card == nil || card.Name == "" || len(card.SupportedInterfaces) == 0 {
		return nil, invalid("the extended card is incomplete")
	}
	return card, nil
}

func (t *restTransport) Destroy() error { return nil }
