package delegate

import (
	"context"

	"github.com/wopinterop/wopinterop/internal/tracecontext"
	"github.com/wopinterop/wopinterop/interop"
)

// WithTraceContext returns ctx carrying the W3C trace context of the run a
// delegation belongs to; the messages sent under ctx carry it in
// metadata.openwop (OpenWOP interop.md §Trace context), so the remote
// agent continues the run's trace. A malformed traceparent is dropped, and
// a tracestate travels only with a valid traceparent.
func WithTraceContext(ctx context.Context, tc interop.TraceContext) context.Context {
	return tracecontext.NewContext(ctx, tc)
}

// traceMetadata is what a message sent under ctx carries in
// metadata.openwop: {"traceparent": …, "tracestate": …} (tracestate only
// when set), or nil when ctx carries no trace context. OpenWOP interop.md
// §Trace context prefers this in-message carrier over the traceparent
// header, which an intermediary may drop or rewrite.
func traceMetadata(ctx context.Context) map[string]any {
	tc, ok := tracecontext.FromContext(ctx)
	if !ok {
		return nil
	}
	m := map[string]any{"traceparent": tc.TraceParent}
	if tc.TraceState != "" {
		m["tracestate"] = tc.TraceState
	}
	return m
}

// setTraceMetadata merges traceMetadata(ctx) into metadata["openwop"],
// keeping whatever else the openwop object holds (it replaces a value that
// is not an object), and returns the metadata (allocated when nil and
// there is a trace context to carry).
func setTraceMetadata(ctx context.Context, metadata map[string]any) map[string]any {
	tm := traceMetadata(ctx)
	if tm == nil {
		return metadata
	}
	if metadata == nil {
		metadata = map[string]any{}
	}
	ow, _ := metadata["openwop"].(map[string]any)
	merged := make(map[string]any, len(ow)+len(tm))
	for k, v := range ow {
		merged[k] = v
	}
	for k, v := range tm {
		merged[k] = v
	}
	metadata["openwop"] = merged
	return metadata
}
