package a2a

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/wopinterop/wopinterop/internal/interopmap"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/mapping"
)

func TestParseEnvelope(t *testing.T) {
	cases := []struct {
		in     string
		id     string // raw id; "" = absent
		method string
		params string
		err    string // refusal message; "" = accepted
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}`, "1", methodGetTask, `{"id":"x"}`, ""},
		{`{"params":{},"method":"ListTasks","id":"a","jsonrpc":"2.0"}`, `"a"`, methodListTasks, `{}`, ""},
		{`{"jsonrpc":"2.0","id":null,"method":"ListTasks"}`, "null", methodListTasks, "", ""},
		{`{"jsonrpc":"2.0","id":-1.5e3,"method":"ListTasks","params":null}`, "-1.5e3", methodListTasks, "", ""},
		{`{"jsonrpc":"2.0","method":"ListTasks"}`, "", methodListTasks, "", ""},
		{`{"jsonrpc":"2\u002e0","id":1,"method":"\u0047etTask"}`, "1", methodGetTask, "", ""},
		{`{"jsonrpc":"2.0","id":1,"method":"tasks/get"}`, "1", "", "", ""},
		{`{"jsonrpc":"2.0","id":1,"method":"gettask"}`, "1", "", "", ""},
		{`{"jsonrpc":"2.0","id":1,"method":"GetTask","extra":{"Method":1}}`, "1", methodGetTask, "", ""},
		{`{"jsonrpc":"2.0","id":1,"id":2,"method":"GetTask"}`, "2", methodGetTask, "", ""},
		{`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"a":1},"params":{"b":2}}`, "1", methodGetTask, `{"b":2}`, ""},
		{`{}`, "", "", "", `jsonrpc must be "2.0"`},
		{`{"id":4,"method":"GetTask"}`, "4", "", "", `jsonrpc must be "2.0"`},
		{`{"jsonrpc":2.0,"id":4,"method":"GetTask"}`, "4", "", "", `jsonrpc must be "2.0"`},
		{`{"jsonrpc":"2.0 ","id":4,"method":"GetTask"}`, "4", "", "", `jsonrpc must be "2.0"`},
		{`{"jsonrpc":"2.0","id":true,"method":"GetTask"}`, "", "", "", "id must be a string, a number or null"},
		{`{"jsonrpc":"2.0","id":[1],"method":"GetTask"}`, "", "", "", "id must be a string, a number or null"},
		{`{"jsonrpc":"2.0","id":5}`, "5", "", "", "method must be a string"},
		{`{"jsonrpc":"2.0","id":5,"method":7}`, "5", "", "", "method must be a string"},
		{`{"jsonrpc":"2.0","id":5,"method":"GetTask","params":[1]}`, "5", "", "", "params must be an object"},
		{`{"jsonrpc":"2.0","id":5,"method":"GetTask","params":"x"}`, "5", "", "", "params must be an object"},
		{`{"JSONRPC":"2.0","jsonrpc":"2.0","id":5,"method":"GetTask"}`, "5", "", "", "member names are case-sensitive"},
		{`{"jsonrpc":"2.0","Id":5,"method":"GetTask"}`, "", "", "", "member names are case-sensitive"},
		{`{"jsonrpc":"2.0","id":5,"method":"GetTask","Params":{}}`, "5", "", "", "member names are case-sensitive"},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			q, bad := parseEnvelope([]byte(tc.in))
			if string(q.id) != tc.id {
				t.Fatalf("id %q, want %q", q.id, tc.id)
			}
			if tc.err != "" {
				if bad == nil || bad.Code != codeInvalidRequest || bad.Message != tc.err {
					t.Fatalf("refusal %+v, want -32600 %q", bad, tc.err)
				}
				return
			}
			if bad != nil {
				t.Fatalf("refused: %+v", bad)
			}
			if q.method() != tc.method || string(q.params) != tc.params {
				t.Fatalf("method %q params %q, want %q %q", q.method(), q.params, tc.method, tc.params)
			}
		})
	}
}

// TestRPCErrorEncoderRows writes every row of the error table, including
// those no server code path raises, into one golden file (-32005 is also
// raised and golden-tested in judge_test.go):
//
//   - -32006 InvalidAgentResponse: only a host acting as A2A client
//     raises it (OpenWOP interop map, a2a.errors), never this server;
//   - -32008 ExtensionSupportRequired: the card lists no required
//     extension, so it can never apply (OpenWOP interop map, a2a.fields).
func TestRPCErrorEncoderRows(t *testing.T) {
	errs, err := newErrorTable((*interopmap.Map)(mapping.Builtin()))
	if err != nil {
		t.Fatal(err)
	}
	withMeta := errs.versionNotSupported("1.0,0.3")
	withMeta.Metadata["requested"] = "9.9"
	rows := []struct {
		id string
		e  *Error
	}{
		{`1`, errs.taskNotFound()},
		{`2`, errs.notCancelable()},
		{`3`, errs.pushNotSupported()},
		{`4`, errs.unsupported("not supported")},
		{`5`, errs.contentType("media type image/x-unknown is not accepted")},
		{`6`, errs.row(-32006, "the agent answered with an invalid response")},
		{`7`, errs.extendedCardNotConfigured()},
		{`8`, errs.extensionRequired("extension https://ext.example/required is required")},
		{`9`, withMeta},
		{`"p1"`, errs.invalidParams("message.parts[0]", "a part needs exactly one of text, raw, url, data")},
		{`"p2"`, errs.invalidParams("", "params do not match the method's request")},
		{`null`, parseError()},
		{`null`, invalidRequest("request must be a JSON object")},
		{`10`, methodNotFound()},
		{`11`, internalError()},
		{`12`, unauthenticated()},
		{`13`, forbidden()},
		{`null`, payloadTooLarge()},
		{`14`, &Error{Code: -32000, Message: "quote \" backslash \\ newline \n tab \t <html> & \u2028 \x00 bad\xff"}},
	}
	var out bytes.Buffer
	for _, r := range rows {
		line := appendRPCError(nil, []byte(r.id), r.e)
		if !json.Valid(line) {
			t.Fatalf("invalid JSON: %s", line)
		}
		out.Write(line)
		out.WriteByte('\n')
	}
	rpcGolden(t, "encoder_rows", out.Bytes())
}

// TestAppendJSONStringMatchesEncodingJSON: the hand-written string encoder
// produces exactly encoding/json's bytes.
func TestAppendJSONStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", "\"\\/", "\x00\x01\x1f\x7f", "<>&", "\u2028\u2029", "é中🙂", "bad\xffutf8\xc3", "\r\n\t\b\f"} {
		want, _ := json.Marshal(s)
		if got := appendJSONString(nil, s); !bytes.Equal(got, want) {
			t.Errorf("%q: %s, want %s", s, got, want)
		}
	}
}

func FuzzAppendJSONString(f *testing.F) {
	f.Add("a\"b\\c\x00<&>\u2028\xff")
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendJSONString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("%q: %s, want %s", s, got, want)
		}
	})
}

func TestWriteJSONRPCError(t *testing.T) {
	errs, err := newErrorTable((*interopmap.Map)(mapping.Builtin()))
	if err != nil {
		t.Fatal(err)
	}
	rateLimited := &Error{Code: -32000, GRPC: "RESOURCE_EXHAUSTED", HTTP: 429, Reason: "RATE_LIMITED", Message: "slow down"}
	cases := []struct {
		name      string
		id        json.RawMessage
		err       error
		preset    string // WWW-Authenticate set by the middleware
		status    int
		challenge string
		body      string
	}{
		{"unauthenticated", json.RawMessage(`7`), fmt.Errorf("gateway: %w", interop.ErrUnauthenticated), "", 401, "Bearer",
			`{"jsonrpc":"2.0","id":7,"error":{"code":-31401,"message":"authentication required","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"UNAUTHENTICATED","domain":"a2a-protocol.org"}]}}`},
		{"own challenge kept", nil, interop.ErrUnauthenticated, `Bearer realm="x"`, 401, `Bearer realm="x"`,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-31401,"message":"authentication required","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"UNAUTHENTICATED","domain":"a2a-protocol.org"}]}}`},
		{"forbidden", json.RawMessage(`"a"`), interop.ErrForbidden, "", 403, "",
			`{"jsonrpc":"2.0","id":"a","error":{"code":-31403,"message":"not allowed","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"PERMISSION_DENIED","domain":"a2a-protocol.org"}]}}`},
		{"body limit", nil, &http.MaxBytesError{Limit: 10}, "", 413, "",
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"request body too large","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"INVALID_REQUEST","domain":"a2a-protocol.org"}]}}`},
		{"rate limit", json.RawMessage(`1`), rateLimited, "", 429, "",
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"slow down","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"RATE_LIMITED","domain":"a2a-protocol.org"}]}}`},
		{"a row error", json.RawMessage(`2`), errs.taskNotFound(), "", 200, "",
			`{"jsonrpc":"2.0","id":2,"error":{"code":-32001,"message":"task not found","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org"}]}}`},
		{"anything else is internal, text withheld", json.RawMessage(`3`), errors.New("db password=hunter2"), "", 200, "",
			`{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"internal error","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"INTERNAL_ERROR","domain":"a2a-protocol.org"}]}}`},
		{"an invalid id becomes null", json.RawMessage(`{"x":1}`), errs.taskNotFound(), "", 200, "",
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"task not found","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org"}]}}`},
		{"a truncated id becomes null", json.RawMessage(`"ab`), errs.taskNotFound(), "", 200, "",
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"task not found","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org"}]}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			if tc.preset != "" {
				rec.Header().Set("WWW-Authenticate", tc.preset)
			}
			WriteJSONRPCError(rec, tc.id, tc.err)
			if rec.Code != tc.status || rec.Header().Get("WWW-Authenticate") != tc.challenge || rec.Body.String() != tc.body {
				t.Fatalf("HTTP %d %q %s\nwant HTTP %d %q %s", rec.Code, rec.Header().Get("WWW-Authenticate"), rec.Body, tc.status, tc.challenge, tc.body)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
				t.Fatalf("Content-Type %q", ct)
			}
		})
	}
}

func TestRPCStatus(t *testing.T) {
	errs, err := newErrorTable((*interopmap.Map)(mapping.Builtin()))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		e      *Error
		before bool
		want   int
	}{
		{unauthenticated(), false, 401},
		{forbidden(), true, 403},
		{forbidden(), false, 200}, // an ineligible approver, mid-dispatch
		{payloadTooLarge(), true, 413},
		{errs.taskNotFound(), true, 200}, // HTTP 404 is the REST binding's
		{errs.versionNotSupported("1.0"), true, 200},
		{internalError(), false, 200},
		{methodNotFound(), true, 200},
	}
	for _, tc := range cases {
		if got := rpcStatus(tc.e, tc.before); got != tc.want {
			t.Errorf("%d (before dispatch %v): HTTP %d, want %d", tc.e.Code, tc.before, got, tc.want)
		}
	}
}

// TestRPCBodyReadFailure: a body that breaks off is answered -32700, not
// a server error.
func TestRPCBodyReadFailure(t *testing.T) {
	e := newRPCEnv(t)
	r := httptest.NewRequest(http.MethodPost, rpcPath, iotest.ErrReader(io.ErrUnexpectedEOF))
	r.Header.Set("Authorization", "Bearer "+rpcKeyAcme)
	rec := httptest.NewRecorder()
	e.handler.ServeHTTP(rec, r)
	wantRPCError(t, rpcReply{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}, 200, -32700, "PARSE_ERROR")
}

// TestRPCDeclaredLengthOverLimit: a Content-Length over the limit is
// refused before the body is read — after authentication, which comes
// first.
func TestRPCDeclaredLengthOverLimit(t *testing.T) {
	e := newRPCEnv(t)
	for _, tc := range []struct {
		key    string
		status int
		code   int
		reason string
	}{
		{rpcKeyAcme, 413, -32600, "INVALID_REQUEST"},
		{"", 401, codeUnauthenticated, "UNAUTHENTICATED"},
	} {
		r := httptest.NewRequest(http.MethodPost, rpcPath, iotest.ErrReader(errors.New("must not be read")))
		if tc.key != "" {
			r.Header.Set("Authorization", "Bearer "+tc.key)
		}
		r.ContentLength = rpcMaxBody + 1
		rec := httptest.NewRecorder()
		e.handler.ServeHTTP(rec, r)
		wantRPCError(t, rpcReply{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}, tc.status, tc.code, tc.reason)
	}
}

// TestRPCBodyLimitBoundary: a body of exactly MaxBodyBytes is read, one
// byte more is 413.
func TestRPCBodyLimitBoundary(t *testing.T) {
	e := newRPCEnv(t)
	base := rpcBody(1, methodListTasks, map[string]any{"pageToken": ""})
	pad := func(n int) string { return base + strings.Repeat(" ", n-len(base)) }
	for _, tc := range []struct {
		size   int
		status int
	}{{rpcMaxBody, 200}, {rpcMaxBody + 1, 413}} {
		for _, declared := range []bool{true, false} {
			c := acme(pad(tc.size))
			r := c.request(t.Context(), rpcPath)
			if !declared {
				r.ContentLength = -1 // chunked: only reading tells
			}
			rec := httptest.NewRecorder()
			e.handler.ServeHTTP(rec, r)
			if rec.Code != tc.status {
				t.Fatalf("%d bytes (length declared %v): HTTP %d, want %d: %s", tc.size, declared, rec.Code, tc.status, rec.Body)
			}
		}
	}
}

// TestRPCEveryVerbButPost: every other verb is 405 with Allow: POST.
func TestRPCEveryVerbButPost(t *testing.T) {
	e := newRPCEnv(t)
	for _, verb := range []string{http.MethodGet, http.MethodPut, http.MethodDelete, http.MethodPatch, http.MethodOptions, http.MethodHead} {
		res := e.do(t, rpcCall{verb: verb, key: rpcKeyAcme, body: rpcBody(1, methodListTasks, nil)})
		if res.status != http.StatusMethodNotAllowed || res.header.Get("Allow") != "POST" {
			t.Fatalf("%s: HTTP %d Allow %q", verb, res.status, res.header.Get("Allow"))
		}
		if verb != http.MethodHead {
			wantRPCError(t, res, 405, -32600, "INVALID_REQUEST")
		}
	}
}

// noFlushWriter hides the recorder's Flush, like a middleware wrapper that
// forgets Unwrap.
type noFlushWriter struct{ w http.ResponseWriter }

func (n noFlushWriter) Header() http.Header         { return n.w.Header() }
func (n noFlushWriter) Write(b []byte) (int, error) { return n.w.Write(b) }
func (n noFlushWriter) WriteHeader(code int)        { n.w.WriteHeader(code) }

// TestRPCStreamWithoutFlusher: when the ResponseWriter cannot flush, a
// streaming method is answered with a plain -32603 instead of a stream
// that would arrive all at once.
func TestRPCStreamWithoutFlusher(t *testing.T) {
	e := newRPCEnv(t)
	c := acme(rpcBody(1, methodSendStreamingMessage, map[string]any{"message": rpcMessage("m-nf", "conformance-noop", "x")}))
	rec := httptest.NewRecorder()
	e.handler.ServeHTTP(noFlushWriter{rec}, c.request(t.Context(), rpcPath))
	res := rpcReply{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
	wantRPCError(t, res, 200, -32603, "INTERNAL_ERROR")
	if rec.Header().Get("Cache-Control") != "" {
		t.Fatalf("SSE headers left behind: %v", rec.Header())
	}
}

// TestRPCUnauthenticatedNotification: the body of an unauthenticated
// request is never read, so a notification cannot be told from a request:
// 401 with a challenge and a JSON-RPC error whose id is null.
func TestRPCUnauthenticatedNotification(t *testing.T) {
	e := newRPCEnv(t)
	for _, body := range []io.Reader{
		strings.NewReader(rpcBody(nil, methodListTasks, nil)),
		iotest.ErrReader(errors.New("the body of an unauthenticated request was read")),
	} {
		r := httptest.NewRequest(http.MethodPost, rpcPath, body)
		rec := httptest.NewRecorder()
		e.handler.ServeHTTP(rec, r)
		res := rpcReply{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
		out := wantRPCError(t, res, http.StatusUnauthorized, codeUnauthenticated, "UNAUTHENTICATED")
		if string(out.ID) != "null" || res.header.Get("WWW-Authenticate") != "Bearer" {
			t.Fatalf("id %s, WWW-Authenticate %q", out.ID, res.header.Get("WWW-Authenticate"))
		}
	}
}
