package mcp

import (
	"encoding/json"
	"net/http"

	"github.com/wopinterop/wopinterop/internal/tracecontext"
	"github.com/wopinterop/wopinterop/interop"
)

// traceFrom reads the W3C trace context of a request: params._meta
// traceparent/tracestate (raw JSON, nil when absent) when _meta carries a
// well-formed traceparent, otherwise the traceparent/tracestate headers
// (OpenWOP interop.md §Trace context).
func traceFrom(r *http.Request, rawParent, rawState json.RawMessage) interop.TraceContext {
	// _meta is valid JSON: stringValue reads its members as json.Unmarshal
	// into a string would, without the decoder's allocations.
	if parent, ok := stringValue(rawParent); ok {
		state, _ := stringValue(rawState)
		if tc, ok := tracecontext.FromValues(parent, state); ok {
			return tc
		}
	}
	return tracecontext.FromHeaders(r.Header)
}
