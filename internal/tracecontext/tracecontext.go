// Package tracecontext reads W3C trace context (traceparent, tracestate)
// for both protocol surfaces (OpenWOP interop.md §Trace context). A malformed value is
// ignored, so a run starts a new trace instead of a request failing, and
// tracestate travels only with a valid traceparent. Neither carrier ever
// selects a tenant, principal or scope: the values are propagated, never
// interpreted.
package tracecontext

import (
	"context"
	"net/http"
	"strings"

	"github.com/wopinterop/wopinterop/interop"
)

// Header names in net/http's canonical form, so the header map is indexed
// without canonicalising on every request.
const (
	headerParent = "Traceparent"
	headerState  = "Tracestate"
)

// MaxState is the longest tracestate a vendor must propagate (W3C trace
// context §3.3.1.5); longer values are dropped, not truncated.
const MaxState = 512

// FromHeaders reads the traceparent and tracestate headers. A repeated or
// malformed traceparent yields the zero value; repeated tracestate headers
// are one list (W3C trace context §3.3).
func FromHeaders(h http.Header) interop.TraceContext {
	parents := h[headerParent]
	if len(parents) != 1 || !ValidParent(parents[0]) {
		return interop.TraceContext{}
	}
	tc := interop.TraceContext{TraceParent: parents[0]}
	if states := h[headerState]; len(states) > 0 {
		if state := strings.Join(states, ","); ValidState(state) {
			tc.TraceState = state
		}
	}
	return tc
}

// FromValues builds a trace context from an in-message carrier (A2A
// metadata.openwop, MCP _meta). ok is false when parent is not a valid
// traceparent; an invalid state is dropped on its own.
func FromValues(parent, state string) (tc interop.TraceContext, ok bool) {
	if !ValidParent(parent) {
		return interop.TraceContext{}, false
	}
	tc.TraceParent = parent
	if ValidState(state) {
		tc.TraceState = state
	}
	return tc, true
}

// ValidParent reports whether v matches
// ^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$ with a version other
// than ff and neither the trace id nor the parent id all zeros.
func ValidParent(v string) bool {
	if len(v) != 55 || v[2] != '-' || v[35] != '-' || v[52] != '-' {
		return false
	}
	for _, field := range [...]string{v[0:2], v[3:35], v[36:52], v[53:55]} {
		for i := 0; i < len(field); i++ {
			if c := field[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
				return false
			}
		}
	}
	return v[0:2] != "ff" && strings.Trim(v[3:35], "0") != "" && strings.Trim(v[36:52], "0") != ""
}

// ValidState is a deliberately shallow check: printable ASCII within the
// length limit.
func ValidState(v string) bool {
	if v == "" || len(v) > MaxState {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

// contextKey carries a run's trace context in a context.Context.
type contextKey struct{}

// NewContext returns ctx carrying tc, the trace context of the run an
// outbound exchange belongs to (OpenWOP interop.md §Trace context: an
// outbound call continues the run's trace). An invalid traceparent is not
// carried.
func NewContext(ctx context.Context, tc interop.TraceContext) context.Context {
	if !ValidParent(tc.TraceParent) {
		return ctx
	}
	if !ValidState(tc.TraceState) {
		tc.TraceState = ""
	}
	return context.WithValue(ctx, contextKey{}, tc)
}

// FromContext returns the trace context NewContext put in ctx.
func FromContext(ctx context.Context) (interop.TraceContext, bool) {
	tc, ok := ctx.Value(contextKey{}).(interop.TraceContext)
	return tc, ok
}
