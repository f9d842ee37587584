package mcp

import (
	"encoding/json"
	"net/http"

	"github.com/wopinterop/wopinterop/internal/tracecontext"
	"github.com/wopinterop/wopinterop/interop"
)

// traceFrom reads the W3C trace context of a request: params._meta
// traceparent/tracestate when _meta carries a well-formed traceparent,
// otherwise the traceparent/tracestate headers (OpenWOP interop.md §Trace context).
func traceFrom(r *http.Request, meta map[string]json.RawMessage) interop.TraceContext {
	var parent, state string
	if raw, ok := meta[metaTraceParent]; ok && json.Unmarshal(raw, &parent) == nil {
		if raw, ok := meta[metaTraceState]; ok {
			_ = json.Unmarshal(raw, &state)
		}
		if tc, ok := tracecontext.FromValues(parent, state); ok {
			return tc
		}
	}
	return tracecontext.FromHeaders(r.Header)
}
