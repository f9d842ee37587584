package mcppeers

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Current is the MCP revision the servers speak by default.
const Current = "2026-07-28"

// Script configures a scripted server (StartGo; StartNode honours the
// fields the TypeScript SDK can, see there).
type Script struct {
	// Revisions are the MCP revisions the server accepts and
	// server/discover reports, in this order; nil means [Current] only.
	// Each must be one go-sdk v1.8.0 knows (mcp.SupportedProtocolVersions).
	// A request whose MCP-Protocol-Version names another is refused 400
	// with -32022 and data {supported: Revisions, requested}; so is a
	// legacy initialize when Revisions lists no revision before 2026-07-28.
	Revisions []string
	// BearerToken, when set, is required on every request to Path as
	// "Authorization: Bearer <BearerToken>": go-sdk's auth middleware
	// answers anything else 401, text/plain, with WWW-Authenticate:
	// Bearer resource_metadata="<Base>/.well-known/oauth-protected-resource/mcp"
	// (RFC 6750 §3, RFC 9728 §5.1), a document the server serves.
	BearerToken string
	// CallerTools, when set, makes the tool list depend on the caller:
	// the key is a bearer token, accepted besides BearerToken, and its
	// tools are listed (after the shared ones, on the last page) and
	// callable for that token only; each behaves as Echo. Another caller
	// neither sees them nor may call them (-32602, unknown tool). Use it
	// with ListCache PrivateList() for a private list.
	CallerTools map[string][]*mcp.Tool
	// Tools is the tool list; nil gives DefaultTools(). Each runs the
	// scripted behaviour its name names; any other name behaves as Echo.
	// Server.SetTools replaces it while the server runs.
	Tools []*mcp.Tool
	// ListCache sets ttlMs and cacheScope of every tools/list result
	// (MCP 2026-07-28 CacheableResult); the zero value leaves go-sdk's
	// default, ttlMs 0 and cacheScope "public". PrivateList() is a
	// private, cacheable one.
	ListCache mcp.Cacheable
	// PageSize is tools/list's page size; 0 is go-sdk's default (1000).
	PageSize int
	// JSONResponse answers with one application/json body instead of an
	// SSE stream; progress notifications are then dropped (go-sdk).
	JSONResponse bool
}

// PrivateList is a ListCache marking tools/list private to the caller and
// cacheable for a minute.
func PrivateList() mcp.Cacheable { return mcp.Cacheable{TTLMs: 60_000, CacheScope: "private"} }

// Implementation is the serverInfo every scripted server reports.
func Implementation() *mcp.Implementation {
	return &mcp.Implementation{Name: "mcppeers", Version: "1.0.0"}
}

// StartGo starts a scripted go-sdk v1.8.0 server: mcp.NewServer with the
// Script's tools behind mcp.NewStreamableHTTPHandler in stateless mode
// (MCP 2026-07-28: no initialize, no Mcp-Session-Id), handler contexts
// cancelled when the client goes away (PropagateRequestCancellation), a
// revision guard in front (Script.Revisions) and, when
// Script.BearerToken is set, go-sdk's bearer-token middleware.
func StartGo(t testing.TB, s Script) *Server {
	t.Helper()
	revs := s.Revisions
	if revs == nil {
		revs = []string{Current}
	}
	for _, r := range revs {
		if !slices.Contains(mcp.SupportedProtocolVersions(), r) {
			t.Fatalf("mcppeers: Script.Revisions: go-sdk v1.8.0 does not know %q", r)
		}
	}
	tools := s.Tools
	if tools == nil {
		tools = DefaultTools()
	}
	var box *toolbox
	srv := serve(t, func(base string) (http.Handler, *Server) {
		sdk := mcp.NewServer(Implementation(), &mcp.ServerOptions{
			SupportedProtocolVersions: revs,
			// Explicit, so the zero value does not add go-sdk's historical
			// {"logging":{}}; listChanged because SetTools changes the list.
			Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
			PageSize:     s.PageSize,
			SetCacheable: func(_ context.Context, req mcp.Request, c *mcp.Cacheable) {
				if _, ok := req.(*mcp.ListToolsRequest); ok && s.ListCache != (mcp.Cacheable{}) {
					*c = s.ListCache
				}
			},
			Logger: slog.New(slog.DiscardHandler),
		})
		sdk.AddReceivingMiddleware(discoverReports(revs), callerTools(s.CallerTools))
		box = newToolbox(t, base, sdk)
		box.set(tools)
		var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return sdk },
			&mcp.StreamableHTTPOptions{
				Stateless:                    true,
				JSONResponse:                 s.JSONResponse,
				PropagateRequestCancellation: true,
				Logger:                       slog.New(slog.DiscardHandler),
			})
		h = revisionGuard(revs, h)
		mux := http.NewServeMux()
		if s.BearerToken != "" || len(s.CallerTools) > 0 {
			metadata := base + protectedResourcePath
			mux.Handle("GET "+protectedResourcePath, protectedResource(base))
			h = auth.RequireBearerToken(bearerVerifier(s.BearerToken, s.CallerTools),
				&auth.RequireBearerTokenOptions{ResourceMetadataURL: metadata})(h)
		}
		mux.Handle(Path, h)
		return mux, &Server{tools: box}
	}, nil)
	box.rec = srv.rec
	return srv
}

// discoverReports makes server/discover report revs in the Script's
// order: go-sdk lists its own order, newest first (MCP 2026-07-28
// SEP-2575 leaves the order to the server).
func discoverReports(revs []string) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if d, ok := res.(*mcp.DiscoverResult); ok && err == nil {
				d.SupportedVersions = slices.Clone(revs)
			}
			return res, err
		}
	}
}

// revisionGuard refuses, before go-sdk sees it, a request at a revision
// revs does not list: a MCP-Protocol-Version header outside revs, or an
// initialize (which carries its revision in params.protocolVersion, not
// in the header) when revs lists no pre-2026-07-28 revision. The refusal
// is HTTP 400 with UnsupportedProtocolVersionError -32022, data
// {supported, requested} (MCP 2026-07-28 schema.ts). go-sdk alone answers
// an unlisted legacy header with a plain-text 400 and never refuses an
// initialize.
func revisionGuard(revs []string, next http.Handler) http.Handler {
	legacy := slices.ContainsFunc(revs, func(r string) bool { return r < Current })
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		requested := r.Header.Get("MCP-Protocol-Version")
		refuse := requested != "" && !slices.Contains(revs, requested)
		if requested == "" && !legacy {
			var init struct {
				Method string `json:"method"`
				Params struct {
					ProtocolVersion string `json:"protocolVersion"`
				} `json:"params"`
			}
			if json.Unmarshal(body, &init) == nil && init.Method == "initialize" {
				requested, refuse = init.Params.ProtocolVersion, true
			}
		}
		if !refuse {
			next.ServeHTTP(w, r)
			return
		}
		writeJSON(w, http.StatusBadRequest, rpcFailure(requestID(body), mcp.CodeUnsupportedProtocolVersion,
			"unsupported protocol version", mcp.UnsupportedProtocolVersionData{Supported: revs, Requested: requested}))
	})
}

// protectedResourcePath is where the protected resource metadata of Path
// lives (RFC 9728 §3.1: the well-known suffix before the resource's path).
const protectedResourcePath = "/.well-known/oauth-protected-resource" + Path

// protectedResource serves the RFC 9728 §2 metadata of the MCP endpoint:
// a bearer token in the Authorization header, and no authorization
// server (the token is provisioned out of band).
func protectedResource(base string) http.Handler {
	body := mustJSON(map[string]any{"resource": base + Path, "bearer_methods_supported": []string{"header"}})
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, body)
	})
}

// bearerVerifier accepts token and every key of callers; the token
// itself is the caller's identity (TokenInfo.UserID), which callerTools
// reads.
func bearerVerifier(token string, callers map[string][]*mcp.Tool) auth.TokenVerifier {
	return func(_ context.Context, got string, _ *http.Request) (*auth.TokenInfo, error) {
		if _, ok := callers[got]; got != token && !ok || got == "" {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: got, Expiration: time.Now().Add(24 * time.Hour)}, nil
	}
}

// callerTools lists and runs each caller's own tools (Script.CallerTools)
// beside go-sdk's registry, which is one list for every caller.
func callerTools(callers map[string][]*mcp.Tool) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			var own []*mcp.Tool
			if extra := req.GetExtra(); extra != nil && extra.TokenInfo != nil {
				own = callers[extra.TokenInfo.UserID]
			}
			if call, ok := req.(*mcp.CallToolRequest); ok && method == "tools/call" {
				for _, tool := range own {
					if tool.Name == call.Params.Name {
						return echo(ctx, call)
					}
				}
			}
			res, err := next(ctx, method, req)
			if list, ok := res.(*mcp.ListToolsResult); ok && err == nil && list.NextCursor == "" {
				list.Tools = append(list.Tools, own...)
			}
			return res, err
		}
	}
}
