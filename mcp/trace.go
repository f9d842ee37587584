package mcp

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/wopinterop/wopinterop/interop"
)

// traceFrom reads the W3C trace context of a request: params._meta
// traceparent/tracestate when _meta carries a well-formed traceparent,
// otherwise the traceparent/tracestate headers (RULES R140, R142). A
// malformed value is ignored, so the run starts a new trace instead of the
// request failing; tracestate travels only with a valid traceparent.
// Neither carrier ever selects a tenant, principal or scope.
func traceFrom(r *http.Request, meta map[string]json.RawMessage) interop.TraceContext {
	var parent string
	if raw, ok := meta[metaTraceParent]; ok && json.Unmarshal(raw, &parent) == nil && validTraceParent(parent) {
		tc := interop.TraceContext{TraceParent: parent}
		var state string
		if raw, ok := meta[metaTraceState]; ok && json.Unmarshal(raw, &state) == nil && validTraceState(state) {
			tc.TraceState = state
		}
		return tc
	}
	parents := r.Header.Values("traceparent")
	if len(parents) != 1 || !validTraceParent(parents[0]) {
		return interop.TraceContext{}
	}
	tc := interop.TraceContext{TraceParent: parents[0]}
	if states := r.Header.Values("tracestate"); len(states) > 0 {
		// Repeated tracestate headers are one list (W3C trace context §3.3).
		if state := strings.Join(states, ","); validTraceState(state) {
			tc.TraceState = state
		}
	}
	return tc
}

// validTraceParent reports whether v matches
// ^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$ with a version other
// than ff and neither the trace id nor the parent id all zeros.
func validTraceParent(v string) bool {
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

// maxTraceState is the longest tracestate a vendor must propagate (W3C
// trace context §3.3.1.5); longer values are dropped, not truncated.
const maxTraceState = 512

// validTraceState is a deliberately shallow check: printable ASCII within
// the length limit. The value is propagated, never interpreted.
func validTraceState(v string) bool {
	if v == "" || len(v) > maxTraceState {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}
