// Command host is the wopinterop demo host: a small OpenWOP v2 REST surface
// over the in-memory store (package interop/memstore), with the library's
// A2A 1.0 surface and MCP 2026-07-28 server mounted beside it through the
// root package (wopinterop.New, Host.Routes, Host.NewMCP; see newHandler
// in server.go, interop.go, a2a.go, mcp.go and mcpconformance.go; what the
// store holds at start is seed.go). It is the program a newcomer runs first and the target of the
// end-to-end and real-peer tests.
//
//	go run ./examples/host                      # listens on 127.0.0.1:8080
//	go run ./examples/host -addr 127.0.0.1:0    # any free port
//	go run ./examples/host -keys acme=s3cret,initech=k2
//	go run ./examples/host -public-url https://demo.example.com
//	go run ./examples/host -routing-secret "$(openssl rand -hex 32)"
//	go run ./examples/host -seal-key "$(openssl rand -hex 32)"
//	go run ./examples/host -push-allow http://127.0.0.1:9999
//	go run ./examples/host -a2a-agent summarizer=https://agent.example/.well-known/agent-card.json
//	go run ./examples/host -peer-allow http://127.0.0.1:9998 -a2a-agent local=http://127.0.0.1:9998/.well-known/agent-card.json
//	go run ./examples/host -peer-allow http://127.0.0.1:9997 -mcp-server docs=http://127.0.0.1:9997/mcp
//	go run ./examples/host -card-signing-key card-key.pem
//	go run ./examples/host -log-level debug
//	go run ./examples/host -run-retention 1h -host-event-max-age 6h
//	go run ./examples/host -body-timeout 10s
//	go run ./examples/host -conformance-seams   # TEST ONLY, see below
//
// -public-url sets the origin of the links the host hands out (statusUrl,
// eventsUrl, resolveUrl) and of every URL on the agent card; by default it
// is http:// plus the bound address. Links never come from the request's
// Host header.
//
// -routing-secret (hex or base64, at least 32 bytes) derives the per-agent
// A2A routing values, the a2aTenant of GET /agents. Without it the host
// draws a random secret per process, so those values change on every
// restart and a peer holding an old one gets the never-minted answer.
//
// -seal-key (hex or base64, at least 32 bytes) seals the requestState of
// MCP multi-round tool calls (an approval asked for in the middle of a
// tools/call). Without it the host draws a random key per process, so a
// round still pending across a restart answers -32602 and the client starts
// the call again; replicas behind one URL need the same key.
//
// -push-allow lists exact origins (scheme://host:port, comma-separated)
// that A2A push deliveries may reach although they are plain http or on a
// loopback or private address: local push receivers. Every other push
// destination must be https to a public address (the library's egress
// guard, package egress). The card advertises pushNotifications either way.
//
// -a2a-agent alias=CARD_URL (repeatable) admits a remote A2A agent: the
// host is then its client (package a2a/delegate), and every tenant gets
// the workflow delegate-remote (delegation.go), inputs {"agent": alias,
// "skill"?, "text"?, "data"?}. At start the host reads each card and pins
// every skill on it by its current digest (delegate.SkillDigest, logged
// with the alias); a skill that changes afterwards is refused until the
// host restarts and admits it again (admission-boundaries §18.3). A card
// that cannot be read stops the start. The run connects on its own log
// (one negotiation.decided), sends the data and text, and follows the
// remote task; each remote input request suspends the run on a
// clarification interrupt quoting the agent's request, and only the
// answer given there is sent (declined: the remote task is cancelled and
// the run fails; cancelling the run cancels the remote task). The run
// completes with the admitted artifacts as its artifacts and its outputs,
// acceptance pending verification. -peer-allow lists the exact origins
// remote agents may be reached at although plain http or on a loopback or
// private address (the client side's egress guard, as -push-allow is the
// push side's); -a2a-bearer-file names a file holding the bearer token
// presented to the agents (none without it).
//
// -mcp-server alias=URL (repeatable) admits a remote MCP server to the
// host's MCP client (package mcp/remote, built by the library from the mcp
// record: its floor, preferred revision and mrtr.maxRounds 4 — mcpclient.go).
// At start the host reviews each server (server/discover, tools/list; the
// negotiation recorded as a host event of no tenant) and pins every tool it
// lists by its current digest (remote.ToolDigest, logged with the alias);
// a tool that changes afterwards is refused until the host restarts and
// admits it again (admission-boundaries §18.3). A server the guard refuses
// stops the start; one where nothing answers at start is admitted without
// tools (logged): its health reads unreachable and a call is refused. The
// suite's operator contract binds conformance to its fake server and
// conformance.down to an address nothing answers. The workflow
// conformance-mcp-client (OpenWOP RFC 0204, ctx.mcp), inputs
// {"method","serverId": alias, …}, runs one node, mcp-client, on behalf of
// its run — node.completed {nodeId, outputs: {"result": …}} or node.failed
// {nodeId, error} on the run's log, the run's outputs the node's:
// callTool ("name", "arguments"?) calls one admitted tool (memstore's
// RunContext.CallTool over the client's interop.ToolCaller; each input
// request of the server a clarification interrupt of the run answered
// only by a user) and its result is the server's tools/call result
// unaltered, isError included; listTools ("cursor"?) is one tools/list
// page as the server sent it — discovery, returned as observed, while a
// call is still checked against the admission; serverHealth is
// {"state":"reachable","discover": the server/discover result as sent},
// {"state":"unreachable"} or {"state":"incompatible"}. One
// negotiation.decided goes on the run's log for each exchange, and an
// unknown serverId fails the node and the run not_found. Because every
// tenant has that workflow, the mcp record claims client: true (OpenWOP
// RFC 0204) and discovery's fixtures[] lists it. -mcp-server servers are
// sent no credential; -peer-allow lets local ones be reached.
//
// -card-signing-key names a file holding a private key — a JWK, or PEM
// (PKCS #8, SEC 1 or PKCS #1; e.g. openssl genpkey -algorithm ed25519) —
// that signs every A2A agent card served: the public card, the extended
// card and the per-agent cards (A2A 1.0 §8.4; package a2a/cardsig). The
// signatures' kid is the JWK's, else the key's RFC 7638 thumbprint; both
// it and the algorithm are logged at start, and a verifier trusts the
// public half under that kid. Without it the cards are unsigned.
//
// -log-level (debug, info, warn, error; default info) filters the log on
// stderr (log/slog text). At info every request writes one line: the HTTP
// method, the path, for the A2A JSON-RPC interface and the MCP mounts the
// JSON-RPC method (A2A's read from the first 512 bytes of the body, which
// the handler then reads whole; MCP's from the Mcp-Method header; a
// method the surface does not know is logged as "other"), the status, the
// duration and the tenant the credential authenticated. Never a key, a
// token, a header value, a query string or a body. A response of 500 or
// more is logged at error level, and so is every fault behind it.
//
// -run-retention (default 24h) is how long a finished run is kept after
// it ended; then it answers 404 like an id never minted, and its
// Idempotency-Key starts a new run. 0 keeps every run for the life of the
// process. -host-event-max-age (default 24h) is how long a durable host
// event — the negotiation.decided records among them — is kept for
// Last-Event-ID resumption, on top of the 10,000 newest per tenant
// (memstore.WithRunRetention, WithHostEventMaxAge).
//
// -body-timeout (default 30s) is how long a client may take to send a
// request body. The http.Server's ReadTimeout is 10 s for the header plus
// it, for every route (net/http lifts it once the body has been read, so
// it never cuts a response); a REST body that misses it is 400
// validation_error and the connection closes. There is no WriteTimeout,
// which would cut every event stream at that age: GET /host/events bounds
// each frame's write (10 s) instead, so a client that stops reading is
// dropped (setServerTimeouts in main.go, deadline per frame in sse.go).
// Idle keep-alive connections close after 2 min.
//
// -conformance-seams serves the OpenWOP conformance seams (seams.go) and
// advertises conformance.seamsProfile "openwop-conformance-seams-v2". It is
// for conformance runs only: the mint seam,
// POST /conformance/seams/sample/auth/credential/mint {"lane":"api-key"},
// answers {"credential": KEY}, a fresh principal of the caller's tenant
// whose key works at once on every surface. Only an authenticated caller
// reaches it, for its own tenant, so it grants no tenant more than the
// caller's key does; but any key holder can mint keys that survive a
// change of -keys until the process ends (at most 1024), which is why it
// is off by default, and then its path is an unknown route (404).
//
// The a2a seam, POST /conformance/seams/sample/a2a/invoke {"peerUrl",
// "authenticated"?, "peerOffersOnly"?, "requestVersion"?} (seam_a2a.go),
// makes the host the client of the suite's peer for one call: one run of
// a hidden workflow (on no list, not startable by anyone else) in the
// caller's tenant admits the peer for the call — every skill on its card
// pinned, the versions considered restricted to peerOffersOnly or
// [requestVersion] (delegate.Admission.Versions) — connects on that run
// and sends one message with returnImmediately (delegate.Conn.Submit),
// without waiting for the task. It answers 200 {"negotiatedVersion",
// "runId"}, or the envelope delegate.ProjectError gives, with
// details.runId and details.protocol "a2a": 400
// interop_version_unsupported when the peer offers nothing at or above
// the floor (then nothing is sent to it), 403 forbidden for a local peer
// outside -peer-allow. A refused call still creates its run, which fails:
// the run's log is where the negotiation.decided record lives. The seam
// authenticates with -a2a-bearer-file's token, else one drawn per process.
//
// The mcp seam, POST /conformance/seams/sample/mcp/invoke {"serverUrl",
// "authenticated"?, "requestVersion"?, "tool"?, "arguments"?,
// "clientCapabilities"?, "elicitationAnswer"?} (seam_mcp.go), does the same
// on the host's MCP client: a hidden run admits the server for the call —
// pinned to requestVersion when given, with a credential drawn per process
// unless authenticated is false — and connects on that run. With a tool,
// every tool the server lists is admitted by its current digest
// (Session.Listed, Session.AdmitTools; a server declaring no tools
// capability has no list, and the named tool alone is admitted by name,
// Session.AdmitUnlisted) and called once; an input round is answered from
// elicitationAnswer for the modes clientCapabilities.elicitation declares.
// It answers 200 {"negotiatedVersion", "runId", "mrtr"?: {"inputRequiredSeen",
// "retried", "requestStateEchoed"}}, or the envelope remote.ProjectError
// gives, with details.runId and details.protocol "mcp": 400
// interop_version_unsupported for a floor refusal (nothing at that
// revision goes out), 422 mcp_mrtr_rounds_exceeded past mrtr.maxRounds 4
// (the server sees at most 5 calls), 403 forbidden outside -peer-allow.
//
// When it is ready it prints exactly one line, "listening on http://ADDR",
// with the address it really bound. SIGINT or SIGTERM drains it: open event
// streams and long polls end, in-flight requests finish, then the store is
// closed. The A2A and MCP requests end with the drain too (an MCP
// tools/call still waiting for its run then cancels that run, as a client
// disconnect would), MCP listen streams end, and the queued
// negotiation.decided records are delivered (wopinterop.Host.Close) before
// the store closes; if some could not be (the store refused them past the
// auditor's retries), one warning line gives their count.
//
// # Callers
//
// Every operation except discovery and the agent card needs
// "Authorization: Bearer KEY". The default keys are demo-acme (tenant acme)
// and demo-globex (tenant globex); -keys replaces them. A key maps to the Subject {Tenant: t, Principal:
// "key:"+t, Authenticated: true}; the tenant comes from the credential only
// (OpenWOP interop.md §Isolation). A minted key maps to a principal of its own
// ("key:"+t+":minted-"+random).
//
// # Fixtures and agents
//
// Every tenant gets the five conformance fixtures (conformance-noop,
// -approval, -failure, -delay, -cancellable) and the interrupt fixtures
// (memstore.InterruptFixtures): conformance-approval-approvers, which only
// urn:conformance:listed-approver may resolve (no key names that
// principal, so every caller is refused, on every surface);
// conformance-credential, a credential interrupt for provider "synthetic"
// whose connectUrl is BASE/connect/synthetic (TASK_STATE_AUTH_REQUIRED over
// A2A, URL mode over MCP; the demo has no authorization server, so nothing
// is served there, no credential ever resolves and an "authorized" answer
// is refused), registered only when BASE is https or loopback http; and
// conformance-clarification (flat), -nested and -sensitive (a password
// field), which MCP asks in form mode only when flat. With a workflow
// registry (always, in main) every tenant also has conformance-mcp-client
// (see -mcp-server above).
//
// Every tenant also has the demo agent and the conformance agent pack's
// resolver (core.conformance.agent-pack), whose system prompt and handoff
// schemas carry the suite's canaries and never leave the store. acme alone
// has the workflow acme-report, globex alone the agent globex-analyst, so
// what a caller sees (tools/list, GET /agents) is its tenant's.
//
// # Operations
//
//	GET  /.well-known/openwop                      discovery root (no credential; ETag, 304) — OpenWOP capabilities.md §1–§4
//	POST /runs                                     createRun, honours Idempotency-Key
//	GET  /runs                                     listRuns: limit, cursor, workflowId, status
//	GET  /runs/{runId}                             getRun: RunSnapshot, ETag, 304
//	POST /runs/{runId}/cancel                      cancelRun
//	POST /runs/{runId}/interrupts/{interruptId}    resolveInterruptByRun, body {"resumeValue":…}
//	GET  /runs/{runId}/interrupts/{interruptId}    the open interrupt: message, resumeSchema, credential
//	                                               (the MCP URL-mode page for input no form may ask)
//	GET  /runs/{runId}/events/poll                 pollRunEvents: afterSequence, timeout
//	GET  /host/events                              host events over SSE — OpenWOP events.md §Host events
//	POST /runs/{runId}:cancel                      cancelRun, the colon form one suite leg uses
//	GET  /agents                                   the caller's agent inventory, with a2aTenant — OpenWOP RFC 0202 §B
//	POST /conformance/seams/sample/…               the conformance seams, with -conformance-seams only (see above)
//
// A2A 1.0 (answers in A2A shapes only, never the OpenWOP envelope — OpenWOP RFC 0211 §C):
//
//	GET  /.well-known/agent-card.json              the public agent card (no credential) — OpenWOP interop map, a2a.card
//	POST /a2a                                      JSON-RPC interface
//	     /a2a/rest/…                               HTTP+JSON interface
//
// The card lists both interfaces at 1.0, streaming, the extended card and
// the bearer scheme, and exactly one skill: conformance-approval, the
// workflow the OpenWOP suite requires the interface to route. Per-agent
// cards are reached with GetExtendedAgentCard and an a2aTenant value.
//
// MCP 2026-07-28 (JSON-RPC answers only, never the OpenWOP envelope —
// OpenWOP interop map, mcp.methods, mcp.headers and mcp.meta):
//
//	POST /mcp                                      the MCP server (stateless streamable HTTP)
//	POST /mcp-conformance                          the official MCP conformance suite's fixtures
//
// /mcp-conformance mounts a second MCP server (Host.NewMCP) over the same
// store, audit trail, requestState key and version policy for the
// official conformance suite (package mcpfixtures): every caller is an
// anonymous Subject in the dedicated tenant "mcp-conformance", which holds
// only the suite's fixtures and which no API key reaches, so the suite's
// fixtures and the OpenWOP fixtures coexist. Loopback pages may call it
// (the suite's DNS-rebinding scenario sends a loopback Origin).
// TestMCPConformanceSuite runs the suite against it.
//
// Every tool is one of the caller's workflows (the fixtures, and for acme
// acme-report), with MRTR (an approval or a flat clarification is asked as
// a form elicitation; a nested or secret answer at the interrupt's page,
// in URL mode, when the client declares it, else the call is an isError
// result; a credential at its connectUrl) and the Tasks
// extension (io.modelcontextprotocol/tasks). The bearer keys are the
// credential (401 with WWW-Authenticate: Bearer otherwise). No browser
// origin is allowed: a request with any Origin header is 403, one without
// (SDKs, curl) passes; on a loopback listener a Host that does not name
// the loopback interface is 403 (DNS rebinding). Other verbs are 405.
//
// Path ids accept the projected form "acme~2F…" and the percent-encoded form
// "acme%2F…" (OpenWOP identity.md §5); JSON bodies always carry the bound form "acme/…". An id
// whose tenant segment is not the caller's is 403 id_tenant_mismatch (OpenWOP identity.md §5);
// a bare opaque id is 400 validation_error, since no 1.x version is
// advertised (OpenWOP identity.md §5).
//
// # Wire choices
//
// Every refusal is the closed envelope {"error","message","details"?} with
// the status the OpenWOP error registry gives its code (OpenWOP errors.md §The envelope). Where
// the registry has no fitting row the host picks the nearest one:
//
//   - A method a path does not serve is 404 not_found with an Allow header:
//     the registry has no 405 code, and an operation the host does not serve
//     is not_found (OpenWOP errors.md §Unadvertised operations).
//   - OpenWOP-Version "2" or "2.0" (or none) selects this surface; a
//     well-formed other major is 406 protocol_version_unsupported with
//     details.protocolVersions, as versioning.md §1.3 requires; a value that
//     is not a version is 400 validation_error. Every response carries
//     OpenWOP-Version: 2.0.
//   - A malformed Idempotency-Key is 400 idempotency_key_invalid.
//   - listRuns: limit below 1 is 400; above 100 (runList.maxPageSize) it is
//     clamped. nextCursor is omitted on the last page.
//   - pollRunEvents: afterSequence defaults to -1 (from the first event);
//     timeout is 0..60 seconds, default 30, where 0 (an extension; the
//     registry minimum is 1) answers at once.
//   - eventsUrl in the createRun answer names the poll endpoint, the one
//     event read this host serves.
//   - Discovery advertises runList and hostEvents as "stable" since "2.0"
//     with witness "witnessable-gated", the library's a2a record (profile
//     a2a-1.0, agentCardUrl, streaming, durableTasks, agentCards) and its
//     mcp record (profile mcp-2026-07-28, serverUrls [BASE/mcp],
//     serverMount streamable-http, features server-discover, mrtr,
//     cacheable-lists and extensions, mrtr.maxRounds 4 — the ceiling of
//     the host's MCP server and of its client —, client: true); both refreshedAt
//     are the constant upstreamRefreshedAt. hostEvents.types lists
//     negotiation.decided as durable: every A2A request, and every MCP
//     request that reaches version selection, records one for the caller's
//     tenant, delivered on GET /host/events (OpenWOP RFC 0242 §B; interop.md §The audit event). The
//     root fixtures[] lists the fixture ids every tenant has; oauth
//     (credentialInterrupt) is advertised with conformance-credential, and
//     conformance (seamsProfile) with -conformance-seams. The agents
//     record advertises manifestRuntime with installScope "tenant" (GET
//     /agents lists the caller's tenant's agents), which a2a.agentCards
//     requires (OpenWOP interop §Per-agent cards). GET /agents entries carry label, packName and
//     hasHandoffSchemas, never the prompt or the schemas.
//   - A request body that does not arrive within -body-timeout, or stops
//     arriving, is 400 validation_error with details.field "body" (the
//     registry has no 408 code, and the request as received is not valid);
//     one over 1 MiB is 413 payload_too_large with details.limitBytes.
//     Either way the connection closes without the rest being read.
//   - Any fault the host did not classify is 500 internal_error with a fixed
//     message; the cause goes to the log, never to the caller.
package main
