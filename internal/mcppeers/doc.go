// Package mcppeers starts real MCP servers on loopback for tests: the
// servers the host's MCP client (mcp/remote) calls, and the hostile ones
// it must refuse. It is test support; only tests import it.
//
//	StartGo(t, Script)              go-sdk v1.8.0 mcp.Server, stateless streamable HTTP, 2026-07-28
//	StartLegacy(t, revision)        a 2025-06-18 or 2025-11-25 server: no server/discover, sessions
//	StartMalformed(t, Mode)         every request answered as the Mode says, server/discover included
//	StartMalformedCalls(t, Mode)    a valid server/discover, every other request answered as the Mode says
//
// Every server serves MCP at Path under Server.Base (Server.URL is the
// endpoint) and records each HTTP request before acting on it
// (Server.Requests, Server.Calls): the HTTP method, MCP-Protocol-Version,
// Mcp-Method, Mcp-Name, Mcp-Session-Id, Authorization, traceparent,
// tracestate, the JSON-RPC id, method and params exactly as sent, and
// params._meta member by member. Notifications are recorded too, though
// go-sdk's stateless handler drops them. Every server, tool call and
// session ends with the test (t.Cleanup; a call still waiting ends when
// the test's context does, before any cleanup runs).
//
// # Tools
//
// StartGo and StartLegacy run these tools (DefaultTools; Script.Tools and
// Server.SetTools change the list; a tool under another name behaves as
// echo). The keys, states and texts are the constants of tools.go.
//
//	echo              the arguments exactly as received, as text and as structuredContent ({} when absent)
//	needs_input       round 1: input_required, inputRequests {NeedsInputKey: form elicitation of
//	                  {name: string}}, requestState NeedsInputState (opaque, with a quote, a backslash,
//	                  <&>, U+2028, a NUL, a non-BMP rune, a tab and a newline). A retry echoing that state
//	                  byte for byte with {action: accept, content: {name}} completes "hello <name>"
//	                  (structuredContent {greeting}); decline or cancel completes isError "declined" or
//	                  "cancelled". Any other state, a missing answer or an accept without a name: -32602.
//	needs_input_loop  never completes: round n answers input_required asking for {name} under LoopKey
//	                  with requestState "loop:<n>" (a retry echoing "loop:<n>" is round n+1); a state it
//	                  did not issue: -32602.
//	url_input         round 1: input_required, a URL-mode elicitation under URLInputKey (url
//	                  Base+AuthorizePath+URLElicitationID, elicitationId URLElicitationID), requestState
//	                  URLInputState; the retry accepted completes "authorized", declined or cancelled
//	                  completes isError.
//	slow              {ms}: answers "slept" after ms; without ms waits until the request's context ends
//	                  (the client went away: go-sdk cancels 2026-07-28 handlers with the POST, and the
//	                  recorder hands the HTTP context to the tool for the others) or the test ends.
//	                  Server.SlowCalls and WaitSlow say how each call ended and whether a
//	                  notifications/cancelled naming it arrived.
//	fails             completes isError "scripted failure", never a JSON-RPC error
//	annotated         text, image, audio, resource_link and embedded resource blocks with annotations and
//	                  _meta, structuredContent, a result _meta; with a progressToken, two
//	                  notifications/progress first (SSE only). Material for translation-loss tests.
//
// The MRTR tools require the elicitation mode they use in the request's
// _meta clientCapabilities (an empty elicitation object means form only);
// without it they answer 400 with MissingRequiredClientCapabilityError
// -32021 and data {requiredCapabilities: {elicitation: {form|url: {}}}}.
// Their round 1 carries "content": null beside inputRequests: go-sdk
// writes it so.
//
// # Revisions and refusals (StartGo)
//
// Script.Revisions (default [2026-07-28]) is what server/discover reports,
// in that order, and what is accepted: a MCP-Protocol-Version outside it,
// and an initialize when it lists no legacy revision, are 400 with -32022
// and data {supported, requested}. Script.BearerToken makes go-sdk's
// auth middleware answer any other Authorization 401 text/plain with
// WWW-Authenticate: Bearer resource_metadata="…" (RFC 9728), a document
// the server serves. Script.CallerTools gives each bearer token tools of
// its own, listed and callable for that caller only. Script.ListCache
// marks tools/list (PrivateList: 60 s, private). go-sdk answers the rest: -32602 for an unknown tool, -32020
// for header/_meta mismatches, 404/-32601 for unknown methods, and
// notifications/tools/list_changed to a subscriptions/listen stream when
// SetTools changes the list.
//
// # What go-sdk v1.8.0's stock client does (facts the tests pin)
//
//   - Against StartGo it sends server/discover, then requests at
//     2026-07-28 with no session; it posts notifications/cancelled when a
//     call's context ends, besides aborting the POST (TestGoSlow).
//   - Refused -32022 at discover, it would retry discover once at a
//     revision from data.supported that it knows, 2026-07-28 or later;
//     with none there it falls back to initialize at 2025-11-25
//     (TestRevisionsStockClient).
//   - Against a legacy server, discover's 404/-32601 makes it fall back to
//     initialize at 2025-11-25, and it accepts the server's answer at
//     2025-06-18 too: it never refuses a revision below 2026-07-28
//     (TestLegacyStockClient).
//   - Malformed servers (TestMalformedStockClient): an unreadable body or
//     SSE event closes the connection (no fallback); any other failed
//     discover (a wrong shape, no supportedVersions it can speak, -32022,
//     HTTP 500) makes it try initialize too; a decode error and a -32022
//     message quote the peer's bytes; an answer under another id is
//     never matched, so the call waits for its context; resultType
//     "deferred" is taken as a complete result; a 9 MiB result is read
//     whole; a 307 is followed to another origin with the body re-sent.
//
// # Node
//
// There is no Node server here yet: testpeers has
// @modelcontextprotocol/client 2.4.0 but not the 2026-07-28 server
// package (@modelcontextprotocol/server 2.4.0), which a Node peer would
// need.
package mcppeers
