package remote

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/wopinterop/wopinterop/egress"
	"github.com/wopinterop/wopinterop/internal/tracecontext"
)

// headerProtocolVersion is the header every request after discovery
// carries (MCP 2026-07-28 §Transports, streamable HTTP).
const headerProtocolVersion = "Mcp-Protocol-Version"

// transport is the http.RoundTripper of one session, in front of the
// client's guarded transport (which checks every destination and refuses
// every redirect). It is the last point before the network, so what it
// enforces holds whatever go-sdk decides above it:
//
//   - every request carries MCP-Protocol-Version equal to the revision the
//     host asked for and negotiated; anything else — go-sdk's fallback to
//     the legacy initialize handshake (sent without the header), a retry
//     at another revision — is refused here with a [*RevisionError] and
//     never sent (OpenWOP interop.md §The floor);
//   - the credential, resolved at every request, and the run's W3C trace
//     context (traceparent, tracestate; OpenWOP interop.md §Trace context)
//     are added;
//   - a response body is read at most MaxResultBytes: a JSON body whole,
//     here, so an oversized one fails its request with an
//     *egress.TooLargeError; an event stream as it is read, so an
//     oversized one ends its call, and the call's fault slot (see
//     withFaultSlot) keeps the typed cause. A subscriptions/listen
//     stream, which lasts as long as its session, is bounded event by
//     event by its reader instead;
//   - an HTTP error without a JSON-RPC error in its body becomes a
//     [*StatusError]; its body is dropped;
//   - the JSON-RPC result of a response, as received, goes to the request
//     context's result slot, when it carries one (rawresult.go).
type transport struct {
	next     http.RoundTripper
	revision string
	// credential returns the Authorization value, "" for none; nil when
	// the admission presents no credential.
	credential func(ctx context.Context) (string, error)
	maxBytes   int64
}

func (t *transport) RoundTrip(r *http.Request) (*http.Response, error) {
	fail := func(err error) (*http.Response, error) {
		if r.Body != nil {
			_ = r.Body.Close()
		}
		return nil, err
	}
	if got := r.Header.Get(headerProtocolVersion); got != t.revision || len(r.Header.Values(headerProtocolVersion)) != 1 {
		return fail(&RevisionError{Sent: got, Want: t.revision})
	}
	ctx := r.Context()
	out := r.Clone(ctx) // a RoundTripper must not modify the caller's request
	if tc, ok := tracecontext.FromContext(ctx); ok {
		out.Header.Set("Traceparent", tc.TraceParent)
		if tc.TraceState != "" {
			out.Header.Set("Tracestate", tc.TraceState)
		}
	}
	if t.credential != nil {
		v, err := t.credential(ctx)
		if err != nil {
			return fail(err)
		}
		if v != "" {
			out.Header.Set("Authorization", v)
		}
	}
	resp, err := t.next.RoundTrip(out)
	if err != nil {
		return nil, err
	}
	return t.check(ctx, resp)
}

// check bounds resp's body and types an HTTP error without a JSON-RPC one.
func (t *transport) check(ctx context.Context, resp *http.Response) (*http.Response, error) {
	ok := resp.StatusCode >= 200 && resp.StatusCode < 300
	if ok && mediaType(resp.Header.Get("Content-Type")) == "text/event-stream" {
		if isListenStream(ctx) {
			// A subscriptions/listen stream lives as long as its session:
			// its reader bounds each event instead (listen.go).
			return resp, nil
		}
		r := teeStream(egress.LimitReader(resp.Body, t.maxBytes), resultSlotFrom(ctx))
		resp.Body = &streamBody{ReadCloser: resp.Body, r: r, slot: faultSlotFrom(ctx)}
		return resp, nil
	}
	body, err := egress.ReadAll(resp.Body, t.maxBytes)
	_ = resp.Body.Close()
	if err != nil {
		return nil, err
	}
	if !ok && !carriesRPCError(body) {
		return nil, &StatusError{StatusCode: resp.StatusCode}
	}
	if ok {
		resultSlotFrom(ctx).take(body)
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	return resp, nil
}

// carriesRPCError reports whether body is a JSON-RPC response carrying an
// error: go-sdk surfaces such an answer as its *jsonrpc.Error, whatever
// the HTTP status (MCP 2026-07-28 answers protocol errors with 4xx).
func carriesRPCError(body []byte) bool {
	msg, err := jsonrpc.DecodeMessage(body)
	if err != nil {
		return false
	}
	resp, ok := msg.(*jsonrpc.Response)
	return ok && resp.Error != nil
}

func mediaType(v string) string {
	mt, _, err := mime.ParseMediaType(v)
	if err != nil {
		return ""
	}
	return mt
}

// streamBody is an event stream read through a size limit. go-sdk ends
// the call whose stream fails, but reports the failure only as "request
// terminated without response"; the typed cause goes to the call's fault
// slot.
type streamBody struct {
	io.ReadCloser
	r    io.Reader
	slot *faultSlot
}

func (b *streamBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if errors.Is(err, egress.ErrTooLarge) {
		b.slot.set(err)
	}
	return n, err
}

// faultSlot receives the typed cause of a failure go-sdk reports without
// it. One is put in the context of each call and list request, so a fault
// is never attached to another request's error.
type faultSlot struct {
	mu  sync.Mutex
	err error
}

type faultSlotKey struct{}

// withFaultSlot returns ctx carrying a new slot, and the slot.
func withFaultSlot(ctx context.Context) (context.Context, *faultSlot) {
	s := &faultSlot{}
	return context.WithValue(ctx, faultSlotKey{}, s), s
}

func faultSlotFrom(ctx context.Context) *faultSlot {
	s, _ := ctx.Value(faultSlotKey{}).(*faultSlot)
	return s
}

func (s *faultSlot) set(err error) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = err
	}
}

// attach returns err with the slot's fault in its chain (errors.As finds
// the fault first), or err as it is when the slot holds none.
func (s *faultSlot) attach(err error) error {
	if err == nil {
		return nil
	}
	s.mu.Lock()
	fault := s.err
	s.mu.Unlock()
	if fault == nil {
		return err
	}
	return &faultError{fault: fault, err: err}
}

type faultError struct{ fault, err error }

func (e *faultError) Error() string   { return e.fault.Error() }
func (e *faultError) Unwrap() []error { return []error{e.fault, e.err} }
