package hostapp

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// requestLines are the request log lines written so far.
func (h *testHost) requestLines() []string {
	var out []string
	for _, l := range strings.Split(h.logs.String(), "\n") {
		if strings.Contains(l, " msg=request ") {
			out = append(out, l)
		}
	}
	return out
}

// requestLine waits for the n-th request line (from 1) and returns it: a
// handler logs after its response is written, so the client may read the
// answer first.
func (h *testHost) requestLine(n int) string {
	h.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if lines := h.requestLines(); len(lines) >= n {
			return lines[n-1]
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("no request line %d in:\n%s", n, h.logs.String())
		}
		time.Sleep(time.Millisecond)
	}
}

// One line per request, with the HTTP method, the path, the JSON-RPC
// method on the A2A and MCP surfaces, the status, the duration and the
// authenticated tenant; a fault at error level. A bearer key sent in any
// header, or as a JSON-RPC method name, never reaches the log.
func TestRequestLog(t *testing.T) {
	h := newTestHost(t, withFaults("GetRun"))
	everywhere := map[string]string{
		"Proxy-Authorization":       "Bearer " + globexKey,
		"X-Api-Key":                 acmeKey,
		"Cookie":                    "session=" + acmeKey,
		"X-Forwarded-Authorization": "Bearer " + globexKey,
		"Mcp-Method":                acmeKey, // read only on the MCP paths
		"Mcp-Name":                  globexKey,
		"A2A-Extensions":            acmeKey,
		"Traceparent":               acmeKey,
	}
	n := 0
	line := func(want string) {
		t.Helper()
		n++
		got := h.requestLine(n)
		if !regexp.MustCompile(want).MatchString(got) {
			t.Errorf("request line %q does not match %q", got, want)
		}
	}

	h.do(req{Method: "GET", Path: "/runs?limit=5&secret=" + "x", Key: acmeKey, Headers: everywhere})
	line(`^time=\S+ level=INFO msg=request method=GET path=/runs status=200 duration=[0-9.]+[µnm]?s tenant=acme$`)

	h.do(req{Method: "GET", Path: "/runs", Key: "not-a-key", Headers: everywhere})
	line(`level=INFO msg=request method=GET path=/runs status=401 duration=\S+ tenant=""$`)

	// A fault: error level, for the request line as for the fault itself.
	c := h.start(acmeKey, "conformance-noop", "")
	n++ // the start's own line
	h.do(req{Method: "GET", Path: strings.TrimPrefix(c.StatusURL, h.url), Key: acmeKey, Headers: everywhere})
	line(`level=ERROR msg=request method=GET path=/runs/acme~2F\S+ status=500 duration=\S+ tenant=acme$`)
	if !strings.Contains(h.logs.String(), "level=ERROR msg=\"request failed\"") {
		t.Errorf("the fault itself is not logged at error level:\n%s", h.logs.String())
	}

	// A2A JSON-RPC: the method from the body, which reaches the handler
	// whole.
	r := h.do(req{Method: "POST", Path: a2aPath, Key: globexKey, Headers: mergeHeaders(everywhere, map[string]string{"A2A-Version": "1.0"}),
		Body: `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{"pageSize":1}}`})
	wantStatus(t, r, http.StatusOK)
	line(`level=INFO msg=request method=POST path=/a2a rpc=ListTasks status=200 duration=\S+ tenant=globex$`)
	// A method past the peeked prefix is not named; the request still
	// works, every byte of it.
	r = h.do(req{Method: "POST", Path: a2aPath, Key: globexKey, Headers: map[string]string{"A2A-Version": "1.0"},
		Body: `{"jsonrpc":"2.0","id":1,"params":{"pageSize":1,"contextId":"` + strings.Repeat("c", 600) + `"},"method":"ListTasks"}`})
	if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"tasks":[]`) {
		t.Errorf("long ListTasks: %d %s", r.Status, r.Body)
	}
	line(`method=POST path=/a2a status=200 duration=\S+ tenant=globex$`)
	// A method the surface does not know is "other", whatever it says.
	h.do(req{Method: "POST", Path: a2aPath, Key: acmeKey, Headers: map[string]string{"A2A-Version": "1.0"},
		Body: `{"jsonrpc":"2.0","id":1,"method":"` + acmeKey + `","params":{}}`})
	line(`method=POST path=/a2a rpc=other status=\d+ duration=\S+ tenant=acme$`)

	// MCP: the method from Mcp-Method.
	mr, _ := h.mcp(mcpReq{Key: acmeKey, Method: "tools/list", Headers: map[string]string{"X-Api-Key": acmeKey}})
	wantStatus(t, mr, http.StatusOK)
	line(`method=POST path=/mcp rpc=tools/list status=200 duration=\S+ tenant=acme$`)
	hr, _ := http.NewRequest("POST", h.url+mcpPath, strings.NewReader(`{}`))
	hr.Header.Set("Mcp-Method", globexKey)
	hr.Header.Set("Authorization", "Bearer "+globexKey)
	if resp, err := h.client.Do(hr); err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	line(`method=POST path=/mcp rpc=other status=400 duration=\S+ tenant=`)

	for _, secret := range []string{acmeKey, globexKey, "secret=x"} {
		if strings.Contains(h.logs.String(), secret) {
			t.Errorf("%q reached the log:\n%s", secret, h.logs.String())
		}
	}
	if got := len(h.requestLines()); got != n || n != 9 {
		t.Errorf("%d request lines for %d requests:\n%s", got, n, h.logs.String())
	}
}

func mergeHeaders(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

func TestParseLogLevel(t *testing.T) {
	for in, want := range map[string]string{"debug": "DEBUG", "INFO": "INFO", " warn ": "WARN", "error": "ERROR"} {
		if l, err := parseLogLevel(in); err != nil || l.String() != want {
			t.Errorf("%q: %v %v", in, l, err)
		}
	}
	for _, in := range []string{"", "verbose", "info+2", "-4"} {
		if _, err := parseLogLevel(in); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

func TestTopLevelString(t *testing.T) {
	for doc, want := range map[string]string{
		`{"jsonrpc":"2.0","method":"GetTask","id":1}`:          "GetTask",
		`{"params":{"method":"inner"},"method":"SendMessage"}`: "SendMessage",
		`{"params":{"method":"inner"},"id":1`:                  "",
		`{"method":7}`:                                         "",
		`["method","GetTask"]`:                                 "",
		`{"id":1,"meth`:                                        "",
		``:                                                     "",
		`{"method":"Get` + strings.Repeat("x", 10) + `"}garbage`: "Getxxxxxxxxxx",
		`{"method":"Get\"Task"}`:                                 "",
		`{"a":"x,\"method\":\"y\"","method":"GetTask"}`:          "GetTask",
		`{"id":"method","method":"ListTasks"}`:                   "ListTasks",
		`{"p":["method","x",{"method":"y"}],"method":"M"}`:       "M",
		" \n{ \"method\" : \"Spaced\" }":                         "Spaced",
		`{"method":"unterminated`:                                "",
	} {
		if got := topLevelString([]byte(doc), "method"); got != want {
			t.Errorf("%q: %q, want %q", doc, got, want)
		}
	}
}

// firstMember is the reference topLevelString is held to: the first
// top-level member name of a valid JSON object, decoded, when it is a
// string without escapes.
func firstMember(doc []byte, name string) string {
	dec := json.NewDecoder(bytes.NewReader(doc))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return ""
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return ""
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return ""
		}
		if key != name {
			continue
		}
		var v string
		if json.Unmarshal(raw, &v) != nil || bytes.IndexByte(raw, '\\') >= 0 || !utf8.Valid(raw) {
			return ""
		}
		return v
	}
	return ""
}

// FuzzTopLevelString: on any valid JSON the scanner finds what a decoder
// finds; on anything else it returns a substring of the input or "".
func FuzzTopLevelString(f *testing.F) {
	for _, seed := range []string{`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{}}`, `{"params":{"method":"x"},"method":"y"}`,
		`{"a":"\"method\"","method":"z"}`, `[{"method":"a"}]`, `{"method":"a\u0062"}`, `{"method":`, `{`, ``} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		got := topLevelString(doc, "method")
		if json.Valid(doc) {
			if want := firstMember(doc, "method"); got != want {
				t.Fatalf("%q: %q, the decoder finds %q", doc, got, want)
			}
		}
		if got != "" && !bytes.Contains(doc, []byte(got)) {
			t.Fatalf("%q: %q is not in the input", doc, got)
		}
	})
}
