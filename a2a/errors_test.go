package a2a

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
)

// NewError derives the gRPC status name and the JSON-RPC code of a host
// refusal from its HTTP status, and both writers answer it whole in their
// binding's shape.
func TestNewError(t *testing.T) {
	cases := []struct {
		status   int
		code     int
		grpc     string
		httpWant int
		rpcHTTP  int // the HTTP status WriteJSONRPCError sends
	}{
		{400, -32600, "INVALID_ARGUMENT", 400, 200},
		{401, -31401, "UNAUTHENTICATED", 401, 401},
		{403, -31403, "PERMISSION_DENIED", 403, 403},
		{404, -32000, "NOT_FOUND", 404, 200},
		{408, -32600, "DEADLINE_EXCEEDED", 408, 408},
		{409, -32000, "ABORTED", 409, 200},
		{413, -32600, "INVALID_ARGUMENT", 413, 413},
		{418, -32000, "UNKNOWN", 418, 200},
		{429, -32000, "RESOURCE_EXHAUSTED", 429, 429},
		{499, -32000, "CANCELLED", 499, 200},
		{500, -32603, "INTERNAL", 500, 200},
		{501, -32000, "UNIMPLEMENTED", 501, 200},
		{503, -32000, "UNAVAILABLE", 503, 503},
		{504, -32000, "DEADLINE_EXCEEDED", 504, 200},
		{200, -32603, "INTERNAL", 500, 200},
		{0, -32603, "INTERNAL", 500, 200},
	}
	for _, tc := range cases {
		e := NewError(tc.status, "HOST_REFUSAL", "")
		if e.Code != tc.code || e.GRPC != tc.grpc || e.HTTP != tc.httpWant || e.Reason != "HOST_REFUSAL" || e.Message != http.StatusText(tc.httpWant) {
			t.Errorf("NewError(%d) = %+v, want code %d, %s, HTTP %d", tc.status, e, tc.code, tc.grpc, tc.httpWant)
		}
		rpc := httptest.NewRecorder()
		WriteJSONRPCError(rpc, []byte(`1`), e)
		wantRPC := `{"jsonrpc":"2.0","id":1,"error":{"code":` + itoa(tc.code) + `,"message":"` + http.StatusText(tc.httpWant) +
			`","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"HOST_REFUSAL","domain":"a2a-protocol.org"}]}}`
		if rpc.Code != tc.rpcHTTP || rpc.Body.String() != wantRPC {
			t.Errorf("JSON-RPC %d: HTTP %d %s\nwant HTTP %d %s", tc.status, rpc.Code, rpc.Body, tc.rpcHTTP, wantRPC)
		}
		rest := httptest.NewRecorder()
		WriteHTTPJSONError(rest, e)
		wantREST := `{"error":{"code":` + itoa(tc.httpWant) + `,"status":"` + tc.grpc + `","message":"` + http.StatusText(tc.httpWant) +
			`","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"HOST_REFUSAL","domain":"a2a-protocol.org"}]}}`
		if rest.Code != tc.httpWant || rest.Body.String() != wantREST {
			t.Errorf("HTTP+JSON %d: HTTP %d %s\nwant HTTP %d %s", tc.status, rest.Code, rest.Body, tc.httpWant, wantREST)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// What a2a-go's clients make of a host middleware's NewError refusals:
// the HTTP+JSON client reads the ErrorInfo reason (one it knows becomes
// its error, any other ErrInternalError); the JSON-RPC client reads a 200
// response by its code (-32000: ErrServerError) and any other status as
// a transport error.
func TestNewErrorReadByA2AGo(t *testing.T) {
	for _, tc := range []struct {
		status int
		reason string
		rpc    error // nil: any error
		rest   error
	}{
		{http.StatusUnauthorized, "UNAUTHENTICATED", nil, wire.ErrUnauthenticated},
		{http.StatusForbidden, "UNAUTHORIZED", nil, wire.ErrUnauthorized},
		{http.StatusNotFound, "TASK_NOT_FOUND", wire.ErrServerError, wire.ErrTaskNotFound},
		{http.StatusTooManyRequests, "RATE_LIMITED", nil, wire.ErrInternalError},
		{http.StatusServiceUnavailable, "SERVER_ERROR", nil, wire.ErrServerError},
	} {
		e := NewError(tc.status, tc.reason, "refused by the host")
		rpcSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { WriteJSONRPCError(w, nil, e) }))
		restSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { WriteHTTPJSONError(w, e) }))
		restURL, _ := url.Parse(restSrv.URL)
		for name, c := range map[string]struct {
			tr   a2aclient.Transport
			want error
		}{
			"JSON-RPC":  {a2aclient.NewJSONRPCTransport(rpcSrv.URL, rpcSrv.Client()), tc.rpc},
			"HTTP+JSON": {a2aclient.NewRESTTransport(restURL, restSrv.Client()), tc.rest},
		} {
			_, err := c.tr.GetTask(t.Context(), a2aclient.ServiceParams{"A2A-Version": {"1.0"}}, &wire.GetTaskRequest{ID: "acme/AAAAAAAAAAAAAAAAAAAAAAAAAA"})
			if err == nil || (c.want != nil && !errors.Is(err, c.want)) {
				t.Errorf("%d %s %s: %v, want %v", tc.status, tc.reason, name, err, c.want)
			}
		}
		rpcSrv.Close()
		restSrv.Close()
	}
}
