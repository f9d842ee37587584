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
// # Building a mount
//
// [New] takes the mount's [Deps] — the RunStore, the SubjectResolver, the
// MCP negotiate policy and auditor, the requestState sealer: what it
// cannot run without — and its [Options]: ServerInfo, which is required,
// and settings whose zero values select documented defaults. The root
// package fills the Deps in from its own configuration; a host there sets
// only Options. [Options.Served] (and [Server.Served]) report what such a
// mount serves, so a host declares its mcp facet from it rather than
// restating it.
//
// # Why the mount dispatches itself
//
// go-sdk's stateless handler serves 2026-07-28 but checks headers in the
// wrong order, drops client notifications, cannot emit -32021, Tasks,
// notifications/tasks or per-caller tool lists, and is an order of
// magnitude slower in process. The mount therefore parses and answers the
// modern path itself with its own small result structs (every one carries
// resultType). Measured in process on the same request bytes
// (BenchmarkToolsList, BenchmarkToolsCallNoop; 2 vCPU, go-sdk v1.8.0's
// StreamableHTTPHandler, stateless, JSON responses, as the baseline):
//
//	                 this mount                       go-sdk
//	tools/list       ~9-14 µs, 8.0 KB, 36 allocs      ~170-360 µs, 359 KB, 195 allocs
//	tools/call noop  ~16-27 µs, 10.5 KB, 68 allocs    ~380-530 µs, 430 KB, 220 allocs
//
// although each of the mount's requests is also authenticated, negotiated
// and audited, and its tools/call creates, runs and awaits a real
// memstore run. The legacy initialize era is not served: initialize
// answers 404 -32601.
//
// The core mount does not import go-sdk outside its tests: it reads the
// few clientCapabilities members it acts on itself, so a host that mounts
// only its workflows does not link go-sdk's dependency tree (`go list
// -deps` of this package names none of go-sdk's packages). The optional extension points (package mcp/ext) do: a host
// that serves native tools, prompts, resources or completions answers in
// go-sdk's exported protocol types, which carry the 2026-07-28 members,
// rather than in a second copy of them — and pays for it with 30 more
// packages (go-sdk, its JSON codec, oauth2, jsonschema-go, uritemplate).
// mcp/ext still encodes those values itself; its package documentation
// says why.
//
// # Request path
//
// guard.go lists the guard's steps and their answers: POST only; the
// loopback Host check against DNS rebinding and the Origin allowlist
// (403);
// authentication (401 with WWW-Authenticate, 403) before any work (OpenWOP interop map, mcp.authorization),
// through the admission step shared with the A2A bindings (internal/admit),
// which records every refusal and fails a request whose decision cannot be
// recorded with 500 -32603, as negotiate.AuditorOptions.Synchronous documents;
// the body read through internal/httpbody — at most MaxBodyBytes (413),
// arriving within BodyTimeout (408), memory growing with the bytes that
// arrive rather than the length declared; one JSON-RPC message per POST,
// read in place by the JSON-RPC codec shared with the A2A bindings
// (internal/jsonrpc), member names matched exactly, batches refused; unknown and removed methods 404 -32601 (OpenWOP interop map, mcp.methods and mcp.headers);
// Mcp-Method, Mcp-Name (name or taskId, Base64 sentinel decoded) and
// MCP-Protocol-Version agreeing with the body, else 400 -32020, before
// version selection (OpenWOP interop map, mcp.headers; MCP 2026-07-28 streamable HTTP §Server Validation); the negotiate policy, whose decision is
// recorded as a negotiation.decided host event of the caller's tenant, and
// -32022 with data.supported and data.requested (OpenWOP interop.md §Negotiation is a protocol; interop map, mcp.headers); _meta
// protocolVersion and clientCapabilities, else -32602 (OpenWOP interop map, mcp.meta).
//
// Every operation returns its answer — a result object, a notification's
// acceptance or a listen stream — or an error, and never writes HTTP:
// wire.go (with its SSE framing in wire_sse.go) is the binding, the one
// place that turns answers and errors into status codes and bytes, with
// the HTTP status table. A request that owns a run is answered through the
// run's flight (inflight.go). [WriteError] gives host middleware in front
// of the mount — authentication, a rate limiter — the same shapes.
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
// # Extension points (package mcp/ext, optional)
//
// A host may also serve what is not a workflow — native tools beside the
// workflows in tools/list, prompts, resources and argument completion —
// by building an [Extension] with mcp/ext and setting
// Options.Extension; each part is off (neither served nor advertised)
// unless set. The mount guards those requests like any other, validates a
// native tool's arguments against its schema before the host runs, owns
// the run a native tool hands its call to (answered as that workflow's
// call would be, task included), seals and opens the host's input-round
// state (mcp/sealed host grants: principal, request digest, TTL, round,
// single use) and writes every answer; mcp/ext turns the host's answers
// into result objects. The contract between the two is internal
// (mcp/internal/mount).
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
// SSE, written by the writer shared with the A2A bindings
// (internal/eventstream). A stream lives as long as it has something to
// say: the body was read in full, so no read deadline applies (an
// http.Server ReadTimeout bounds only the body, and the writer lifts any
// deadline again when the stream opens), and each message gets its own
// write deadline, StreamWriteTimeout, which replaces the server's
// WriteTimeout for the stream and cuts a client that stops reading as a
// disconnect would. The deadline is cleared between messages, since over
// HTTP/2 it would reset an idle stream and over HTTP/1.1 it would outlive
// the stream on the connection. An idle listen stream gets a keep-alive
// comment after 25 s, written by a timer, not a goroutine per stream.
// tools/call waits for its run through internal/settle, saying what
// settled means for MCP: terminal, or asking the caller for input.
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
