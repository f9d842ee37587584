package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopinterop/wopinterop/interop"
)

// caller is the part of go-sdk's *mcp.ClientSession the call path drives.
// The connection side builds the session (guarded transport, negotiated
// revision, credential, trace context); the call path only calls these, so
// its tests can script a server without a network.
type caller interface {
	CallTool(ctx context.Context, params *mcp.CallToolParams) (*mcp.CallToolResult, error)
}

// Session is one admitted, negotiated connection to an MCP server on
// behalf of one run. Connect returns it; Call uses it.
type Session struct {
	// RunID is the local run the exchange belongs to: its log receives the
	// negotiation.decided record and the translation-loss records.
	RunID string
	// Admission is the record the server was admitted under (limits
	// filled with defaults).
	Admission Admission
	// Version is the negotiated MCP revision.
	Version string
	// MaxRounds is the hard ceiling on input_required rounds of one call:
	// the host's mcp facet mrtr.maxRounds. The round past it is refused
	// locally before it is sent.
	MaxRounds int

	call caller
	deps *sessionDeps
	// link is the connection side's state: the go-sdk session and what
	// the lists need to key the cache (connect.go).
	link *link
	// unlisted is the one tool admitted by name on this session, for a
	// server that declares no tools (AdmitUnlisted); "" for none.
	unlisted string
	// discovered is the server's server/discover result as received;
	// nil for a server without server/discover.
	discovered json.RawMessage
}

// Discovered returns the server's server/discover result exactly as it
// was received when the session was negotiated (MCP 2026-07-28
// §server/discover) — what a health check reports (OpenWOP RFC 0204,
// ctx.mcp.serverHealth); nil for a server of an earlier revision, which
// has no server/discover. It is the server's untrusted content.
func (s *Session) Discovered() json.RawMessage { return bytes.Clone(s.discovered) }

// sessionDeps are the collaborators a Session shares with the Client that
// made it.
type sessionDeps struct {
	events interop.EventSink
	now    func() time.Time
	log    *slog.Logger
}
