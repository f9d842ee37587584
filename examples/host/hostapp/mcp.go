package hostapp

import (
	"github.com/wopinterop/wopinterop"
	"github.com/wopinterop/wopinterop/mcp"
)

// mcpPath is where the MCP 2026-07-28 server is mounted; the mcp discovery
// record names it as serverUrls[0].
const mcpPath = wopinterop.DefaultMCPPath

// mcpMaxRounds is the mcp record's mrtr.maxRounds: the ceiling on input
// rounds of one tool call, both ways — a client of this host's server is
// refused the round past it, and this host's MCP client refuses a server's
// round past it before sending the retry, so a server sees at most 5 calls
// (OpenWOP interop.md §The MCP round ceiling).
const mcpMaxRounds = 4

// mcpConfig is the demo's MCP section: every workflow of the caller's
// tenant is a tool (the five conformance fixtures), with MRTR under
// mrtr.maxRounds 4, the Tasks extension and the library's defaults for
// everything else (one-minute tool-list cache, 30 s blocking budget, tasks
// answered as soon as their run exists); the mcp record claims what that
// serves. newInterop adds the MCP client (mcpclient.go).
//
// Who may call: the same bearer keys as every other route (the Subjects of
// wopinterop.Config); an unknown or missing key is 401 with
// WWW-Authenticate: Bearer before any MCP work. AllowedOrigins is empty on
// purpose: a request carrying a browser Origin header is refused with 403,
// while non-browser clients (SDKs, curl), which send no Origin, are
// unaffected. The one browser Origin let through is the host's own when it
// listens on loopback (AllowOwnLoopbackOrigin: the scheme, loopback address
// and port the connection arrived on, e.g. http://127.0.0.1:8080 or
// http://localhost:8080): a page this host serves, and what the official
// MCP conformance suite's DNS-rebinding check sends. On a loopback listener
// the mount also refuses a Host header that does not name the loopback
// interface (DNS rebinding), so behind a reverse proxy the proxy must reach
// the host on a non-loopback address or keep a loopback Host.
//
// sealKey seals requestState, the MRTR round a client echoes back; with
// the default per-process random key, a round that is pending across a
// restart answers -32602 and the client starts the call again.
func mcpConfig(version string, sealKey []byte) *wopinterop.MCPConfig {
	return &wopinterop.MCPConfig{
		Path:    mcpPath,
		Record:  wopinterop.Record{RefreshedAt: upstreamRefreshedAt},
		SealKey: sealKey,
		Server: mcp.Options{
			ServerInfo:             mcp.Implementation{Name: implementationName, Version: version},
			Tasks:                  true,
			AllowOwnLoopbackOrigin: true,
			MaxRounds:              mcpMaxRounds,
		},
	}
}
