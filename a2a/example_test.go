package a2a_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/a2a"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/mapping"
	"github.com/wopinterop/wopinterop/negotiate"
)

// A host mounts the card and both bindings; the HTTP+JSON handler is mounted
// under a prefix with http.StripPrefix. Card URLs come from the
// configuration, never from the request.
func ExampleServer_HTTPJSON() {
	store := memstore.New()
	defer store.Close()
	_ = store.RegisterFixtures("acme")
	policy, _ := negotiate.NewPolicy(negotiate.Config{Protocol: negotiate.A2A, Offered: []string{"1.0"}, Preferred: "1.0", Floor: "1.0"})
	srv, err := a2a.New(a2a.Deps{
		Store: store,
		Subjects: interop.SubjectResolverFunc(func(r *http.Request) (interop.Subject, error) {
			if r.Header.Get("Authorization") != "Bearer demo" {
				return interop.Subject{}, interop.ErrUnauthenticated
			}
			return interop.Subject{Tenant: "acme", Principal: "demo", Authenticated: true}, nil
		}),
		Policy:     policy,
		Auditor:    negotiate.NewAuditor(store, negotiate.AuditorOptions{Synchronous: true}),
		Map:        mapping.Builtin(),
		JSONRPCURL: "https://agent.example/a2a/rpc",
		Routed:     []interop.Workflow{{ID: memstore.FixtureNoop, Name: "No-op", Description: "Completes at once."}},
	}, a2a.Options{
		HTTPJSONURL:  "https://agent.example/a2a/rest",
		AgentCardURL: "https://agent.example/.well-known/agent-card.json",
		Card:         a2a.CardConfig{Name: "Demo", Description: "A demo agent.", Version: "1.0.0"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	mux := http.NewServeMux()
	mux.Handle("/.well-known/agent-card.json", srv.AgentCard())
	mux.Handle("/a2a/rpc", srv.JSONRPC())
	mux.Handle("/a2a/rest/", http.StripPrefix("/a2a/rest", srv.HTTPJSON()))

	w := httptest.NewRecorder()
	mux.ServeHTTP(w, httptest.NewRequest("GET", "http://localhost:8080/.well-known/agent-card.json", nil))
	var card wire.AgentCard
	_ = json.Unmarshal(w.Body.Bytes(), &card)
	for _, in := range card.SupportedInterfaces {
		fmt.Println(in.ProtocolBinding, in.ProtocolVersion, in.URL)
	}

	r := httptest.NewRequest("POST", "http://localhost:8080/a2a/rest/message:send",
		strings.NewReader(`{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hi"}]}}`))
	r.Header.Set("Authorization", "Bearer demo")
	r.Header.Set("A2A-Version", "1.0")
	w = httptest.NewRecorder()
	mux.ServeHTTP(w, r)
	var sent struct{ Task wire.Task }
	_ = json.Unmarshal(w.Body.Bytes(), &sent)
	fmt.Println(w.Code, sent.Task.Status.State)

	w = httptest.NewRecorder()
	mux.ServeHTTP(w, httptest.NewRequest("GET", "http://localhost:8080/a2a/rest/tasks", nil))
	fmt.Println(w.Code, w.Header().Get("WWW-Authenticate"))
	// Output:
	// JSONRPC 1.0 https://agent.example/a2a/rpc
	// HTTP+JSON 1.0 https://agent.example/a2a/rest
	// 200 TASK_STATE_COMPLETED
	// 401 Bearer
}

// Host middleware in front of the HTTP+JSON handler refuses in the
// binding's own shape, here a rate limit.
func ExampleWriteHTTPJSONError() {
	limited := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "1")
		a2a.WriteHTTPJSONError(w, a2a.NewError(http.StatusTooManyRequests, "RATE_LIMITED", "too many requests"))
	})
	w := httptest.NewRecorder()
	limited.ServeHTTP(w, httptest.NewRequest("GET", "/tasks", nil))
	fmt.Println(w.Code, w.Header().Get("Content-Type"))
	fmt.Println(w.Body.String())
	// Output:
	// 429 application/json
	// {"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":"too many requests","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"RATE_LIMITED","domain":"a2a-protocol.org"}]}}
}

// A host gateway that refuses requests without an API key before they reach
// the JSON-RPC handler still answers in JSON-RPC shape.
func ExampleWriteJSONRPCError() {
	requireKey := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("X-Api-Key") == "" {
				a2a.WriteJSONRPCError(w, nil, interop.ErrUnauthenticated)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	h := requireKey(http.NotFoundHandler()) // the A2A handler would go here

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/a2a/rpc", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"GetTask"}`)))
	fmt.Println(rec.Code, rec.Header().Get("WWW-Authenticate"))
	fmt.Println(rec.Body.String())
	// Output:
	// 401 Bearer
	// {"jsonrpc":"2.0","id":null,"error":{"code":-31401,"message":"authentication required","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"UNAUTHENTICATED","domain":"a2a-protocol.org"}]}}
}

// A rate limiter in front of both bindings builds one error and answers in
// each binding's shape: NewError derives the gRPC status name and the
// JSON-RPC code from the HTTP status, and both writers keep 429 so that
// Retry-After means what it says.
func ExampleNewError() {
	tooMany := a2a.NewError(http.StatusTooManyRequests, "RATE_LIMITED", "too many requests")
	tooMany.Metadata = map[string]string{"retryAfterSeconds": "1"}

	rpc := httptest.NewRecorder()
	rpc.Header().Set("Retry-After", "1")
	a2a.WriteJSONRPCError(rpc, json.RawMessage(`"req-7"`), tooMany)
	fmt.Println(rpc.Code, rpc.Body.String())

	rest := httptest.NewRecorder()
	rest.Header().Set("Retry-After", "1")
	a2a.WriteHTTPJSONError(rest, tooMany)
	fmt.Println(rest.Code, rest.Body.String())
	// Output:
	// 429 {"jsonrpc":"2.0","id":"req-7","error":{"code":-32000,"message":"too many requests","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"RATE_LIMITED","domain":"a2a-protocol.org","metadata":{"retryAfterSeconds":"1"}}]}}
	// 429 {"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":"too many requests","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"RATE_LIMITED","domain":"a2a-protocol.org","metadata":{"retryAfterSeconds":"1"}}]}}
}
