package main

import (
	"context"
	"encoding/json"
	"net/http"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopinterop/wopinterop/interop/memstore"
)

// startGoSDK serves go-sdk's stateless Streamable HTTP handler (JSON
// responses, no sessions: the 2026-07-28 shape) with one no-op tool named
// as ours' no-op workflow.
func startGoSDK() (*server, error) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "loadbench", Version: "1"}, &sdk.ServerOptions{
		Capabilities: &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{}},
	})
	srv.AddTool(&sdk.Tool{Name: memstore.FixtureNoop, Title: "No-op", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: `{}`}}, StructuredContent: json.RawMessage(`{}`)}, nil
		})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv },
		&sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	base, stop, err := serve(mux)
	if err != nil {
		return nil, err
	}
	return &server{name: "gosdk", mcpURL: base + "/mcp", auth: "Bearer " + benchKey, stop: stop}, nil
}
