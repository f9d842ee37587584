package delegate

import (
	"context"

	"github.com/wopinterop/wopinterop/internal/tracecontext"
	"github.com/wopinterop/wopinterop/interop"
)

// Stand-in until the connection side's trace helper is merged: the run's
// W3C trace context rides in ctx and goes out in
// message.metadata.openwop.traceparent/tracestate (OpenWOP interop.md
// §Trace context). Delete this file when that helper lands.

type traceKey struct{}

// withTrace returns ctx carrying tc.
func withTrace(ctx context.Context, tc interop.TraceContext) context.Context {
	return context.WithValue(ctx, traceKey{}, tc)
}

// traceMetadata is the metadata.openwop object for ctx's trace context, or
// nil when it carries no valid traceparent.
func traceMetadata(ctx context.Context) map[string]any {
	tc, _ := ctx.Value(traceKey{}).(interop.TraceContext)
	tc, ok := tracecontext.FromValues(tc.TraceParent, tc.TraceState)
	if !ok {
		return nil
	}
	m := map[string]any{"traceparent": tc.TraceParent}
	if tc.TraceState != "" {
		m["tracestate"] = tc.TraceState
	}
	return m
}
