package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/internal/jsonbytes"
	"github.com/wopinterop/wopinterop/internal/jsonrpc"
	"github.com/wopinterop/wopinterop/isolation"
	"github.com/wopinterop/wopinterop/mcp/internal/mount"
)

const fuzzMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}}`

// FuzzMCPRequest drives the whole handler over memstore with arbitrary
// bodies and headers: it never panics and never answers a client's input
// with a 5xx.
func FuzzMCPRequest(f *testing.F) {
	seeds := []struct{ body, method, name, version string }{
		{`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + fuzzMeta + `}}`, "server/discover", "", Revision},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"YWZ0ZXI6eA",` + fuzzMeta + `}}`, "tools/list", "", Revision},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"conformance-noop","arguments":{"message":"x"},` + fuzzMeta + `}}`, "tools/call", "conformance-noop", Revision},
		{`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"conformance-approval",` + fuzzMeta + `}}`, "tools/call", "conformance-approval", Revision},
		{`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"conformance-approval","requestState":"rs1.AAAA","inputResponses":{"k":{"action":"accept"}},` + fuzzMeta + `}}`, "tools/call", "conformance-approval", Revision},
		{`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"conformance-delay","arguments":{"delayMs":"x"},` + fuzzMeta + `}}`, "tools/call", "conformance-delay", Revision},
		{`{"jsonrpc":"2.0","id":6,"method":"tasks/get","params":{"taskId":"acme~2FAAAAAAAAAAAAAAAAAAAAAAAAAA",` + fuzzMeta + `}}`, "tasks/get", "acme~2FAAAAAAAAAAAAAAAAAAAAAAAAAA", Revision},
		{`{"jsonrpc":"2.0","id":7,"method":"tasks/update","params":{"taskId":"x","inputResponses":{},` + fuzzMeta + `}}`, "tasks/update", "x", Revision},
		{`{"jsonrpc":"2.0","id":8,"method":"tasks/cancel","params":{"taskId":"x",` + fuzzMeta + `}}`, "tasks/cancel", "x", Revision},
		{`{"jsonrpc":"2.0","id":9,"method":"subscriptions/listen","params":{"notifications":{"taskIds":["x"]},` + fuzzMeta + `}}`, "subscriptions/listen", "", Revision},
		{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`, "notifications/cancelled", "", Revision},
		{`[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`, "tools/list", "", Revision},
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, "initialize", "", "2025-11-25"},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"=?base64?eA==?=",` + fuzzMeta + `}}`, "tools/call", "=?base64?eA==?=", ""},
	}
	for _, s := range seeds {
		f.Add([]byte(s.body), s.method, s.name, s.version)
	}
	e := newEnv(f, withTasks, func(c *testConfig) {
		c.BlockTimeout = 20 * time.Millisecond
		c.MaxBodyBytes = 1 << 16
	})
	f.Fuzz(func(t *testing.T, body []byte, method, name, version string) {
		r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(string(body)))
		r.Header.Set("Authorization", "Bearer acme:alice")
		for k, v := range map[string]string{headerMethod: method, headerName: name, headerProtocolVersion: version} {
			if v != "" && validHeaderValue(v) {
				r.Header.Set(k, v)
			}
		}
		// A listen stream or a blocking call ends with the request.
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		rec := httptest.NewRecorder()
		e.h.ServeHTTP(rec, r.WithContext(ctx))
		if rec.Code >= 500 {
			t.Fatalf("HTTP %d for client input: %s", rec.Code, rec.Body)
		}
		// Runs answered as tasks would outlive the input; stop them.
		var resp struct {
			Result struct {
				ResultType string `json:"resultType"`
				TaskID     string `json:"taskId"`
			} `json:"result"`
		}
		if json.Unmarshal(rec.Body.Bytes(), &resp) == nil && resp.Result.ResultType == "task" {
			if runID, err := isolation.ParseID(resp.Result.TaskID); err == nil {
				_, _ = e.store.CancelRun(context.Background(), alice, runID, "fuzz")
			}
		}
	})
}

func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}

// FuzzDecodeMessage: the envelope decoder never panics, and what it
// accepts is a well-formed message.
func FuzzDecodeMessage(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled"}`,
		`{"jsonrpc":"2.0","id":"x","method":"m","params":null}`,
		`[1]`, `{}`, `{"jsonrpc":"2.0","id":{},"method":"m"}`, `  {"jsonrpc" : "2.0", "id" : -1.5e3, "method" : "m"}  `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		msg, err := decodeMessage(body)
		if err != nil {
			if err.Code != codeParseError && err.Code != codeInvalidRequest {
				t.Fatalf("decoder refused with code %d", err.Code)
			}
			if msg.id != nil && !validID(msg.id) {
				t.Fatalf("refusal carries an invalid id %q", msg.id)
			}
			return
		}
		if msg.id != nil && !validID(msg.id) {
			t.Fatalf("accepted id %q", msg.id)
		}
		var env map[string]json.RawMessage
		if json.Unmarshal(body, &env) != nil || string(env["jsonrpc"]) != `"2.0"` {
			t.Fatalf("accepted %q", body)
		}
	})
}

// FuzzOwnOrigin: isOwnOrigin accepts exactly the serialized origins of
// the listener's own socket — the connection's scheme, the listener's
// port (or the scheme's default when omitted), and its IP literal or
// localhost on 127.0.0.1 and [::1] — whatever else the Origin holds.
func FuzzOwnOrigin(f *testing.F) {
	for _, o := range []string{"http://127.0.0.1:8080", "http://localhost:8080", "http://[::1]:8080", "https://localhost", "http://127.0.0.1", "http://LOCALHOST:8080", "http://127.0.0.1:08080", "http://[::ffff:127.0.0.1]:8080", "null", "http://u@localhost:8080"} {
		f.Add(o, "127.0.0.1", uint16(8080), false)
		f.Add(o, "::1", uint16(443), true)
	}
	f.Fuzz(func(t *testing.T, origin, ip string, port uint16, tls bool) {
		addr, err := netip.ParseAddr(ip)
		if err != nil || !addr.IsLoopback() || addr.Zone() != "" || addr.Is4In6() {
			return
		}
		local := netip.AddrPortFrom(addr, port)
		if !isOwnOrigin(origin, local, tls) {
			return
		}
		scheme, defaultPort := "http://", uint16(80)
		if tls {
			scheme, defaultPort = "https://", 443
		}
		host := addr.String()
		if addr.Is6() {
			host = "[" + host + "]"
		}
		var names []string
		for _, h := range []string{host, "localhost"} {
			if h == "localhost" && addr != loopbackV4 && addr != loopbackV6 {
				continue
			}
			names = append(names, scheme+h+":"+strconv.Itoa(int(port)))
			if port == defaultPort {
				names = append(names, scheme+h)
			}
		}
		for _, n := range names {
			if strings.EqualFold(origin, n) || canonicalOrigin(origin) == n {
				return
			}
		}
		t.Fatalf("isOwnOrigin(%q, %s, tls=%v) accepted an origin that is not the listener's (%v)", origin, local, tls, names)
	})
}

// canonicalOrigin rewrites the forms a browser never sends but the check
// reads alike — an IPv4-mapped or non-canonical IPv6 literal, a port with
// leading zeros — into the serialization the fuzz target compares with.
func canonicalOrigin(origin string) string {
	scheme, hostport, ok := strings.Cut(origin, "://")
	if !ok {
		return origin
	}
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]"), ""
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		ip = ip.Unmap()
		host = ip.String()
		if ip.Is6() {
			host = "[" + host + "]"
		}
	}
	if port == "" {
		return scheme + "://" + host
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		return origin
	}
	return scheme + "://" + host + ":" + strconv.Itoa(n)
}

// FuzzParamMembers: the params splitter agrees with json.Unmarshal into a
// map[string]json.RawMessage on every JSON object — the names as
// encoding/json unquotes them (escapes, invalid UTF-8), the last of
// duplicates, the values byte for byte.
func FuzzParamMembers(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"name":"noop","arguments":{"a":[1,2,{"b":null}]},"_meta":{"x":"y"}}`,
		`{"a":1,"a":2}`, `{"n\u0061me":"x","\ud800":1,"a\"b":true}`, "{\"\xff\xfe\":1,\"\xc3\":2}",
		` { "a" : 1 , "b" : [ ] } `, `{"a":"\u0000","é":-0.5e+3}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, params []byte) {
		var want map[string]json.RawMessage
		if json.Unmarshal(params, &want) != nil || want == nil {
			return // not an object: the envelope decoder never passes one
		}
		got, ok := paramMembers(jsonbytes.TrimSpace(params))
		if !ok {
			t.Fatalf("refused %q", params)
		}
		if len(got) != len(want) {
			t.Fatalf("%q: %d members, want %d", params, len(got), len(want))
		}
		for k, v := range want {
			if g, present := got[k]; !present || !bytes.Equal(g, v) {
				t.Fatalf("%q: member %q = %q, want %q", params, k, g, v)
			}
		}
	})
}

// FuzzStringValue: the _meta string reader agrees with json.Unmarshal into
// a string on every valid JSON value — the string, and whether it is
// accepted (null as "", every other non-string refused).
func FuzzStringValue(f *testing.F) {
	for _, s := range []string{`"2026-07-28"`, `null`, `1`, `{}`, `""`, `"\u00e9\n"`, "\"\xff\"", `"\ud800"`, `true`, `["x"]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		raw = jsonbytes.TrimSpace(raw)
		if !json.Valid(raw) {
			return // _meta members come out of a validated body
		}
		var want string
		wantOK := json.Unmarshal(raw, &want) == nil
		got, ok := stringValue(raw)
		if ok != wantOK || got != want {
			t.Fatalf("%q: %q %v, want %q %v", raw, got, ok, want, wantOK)
		}
	})
}

// FuzzReadMeta: the guard's _meta reader picks exactly the members
// paramMembers would give for its four names — escaped names, invalid
// UTF-8 and duplicates included.
func FuzzReadMeta(f *testing.F) {
	for _, s := range []string{
		`{}`, benchMeta[len(`"_meta":`):], fuzzMeta[len(`"_meta":`):],
		`{"io.modelcontextprotocol/protocolVersion":"a","io.modelcontextprotocol/protocolVersion":"b"}`,
		`{"io.modelcontextprotocol\/protocolVersion":"x","traceparent":1,"tracestate":null,"io.modelcontextprotocol/clientCapabilities":{"a":[]}}`,
		"{\"trace\xffparent\":1,\"tracest\\u0061te\":\"s\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		raw = jsonbytes.TrimSpace(raw)
		if len(raw) == 0 || raw[0] != '{' || !json.Valid(raw) {
			return // _meta is read only when it is an object of a valid body
		}
		want, ok := paramMembers(raw)
		if !ok {
			t.Fatalf("paramMembers refused %q", raw)
		}
		got := readMeta(raw)
		for name, v := range map[string]json.RawMessage{
			metaProtocolVersion: got.protocolVersion, metaClientCapabilities: got.clientCapabilities,
			metaTraceParent: got.traceParent, metaTraceState: got.traceState,
		} {
			if w, present := want[name]; present != (v != nil) || !bytes.Equal(v, w) {
				t.Fatalf("%q: %s = %q, want %q (present %v)", raw, name, v, w, present)
			}
		}
	})
}

// parseCapsByMaps is parseCaps as it read capabilities before, through
// paramMembers' maps: the reference FuzzParseCaps holds parseCaps to.
func parseCapsByMaps(raw json.RawMessage, out *mount.Caps) bool {
	if len(raw) == 0 || raw[0] != '{' {
		return false
	}
	caps, ok := paramMembers(raw)
	if !ok {
		return false
	}
	object := func(m map[string]json.RawMessage, name string) (map[string]json.RawMessage, bool) {
		raw, ok := m[name]
		if !ok || len(raw) == 0 || raw[0] != '{' {
			return nil, false
		}
		return paramMembers(raw)
	}
	if modes, ok := object(caps, "elicitation"); ok {
		out.Elicitation = true
		_, form := modes["form"]
		_, url := modes["url"]
		out.ElicitationForm = form || !url
		out.ElicitationURL = url
	}
	if sub, ok := object(caps, "sampling"); ok {
		out.Sampling = true
		_, out.SamplingTools = object(sub, "tools")
		_, out.SamplingContext = object(sub, "context")
	}
	_, out.Roots = object(caps, "roots")
	if exts, ok := object(caps, "extensions"); ok {
		_, out.Tasks = object(exts, TasksExtension)
	}
	return true
}

// FuzzParseCaps: reading the capabilities in place answers every valid
// JSON value as splitting them into maps did.
func FuzzParseCaps(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"elicitation":{"form":{},"url":{}},"sampling":{"tools":{},"context":{}},"roots":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}`,
		`{"elicitation":{},"elicitation":1}`, `{"elicitation":{"url":null}}`, `{"sampling":{"tools":true}}`,
		`{"r\u006fots":{}}`, `[]`, `null`, `"x"`, `{"extensions":{"io.modelcontextprotocol/tasks":null}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		raw = jsonbytes.TrimSpace(raw)
		if !json.Valid(raw) {
			return // capabilities come out of a validated body
		}
		var got, want mount.Caps
		ok, wantOK := parseCaps(raw, &got), parseCapsByMaps(raw, &want)
		if ok != wantOK || got != want {
			t.Fatalf("%q: %+v %v, want %+v %v", raw, got, ok, want, wantOK)
		}
	})
}

// FuzzStringValueIs: comparing a JSON value with a string in place agrees
// with stringValue.
func FuzzStringValueIs(f *testing.F) {
	for _, s := range []string{`"noop"`, `null`, `1`, `""`, `"n\u006fop"`, "\"no\xffop\"", `["noop"]`} {
		f.Add([]byte(s), "noop")
	}
	f.Add([]byte(`null`), "")
	f.Fuzz(func(t *testing.T, raw []byte, want string) {
		raw = jsonbytes.TrimSpace(raw)
		if !json.Valid(raw) {
			return // params members come out of a validated body
		}
		s, ok := stringValue(raw)
		if got := stringValueIs(raw, want); got != (ok && s == want) {
			t.Fatalf("stringValueIs(%q, %q) = %v; stringValue gives %q %v", raw, want, got, s, ok)
		}
	})
}

// FuzzMethodName: the served method names read as constants are the
// method the envelope decoder reads, whatever the body spells.
func FuzzMethodName(f *testing.F) {
	for _, s := range []string{`"tools/call"`, `"tools\/call"`, `"tools/list"`, `"x"`, "\"tools/c\xffall\"", `"notifications/cancelled"`} {
		f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":` + s + `}`))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if !json.Valid(body) {
			return
		}
		q, problem := jsonrpc.Parse(jsonbytes.TrimSpace(body), jsonrpc.Rules{})
		if problem != jsonrpc.OK {
			return
		}
		if got, want := methodName(&q), q.MethodName(); got != want {
			t.Fatalf("%q: methodName %q, want %q", body, got, want)
		}
	})
}
