package hostapp

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/wopinterop/wopinterop/internal/httpbody"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/isolation"
)

// This file holds every parser of client input the host has: path ids,
// query strings, headers and JSON bodies. Each returns an *apiError the
// caller passes to writeError, and each has a fuzz target.

// Listing and polling bounds (runList.maxPageSize is maxPageSize).
const (
	defaultPageSize    = 50
	maxPageSize        = 100
	defaultPollTimeout = 30 * time.Second
	maxPollTimeout     = 60 * time.Second
	maxIdempotencyKey  = 255
	maxReportedName    = 64
)

// pathSegment returns segment i (0-based, after the leading "/") of r's
// escaped path. The mux matched the pattern on escaped segments, so the
// index of a wildcard is fixed by its pattern. The raw segment is used
// instead of PathValue, which is already unescaped: decoding "acme%252F…"
// twice would turn it into a valid id the client never sent.
func pathSegment(r *http.Request, i int) string {
	segs := strings.Split(strings.TrimPrefix(r.URL.EscapedPath(), "/"), "/")
	if i < 0 || i >= len(segs) {
		return ""
	}
	return segs[i]
}

// parsePathID turns one raw path segment into a bound id in sub's tenant.
// It accepts the projected ("acme~2F…") and percent-encoded ("acme%2F…")
// forms (OpenWOP identity.md §5). A malformed or bare id is 400 validation_error (no
// 1.x is advertised), a foreign tenant segment 403 id_tenant_mismatch
// (OpenWOP identity.md §5).
func parsePathID(sub interop.Subject, raw, field string) (string, error) {
	id, err := isolation.ParseID(raw)
	if err != nil {
		return "", invalid(field, "not a tenant-bound id (tenant/opaque, projected on the path)")
	}
	if isolation.TenantOf(id) != sub.Tenant {
		return "", &apiError{
			Status:  http.StatusForbidden,
			Code:    codeTenantMismatch,
			Message: "the id's tenant segment is not the caller's tenant",
			Details: map[string]any{"field": field},
		}
	}
	return id, nil
}

// servedVersions is the discovery root's protocolVersions.
func servedVersions() []string { return []string{"2.0"} }

// checkVersionHeader applies versioning.md §1.3 to the OpenWOP-Version
// request header: absent, "2" or "2.<minor>" select this surface.
func checkVersionHeader(values []string) error {
	if len(values) == 0 {
		return nil
	}
	if len(values) > 1 {
		return invalid("OpenWOP-Version", "the header must appear once")
	}
	v := strings.TrimSpace(values[0])
	major, minor, hasMinor := strings.Cut(v, ".")
	if !isVersionNumber(major) || hasMinor && !isVersionNumber(minor) {
		return invalid("OpenWOP-Version", "must be <major> or <major>.<minor>")
	}
	if major != "2" {
		return &apiError{
			Status:  http.StatusNotAcceptable,
			Code:    codeVersionUnsupported,
			Message: "the requested protocol major is not served",
			Details: map[string]any{"protocolVersions": servedVersions()},
		}
	}
	return nil
}

// isVersionNumber matches 0|[1-9][0-9]* with at most 9 digits.
func isVersionNumber(s string) bool {
	if s == "" || len(s) > 9 || len(s) > 1 && s[0] == '0' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// singleQuery returns the one value of key in q; a repeated key is refused
// so that no two layers can read different values.
func singleQuery(q url.Values, key string) (string, bool, error) {
	vs, ok := q[key]
	if !ok {
		return "", false, nil
	}
	if len(vs) != 1 {
		return "", false, invalid(key, "must appear at most once")
	}
	return vs[0], true, nil
}

// parseListQuery reads GET /runs's query. Empty values count as absent.
func parseListQuery(q url.Values) (interop.ListRunsQuery, error) {
	out := interop.ListRunsQuery{PageSize: defaultPageSize}
	if v, ok, err := singleQuery(q, "limit"); err != nil {
		return out, err
	} else if ok && v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return out, invalid("limit", "must be an integer of at least 1")
		}
		out.PageSize = min(n, maxPageSize)
	}
	v, _, err := singleQuery(q, "cursor")
	if err != nil {
		return out, err
	}
	if len(v) > 2048 {
		return out, invalid("cursor", "is not a cursor this host issued")
	}
	out.Cursor = v
	if out.WorkflowID, _, err = singleQuery(q, "workflowId"); err != nil {
		return out, err
	}
	v, _, err = singleQuery(q, "status")
	if err != nil {
		return out, err
	}
	if v != "" {
		st := interop.RunStatus(v)
		if !st.Valid() {
			return out, invalid("status", "must be one of the ten run statuses")
		}
		out.Statuses = []interop.RunStatus{st}
	}
	return out, nil
}

// parsePollQuery reads afterSequence (default -1, i.e. from the first
// event) and timeout (seconds, 0..60, default 30).
func parsePollQuery(q url.Values) (after int64, timeout time.Duration, err error) {
	after, timeout = -1, defaultPollTimeout
	if v, ok, err := singleQuery(q, "afterSequence"); err != nil {
		return 0, 0, err
	} else if ok && v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < -1 {
			return 0, 0, invalid("afterSequence", "must be an integer of at least -1")
		}
		after = n
	}
	if v, ok, err := singleQuery(q, "timeout"); err != nil {
		return 0, 0, err
	} else if ok && v != "" {
		n, err := strconv.Atoi(v)
		// Compare in seconds: n*time.Second could overflow into range.
		if err != nil || n < 0 || n > int(maxPollTimeout/time.Second) {
			return 0, 0, invalid("timeout", "must be an integer number of seconds from 0 to 60")
		}
		timeout = time.Duration(n) * time.Second
	}
	return after, timeout, nil
}

// parseIdempotencyKey reads the Idempotency-Key header: absent, or one value
// of 1..255 visible ASCII characters.
func parseIdempotencyKey(h http.Header) (string, error) {
	vs := h.Values("Idempotency-Key")
	if len(vs) == 0 {
		return "", nil
	}
	bad := &apiError{
		Status:  http.StatusBadRequest,
		Code:    codeIdempotencyKey,
		Message: "Idempotency-Key must be one value of 1 to 255 visible ASCII characters",
	}
	if len(vs) > 1 || len(vs[0]) == 0 || len(vs[0]) > maxIdempotencyKey {
		return "", bad
	}
	for i := 0; i < len(vs[0]); i++ {
		if c := vs[0][i]; c < 0x21 || c > 0x7e {
			return "", bad
		}
	}
	return vs[0], nil
}

// parseTrace reads a W3C trace context. A malformed traceparent drops both
// headers; a malformed tracestate drops only itself (Trace Context §3.3).
func parseTrace(h http.Header) interop.TraceContext {
	tps := h.Values("Traceparent")
	if len(tps) != 1 || !validTraceParent(tps[0]) {
		return interop.TraceContext{}
	}
	tc := interop.TraceContext{TraceParent: tps[0]}
	if ts := strings.Join(h.Values("Tracestate"), ","); ts != "" && validTraceState(ts) {
		tc.TraceState = ts
	}
	return tc
}

// validTraceParent checks version-traceid-parentid-flags in lowercase hex,
// rejecting version ff and all-zero ids. A future version may append fields
// after a '-'.
func validTraceParent(s string) bool {
	const n = 55
	if len(s) < n || len(s) > n && (s[0:2] == "00" || s[n] != '-') {
		return false
	}
	if s[2] != '-' || s[35] != '-' || s[52] != '-' {
		return false
	}
	version, traceID, parentID, flags := s[0:2], s[3:35], s[36:52], s[53:55]
	for _, part := range []string{version, traceID, parentID, flags} {
		if !isLowerHex(part) {
			return false
		}
	}
	return version != "ff" && strings.Trim(traceID, "0") != "" && strings.Trim(parentID, "0") != ""
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// validTraceState checks the tracestate list: at most 32 members of
// key=value, unique keys, empty members allowed.
func validTraceState(s string) bool {
	if len(s) > 512 {
		return false
	}
	seen := map[string]bool{}
	for member := range strings.SplitSeq(s, ",") {
		member = strings.Trim(member, " \t")
		if member == "" {
			continue
		}
		k, v, ok := strings.Cut(member, "=")
		if !ok || !validTraceStateKey(k) || !validTraceStateValue(v) || seen[k] {
			return false
		}
		seen[k] = true
	}
	return len(seen) <= 32
}

func validTraceStateKey(k string) bool {
	if k == "" || len(k) > 256 || !('a' <= k[0] && k[0] <= 'z' || '0' <= k[0] && k[0] <= '9') {
		return false
	}
	if strings.Count(k, "@") > 1 || strings.HasSuffix(k, "@") {
		return false
	}
	for i := 1; i < len(k); i++ {
		c := k[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || strings.IndexByte("_-*/@", c) >= 0) {
			return false
		}
	}
	return true
}

func validTraceStateValue(v string) bool {
	if v == "" || len(v) > 256 || v[len(v)-1] == ' ' {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c > 0x7e || c == ',' || c == '=' {
			return false
		}
	}
	return true
}

// etagMatches reports whether an If-None-Match field value matches etag,
// using the weak comparison RFC 9110 §13.1.2 prescribes.
func etagMatches(ifNoneMatch, etag string) bool {
	if strings.TrimSpace(ifNoneMatch) == "*" {
		return true
	}
	want := strings.TrimPrefix(etag, "W/")
	for tag := range strings.SplitSeq(ifNoneMatch, ",") {
		if strings.TrimPrefix(strings.TrimSpace(tag), "W/") == want {
			return true
		}
	}
	return false
}

// checkJSONContentType refuses a body that is not application/json.
func checkJSONContentType(h http.Header) error {
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return &apiError{
			Status:  http.StatusUnsupportedMediaType,
			Code:    codeUnsupportedMedia,
			Message: "the request body must be application/json",
		}
	}
	return nil
}

// readJSONBody reads a JSON object body within the host's byte and time
// limits (internal/httpbody) and returns its members. An empty body is
// allowed only when optional (it then yields no members and needs no
// Content-Type). A body over the byte limit is 413 payload_too_large; one
// that does not arrive within the time limit, or stops arriving, is 400
// validation_error (the OpenWOP registry has no 408 code). After any of
// these the connection closes without the rest of the body being read.
func (s *server) readJSONBody(w http.ResponseWriter, r *http.Request, optional bool, allowed ...string) (map[string]json.RawMessage, error) {
	var buf bytes.Buffer
	switch err := httpbody.Read(w, r, &buf, s.maxBody, s.bodyTimeout); {
	case errors.Is(err, httpbody.ErrTooLarge):
		return nil, &http.MaxBytesError{Limit: s.maxBody}
	case errors.Is(err, httpbody.ErrTooSlow):
		return nil, invalid("body", "the body did not arrive within "+s.bodyTimeout.String())
	case err != nil:
		return nil, invalid("body", "the body could not be read")
	}
	body := buf.Bytes()
	if len(body) == 0 && optional {
		return map[string]json.RawMessage{}, nil
	}
	if err := checkJSONContentType(r.Header); err != nil {
		return nil, err
	}
	return decodeObject(body, allowed...)
}

// decodeObject decodes one JSON object and returns its members. Member names
// match allowed case-sensitively (encoding/json alone would fold case);
// unknown or repeated members and trailing data are refused.
func decodeObject(data []byte, allowed ...string) (map[string]json.RawMessage, error) {
	malformed := invalid("body", "the body must be one JSON object")
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, malformed
	}
	members := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, malformed
		}
		name, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, malformed
		}
		if !contains(allowed, name) {
			return nil, invalid(reportedName(name), "unknown member")
		}
		if _, dup := members[name]; dup {
			return nil, invalid(name, "repeated member")
		}
		members[name] = raw
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, malformed
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, malformed
	}
	return members, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// reportedName bounds a client-chosen member name before it is echoed.
func reportedName(s string) string {
	if len(s) > maxReportedName {
		return s[:maxReportedName] + "…"
	}
	return s
}

// stringMember decodes an optional JSON string member; null counts as absent.
func stringMember(members map[string]json.RawMessage, name string) (string, error) {
	raw, ok := members[name]
	if !ok {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", invalid(name, "must be a string")
	}
	return s, nil
}

// objectMember returns an optional member that must be a JSON object.
func objectMember(members map[string]json.RawMessage, name string) (json.RawMessage, bool, error) {
	raw, ok := members[name]
	if !ok {
		return nil, false, nil
	}
	if len(raw) == 0 || raw[0] != '{' {
		return nil, false, invalid(name, "must be a JSON object")
	}
	return raw, true, nil
}
