package delegate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/wopinterop/wopinterop/egress"
	"github.com/wopinterop/wopinterop/internal/golden"
	"github.com/wopinterop/wopinterop/outbound"
)

// connect returns a connection to an agent serving card, answering rpc.
func connect(t *testing.T, card func(a *agent) *wire.AgentCard, rpc func(w http.ResponseWriter, r *http.Request, body []byte), opts ...fixtureOpt) (*fixture, *Conn) {
	t.Helper()
	a := newAgent(t)
	a.serveCard(t, card(a))
	a.setRPC(rpc)
	f := newFixture(t, a, opts...)
	conn, err := f.client.Connect(context.Background(), runID, "summarizer")
	if err != nil {
		t.Fatal(err)
	}
	return f, conn
}

func defaultCard(a *agent) *wire.AgentCard { return testCard(a) }

func tenantCard(tenant string) func(a *agent) *wire.AgentCard {
	return func(a *agent) *wire.AgentCard {
		c := testCard(a)
		c.SupportedInterfaces[0].Tenant = tenant
		return c
	}
}

// sseReply answers with an SSE stream of JSON-RPC responses, one per
// result, echoing the request's id.
func sseReply(results ...string) func(w http.ResponseWriter, r *http.Request, body []byte) {
	return func(w http.ResponseWriter, r *http.Request, body []byte) {
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(body, &req)
		w.Header().Set("Content-Type", "text/event-stream")
		for _, res := range results {
			fmt.Fprintf(w, ": keep-alive\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":%s}\n\n", req.ID, res)
		}
	}
}

// TestEveryRequestCarriesVersionTenantCredential: every method sends the
// negotiated A2A-Version, the credential and the interface's tenant — not
// the tenant a caller put on the request, not one from the context — and
// only the service parameters a caller may pass.
func TestEveryRequestCarriesVersionTenantCredential(t *testing.T) {
	task := `{"id":"task-1","contextId":"ctx-1","status":{"state":"TASK_STATE_WORKING"}}`
	f, conn := connect(t, tenantCard("t-42"), func(w http.ResponseWriter, r *http.Request, body []byte) {
		var req struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(body, &req)
		switch req.Method {
		case methodSendMessage:
			rpcReply(completedTask)(w, r, body)
		case methodStreamMessage, methodSubscribe:
			sseReply(`{"task":`+task+`}`, `{"statusUpdate":{"taskId":"task-1","contextId":"ctx-1","status":{"state":"TASK_STATE_COMPLETED"}}}`)(w, r, body)
		default:
			rpcReply(task)(w, r, body)
		}
	}, withCredential("Bearer", "tok-1"))
	ctx := a2aclient.AttachServiceParams(wire.AttachTenant(context.Background(), "context-tenant"), a2aclient.ServiceParams{
		"authorization":  {"Bearer stolen"},
		"a2a-version":    {"0.3"},
		"a2a-extensions": {"https://ext.example/v1"},
		"x-forwarded":    {"me"},
	})
	r := conn.remote
	if _, err := r.SendMessage(ctx, &wire.SendMessageRequest{Tenant: "caller-tenant", Message: sendReq("hi").Message}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.GetTask(ctx, &wire.GetTaskRequest{ID: "task-1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.CancelTask(ctx, &wire.CancelTaskRequest{ID: "task-1", Tenant: "caller-tenant"}); err != nil {
		t.Fatal(err)
	}
	for name, events := range map[string]func() int{
		"stream": func() int {
			n := 0
			for _, err := range r.SendStreamingMessage(ctx, sendReq("hi")) {
				if err != nil {
					t.Fatal(err)
				}
				n++
			}
			return n
		},
		"subscribe": func() int {
			n := 0
			for _, err := range r.SubscribeToTask(ctx, &wire.SubscribeToTaskRequest{ID: "task-1"}) {
				if err != nil {
					t.Fatal(err)
				}
				n++
			}
			return n
		},
	} {
		if n := events(); n != 2 {
			t.Fatalf("%s: %d events, want 2", name, n)
		}
	}
	got := f.agent.requests()
	if len(got) != 5 {
		t.Fatalf("%d requests, want 5", len(got))
	}
	for _, s := range got {
		var env struct {
			Method string `json:"method"`
			Params struct {
				Tenant string `json:"tenant"`
			} `json:"params"`
		}
		if err := json.Unmarshal(s.body, &env); err != nil {
			t.Fatal(err)
		}
		h := s.header
		if h.Get("A2A-Version") != "1.0" || len(h.Values("A2A-Version")) != 1 {
			t.Errorf("%s: A2A-Version %q", env.Method, h.Values("A2A-Version"))
		}
		if h.Get("Authorization") != "Bearer tok-1" || len(h.Values("Authorization")) != 1 {
			t.Errorf("%s: Authorization %q", env.Method, h.Values("Authorization"))
		}
		if env.Params.Tenant != "t-42" {
			t.Errorf("%s: tenant %q, want the interface's", env.Method, env.Params.Tenant)
		}
		if h.Get("A2A-Extensions") != "https://ext.example/v1" || h.Get("X-Forwarded") != "" {
			t.Errorf("%s: service parameters %v", env.Method, h)
		}
	}
	if f.creds.calls != 6 {
		t.Errorf("the credential was resolved %d times, want once at Connect and once per request", f.creds.calls)
	}
}

// TestRequestGolden: the bytes of a SendMessage request as the agent
// receives them.
func TestRequestGolden(t *testing.T) {
	f, conn := connect(t, tenantCard("t-42"), rpcReply(completedTask))
	req := &wire.SendMessageRequest{
		Message: &wire.Message{ID: "msg-1", ContextID: "ctx-1", Role: wire.MessageRoleUser,
			Parts:    wire.ContentParts{wire.NewTextPart("Summarize <this> & that"), wire.NewDataPart(map[string]any{"n": 1})},
			Metadata: map[string]any{"openwop": map[string]any{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}},
		Config: &wire.SendMessageConfig{AcceptedOutputModes: []string{"text/plain"}},
	}
	if _, err := conn.remote.SendMessage(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	got := f.agent.requests()
	golden.Check(t, "send_message_request.json", append(got[0].body, '\n'))
}

func TestAppendRequestGolden(t *testing.T) {
	got := appendRequest(nil, `wop-"1"`, "GetTask", []byte(`{"id":"t<1>"}`))
	golden.Check(t, "append_request.json", append(got, '\n'))
}

// TestPeerErrors: errors are read on any status, by code or by ErrorInfo
// reason, whatever shape data has; nothing of the peer's text survives.
func TestPeerErrors(t *testing.T) {
	const secret = "SECRET-PEER-TEXT"
	info := func(reason, meta string) string {
		return `[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"` + reason + `","domain":"a2a-protocol.org"` + meta + `}]`
	}
	rpcErr := func(code int, data string) string {
		d := ""
		if data != "" {
			d = `,"data":` + data
		}
		return `{"jsonrpc":"2.0","id":$ID,"error":{"code":` + fmt.Sprint(code) + `,"message":"` + secret + `"` + d + `}}`
	}
	for _, tc := range []struct {
		name       string
		status     int
		ctype      string
		body       string
		kind       error
		code       int
		reason     string
		httpStatus int
		supported  []string
		projStatus int
		projCode   string
	}{
		{name: "array data", status: 200, body: rpcErr(-32001, info("TASK_NOT_FOUND", "")), kind: wire.ErrTaskNotFound, code: -32001, reason: "TASK_NOT_FOUND", httpStatus: 200, projStatus: 404, projCode: "not_found"},
		{name: "reason over a generic code", status: 200, body: rpcErr(-32603, info("TASK_NOT_CANCELABLE", "")), kind: wire.ErrTaskNotCancelable, code: -32002, reason: "TASK_NOT_CANCELABLE", httpStatus: 200, projStatus: 409, projCode: "run_terminal"},
		{name: "legacy object with reason", status: 200, body: rpcErr(-32000, `{"reason":"UNSUPPORTED_OPERATION","taskId":"x"}`), kind: wire.ErrUnsupportedOperation, code: -32004, reason: "UNSUPPORTED_OPERATION", httpStatus: 200, projStatus: 422, projCode: "capability_required"},
		{name: "legacy object without reason", status: 200, body: rpcErr(-32001, `{"taskId":"x"}`), kind: wire.ErrTaskNotFound, code: -32001, httpStatus: 200, projStatus: 404, projCode: "not_found"},
		{name: "non-string metadata", status: 200, body: rpcErr(-32009, info("VERSION_NOT_SUPPORTED", `,"metadata":{"supportedVersions":"1.0, 2.0,bogus","retryAfter":3,"nested":{"a":[1]}}`)), kind: wire.ErrVersionNotSupported, code: -32009, reason: "VERSION_NOT_SUPPORTED", httpStatus: 200, supported: []string{"1.0", "2.0"}, projStatus: 400, projCode: "interop_version_unsupported"},
		{name: "401 with a JSON-RPC body", status: 401, ctype: "application/json", body: rpcErr(-31401, info("UNAUTHENTICATED", "")), kind: wire.ErrUnauthenticated, code: -31401, reason: "UNAUTHENTICATED", httpStatus: 401, projStatus: 422, projCode: "credential_required"},
		{name: "503 with a JSON-RPC body, null id", status: 503, ctype: "application/json", body: strings.Replace(rpcErr(-32000, info("SERVER_ERROR", "")), "$ID", "null", 1), kind: wire.ErrServerError, code: -32000, reason: "SERVER_ERROR", httpStatus: 503, projStatus: 503, projCode: "runner_unavailable"},
		{name: "403 without a body", status: 403, kind: wire.ErrUnauthorized, code: -31403, httpStatus: 403, projStatus: 403, projCode: "credential_forbidden"},
		{name: "500 with HTML", status: 500, ctype: "text/html", body: "<html>" + secret + "</html>", kind: wire.ErrServerError, code: -32000, httpStatus: 500, projStatus: 503, projCode: "runner_unavailable"},
		{name: "unknown code and reason", status: 200, body: rpcErr(-32099, info("UNKNOWN_ERROR", "")), code: -32099, reason: "UNKNOWN_ERROR", httpStatus: 200, projStatus: 503, projCode: "runner_unavailable"},
		{name: "invalid params, no data", status: 200, body: rpcErr(-32602, ""), kind: wire.ErrInvalidParams, code: -32602, httpStatus: 200, projStatus: 400, projCode: "validation_error"},
		{name: "free text reason dropped", status: 200, body: rpcErr(-32001, `{"reason":"see http://evil.example"}`), kind: wire.ErrTaskNotFound, code: -32001, httpStatus: 200, projStatus: 404, projCode: "not_found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, conn := connect(t, defaultCard, rawReply(tc.status, tc.ctype, tc.body))
			_, err := conn.remote.GetTask(context.Background(), &wire.GetTaskRequest{ID: "task-1"})
			var pe *PeerError
			if !errors.As(err, &pe) {
				t.Fatalf("%v, want a *PeerError", err)
			}
			if tc.kind != nil && !errors.Is(err, tc.kind) || tc.kind == nil && pe.Unwrap() != nil {
				t.Fatalf("%v: kind %v, want %v", err, pe.Unwrap(), tc.kind)
			}
			if pe.Code != tc.code || pe.Reason != tc.reason || pe.HTTPStatus != tc.httpStatus || !reflect.DeepEqual(pe.SupportedVersions, tc.supported) {
				t.Fatalf("%+v", pe)
			}
			if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "evil") {
				t.Fatalf("the error relays the peer's text: %v", err)
			}
			e := ProjectError(runID, err)
			if e.Status != tc.projStatus || e.Code != tc.projCode || e.Details["runId"] != runID || e.Details["protocol"] != "a2a" {
				t.Fatalf("projection %+v", e)
			}
			if b, _ := json.Marshal(map[string]any{"m": e.Message, "d": e.Details}); strings.Contains(string(b), secret) {
				t.Fatalf("the projection relays the peer's text: %s", b)
			}
			if tc.supported != nil && !reflect.DeepEqual(e.Details["supportedVersions"], tc.supported) {
				t.Fatalf("details %v", e.Details)
			}
		})
	}
}

// TestMalformedResults: a response of the wrong shape is
// InvalidAgentResponseError (-32006), projected validation_error, and
// nothing of it reaches the caller.
func TestMalformedResults(t *testing.T) {
	ok := `{"jsonrpc":"2.0","id":$ID,"result":`
	for name, body := range map[string]string{
		"not JSON":                "{",
		"not an object":           `[]`,
		"no jsonrpc":              `{"id":$ID,"result":` + completedTask + `}`,
		"wrong id":                `{"jsonrpc":"2.0","id":"other","result":` + completedTask + `}`,
		"numeric id":              `{"jsonrpc":"2.0","id":1,"result":` + completedTask + `}`,
		"no id":                   `{"jsonrpc":"2.0","result":` + completedTask + `}`,
		"result and error":        ok + completedTask + `,"error":{"code":-32001,"message":"x"}}`,
		"no result":               `{"jsonrpc":"2.0","id":$ID}`,
		"string result":           ok + `"done"}`,
		"0.3 flat result":         ok + `{"kind":"task","id":"t","contextId":"c","status":{"state":"completed"}}}`,
		"unknown kind":            ok + `{"job":{}}}`,
		"two kinds":               ok + `{"task":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"}},"message":{"messageId":"m","role":"ROLE_AGENT","parts":[]}}}`,
		"status update in send":   ok + `{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}}`,
		"task without id":         ok + `{"task":{"contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}}`,
		"task without state":      ok + `{"task":{"id":"t","contextId":"c","status":{}}}}`,
		"task id in another case": ok + `{"task":{"ID":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}}`,
		"long s":                  ok + `{"message":{"meſsageId":"m","role":"ROLE_AGENT","parts":[]}}}`,
		"duplicate member":        ok + `{"task":{"id":"t","id":"u","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}}`,
		"message without role":    ok + `{"message":{"messageId":"m","parts":[{"text":"x"}]}}}`,
		"part without content":    ok + `{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"mediaType":"text/plain"}]}}}`,
		"artifact without id":     ok + `{"task":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"},"artifacts":[{"parts":[{"text":"x"}]}]}}}`,
		"wrong type":              ok + `{"task":{"id":7,"contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}}`,
		"error without code":      `{"jsonrpc":"2.0","id":$ID,"error":{"message":"x"}}`,
		"fractional code":         `{"jsonrpc":"2.0","id":$ID,"error":{"code":-32001.5,"message":"x"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, conn := connect(t, defaultCard, rawReply(200, "application/json", body))
			res, err := conn.remote.SendMessage(context.Background(), sendReq("hi"))
			var ie *InvalidResponseError
			if !errors.As(err, &ie) || !errors.Is(err, wire.ErrInvalidAgentResponse) || res != nil {
				t.Fatalf("%v (%v), want an *InvalidResponseError and no result", err, res)
			}
			wantProjection(t, err, http.StatusBadRequest, outbound.CodeValidation, map[string]any{"protocol": "a2a", "runId": runID})
		})
	}
}

func TestResponseSizeCap(t *testing.T) {
	pad := strings.Repeat("x", 2000)
	body := `{"jsonrpc":"2.0","id":$ID,"result":{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"` + pad + `"}]}}}`
	limit := int64(len(strings.Replace(body, "$ID", `"wop-1"`, 1)))
	_, conn := connect(t, defaultCard, rawReply(200, "application/json", body), withLimits(Limits{MaxResponseBytes: limit}))
	if _, err := conn.remote.SendMessage(context.Background(), sendReq("hi")); err != nil {
		t.Fatalf("a response of exactly MaxResponseBytes: %v", err)
	}
	// One byte more is over (a new connection: its first id is "wop-1"
	// again).
	_, conn = connect(t, defaultCard, rawReply(200, "application/json", strings.Replace(body, pad, pad+"x", 1)), withLimits(Limits{MaxResponseBytes: limit}))
	_, err := conn.remote.SendMessage(context.Background(), sendReq("hi"))
	if !errors.Is(err, wire.ErrInvalidAgentResponse) || !errors.Is(err, egress.ErrTooLarge) {
		t.Fatalf("%v, want an invalid response over the limit", err)
	}
}

func TestStreams(t *testing.T) {
	working := `{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}`
	t.Run("events in order", func(t *testing.T) {
		artifact := `{"artifactUpdate":{"taskId":"t","contextId":"c","artifact":{"artifactId":"a","parts":[{"text":"x"}]},"lastChunk":true}}`
		_, conn := connect(t, defaultCard, sseReply(`{"task":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_SUBMITTED"}}}`, working, artifact))
		var kinds []string
		for ev, err := range conn.remote.SendStreamingMessage(context.Background(), sendReq("hi")) {
			if err != nil {
				t.Fatal(err)
			}
			kinds = append(kinds, fmt.Sprintf("%T", ev))
		}
		want := []string{"*a2a.Task", "*a2a.TaskStatusUpdateEvent", "*a2a.TaskArtifactUpdateEvent"}
		if !reflect.DeepEqual(kinds, want) {
			t.Fatalf("%v", kinds)
		}
	})
	t.Run("malformed event ends the stream", func(t *testing.T) {
		_, conn := connect(t, defaultCard, sseReply(working, `{"statusUpdate":{"taskId":"t","status":{"state":"TASK_STATE_WORKING"}}}`, working))
		n := 0
		var last error
		for _, err := range conn.remote.SendStreamingMessage(context.Background(), sendReq("hi")) {
			n++
			last = err
		}
		if n != 2 || !errors.Is(last, wire.ErrInvalidAgentResponse) {
			t.Fatalf("%d items, last %v", n, last)
		}
	})
	t.Run("error event", func(t *testing.T) {
		_, conn := connect(t, defaultCard, func(w http.ResponseWriter, r *http.Request, body []byte) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: {\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32001,\"message\":\"gone\"}}\n\n")
		})
		for _, err := range conn.remote.SubscribeToTask(context.Background(), &wire.SubscribeToTaskRequest{ID: "t"}) {
			if !errors.Is(err, wire.ErrTaskNotFound) {
				t.Fatalf("%v", err)
			}
		}
	})
	t.Run("a JSON answer to a stream request", func(t *testing.T) {
		_, conn := connect(t, defaultCard, rawReply(400, "application/json", `{"jsonrpc":"2.0","id":$ID,"error":{"code":-32004,"message":"no"}}`))
		for _, err := range conn.remote.SendStreamingMessage(context.Background(), sendReq("hi")) {
			var pe *PeerError
			if !errors.As(err, &pe) || pe.HTTPStatus != 400 || !errors.Is(err, wire.ErrUnsupportedOperation) {
				t.Fatalf("%v", err)
			}
		}
	})
	t.Run("event over the limit", func(t *testing.T) {
		big := `{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"` + strings.Repeat("y", 5000) + `"}]}}`
		_, conn := connect(t, defaultCard, sseReply(working, big), withLimits(Limits{MaxResponseBytes: 4096}))
		var errs []error
		for _, err := range conn.remote.SendStreamingMessage(context.Background(), sendReq("hi")) {
			errs = append(errs, err)
		}
		if len(errs) != 2 || errs[0] != nil || !errors.Is(errs[1], egress.ErrTooLarge) || !errors.Is(errs[1], wire.ErrInvalidAgentResponse) {
			t.Fatalf("%v", errs)
		}
	})
}

// TestEgressGuard: a card or an interface at an address the guard does not
// allow is never contacted, and a redirect is never followed.
func TestEgressGuard(t *testing.T) {
	t.Run("private card address", func(t *testing.T) {
		a := newAgent(t)
		a.serveCard(t, testCard(a))
		g, _ := egress.NewGuard(egress.GuardOptions{}) // nothing allowlisted
		c, err := New(Deps{Policy: a2aPolicy(t, false), Events: newSink(), Guard: g, Admissions: []Admission{admission(a)}}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Connect(context.Background(), runID, "summarizer")
		var re *egress.RefusedError
		if !errors.As(err, &re) {
			t.Fatalf("%v, want the guard's refusal", err)
		}
		if len(a.all()) != 0 {
			t.Fatal("the private address was contacted")
		}
		wantProjection(t, err, http.StatusForbidden, outbound.CodeForbidden, map[string]any{"protocol": "a2a", "runId": runID})
	})
	t.Run("interface at a private address", func(t *testing.T) {
		a := newAgent(t)
		card := testCard(a)
		card.SupportedInterfaces[0].URL = "http://10.1.2.3/rpc"
		a.serveCard(t, card)
		f := newFixture(t, a)
		_, err := f.client.Connect(context.Background(), runID, "summarizer")
		if !errors.Is(err, egress.ErrRefused) {
			t.Fatalf("%v, want the guard's refusal", err)
		}
		wantProjection(t, err, http.StatusForbidden, outbound.CodeForbidden, map[string]any{"protocol": "a2a", "runId": runID})
	})
	t.Run("card redirect", func(t *testing.T) {
		final := newAgent(t)
		final.serveCard(t, testCard(final))
		a := newAgent(t)
		a.setCard(func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, final.cardURL(), http.StatusFound) })
		g, _ := egress.NewGuard(egress.GuardOptions{AllowOrigins: []string{a.srv.URL, final.srv.URL}})
		c, err := New(Deps{Policy: a2aPolicy(t, false), Events: newSink(), Guard: g, Admissions: []Admission{admission(a)}}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Connect(context.Background(), runID, "summarizer")
		var rd *egress.RedirectError
		if !errors.As(err, &rd) || rd.StatusCode != http.StatusFound {
			t.Fatalf("%v, want a refused redirect", err)
		}
		if len(final.all()) != 0 {
			t.Fatal("the redirect was followed")
		}
		wantProjection(t, err, http.StatusServiceUnavailable, outbound.CodeRunnerUnavailable, map[string]any{"protocol": "a2a", "runId": runID})
	})
	t.Run("interface redirect", func(t *testing.T) {
		final := newAgent(t)
		final.setRPC(rpcReply(completedTask))
		_, conn := connect(t, defaultCard, func(w http.ResponseWriter, r *http.Request, body []byte) {
			http.Redirect(w, r, final.rpcURL(), http.StatusTemporaryRedirect)
		})
		_, err := conn.remote.SendMessage(context.Background(), sendReq("hi"))
		if !errors.As(err, new(*egress.RedirectError)) {
			t.Fatalf("%v, want a refused redirect", err)
		}
		if len(final.all()) != 0 {
			t.Fatal("the redirect was followed")
		}
	})
}
