package ext_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/mcp"
	"github.com/wopinterop/wopinterop/mcp/ext"
	"github.com/wopinterop/wopinterop/mcp/sealed"
	"github.com/wopinterop/wopinterop/negotiate"
)

// greeter is a host's tool that is not a workflow: it asks for a name in
// one input round, then greets. Its content and input request are
// go-sdk's protocol types.
type greeter struct{}

func (greeter) ListTools(context.Context, interop.Subject) ([]ext.Tool, error) {
	return []ext.Tool{{Name: "greet", Description: "Greets the caller by name."}}, nil
}

func (greeter) CallTool(_ context.Context, _ interop.Subject, call *ext.ToolCall) (ext.ToolResult, error) {
	if er, ok := call.Responses.Elicitation("name"); ok && er.Action == "accept" {
		return ext.ToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("Hello, %v!", er.Content["name"])}}}, nil
	}
	ask := &sdk.ElicitParams{Message: "Your name?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)}
	return ext.ToolResult{Input: &ext.InputRequired{Requests: sdk.InputRequestMap{"name": ask}}}, nil
}

// A tool that is not a workflow (Config.Tools): its first call asks for
// input; the retry with the sealed requestState and the answer completes.
func Example() {
	store := memstore.New()
	defer store.Close()
	policy, _ := negotiate.NewPolicy(negotiate.Config{Protocol: negotiate.MCP, Offered: []string{mcp.Revision}, Preferred: mcp.Revision, Floor: mcp.Revision})
	key := make([]byte, sealed.MinKeyLen)
	rand.Read(key)
	sealer, _ := sealed.NewSealer(sealed.Config{Key: key})
	extension, err := ext.New(ext.Config{Tools: greeter{}})
	if err != nil {
		panic(err)
	}
	srv, err := mcp.New(mcp.Deps{
		Store: store, Policy: policy, Sealer: sealer,
		Auditor: negotiate.NewAuditor(store, negotiate.AuditorOptions{Synchronous: true}),
		Subjects: interop.SubjectResolverFunc(func(*http.Request) (interop.Subject, error) {
			return interop.Subject{Tenant: "acme", Principal: "alice", Authenticated: true}, nil
		}),
	}, mcp.Options{ServerInfo: mcp.Implementation{Name: "example-host", Version: "1.0.0"}, Extension: extension})
	if err != nil {
		panic(err)
	}
	defer srv.Close(context.Background())

	call := func(extra string) map[string]any {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet",` + extra +
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}}`
		r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		r.Header.Set("MCP-Protocol-Version", mcp.Revision)
		r.Header.Set("Mcp-Method", "tools/call")
		r.Header.Set("Mcp-Name", "greet")
		w := httptest.NewRecorder()
		srv.Handler().ServeHTTP(w, r)
		var resp struct {
			Result map[string]any `json:"result"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil {
			panic(err)
		}
		return resp.Result
	}
	first := call("")
	fmt.Println(first["resultType"])
	state, _ := json.Marshal(first["requestState"])
	second := call(`"requestState":` + string(state) + `,"inputResponses":{"name":{"action":"accept","content":{"name":"Ada"}}},`)
	fmt.Println(second["resultType"], second["content"].([]any)[0].(map[string]any)["text"])
	// Output:
	// input_required
	// complete Hello, Ada!
}
