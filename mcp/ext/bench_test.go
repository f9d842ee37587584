package ext

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopinterop/wopinterop/mcp"
	"github.com/wopinterop/wopinterop/mcp/internal/mount"
)

const benchMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// BenchmarkExtensions measures the extension methods through the whole
// mount (guard, negotiation, audit, dispatch, encoding).
func BenchmarkExtensions(b *testing.B) {
	cases := []struct{ name, method, mcpName, params string }{
		{"tools-call-native", "tools/call", "echo", `"name":"echo","arguments":{"text":"hi"}`},
		{"prompts-get", "prompts/get", "greeting", `"name":"greeting","arguments":{"name":"Ada"}`},
		{"resources-read", "resources/read", "test://doc", `"uri":"test://doc"`},
		{"resources-list", "resources/list", "", ``},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			h := newEnv(b, withHost(newTestHost())).h
			params := benchMeta
			if tc.params != "" {
				params = tc.params + "," + benchMeta
			}
			body := `{"jsonrpc":"2.0","id":1,"method":"` + tc.method + `","params":{` + params + `}}`
			b.ReportAllocs()
			for b.Loop() {
				r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
				r.Header.Set("Authorization", "Bearer acme:alice")
				r.Header.Set("MCP-Protocol-Version", mcp.Revision)
				r.Header.Set("Mcp-Method", tc.method)
				if tc.mcpName != "" {
					r.Header.Set("Mcp-Name", tc.mcpName)
				}
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				if w.Code != http.StatusOK {
					b.Fatalf("%d %s", w.Code, w.Body)
				}
			}
		})
	}
}

// mixedResult is a tool result with every content block: what
// BenchmarkEncodeToolResult encodes.
var mixedResult = ToolResult{Content: []sdk.Content{
	&sdk.TextContent{Text: "Multiple content types test: <b>bold</b> & more"},
	&sdk.ImageContent{Data: pixel, MIMEType: "image/png"},
	&sdk.AudioContent{Data: []byte("RIFF"), MIMEType: "audio/wav"},
	&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "test://doc", MIMEType: "text/plain", Text: "a document"}},
	&sdk.ResourceLink{URI: "test://doc", Name: "doc", MIMEType: "text/plain"},
}, StructuredContent: json.RawMessage(`{"ok":true}`)}

// BenchmarkEncodeToolResult compares the extension's encoding of a tool
// result in go-sdk's types ("ours": the bytes the mount sends) with
// go-sdk's own MarshalJSON of the same result ("gosdk", which orders and
// escapes differently, so cannot be sent as is).
func BenchmarkEncodeToolResult(b *testing.B) {
	b.Run("ours", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := encodeToolResult(&mixedResult); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("gosdk", func(b *testing.B) {
		res := &sdk.CallToolResult{Content: mixedResult.Content, StructuredContent: mixedResult.StructuredContent}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := mount.Marshal(res); err != nil {
				b.Fatal(err)
			}
		}
	})
}
