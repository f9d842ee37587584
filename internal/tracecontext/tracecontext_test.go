package tracecontext

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/wopinterop/wopinterop/interop"
)

const valid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

func TestValidParent(t *testing.T) {
	for v, want := range map[string]bool{
		valid: true,
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00": true,
		"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01": false, // version ff
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01": false, // zero trace id
		"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01": false, // zero parent id
		"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01": false, // uppercase
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7":    false,
		"":        false,
		"garbage": false,
	} {
		if got := ValidParent(v); got != want {
			t.Errorf("ValidParent(%q) = %v, want %v", v, got, want)
		}
	}
}

func TestFromHeaders(t *testing.T) {
	cases := []struct {
		name           string
		parents, state []string
		want           interop.TraceContext
	}{
		{"none", nil, nil, interop.TraceContext{}},
		{"parent only", []string{valid}, nil, interop.TraceContext{TraceParent: valid}},
		{"with state", []string{valid}, []string{"a=1", "b=2"}, interop.TraceContext{TraceParent: valid, TraceState: "a=1,b=2"}},
		{"repeated parent ignored", []string{valid, valid}, []string{"a=1"}, interop.TraceContext{}},
		{"malformed parent ignored with its state", []string{"bad"}, []string{"a=1"}, interop.TraceContext{}},
		{"oversized state dropped", []string{valid}, []string{strings.Repeat("a", MaxState+1)}, interop.TraceContext{TraceParent: valid}},
		{"control bytes in state dropped", []string{valid}, []string{"a=\x01"}, interop.TraceContext{TraceParent: valid}},
	}
	for _, c := range cases {
		h := http.Header{}
		for _, p := range c.parents {
			h.Add("traceparent", p)
		}
		for _, s := range c.state {
			h.Add("tracestate", s)
		}
		if got := FromHeaders(h); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestFromValues(t *testing.T) {
	if tc, ok := FromValues(valid, "x=1"); !ok || tc != (interop.TraceContext{TraceParent: valid, TraceState: "x=1"}) {
		t.Fatalf("%+v %v", tc, ok)
	}
	if tc, ok := FromValues(valid, "\n"); !ok || tc.TraceState != "" {
		t.Fatalf("invalid state kept: %+v", tc)
	}
	if _, ok := FromValues("nope", "x=1"); ok {
		t.Fatal("malformed parent accepted")
	}
}

// FuzzValidParent holds the hand-written check to the W3C grammar.
func FuzzValidParent(f *testing.F) {
	re := regexp.MustCompile(`^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$`)
	f.Add(valid)
	f.Add("ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	f.Fuzz(func(t *testing.T, v string) {
		want := re.MatchString(v) && v[:2] != "ff" && strings.Trim(v[3:35], "0") != "" && strings.Trim(v[36:52], "0") != ""
		if got := ValidParent(v); got != want {
			t.Fatalf("ValidParent(%q) = %v, want %v", v, got, want)
		}
	})
}

func TestContextCarrier(t *testing.T) {
	if _, ok := FromContext(context.Background()); ok {
		t.Fatal("an empty context carries a trace context")
	}
	ctx := NewContext(context.Background(), interop.TraceContext{TraceParent: valid, TraceState: "k=v"})
	if tc, ok := FromContext(ctx); !ok || tc.TraceParent != valid || tc.TraceState != "k=v" {
		t.Fatalf("%+v, %v", tc, ok)
	}
	if _, ok := FromContext(NewContext(context.Background(), interop.TraceContext{TraceParent: "00-bad"})); ok {
		t.Fatal("a malformed traceparent was carried")
	}
	if tc, _ := FromContext(NewContext(context.Background(), interop.TraceContext{TraceParent: valid, TraceState: strings.Repeat("a", MaxState+1)})); tc.TraceState != "" {
		t.Fatal("an oversized tracestate was carried")
	}
}
