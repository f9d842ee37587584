package mcpfixtures_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/wopinterop/wopinterop/examples/host/mcpfixtures"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/mcp"
	"github.com/wopinterop/wopinterop/mcp/ext"
	"github.com/wopinterop/wopinterop/mcp/sealed"
	"github.com/wopinterop/wopinterop/negotiate"
)

// Mount the fixtures the conformance suite drives: the Tasks workflows in
// the dedicated tenant, the fixture host on the mount's extension points,
// and the suite's anonymous caller placed in that tenant.
func Example() {
	store := memstore.New()
	defer store.Close()
	if err := mcpfixtures.Register(store, mcpfixtures.Tenant); err != nil {
		panic(err)
	}
	policy, err := negotiate.NewPolicy(negotiate.Config{Protocol: negotiate.MCP, Offered: []string{mcp.Revision}, Preferred: mcp.Revision, Floor: mcp.Revision})
	if err != nil {
		panic(err)
	}
	key := make([]byte, sealed.MinKeyLen)
	rand.Read(key)
	sealer, err := sealed.NewSealer(sealed.Config{Key: key})
	if err != nil {
		panic(err)
	}
	deps := mcp.Deps{
		Store: store, Policy: policy, Sealer: sealer,
		Auditor: negotiate.NewAuditor(store, negotiate.AuditorOptions{Synchronous: true}),
		Subjects: interop.SubjectResolverFunc(func(*http.Request) (interop.Subject, error) {
			return interop.Subject{Tenant: mcpfixtures.Tenant, Principal: "conformance-client"}, nil
		}),
	}
	cfg := mcp.Options{
		AllowAnonymous: true,
		Tasks:          true,
		ServerInfo:     mcp.Implementation{Name: "fixtures", Version: "1.0.0"},
	}
	if cfg.Extension, err = ext.New(mcpfixtures.New().Config()); err != nil {
		panic(err)
	}
	srv, err := mcp.New(deps, cfg)
	if err != nil {
		panic(err)
	}
	defer srv.Close(context.Background())

	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"name":"World"},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	r.Header.Set("MCP-Protocol-Version", mcp.Revision)
	r.Header.Set("Mcp-Method", "tools/call")
	r.Header.Set("Mcp-Name", "greet")
	w := httptest.NewRecorder()
	srv.Handler().ServeHTTP(w, r)

	var resp struct {
		Result struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if err := json.NewDecoder(bytes.NewReader(w.Body.Bytes())).Decode(&resp); err != nil {
		panic(err)
	}
	fmt.Println(w.Code, resp.Result.Content[0].Text)
	fmt.Println(mcpfixtures.New().Config().ResourceSchemes)
	// Output:
	// 200 Hello, World!
	// [test]
}
