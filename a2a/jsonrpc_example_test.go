package a2a_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/wopinterop/wopinterop/a2a"
	"github.com/wopinterop/wopinterop/interop"
)

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
