// Package mcp is the MCP 2026-07-28 server mount: one http.Handler that
// serves a host's workflows as MCP tools over stateless streamable HTTP,
// with multi-round input (MRTR) and, optionally, the Tasks extension
// (io.modelcontextprotocol/tasks). It implements the OpenWOP v2 interop
// map's mcp rows, interop.md §MCP tasks and cancellation and §Trace context,
// and the mount's parts of interop.md §The facets and §Negotiation is a
// protocol.
//
// A tool is a workflow the caller may start (RunStore.ListWorkflows); a
// tool call is a run; an MCP task is that run. The mount keeps no task
// store and no session: every request carries its own revision and client
// capabilities in _meta, and is authenticated by the host's
// SubjectResolver.
//
// # Why the mount dispatches itself
//
// go-sdk's stateless handler serves 2026-07-28 but checks headers in the
// wrong order, drops client notifications, cannot emit -32021, Tasks,
// notifications/tasks or per-caller tool lists, and costs ~170 µs and
// ~400 KB per request in process. The mount therefore parses and answers
// the modern path itself with its own small result structs (every one
// carries resultType). go-sdk is used only by the tests, as the interop
// client and the benchmark baseline; the mount reads the few
// clientCapabilities members it acts on itself, so the library does not
// pull go-sdk's dependency tree into hosts. The legacy initialize era is
// not served: initialize answers 404 -32601.
//
// # Request path
//
// guard.go lists the guard's steps and their answers: POST only; the
// loopback Host check against DNS rebinding and the Origin allowlist
// (403);
// authentication (401 with WWW-Authenticate, 403) before any work (OpenWOP interop map, mcp.authorization);
// the body read through internal/httpbody — at most MaxBodyBytes (413),
// arriving within BodyTimeout (408), memory growing with the bytes that
// arrive rather than the length declared; one JSON-RPC message per POST,
// member names matched exactly, batches refused; unknown and removed methods 404 -32601 (OpenWOP interop map, mcp.methods and mcp.headers);
// Mcp-Method, Mcp-Name (name or taskId, Base64 sentinel decoded) and
// MCP-Protocol-Version agreeing with the body, else 400 -32020, before
// version selection (OpenWOP interop map, mcp.headers; MCP 2026-07-28 streamable HTTP §Server Validation); the negotiate policy, whose decision is
// recorded as a negotiation.decided host event of the caller's tenant, and
// -32022 with data.supported and data.requested (OpenWOP interop.md §Negotiation is a protocol; interop map, mcp.headers); _meta
// protocolVersion and clientCapabilities, else -32602 (OpenWOP interop map, mcp.meta). wire.go holds
// the framing: writeError is the one function that turns an error into
// wire bytes, with the HTTP status table.
//
// # Operations
//
//   - server/discover: supportedVersions = the policy's revisions,
//     capabilities.extensions exactly the extensions served, serverInfo,
//     resultType, ttlMs and cacheScope public (OpenWOP interop map, mcp.methods).
//   - tools/list: the caller's workflows sorted by name, cacheScope private,
//     ttlMs; cached per authorization context (tenant, workspace,
//     principal, authentication, sorted scopes) for ListTTL, with
//     [Server.InvalidateTools], and never for an anonymous Subject; more than 100 tools are paged with an
//     opaque cursor (OpenWOP interop map, mcp.methods). A workflow's TaskSupport becomes
//     execution.taskSupport when the extension is served.
//   - tools/call: arguments validated against the input schema (compiled
//     once, santhosh-tekuri/jsonschema/v6) before any run exists, else
//     -32602 (OpenWOP interop map, mcp.methods); a new untrusted run over mcp per call, carrying the
//     trace context of _meta or the traceparent header (OpenWOP interop.md §Trace context); awaited
//     until it finishes, asks for input or BlockTimeout passes. Completed
//     → CallToolResult with the output as text, structuredContent when it
//     is an object and artifacts as embedded resources; failed or
//     cancelled → isError true, never a JSON-RPC error (OpenWOP interop map, mcp.methods).
//   - MRTR (mrtr.go; OpenWOP interop map, mcp.mrtr): a suspended run answers input_required
//     with one elicitation/create per open interrupt keyed by interruptId —
//     form mode only for flat, non-secret schemas, URL mode for
//     credentials (connectUrl) or host pages, otherwise an isError result
//     saying the input is needed out of band; no elicitation declared is
//     -32021 {"elicitation":{}} (a form without form mode declared,
//     {"elicitation":{"form":{}}}), and the run, which that answer hands to
//     nobody, is cancelled (reason "mcp-missing-capability-elicitation" or
//     "…-elicitation-form"). requestState is sealed by mcp/sealed and
//     bound to the principal, a TTL, the request digest, the run, the
//     interrupts and the round; it opens once. A retry resolves each
//     answered interrupt with the caller as resolver; every refusal
//     (forged, expired, replayed, foreign, other request, rounds above
//     MaxRounds with data.reason mcp_mrtr_rounds_exceeded) is -32602 and
//     leaves the run as it was. A non-eligible resolver is -32602 with
//     data.reason not_eligible, never an internal error.
//   - Tasks (tasks.go; OpenWOP interop.md §MCP tasks and cancellation): a call that declared the extension gets
//     CreateTaskResult whenever its run is not terminal at answer time
//     (TaskWait); taskId is the projected runId; tasks/get (read-only),
//     tasks/update and tasks/cancel answer an unknown, malformed or foreign
//     taskId with one byte-identical -32602; every tasks/* needs the
//     extension declared in that request (-32021). A tool whose
//     TaskSupport is required is -32021 for a call without it; forbidden
//     never becomes a task. Input the call declared no capability for is
//     refused exactly as on a blocking call: -32021 and the run cancelled
//     when the run suspends while the call waits; when it suspends after
//     the task was answered, the mount (which follows such a task's run
//     while it lives) cancels the run, and tasks/get reports the task
//     failed with that -32021 as its error object. No run waits for an
//     answer its client cannot give.
//   - subscriptions/listen (listen.go; OpenWOP interop map, mcp.tasks.methods): an SSE stream, acknowledged
//     first, then notifications/tasks for the readable tasks named.
//
// # Host extension points (host.go, optional)
//
// A host may also serve what is not a workflow, each through a small
// interface in Config and each off (neither served nor advertised) unless
// set:
//
//   - NativeTools: tools beside the workflows in tools/list (a workflow
//     keeps its name), their arguments validated the same way before the
//     host runs. A call answers with content (content.go: text, image,
//     audio, embedded resources, resource links), with input requests, or
//     with a Handoff that continues the call as a run of one of the
//     caller's workflows — answered as that workflow's call would be,
//     task included, so a tool can gather input and then run long. A
//     request carrying _meta progressToken whose tool reports progress is
//     answered as an SSE stream: notifications/progress, then the result.
//   - Prompts: prompts/list (sorted, private, ttlMs) and prompts/get,
//     which checks the prompt is listed and its required arguments are
//     present and keeps arguments plain strings (OpenWOP interop map, mcp.methods).
//   - Resources: resources/list, resources/templates/list and
//     resources/read; the mount normalizes the URI, refuses traversal and
//     any scheme outside ResourceSchemes before the host sees it (OpenWOP interop map, mcp.methods);
//     an unknown URI is -32602 "Resource not found" with data.uri, never
//     empty contents (SEP-2164). Every list and read carries ttlMs and
//     cacheScope (OpenWOP interop map, mcp.cache).
//   - Completions: completion/complete, at most 100 values.
//
// Native tools, prompts and reads may answer input_required (input.go)
// with elicitation (form or URL), sampling/createMessage and roots/list
// requests under keys the host chooses. Each request must be covered by
// the request's declared capabilities, else one -32021 names everything
// missing (OpenWOP interop map, mcp.meta). The host's state is sealed into requestState as a host
// grant (mcp/sealed: principal, request digest — OperationDigest for
// prompts and reads —, TTL, round, single use); a retry hands the host
// the responses to exactly the keys it asked, and every refusal of the
// state is the one -32602 (OpenWOP interop map, mcp.mrtr; interop.md §The MCP round ceiling). A retry without requestState
// hands the host whatever responses the client sent: SEP-2322 lets a
// server complete from them, and they carry no more authority than
// arguments.
//
// # Cancellation (inflight.go; OpenWOP interop.md §MCP tasks and cancellation)
//
// From CreateRun (or an MRTR retry) until its whole response is flushed,
// a request owns its run: a client disconnect, or a notifications/cancelled
// naming the request id from the same Subject, cancels the run with reason
// "mcp-request-cancelled". A native tool call's context is cancelled the
// same way, and the call then answers a cancelled isError result. Once the response is sent nothing the client
// does affects the run. The host sends notifications/cancelled only to end
// a listen stream.
//
// An anonymous Subject (AllowAnonymous) identifies nobody — every
// anonymous caller may resolve to the same one — so an anonymous request
// is named only by a notification on its own connection: beside the call
// over HTTP/2, while over HTTP/1.1 such a client cancels by closing the
// call. Nothing is cached for an anonymous Subject either: its tool list
// is read from the store on every request.
//
// # Streams and time limits
//
// subscriptions/listen and a native tool call with progress answer with
// SSE. A stream lives as long as it has something to say: the body was
// read in full, so no read deadline applies (an http.Server ReadTimeout
// bounds only the body, and openStream lifts any deadline again), and
// each message gets its own write deadline, StreamWriteTimeout, which
// replaces the server's WriteTimeout for the stream and cuts a client
// that stops reading as a disconnect would. Over HTTP/2 that deadline is
// cleared between messages, since it would reset an idle stream.
//
// # Panics (recover.go)
//
// A panic in the host's code the mount calls (RunStore, SubjectResolver,
// extension points) or in the mount is logged once at error level (where,
// value, stack; never request content) and costs only its own work. A
// request answers HTTP 500 with JSON-RPC -32603 "Internal error" naming
// its id when known — on an SSE stream already under way, as that stream's
// last event — and a run it owned is cancelled like any run its request
// did not hand over. The goroutines the mount starts recover too: a listen
// stream whose watcher panics ends with -32603 naming the listen request,
// a task whose input guard panics is no longer guarded, a disconnect watch
// that panics cancels nothing.
//
// # Shutdown (Server.Drain, Server.Close)
//
// Drain, called as the host's HTTP server starts draining, makes every
// request the mount is serving answer at once and refuses every later one
// with HTTP 503 and a JSON-RPC -32603 "Server shutting down". A tools/call
// waiting on its run answers what the run's state calls for; a run still
// working becomes CreateTaskResult for a request that declared the Tasks
// extension (the run continues), and otherwise a 503 -32603 naming the
// request, after the request, still its owner, cancelled the run (reason
// "mcp-request-cancelled"). Listen streams end with notifications/cancelled.
// Close, once the HTTP server has drained, ends what is left and waits for
// the mount's background work.
//
// # Departures worth knowing
//
//   - A run the host reports as failed in the host (interop.Run.Fault)
//     is a protocol-level error on the Tasks surface: task status failed
//     with an error object (SEP-2663), where an ordinary failed run is a
//     completed task with isError. A tools/call answer has no such status,
//     so there the run is an isError result with a fixed text ("The tool
//     failed in the host."), never a JSON-RPC error (OpenWOP interop map, mcp.methods and mcp.tasks.status).
//   - AllowOwnLoopbackOrigin (off by default) lets the page a loopback
//     listener serves itself call it: the Origin must name the connection's
//     scheme, the listener's port and its IP (or localhost on 127.0.0.1 and
//     [::1]), all read from the connection, never from the Host header. A
//     page on another port or loopback address is another server and needs
//     AllowedOrigins; a foreign Host on a loopback listener is refused
//     whatever the allowlist says (DNS rebinding).
//   - A blocking call without the tasks extension that outlives
//     BlockTimeout cancels its run (reason "mcp-request-timeout") and
//     answers isError: nobody else could ever collect its result.
//   - A run cancelled for a missing capability is task status failed with
//     the -32021 error object rather than cancelled (the interop map's
//     row): the failure is a protocol-level error the mount raised, which
//     SEP-2663 reports as failed. The need for input is known only when a
//     run suspends, so a call cannot be refused before its run exists.
//   - A run that suspends on input that can only be given out of band (the
//     isError result that says so) keeps waiting: the host may resolve it
//     elsewhere.
//   - On the MCP wire the rounds ceiling is -32602 with data.reason
//     "mcp_mrtr_rounds_exceeded"; OpenWOP interop.md §The MCP round ceiling
//     names that OpenWOP code for the host as client.
package mcp
