package mcppeers

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRecordReads: what the recorder reads from each kind of body.
func TestRecordReads(t *testing.T) {
	type read struct {
		ID, Method, Params, ToolName string
		Meta                         []string
		Notification                 bool
	}
	cases := []struct {
		body string
		want read
	}{
		{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{},"_meta":{"traceparent":"tp","k":{"a":1}}}}`,
			read{"7", "tools/call", `{"name":"echo","arguments":{},"_meta":{"traceparent":"tp","k":{"a":1}}}`, "echo", []string{"k", "traceparent"}, false}},
		{`{"jsonrpc":"2.0","id":"s-1","method":"tools/list"}`, read{`"s-1"`, "tools/list", "", "", nil, false}},
		{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`,
			read{"", "notifications/cancelled", `{"requestId":7}`, "", nil, true}},
		{`{"jsonrpc":"2.0","id":null,"method":"x"}`, read{"", "x", "", "", nil, true}},
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, read{"1", "", "", "", nil, false}},
		{`{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"p"}}`, read{"2", "prompts/get", `{"name":"p"}`, "", nil, false}},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":["echo"]}`, read{"3", "tools/call", `["echo"]`, "", nil, false}},
		{`[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`, read{}},
		{`not json`, read{}},
		{``, read{}},
	}
	for _, tc := range cases {
		req := httptest.NewRequest(http.MethodPost, Path, strings.NewReader(tc.body))
		req.Header.Set("MCP-Protocol-Version", "v")
		req.Header.Set("Mcp-Method", "m")
		req.Header.Set("Mcp-Name", "n")
		req.Header.Set("Authorization", "Bearer b")
		req.Header.Set("Traceparent", "tp")
		req.Header.Set("Tracestate", "ts")
		req.Header.Set("Mcp-Session-Id", "sid")
		q := readRequest(req, []byte(tc.body))
		got := read{string(q.ID), q.Method, string(q.Params), q.ToolName, nil, q.IsNotification()}
		for k := range q.Meta {
			got.Meta = append(got.Meta, k)
		}
		if got.Meta != nil {
			got.Meta = sortStrings(got.Meta)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.body, diff)
		}
		if q.ProtocolVersion != "v" || q.MCPMethod != "m" || q.MCPName != "n" || q.Authorization != "Bearer b" ||
			q.Traceparent != "tp" || q.Tracestate != "ts" || q.SessionID != "sid" || string(q.Body) != tc.body || q.Path != Path {
			t.Errorf("%s: headers read as %+v", tc.body, q)
		}
	}
	if got := (Request{Meta: map[string]json.RawMessage{"a": json.RawMessage(`"x"`), "b": json.RawMessage(`1`)}}); got.MetaString("a") != "x" || got.MetaString("b") != "" {
		t.Errorf("MetaString")
	}
}

func sortStrings(s []string) []string {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s
}

// TestCanonicalID: ids match across spellings of one value, and a
// string never matches a number.
func TestCanonicalID(t *testing.T) {
	same := [][2]string{{`1`, `1.0`}, {`1`, ` 1`}, {`1e2`, `100`}, {`"a"`, `"a"`}, {`"\u0061"`, `"a"`}}
	for _, p := range same {
		if canonicalID(json.RawMessage(p[0])) != canonicalID(json.RawMessage(p[1])) {
			t.Errorf("%s and %s differ", p[0], p[1])
		}
	}
	for _, p := range [][2]string{{`1`, `"1"`}, {`1`, `2`}, {`"a"`, `"b"`}} {
		if canonicalID(json.RawMessage(p[0])) == canonicalID(json.RawMessage(p[1])) {
			t.Errorf("%s and %s match", p[0], p[1])
		}
	}
}

// FuzzRecord: any request is recorded without panicking, reaches the
// server with its body intact, and an id it records is one the body holds.
func FuzzRecord(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"traceparent":"x"}}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a"}}`))
	f.Add([]byte(`{"id":{},"method":7,"params":"x"}`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var seen []byte
		rec := &recorder{}
		h := rec.record(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
			seen, _ = io.ReadAll(r.Body)
			if inFlightFrom(r.Context()) == nil {
				t.Fatal("no inFlight in the handler's context")
			}
		}))
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, Path, strings.NewReader(string(body))))
		if string(seen) != string(body) {
			t.Fatalf("the server read %q, want %q", seen, body)
		}
		q := rec.all("")[0]
		if q.ID != nil && !json.Valid(q.ID) || q.IsNotification() && q.ID != nil {
			t.Fatalf("recorded %+v", q)
		}
		_ = canonicalID(q.ID)
	})
}

// FuzzCanonicalID: any bytes give an id without panicking, and two
// spellings of one JSON value give the same id.
func FuzzCanonicalID(f *testing.F) {
	for _, s := range []string{`1`, `"a"`, `1.5e3`, `null`, `{`, `[1]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, id []byte) {
		a := canonicalID(id)
		var v any
		if json.Unmarshal(id, &v) == nil {
			if b := canonicalID(mustJSON(v)); a != b {
				t.Fatalf("%q gives %q, its re-encoding %q", id, a, b)
			}
		}
	})
}
