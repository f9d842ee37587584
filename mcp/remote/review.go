package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopinterop/wopinterop/negotiate"
)

// Admitting a server starts from what it offers. Discovery is not
// permission (admission-boundaries §18.3): what the functions here return
// is what a host reviews — an operator at start, or a per-call admission
// that decides on the spot — and nothing of it may be called until an
// admission names it with its digest.

// ListedTool is one tool a server lists, with the digest an admission
// pins it by.
type ListedTool struct {
	Tool *mcp.Tool
	// Digest is [ToolDigest] of Tool, or "" when the server lists the name
	// more than once: such a tool matches no admission.
	Digest string
}

// Listed returns every tool the server lists to this session now,
// admitted or not, in the server's order, each with its digest: the
// review a host makes before it admits tools ([Session.AdmitTools],
// [Client.Admit]). It reads the list as [Session.Tools] does (the same
// pagination bounds and cache); unlike Tools it does not project the list
// through the admission, so nothing it returns is callable on its own. The
// tools are copies; their schemas are shared with the cache and must not
// be modified.
func (s *Session) Listed(ctx context.Context) ([]ListedTool, error) {
	if s.link == nil {
		return nil, &CallError{Field: "session", Reason: "not connected"}
	}
	items, err := s.list(ctx, toolsList)
	if err != nil {
		return nil, err
	}
	out := make([]ListedTool, 0, len(items))
	for _, it := range items {
		t := *it.item.(*mcp.Tool)
		out = append(out, ListedTool{Tool: &t, Digest: it.digest})
	}
	return out, nil
}

// ListPage sends one tools/list — with cursor, "" for the first page —
// and returns the server's ListToolsResult exactly as it was received:
// its tools (outputSchema and annotations included), nextCursor, ttlMs
// and cacheScope, not merged with any other page (OpenWOP RFC 0204,
// ctx.mcp.listTools). It is discovery, returned as observed: nothing in it
// is callable on its own, since a call is still checked against the
// admission (admission-boundaries §18.3). The page is always fetched,
// never served from nor put in the client's list cache, whose entries are
// whole lists. An interim result (input_required) is a [*ListError]; a
// failed exchange is an [*ExchangeError] or a [*PeerError], as from
// [Session.Tools]. The page is the server's untrusted content.
func (s *Session) ListPage(ctx context.Context, cursor string) (json.RawMessage, error) {
	if s.link == nil || s.link.cs == nil {
		return nil, &CallError{Field: "session", Reason: "not connected"}
	}
	ctx, cancel := context.WithTimeout(ctx, s.Admission.Limits.withDefaults().Timeout)
	defer cancel()
	ctx, hints := withListHints(ctx)
	ctx, slot := withFaultSlot(ctx)
	ctx, page := withResultSlot(ctx)
	if _, err := s.link.cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor}); err != nil {
		return nil, slot.attach(exchangeError(s.Admission.Alias, methodListTools, err))
	}
	if hints.inputRequired {
		return nil, &ListError{Alias: s.Admission.Alias, Method: methodListTools, Problem: "the server asked for input to complete the list", InputRequired: true}
	}
	raw := page.get()
	if raw == nil {
		return nil, exchangeError(s.Admission.Alias, methodListTools, errors.New("remote: the tools/list result was not received"))
	}
	return raw, nil
}

// AdmitTools replaces the tools this session's admission admits: the
// decision of a host that admits on review, after [Session.Listed] — e.g.
// a one-off admission for a single call. The list is checked as
// [Client.Admit] checks an admission's (each tool named once, each pinned
// by a lowercase hex SHA-256); a tool whose listed definition has another
// digest stays uncallable. The client's registered admission of the alias
// does not change. Call it before the session's calls, not during one.
func (s *Session) AdmitTools(tools []AdmittedTool) error {
	if problems := checkItems("Tools", tools, func(t AdmittedTool) (string, string) { return t.Name, t.Digest }); len(problems) > 0 {
		return fmt.Errorf("remote: admission %q: %w", s.Admission.Alias, errors.Join(problems...))
	}
	s.Admission.Tools = append([]AdmittedTool(nil), tools...)
	return nil
}

// DeclaresTools reports whether the server declared the tools capability
// in its server/discover result (MCP 2026-07-28 §Tools: a server that
// offers tools declares it, and lists them with tools/list).
func (s *Session) DeclaresTools() bool {
	if s.link == nil || s.link.cs == nil {
		return false
	}
	r := s.link.cs.InitializeResult()
	return r != nil && r.Capabilities != nil && r.Capabilities.Tools != nil
}

// AdmitUnlisted admits one tool by name alone on this session, for a
// server that declares no tools capability and so offers no list to pin a
// digest from: its calls are sent without a tools/list before them. The
// host then takes the tool on the server's word — no digest says what it
// is, and nothing tells a changed tool from the one meant — so it is for a
// one-off admission whose caller named both the server and the tool (a
// conformance seam, a test), never for a server a host admits for its
// workflows. It is refused on a session whose server declares tools: list
// them and pin by digest ([Session.AdmitTools]). A later call replaces the
// name; the client's registered admission does not change.
func (s *Session) AdmitUnlisted(tool string) error {
	switch {
	case tool == "":
		return fmt.Errorf("remote: admission %q: a tool name is required", s.Admission.Alias)
	case s.DeclaresTools():
		return fmt.Errorf("remote: admission %q: the server declares tools; admit them by digest", s.Admission.Alias)
	}
	s.unlisted = tool
	return nil
}

// Review negotiates with the server a names exactly as [Client.Connect]
// does, lists the tools it offers ([Session.Listed]) and closes the
// connection: what an operator reviews to write an admission, for an
// exchange that belongs to no run. a is checked like an admission
// [Client.Admit] takes, but neither registered nor read for its tools.
//
// The negotiation.decided record goes where scope says: on scope.RunID's
// log, else as a host event of scope.Tenant and scope.Workspace — with an
// empty tenant, an exchange on behalf of no tenant, kept but delivered to
// no subscriber (OpenWOP interop.md §The audit event; RFC 0242 §B.4). A
// refusal is outbound.VersionUnsupported, as from Connect.
func (c *Client) Review(ctx context.Context, scope negotiate.Scope, a Admission) ([]ListedTool, error) {
	a = cloneAdmission(a)
	a.Tools = nil
	if err := c.validate(&a); err != nil {
		return nil, fmt.Errorf("remote: %w", err)
	}
	s, err := c.connect(ctx, scope, a, false) // closed after one list: nothing to listen for
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.Listed(ctx)
}
