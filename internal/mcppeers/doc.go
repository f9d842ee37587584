// Package mcppeers starts real MCP servers on loopback for tests: the
// servers the host's MCP client (mcp/remote) calls, and the hostile ones
// it must refuse. It is test support; only tests import it.
//
//	StartGo(t, Script)              go-sdk v1.8.0 mcp.Server, stateless streamable HTTP, 2026-07-28
//	StartNode(t, Script)            @modelcontextprotocol/server 2.4.0 (TypeScript SDK), stateless, 2026-07-28
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
// neither SDK's stateless handler acts on them (both answer 202). Every
// server, tool call and
// session ends with the test (t.Cleanup; a call still waiting ends when
// the test's context does, before any cleanup runs).
//
// # Tools
//
// StartGo, StartNode and StartLegacy run these tools (DefaultTools; Script.Tools and
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
// # Node: the TypeScript SDK's server (StartNode)
//
// StartNode runs testpeers/mcp-remote-server.mjs: McpServer behind
// createMcpHandler, a fresh McpServer per HTTP request, the same tools and
// constants, behind a Go recording proxy (Requests, Calls, SlowCalls,
// WaitSlow and SetTools work as on StartGo; slow calls are reported by the
// Node process). What the SDK does differently from go-sdk, each pinned by
// a TestNode* test (raw bytes under testdata/node, beside testdata/wire):
//
//   - Framing: the SDK's default response mode ("auto") answers one
//     application/json body, upgraded to an SSE stream only when a
//     notification precedes the result (annotated with a progressToken);
//     go-sdk always streams SSE. A result is written {"result",
//     "jsonrpc","id"}, an entry refusal {"jsonrpc","error","id"}.
//   - input_required results have no "content" member (go-sdk writes
//     "content": null); requestState bytes are the same string, written
//     with U+2028 and <&> unescaped (go-sdk escapes them).
//   - echo re-encodes the arguments (JavaScript: member order kept,
//     whitespace dropped, numbers as float64); go-sdk echoes the bytes.
//   - url_input has no elicitationId: the SDK's 2026-07-28 URL builder
//     omits it (correlation is requestState's job).
//   - tools/list lists tools in the Script's order, on one page (no
//     PageSize: StartNode refuses one); go-sdk sorts by name. The cache
//     hints default to ttlMs 0, cacheScope "private", on tools/list and
//     server/discover alike (go-sdk: "public").
//   - server/discover reports ["2026-07-28"] whatever Revisions lists:
//     the SDK negotiates earlier revisions by initialize only, served by
//     its stateless legacy fallback (no Mcp-Session-Id) when Revisions
//     lists one, refused -32022 otherwise. Revisions must list 2026-07-28.
//   - -32021: the SDK itself refuses, 400, when a tool returns an input
//     request the request's clientCapabilities do not cover (same data
//     as go-sdk's peer, message "Cannot request input '<key>' …"); a
//     retry that asks nothing is not checked (the go-sdk peer checks every
//     round).
//   - A retry with a requestState the tool did not issue, a missing or
//     unknown answer, or an accept without a name is refused in the SDK's
//     requestState.verify seam: HTTP 200, -32602 "Invalid or expired
//     requestState", data {"reason":"invalid_request_state"}, whatever the
//     reason (go-sdk's peer: HTTP 400, -32602 naming the reason, no data).
//     A retry with inputResponses but no requestState never reaches that
//     seam, and McpServer turns anything a tool throws into an isError
//     result, so it completes isError with the reason as text.
//   - An unknown tool is HTTP 200, -32602 "Tool <name> not found"
//     (go-sdk: 400, `unknown tool "<name>"`); invalid arguments complete
//     isError "Input validation error: …" (go-sdk: 400, -32602).
//   - -32022 is "Unsupported protocol version: <v>" with data {supported:
//     ["2026-07-28"], requested}; a MCP-Protocol-Version header with no
//     _meta envelope is -32602 with data {envelope: {missing: ["_meta"]}}
//     before any version check.
//   - BearerToken: the SDK's requireBearerAuth answers 401
//     application/json {"error":"invalid_token","error_description":…}
//     with WWW-Authenticate: Bearer error="invalid_token",
//     error_description="…", resource_metadata="…" (go-sdk: text/plain,
//     resource_metadata only). The RFC 9728 document is the same.
//   - A client's notifications/cancelled reaches a fresh McpServer, which
//     cannot cancel another request's handler; the aborted POST does
//     (the request's abort signal), as on go-sdk.
package mcppeers
