package delegate

import (
	"context"
	"reflect"
	"testing"

	"github.com/wopinterop/wopinterop/interop"
)

const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

func TestTraceMetadata(t *testing.T) {
	if m := traceMetadata(context.Background()); m != nil {
		t.Fatalf("%v without a trace context", m)
	}
	ctx := WithTraceContext(context.Background(), interop.TraceContext{TraceParent: traceparent, TraceState: "vendor=a"})
	if m := traceMetadata(ctx); !reflect.DeepEqual(m, map[string]any{"traceparent": traceparent, "tracestate": "vendor=a"}) {
		t.Fatalf("%v", m)
	}
	// A malformed traceparent is never carried, nor its tracestate.
	bad := WithTraceContext(context.Background(), interop.TraceContext{TraceParent: "00-zz", TraceState: "vendor=a"})
	if m := traceMetadata(bad); m != nil {
		t.Fatalf("%v for a malformed traceparent", m)
	}
	// An invalid tracestate is dropped alone.
	ctl := WithTraceContext(context.Background(), interop.TraceContext{TraceParent: traceparent, TraceState: "a\x01b"})
	if m := traceMetadata(ctl); !reflect.DeepEqual(m, map[string]any{"traceparent": traceparent}) {
		t.Fatalf("%v", m)
	}
	// Merged under metadata.openwop, keeping what else is there.
	md := setTraceMetadata(ctx, map[string]any{"openwop": map[string]any{"interrupt": "i-1"}, "other": 1})
	want := map[string]any{"openwop": map[string]any{"interrupt": "i-1", "traceparent": traceparent, "tracestate": "vendor=a"}, "other": 1}
	if !reflect.DeepEqual(md, want) {
		t.Fatalf("%v", md)
	}
	if md := setTraceMetadata(context.Background(), nil); md != nil {
		t.Fatalf("%v allocated without a trace context", md)
	}
	if md := setTraceMetadata(ctx, nil); !reflect.DeepEqual(md, map[string]any{"openwop": map[string]any{"traceparent": traceparent, "tracestate": "vendor=a"}}) {
		t.Fatalf("%v", md)
	}
}
