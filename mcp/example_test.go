package mcp_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/mcp"
	"github.com/wopinterop/wopinterop/mcp/sealed"
	"github.com/wopinterop/wopinterop/negotiate"
)

// Mount the MCP server over a host's RunStore and call a tool the way an
// MCP 2026-07-28 client does: one POST per request, with the
// MCP-Protocol-Version, Mcp-Method and Mcp-Name headers and the per-request
// _meta.
func Example() {
	store := memstore.New()
	defer store.Close()
	if err := store.RegisterFixtures("acme"); err != nil {
		panic(err)
	}
	policy, err := negotiate.NewPolicy(negotiate.Config{Protocol: negotiate.MCP, Offered: []string{mcp.Revision}, Preferred: mcp.Revision, Floor: mcp.Revision})
	if err != nil {
		panic(err)
	}
	key := make([]byte, sealed.MinKeyLen)
	rand.Read(key) // a host keeps this secret in its configuration
	sealer, err := sealed.NewSealer(sealed.Config{Key: key})
	if err != nil {
		panic(err)
	}
	auditor := negotiate.NewAuditor(store, negotiate.AuditorOptions{Synchronous: true})
	srv, err := mcp.New(mcp.Deps{
		Store:  store,
		Policy: policy, Auditor: auditor, Sealer: sealer,
		// The host authenticates; here every caller is alice of acme.
		Subjects: interop.SubjectResolverFunc(func(*http.Request) (interop.Subject, error) {
			return interop.Subject{Tenant: "acme", Principal: "alice", Authenticated: true}, nil
		}),
	}, mcp.Options{ServerInfo: mcp.Implementation{Name: "example-host", Version: "1.0.0"}})
	if err != nil {
		panic(err)
	}
	defer srv.Close(context.Background())

	mux := http.NewServeMux()
	mux.Handle("/mcp", srv.Handler())

	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"conformance-noop","arguments":{},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	r.Header.Set("MCP-Protocol-Version", "2026-07-28")
	r.Header.Set("Mcp-Method", "tools/call")
	r.Header.Set("Mcp-Name", "conformance-noop")
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, r)

	var resp struct {
		Result struct {
			ResultType        string          `json:"resultType"`
			IsError           bool            `json:"isError"`
			StructuredContent json.RawMessage `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil {
		panic(err)
	}
	fmt.Println(w.Code, resp.Result.ResultType, resp.Result.IsError, string(resp.Result.StructuredContent))
	fmt.Println(srv.Served().Revisions)
	// Output:
	// 200 complete false {"ok":true}
	// [2026-07-28]
}

// A rate limiter in front of the mount refuses in MCP's shape: a JSON-RPC
// error with the status the middleware picks, here 429 with Retry-After.
func ExampleWriteError() {
	limited := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("X-Over-Quota") != "" {
				w.Header().Set("Retry-After", "1")
				mcp.WriteError(w, nil, &mcp.Error{Code: -32000, Message: "Rate limit exceeded", Status: http.StatusTooManyRequests})
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	h := limited(http.NotFoundHandler()) // the mount's Handler would go here

	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	r.Header.Set("X-Over-Quota", "yes")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	fmt.Println(rec.Code, rec.Header().Get("Retry-After"))
	fmt.Println(rec.Body.String())
	// Output:
	// 429 1
	// {"jsonrpc":"2.0","error":{"code":-32000,"message":"Rate limit exceeded"}}
}
