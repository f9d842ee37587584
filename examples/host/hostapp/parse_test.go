package hostapp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/isolation"
)

func acmeSubject() interop.Subject {
	return interop.Subject{Tenant: "acme", Principal: "key:acme", Authenticated: true}
}

func TestParsePathID(t *testing.T) {
	const opaque = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	tests := []struct {
		raw, want string
		status    int
	}{
		{"acme~2F" + opaque, "acme/" + opaque, 0},
		{"acme%2F" + opaque, "acme/" + opaque, 0},
		{"acme%2f" + opaque, "acme/" + opaque, 0},
		{"acme~2f" + opaque, "acme/" + opaque, 0},
		{"globex~2F" + opaque, "", 403},
		{"anon~3Aacme~2F" + opaque, "", 403},
		{opaque, "", 400},               // bare (OpenWOP identity.md §5)
		{"acme%252F" + opaque, "", 400}, // no double decoding
		{"acme~2F" + opaque[:5], "", 400},
		{"acme~2", "", 400},
		{"", "", 400},
		{"acme~2F" + opaque + "%2Fx", "", 400},
	}
	for _, tt := range tests {
		got, err := parsePathID(acmeSubject(), tt.raw, "runId")
		if tt.status == 0 {
			if err != nil || got != tt.want {
				t.Errorf("parsePathID(%q) = %q, %v; want %q", tt.raw, got, err, tt.want)
			}
			continue
		}
		var ae *apiError
		if !errors.As(err, &ae) || ae.Status != tt.status || ae.Details["field"] != "runId" {
			t.Errorf("parsePathID(%q) = %q, %v; want a %d naming runId", tt.raw, got, err, tt.status)
		}
	}
}

func TestPathSegment(t *testing.T) {
	r := httptest.NewRequest("GET", "/runs/acme%2FX/interrupts/acme~2FY", nil)
	if got := pathSegment(r, 1); got != "acme%2FX" {
		t.Errorf("segment 1 = %q (must stay escaped)", got)
	}
	if got := pathSegment(r, 3); got != "acme~2FY" {
		t.Errorf("segment 3 = %q", got)
	}
	if got := pathSegment(r, 9); got != "" {
		t.Errorf("segment 9 = %q", got)
	}
}

func FuzzParsePathID(f *testing.F) {
	for _, s := range []string{"acme~2FABCDEFGHIJKLMNOPQRSTUV", "acme%2FABCDEFGHIJKLMNOPQRSTUV", "acme%252Fx", "~", "%", "anon~3Aacme~2FABCDEFGHIJKLMNOP", "acme/ABCDEFGHIJKLMNOPQR"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		id, err := parsePathID(acmeSubject(), raw, "runId")
		if err != nil {
			var ae *apiError
			if !errors.As(err, &ae) || (ae.Status != 400 && ae.Status != 403) {
				t.Fatalf("parsePathID(%q) = %v, not a 400/403 refusal", raw, err)
			}
			return
		}
		// Anything accepted is a bound id of the caller's tenant whose
		// projection is accepted again as the same id.
		if !isolation.ValidBound(id) || isolation.TenantOf(id) != "acme" {
			t.Fatalf("parsePathID(%q) = %q", raw, id)
		}
		if again, err := parsePathID(acmeSubject(), isolation.Project(id), "runId"); err != nil || again != id {
			t.Fatalf("projection of %q does not round-trip: %q, %v", id, again, err)
		}
	})
}

func TestCheckVersionHeader(t *testing.T) {
	for _, tt := range []struct {
		values []string
		status int
	}{
		{nil, 0}, {[]string{"2"}, 0}, {[]string{"2.0"}, 0}, {[]string{"2.15"}, 0}, {[]string{" 2.0 "}, 0},
		{[]string{"1"}, 406}, {[]string{"10.0"}, 406}, {[]string{"0"}, 406},
		{[]string{"2", "2"}, 400}, {[]string{""}, 400}, {[]string{"v2"}, 400}, {[]string{"2.x"}, 400},
		{[]string{"02"}, 400}, {[]string{"2.01"}, 400}, {[]string{"1234567890"}, 400}, {[]string{"-2"}, 400},
	} {
		err := checkVersionHeader(tt.values)
		if tt.status == 0 {
			if err != nil {
				t.Errorf("%q: %v", tt.values, err)
			}
			continue
		}
		var ae *apiError
		if !errors.As(err, &ae) || ae.Status != tt.status {
			t.Errorf("%q = %v, want %d", tt.values, err, tt.status)
		}
	}
}

func FuzzCheckVersionHeader(f *testing.F) {
	for _, s := range []string{"2", "2.0", "3", "02", "2.", ".2", " 2 ", "99999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		err := checkVersionHeader([]string{v})
		var ae *apiError
		switch {
		case err == nil:
			major, _, _ := strings.Cut(strings.TrimSpace(v), ".")
			if major != "2" {
				t.Fatalf("%q accepted", v)
			}
		case !errors.As(err, &ae) || (ae.Code != codeValidation && ae.Code != codeVersionUnsupported):
			t.Fatalf("%q = %v", v, err)
		}
	})
}

func TestParseListQuery(t *testing.T) {
	q := func(s string) url.Values { v, _ := url.ParseQuery(s); return v }
	got, err := parseListQuery(q(""))
	if err != nil || got.PageSize != defaultPageSize || got.Cursor != "" || got.WorkflowID != "" || got.Statuses != nil {
		t.Errorf("defaults = %+v, %v", got, err)
	}
	got, err = parseListQuery(q("limit=7&cursor=c&workflowId=w&status=waiting-input&other=1"))
	if err != nil || got.PageSize != 7 || got.Cursor != "c" || got.WorkflowID != "w" || len(got.Statuses) != 1 || got.Statuses[0] != interop.StatusWaitingInput {
		t.Errorf("all set = %+v, %v", got, err)
	}
	if got, _ := parseListQuery(q("limit=101")); got.PageSize != maxPageSize {
		t.Errorf("limit=101 -> %d, want clamp to %d", got.PageSize, maxPageSize)
	}
	if got, _ := parseListQuery(q("limit=&status=")); got.PageSize != defaultPageSize || got.Statuses != nil {
		t.Errorf("empty values are not absent: %+v", got)
	}
}

func FuzzParseListQuery(f *testing.F) {
	for _, s := range []string{"", "limit=5", "limit=0", "status=running&workflowId=x", "cursor=abc&limit=1000", "limit=1&limit=2", "status=%ff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		got, err := parseListQuery(q)
		if err != nil {
			var ae *apiError
			if !errors.As(err, &ae) || ae.Status != 400 || ae.Details["field"] == "" {
				t.Fatalf("%q: %v", raw, err)
			}
			return
		}
		if got.PageSize < 1 || got.PageSize > maxPageSize || len(got.Cursor) > 2048 {
			t.Fatalf("%q: %+v", raw, got)
		}
		for _, s := range got.Statuses {
			if !s.Valid() {
				t.Fatalf("%q: invalid status %q", raw, s)
			}
		}
	})
}

func TestParsePollQuery(t *testing.T) {
	q := func(s string) url.Values { v, _ := url.ParseQuery(s); return v }
	for _, tt := range []struct {
		query   string
		after   int64
		timeout time.Duration
	}{
		{"", -1, 30 * time.Second},
		{"afterSequence=4&timeout=0", 4, 0},
		{"afterSequence=-1&timeout=60", -1, 60 * time.Second},
		{"afterSequence=&timeout=", -1, 30 * time.Second},
	} {
		after, timeout, err := parsePollQuery(q(tt.query))
		if err != nil || after != tt.after || timeout != tt.timeout {
			t.Errorf("%q = %d, %v, %v", tt.query, after, timeout, err)
		}
	}
}

func FuzzParsePollQuery(f *testing.F) {
	for _, s := range []string{"", "afterSequence=3", "timeout=61", "afterSequence=-2", "timeout=9999999999999999999", "afterSequence=9223372036854775807"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		after, timeout, err := parsePollQuery(q)
		if err != nil {
			var ae *apiError
			if !errors.As(err, &ae) || ae.Status != 400 {
				t.Fatalf("%q: %v", raw, err)
			}
			return
		}
		if after < -1 || timeout < 0 || timeout > maxPollTimeout {
			t.Fatalf("%q: after %d timeout %v", raw, after, timeout)
		}
	})
}

func TestParseIdempotencyKey(t *testing.T) {
	for _, tt := range []struct {
		values []string
		want   string
		ok     bool
	}{
		{nil, "", true},
		{[]string{"abc-123"}, "abc-123", true},
		{[]string{strings.Repeat("x", 255)}, strings.Repeat("x", 255), true},
		{[]string{strings.Repeat("x", 256)}, "", false},
		{[]string{""}, "", false},
		{[]string{"a b"}, "", false},
		{[]string{"a\x01"}, "", false},
		{[]string{"é"}, "", false},
		{[]string{"a", "b"}, "", false},
	} {
		h := http.Header{}
		for _, v := range tt.values {
			h.Add("Idempotency-Key", v)
		}
		got, err := parseIdempotencyKey(h)
		var ae *apiError
		if tt.ok && (err != nil || got != tt.want) || !tt.ok && (!errors.As(err, &ae) || ae.Code != codeIdempotencyKey) {
			t.Errorf("%q = %q, %v", tt.values, got, err)
		}
	}
}

func TestTraceParent(t *testing.T) {
	const ok = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for _, tt := range []struct {
		s    string
		want bool
	}{
		{ok, true},
		{"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-future", true},
		{ok + "-x", false}, // version 00 has exactly four fields
		{"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false},
		{"00-00000000000000000000000000000000-00f067aa0ba902b7-01", false},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", false},
		{"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", false},
		{"00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false},
		{"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x", false},
		{ok[:54], false},
	} {
		if got := validTraceParent(tt.s); got != tt.want {
			t.Errorf("validTraceParent(%q) = %v", tt.s, got)
		}
	}
	for _, tt := range []struct {
		s    string
		want bool
	}{
		{"congo=t61rcWkgMzE", true},
		{"rojo=00f067aa0ba902b7, congo=t61rcWkgMzE", true},
		{"tenant@vendor=x,,a=b", true},
		{"a=1,a=2", false},
		{"Upper=1", false},
		{"a=", false},
		{"a=b\tc", false},
		{"a=b c ", true}, // surrounding OWS is not part of the member
		{"a=b=c", false},
		{"a@b@c=1", false},
		{"a@=1", false},
		{strings.Repeat("a=1,", 33), false},
		{"k=" + strings.Repeat("v", 600), false},
	} {
		if got := validTraceState(tt.s); got != tt.want {
			t.Errorf("validTraceState(%q) = %v", tt.s, got)
		}
	}
	h := http.Header{}
	h.Add("traceparent", ok)
	h.Add("tracestate", "a=1")
	h.Add("tracestate", "b=2")
	if got := parseTrace(h); got.TraceParent != ok || got.TraceState != "a=1,b=2" {
		t.Errorf("parseTrace = %+v", got)
	}
	h.Add("traceparent", ok)
	if got := parseTrace(h); got != (interop.TraceContext{}) {
		t.Errorf("two traceparent headers kept %+v", got)
	}
}

func FuzzParseTrace(f *testing.F) {
	f.Add("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "congo=t61rcWkgMzE")
	f.Add("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-ab", "a@b=c,d=e")
	f.Add("", "")
	f.Fuzz(func(t *testing.T, tp, ts string) {
		h := http.Header{"Traceparent": {tp}, "Tracestate": {ts}}
		got := parseTrace(h)
		if got.TraceParent == "" {
			if got.TraceState != "" {
				t.Fatal("tracestate kept without traceparent")
			}
			return
		}
		if got.TraceParent != tp || len(tp) < 55 || tp[:2] == "ff" {
			t.Fatalf("kept traceparent %q", tp)
		}
		if got.TraceState != "" && (got.TraceState != ts || len(ts) > 512 || strings.ContainsAny(ts, "\r\n\x00")) {
			t.Fatalf("kept tracestate %q", ts)
		}
	})
}

func TestEtagMatches(t *testing.T) {
	const tag = `"abc"`
	for _, tt := range []struct {
		inm  string
		want bool
	}{
		{`"abc"`, true}, {`W/"abc"`, true}, {`"x", "abc"`, true}, {` * `, true},
		{`"abcd"`, false}, {`abc`, false}, {``, false}, {`"x"`, false},
	} {
		if got := etagMatches(tt.inm, tag); got != tt.want {
			t.Errorf("etagMatches(%q) = %v", tt.inm, got)
		}
	}
}

func FuzzEtagMatches(f *testing.F) {
	for _, s := range []string{`"abc"`, `W/"abc"`, "*", `"a", W/"b"`, ",,,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, inm string) {
		tag := strongETag([]byte("body"))
		got := etagMatches(inm, tag)
		if !strings.Contains(inm, tag) && strings.TrimSpace(inm) != "*" && got {
			t.Fatalf("%q matched %s without naming it", inm, tag)
		}
		if etagMatches(inm+", "+tag, tag) != true {
			t.Fatalf("appending the tag to %q does not match", inm)
		}
	})
}

func TestDecodeObject(t *testing.T) {
	m, err := decodeObject([]byte(` {"a": 1, "b": {"c": [1, 2]}} `), "a", "b", "z")
	if err != nil || string(m["a"]) != "1" || string(m["b"]) != `{"c": [1, 2]}` || len(m) != 2 {
		t.Errorf("decodeObject = %v, %v", m, err)
	}
	for _, tt := range []struct{ body, field string }{
		{`{"A":1}`, "A"},
		{`{"a":1,"a":2}`, "a"},
		{`{"x":1}`, "x"},
		{`{"` + strings.Repeat("n", 100) + `":1}`, strings.Repeat("n", maxReportedName) + "…"},
		{`[]`, "body"}, {`"a"`, "body"}, {`{"a":1}x`, "body"}, {`{"a":1`, "body"}, {``, "body"}, {`{"a":}`, "body"},
	} {
		_, err := decodeObject([]byte(tt.body), "a")
		var ae *apiError
		if !errors.As(err, &ae) || ae.Code != codeValidation || ae.Details["field"] != tt.field {
			t.Errorf("decodeObject(%q) = %v, want field %q", tt.body, err, tt.field)
		}
	}
}

func FuzzDecodeObject(f *testing.F) {
	for _, s := range []string{`{"workflowId":"x","inputs":{}}`, `{"workflowId":1}`, `{}`, `{"a":1}`, `[1]`, `{"inputs":{"inputs":1}}`, `{"workflowId":"a","workflowId":"b"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		m, err := decodeObject(body, "workflowId", "inputs")
		if err != nil {
			var ae *apiError
			if !errors.As(err, &ae) || ae.Status != 400 {
				t.Fatalf("%q: %v", body, err)
			}
			if f, _ := ae.Details["field"].(string); utf8.RuneCountInString(f) > maxReportedName+1 {
				t.Fatalf("%q: reported field too long: %q", body, f)
			}
			return
		}
		// Whatever is accepted is one valid JSON object with only the
		// allowed members, each a valid JSON value.
		if !json.Valid(body) {
			t.Fatalf("accepted invalid JSON %q", body)
		}
		var generic map[string]json.RawMessage
		if err := json.Unmarshal(body, &generic); err != nil {
			t.Fatalf("accepted a non-object %q", body)
		}
		for k, v := range m {
			if k != "workflowId" && k != "inputs" || !json.Valid(v) {
				t.Fatalf("%q: member %q = %q", body, k, v)
			}
		}
	})
}

func TestToAPIError(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("store: %w", err) }
	for _, tt := range []struct {
		err      error
		status   int
		code     string
		internal bool
		details  map[string]any
	}{
		{wrap(interop.ErrNotFound), 404, codeNotFound, false, nil},
		{wrap(interop.ErrRunTerminal), 409, codeRunTerminal, false, nil},
		{wrap(interop.ErrAlreadyResolved), 409, codeAlreadyResolved, false, nil},
		{wrap(interop.ErrNotEligible), 403, codeForbidden, false, nil},
		{wrap(interop.ErrForbidden), 403, codeForbidden, false, nil},
		{wrap(interop.ErrUnauthenticated), 401, codeUnauthenticated, false, nil},
		{wrap(interop.ErrInvalidInput), 400, codeValidation, false, nil},
		{wrap(&interop.InputError{Field: "inputs/delayMs", Reason: "too big"}), 400, codeValidation, false,
			map[string]any{"field": "inputs/delayMs", "reason": "too big"}},
		{wrap(&interop.InputError{Reason: "no field"}), 400, codeValidation, false, map[string]any{"reason": "no field"}},
		{wrap(&http.MaxBytesError{Limit: 10}), 413, codePayloadTooLarge, false, map[string]any{"limitBytes": int64(10)}},
		{wrap(invalid("x", "y")), 400, codeValidation, false, map[string]any{"field": "x", "reason": "y"}},
		{errors.New("disk on fire"), 500, codeInternal, true, nil},
		{context.Canceled, 500, codeInternal, true, nil},
	} {
		got, internal := toAPIError(tt.err)
		if got.Status != tt.status || got.Code != tt.code || internal != tt.internal || got.Message == "" ||
			!cmp.Equal(got.Details, tt.details, cmpopts.EquateEmpty()) {
			t.Errorf("toAPIError(%v) = %+v, internal %v", tt.err, got, internal)
		}
		if tt.internal && got.Message != internalMessage {
			t.Errorf("internal message = %q", got.Message)
		}
	}
}

// FuzzReadJSONBody drives the whole REST body reader — size limit, empty
// optional body, Content-Type, decode — with any bytes, declared or
// chunked: it either returns the members of one JSON object with allowed
// names no larger than the limit, or refuses with 400, 413 or 415 in the
// envelope's terms.
func FuzzReadJSONBody(f *testing.F) {
	for _, s := range []string{`{"workflowId":"x","inputs":{}}`, `{}`, ``, `{"reason":1}`, `[1]`, `{"workflowId":"` + strings.Repeat("x", 300) + `"}`} {
		f.Add([]byte(s), false, false, true)
		f.Add([]byte(s), true, true, false)
	}
	const limit = 256
	s := &server{maxBody: limit, bodyTimeout: time.Second}
	f.Fuzz(func(t *testing.T, body []byte, chunked, optional, jsonType bool) {
		r := httptest.NewRequest("POST", "/runs", strings.NewReader(string(body)))
		if chunked {
			r.ContentLength = -1
		}
		if jsonType {
			r.Header.Set("Content-Type", "application/json")
		}
		m, err := s.readJSONBody(httptest.NewRecorder(), r, optional, "workflowId", "inputs")
		if err != nil {
			e, internal := toAPIError(err)
			switch {
			case internal:
				t.Fatalf("%q: unclassified error %v", body, err)
			case len(body) > limit && e.Code != codePayloadTooLarge:
				t.Fatalf("%d bytes over a %d limit: %+v", len(body), limit, e)
			case e.Code != codeValidation && e.Code != codePayloadTooLarge && e.Code != codeUnsupportedMedia:
				t.Fatalf("%q: %+v", body, e)
			}
			return
		}
		if len(body) > limit {
			t.Fatalf("accepted %d bytes over a %d limit", len(body), limit)
		}
		if len(body) == 0 {
			if !optional || len(m) != 0 {
				t.Fatalf("empty body: %v (optional %v)", m, optional)
			}
			return
		}
		var generic map[string]json.RawMessage
		if !jsonType || json.Unmarshal(body, &generic) != nil || len(generic) != len(m) {
			t.Fatalf("accepted %q (json type %v) as %v", body, jsonType, m)
		}
		for k := range m {
			if k != "workflowId" && k != "inputs" {
				t.Fatalf("%q: member %q", body, k)
			}
		}
	})
}
