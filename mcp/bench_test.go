package mcp

// Benchmarks of the two hot paths, each through three handlers serving
// the same request bytes in process (httptest request and recorder):
//
//   - ours:  this mount over memstore; tools/call creates, runs and awaits
//     a real run; every request is authenticated, negotiated and audited
//     synchronously into memstore's host-event log, so the record's whole
//     cost is on the request path;
//   - gosdk: go-sdk v1.8.0's StreamableHTTPHandler, stateless, JSON
//     responses, with one raw tool returning the same content;
//   - bare:  a plain net/http handler decoding the JSON-RPC envelope with
//     encoding/json and writing the same result bytes.

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopinterop/wopinterop/internal/processcpu"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/mcp/sealed"
	"github.com/wopinterop/wopinterop/negotiate"
)

const (
	benchMeta     = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	benchListBody = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + benchMeta + `}}`
	benchCallBody = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"noop","arguments":{},` + benchMeta + `}}`
)

func benchOurs(b *testing.B) http.Handler {
	store := memstore.New()
	b.Cleanup(func() { store.Close() })
	err := store.Register("bench", memstore.WorkflowDef{
		Workflow: interop.Workflow{ID: "noop", Name: "No-op", InputSchema: json.RawMessage(`{"type":"object"}`)},
		Run: func(context.Context, *memstore.RunContext) (json.RawMessage, error) {
			return json.RawMessage(`{"ok":true}`), nil
		},
		// It never waits, so it runs on CreateRun's goroutine, as the
		// conformance-noop fixture the A2A benchmark calls does.
		Inline: true,
	})
	if err != nil {
		b.Fatal(err)
	}
	policy, _ := negotiate.NewPolicy(negotiate.Config{Protocol: negotiate.MCP, Offered: []string{Revision}, Preferred: Revision, Floor: Revision})
	sealer, _ := sealed.NewSealer(sealed.Config{Key: bytes.Repeat([]byte("k"), 32)})
	srv, err := New(Deps{
		Store: store, Subjects: testSubjects, Policy: policy, Sealer: sealer,
		Auditor: negotiate.NewAuditor(store, negotiate.AuditorOptions{Synchronous: true}),
	}, Options{ServerInfo: Implementation{Name: "bench", Version: "1"}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { srv.Close(context.Background()) })
	return srv.Handler()
}

func benchGoSDK(b *testing.B) http.Handler {
	server := sdk.NewServer(&sdk.Implementation{Name: "bench", Version: "1"}, &sdk.ServerOptions{
		Capabilities: &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{}},
	})
	server.AddTool(&sdk.Tool{Name: "noop", Title: "No-op", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: `{"ok":true}`}}, StructuredContent: json.RawMessage(`{"ok":true}`)}, nil
		})
	return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, &sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
}

// benchBare answers both methods with the bytes our mount produces.
func benchBare(b *testing.B) http.Handler {
	results := map[string][]byte{
		"tools/list": []byte(`{"resultType":"complete","ttlMs":60000,"cacheScope":"private","tools":[{"name":"noop","title":"No-op","inputSchema":{"type":"object"}}]}`),
		"tools/call": []byte(`{"resultType":"complete","content":[{"type":"text","text":"{\"ok\":true}"}],"structuredContent":{"ok":true},"isError":false}`),
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		res := results[req.Method]
		out := append(append(append(append([]byte(`{"jsonrpc":"2.0","id":`), req.ID...), `,"result":`...), res...), '}')
		w.Header().Set("Content-Type", "application/json")
		w.Write(out)
	})
}

// runBench serves the request b.N times and reports, beside the wall
// time, the process CPU per operation (user + system, every thread), so
// work on other goroutines — the run's, GC — is charged to the request.
func runBench(b *testing.B, h http.Handler, method, name, body string) {
	b.ReportAllocs()
	start := processcpu.Used()
	for b.Loop() {
		r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		r.Header.Set("Authorization", "Bearer bench:p")
		r.Header.Set(headerProtocolVersion, Revision)
		r.Header.Set(headerMethod, method)
		if name != "" {
			r.Header.Set(headerName, name)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK || !bytes.Contains(w.Body.Bytes(), []byte(`"result"`)) {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
	}
	b.ReportMetric(float64(processcpu.Used()-start)/float64(b.N), "cpu-ns/op")
}

func BenchmarkToolsList(b *testing.B) {
	for name, mk := range map[string]func(*testing.B) http.Handler{"ours": benchOurs, "gosdk": benchGoSDK, "bare": benchBare} {
		b.Run(name, func(b *testing.B) { runBench(b, mk(b), "tools/list", "", benchListBody) })
	}
}

func BenchmarkToolsCallNoop(b *testing.B) {
	for name, mk := range map[string]func(*testing.B) http.Handler{"ours": benchOurs, "gosdk": benchGoSDK, "bare": benchBare} {
		b.Run(name, func(b *testing.B) { runBench(b, mk(b), "tools/call", "noop", benchCallBody) })
	}
}
