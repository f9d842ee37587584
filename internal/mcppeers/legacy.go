package mcppeers

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Legacy revisions StartLegacy serves: below the 2026-07-28 floor.
const (
	Legacy20250618 = "2025-06-18"
	Legacy20251125 = "2025-11-25"
)

// StartLegacy starts a server that speaks only revision, one of
// Legacy20250618 and Legacy20251125, as servers did before 2026-07-28: it
// knows no server/discover and keeps sessions. A client must refuse it
// below the floor; Requests counts everything it sent.
//
//   - server/discover is answered HTTP 404 with JSON-RPC -32601 "Method
//     not found" (the 2026-07-28 streamable HTTP answer to an unknown
//     method; a legacy server knows no other), before any header check;
//   - a request whose MCP-Protocol-Version is not revision is answered
//     HTTP 400, text/plain "Bad Request: Unsupported protocol version
//     (supported versions: <revision>)", as go-sdk answers an unlisted
//     legacy header (MCP 2025-06-18 basic/transports §Protocol Version
//     Header);
//   - everything else reaches a stateful go-sdk v1.8.0 server restricted
//     to revision, running the scripted tools: initialize (answered at
//     revision whatever the client asked), Mcp-Session-Id, and MRTR tools
//     served by real elicitation/create requests to the client.
func StartLegacy(t testing.TB, revision string) *Server {
	t.Helper()
	if revision != Legacy20250618 && revision != Legacy20251125 {
		t.Fatalf("mcppeers: StartLegacy(%q): want %s or %s", revision, Legacy20250618, Legacy20251125)
	}
	var sdk *mcp.Server
	var box *toolbox
	srv := serve(t, func(base string) (http.Handler, *Server) {
		sdk = mcp.NewServer(Implementation(), &mcp.ServerOptions{
			SupportedProtocolVersions: []string{revision},
			Capabilities:              &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
			Logger:                    slog.New(slog.DiscardHandler),
		})
		box = newToolbox(t, base, sdk)
		box.set(DefaultTools())
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return sdk },
			&mcp.StreamableHTTPOptions{Logger: slog.New(slog.DiscardHandler)})
		mux := http.NewServeMux()
		mux.Handle(Path, legacyFront(revision, h))
		return mux, &Server{tools: box}
	}, func() {
		// A session a client left open would keep its goroutines.
		for ss := range sdk.Sessions() {
			_ = ss.Close()
		}
	})
	box.rec = srv.rec
	return srv
}

// legacyFront answers what a pre-2026-07-28 server cannot: see
// StartLegacy.
func legacyFront(revision string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var env struct {
			Method string `json:"method"`
		}
		if r.Method == http.MethodPost && json.Unmarshal(body, &env) == nil && env.Method == "server/discover" {
			writeJSON(w, http.StatusNotFound, rpcFailure(requestID(body), jsonrpc.CodeMethodNotFound, "Method not found", nil))
			return
		}
		if v := r.Header.Get("MCP-Protocol-Version"); v != "" && v != revision {
			http.Error(w, "Bad Request: Unsupported protocol version (supported versions: "+revision+")", http.StatusBadRequest)
			return
		}
		next.ServeHTTP(w, r)
	})
}
