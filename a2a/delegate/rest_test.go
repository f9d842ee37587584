package delegate

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/wopinterop/wopinterop/egress"
)

func restCard(tenant string) func(a *agent) *wire.AgentCard {
	return func(a *agent) *wire.AgentCard {
		c := testCard(a)
		c.SupportedInterfaces[0] = &wire.AgentInterface{URL: a.srv.URL + "/rest", ProtocolBinding: wire.TransportProtocolHTTPJSON, ProtocolVersion: "1.0", Tenant: tenant}
		return c
	}
}

// TestRESTRequests: over HTTP+JSON every request carries the connection's
// headers only and the interface's tenant as its path prefix (A2A 1.0
// §10), and results, errors and sizes are judged as over JSON-RPC.
func TestRESTRequests(t *testing.T) {
	var reply func(w http.ResponseWriter, r *http.Request)
	f, conn := connect(t, restCard("t-7"), func(w http.ResponseWriter, r *http.Request, _ []byte) { reply(w, r) }, withCredential("Bearer", "tok-2"), withLimits(Limits{MaxResponseBytes: 2048}))
	ctx := a2aclient.AttachServiceParams(context.Background(), a2aclient.ServiceParams{
		"authorization": {"Bearer stolen"}, "a2a-extensions": {"https://ext.example/v1"}, "x-other": {"1"},
	})
	answer := func(status int, ctype, body string) {
		reply = func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", ctype)
			w.WriteHeader(status)
			_, _ = w.Write([]byte(body))
		}
	}

	answer(200, "application/json", strings.TrimSuffix(strings.TrimPrefix(completedTask, `{"task":`), "}"))
	if _, err := conn.remote.GetTask(ctx, &wire.GetTaskRequest{ID: "task-1", Tenant: "caller"}); err != nil {
		t.Fatal(err)
	}
	got := f.agent.requests()
	s := got[len(got)-1]
	if s.path != "/rest/t-7/tasks/task-1" {
		t.Fatalf("path %q, want the interface's tenant as prefix", s.path)
	}
	if s.header.Get("A2A-Version") != "1.0" || s.header.Get("Authorization") != "Bearer tok-2" ||
		s.header.Get("A2A-Extensions") != "https://ext.example/v1" || s.header.Get("X-Other") != "" {
		t.Fatalf("headers %v", s.header)
	}

	answer(200, "application/json", `{"id":"task-1","status":{"state":"TASK_STATE_WORKING"}}`)
	if _, err := conn.remote.GetTask(ctx, &wire.GetTaskRequest{ID: "task-1"}); !errors.Is(err, wire.ErrInvalidAgentResponse) {
		t.Fatalf("a task without contextId: %v", err)
	}
	answer(200, "application/json", `{"id":"task-1","contextId":"c","status":{"state":"TASK_STATE_WORKING"},"metadata":{"pad":"`+strings.Repeat("x", 3000)+`"}}`)
	if _, err := conn.remote.GetTask(ctx, &wire.GetTaskRequest{ID: "task-1"}); !errors.Is(err, egress.ErrTooLarge) || !errors.Is(err, wire.ErrInvalidAgentResponse) {
		t.Fatalf("an oversized body: %v", err)
	}
	answer(404, "application/json", `{"error":{"code":404,"status":"NOT_FOUND","message":"SECRET","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org"}]}}`)
	_, err := conn.remote.GetTask(ctx, &wire.GetTaskRequest{ID: "task-1"})
	var pe *PeerError
	if !errors.As(err, &pe) || !errors.Is(err, wire.ErrTaskNotFound) || pe.Code != -32001 || strings.Contains(err.Error(), "SECRET") {
		t.Fatalf("a TaskNotFound Status: %v", err)
	}
	// Errors a2a-go would lose are read as on JSON-RPC: by the ErrorInfo
	// reason whatever its metadata hold, else by the status — a Status
	// without a reason, problem+json (RFC 9457), a gateway's page.
	problem := `{"title":"SECRET","status":403}`
	for _, tc := range []struct {
		status    int
		ctype     string
		body      string
		kind      error
		code      int
		supported []string
	}{
		{403, "application/problem+json", problem, wire.ErrUnauthorized, -31403, nil},
		{401, "application/problem+json", problem, wire.ErrUnauthenticated, -31401, nil},
		{502, "text/html", problem, wire.ErrServerError, -32000, nil},
		{400, "application/json", `{"error":{"code":400,"status":"INVALID_ARGUMENT","message":"SECRET","details":[{"@type":"type.googleapis.com/google.rpc.BadRequest"}]}}`,
			wire.ErrInvalidRequest, -32600, nil},
		{400, "application/json", `{"error":{"code":400,"status":"INVALID_ARGUMENT","message":"SECRET","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"VERSION_NOT_SUPPORTED","domain":"a2a-protocol.org","metadata":{"supportedVersions":"1.1, 2.0","attempt":3}}]}}`,
			wire.ErrVersionNotSupported, -32009, []string{"1.1", "2.0"}},
	} {
		answer(tc.status, tc.ctype, tc.body)
		_, err := conn.remote.GetTask(ctx, &wire.GetTaskRequest{ID: "task-1"})
		var pe *PeerError
		if !errors.As(err, &pe) || !errors.Is(err, tc.kind) || pe.Code != tc.code || pe.HTTPStatus != tc.status ||
			!slices.Equal(pe.SupportedVersions, tc.supported) || strings.Contains(err.Error(), "SECRET") {
			t.Fatalf("%d %s: %v (%+v)", tc.status, tc.ctype, err, pe)
		}
		var errs []error
		for _, err := range conn.remote.SendStreamingMessage(ctx, sendReq("hi")) {
			errs = append(errs, err)
		}
		if len(errs) != 1 || !errors.As(errs[0], &pe) || !errors.Is(errs[0], tc.kind) || pe.HTTPStatus != tc.status {
			t.Fatalf("%d %s on a stream: %v", tc.status, tc.ctype, errs)
		}
	}
	answer(200, "text/event-stream", "data: {\"statusUpdate\":{\"taskId\":\"t\",\"contextId\":\"c\",\"status\":{\"state\":\"TASK_STATE_WORKING\"}}}\n\ndata: {\"message\":{\"messageId\":\"m\",\"role\":\"ROLE_AGENT\",\"parts\":[{\"text\":\""+strings.Repeat("y", 3000)+"\"}]}}\n\n")
	var errs []error
	for _, err := range conn.remote.SendStreamingMessage(ctx, sendReq("hi")) {
		errs = append(errs, err)
	}
	if len(errs) != 2 || errs[0] != nil || !errors.Is(errs[1], egress.ErrTooLarge) {
		t.Fatalf("stream: %v", errs)
	}
}
