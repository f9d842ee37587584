// Command host is the wopinterop demo host: a small OpenWOP v2 REST surface
// over the in-memory store (package interop/memstore). It is the program a
// newcomer runs first and the target of the end-to-end tests; the A2A and MCP
// mounts are added to the same mux (see newHandler in server.go).
//
//	go run ./examples/host                      # listens on 127.0.0.1:8080
//	go run ./examples/host -addr 127.0.0.1:0    # any free port
//	go run ./examples/host -keys acme=s3cret,initech=k2
//	go run ./examples/host -public-url https://demo.example.com
//
// -public-url sets the origin of the links the host hands out (statusUrl,
// eventsUrl, resolveUrl); by default it is http:// plus the bound address.
// Links never come from the request's Host header.
//
// When it is ready it prints exactly one line, "listening on http://ADDR",
// with the address it really bound. SIGINT or SIGTERM drains it: open event
// streams and long polls end, in-flight requests finish, then the store is
// closed.
//
// # Callers
//
// Every operation except discovery needs "Authorization: Bearer KEY". The
// default keys are demo-acme (tenant acme) and demo-globex (tenant globex);
// -keys replaces them. A key maps to the Subject {Tenant: t, Principal:
// "key:"+t, Authenticated: true}; the tenant comes from the credential only
// (RULES R75). Every tenant gets the five conformance fixtures and one demo
// agent.
//
// # Operations
//
//	GET  /.well-known/openwop                      discovery root (no credential; ETag, 304) — R4, R15
//	POST /runs                                     createRun, honours Idempotency-Key
//	GET  /runs                                     listRuns: limit, cursor, workflowId, status
//	GET  /runs/{runId}                             getRun: RunSnapshot, ETag, 304
//	POST /runs/{runId}/cancel                      cancelRun
//	POST /runs/{runId}/interrupts/{interruptId}    resolveInterruptByRun, body {"resumeValue":…}
//	GET  /runs/{runId}/events/poll                 pollRunEvents: afterSequence, timeout
//	GET  /host/events                              host events over SSE — R143, R144
//	GET  /agents                                   the caller's agent inventory
//
// Path ids accept the projected form "acme~2F…" and the percent-encoded form
// "acme%2F…" (R77); JSON bodies always carry the bound form "acme/…". An id
// whose tenant segment is not the caller's is 403 id_tenant_mismatch (R78);
// a bare opaque id is 400 validation_error, since no 1.x version is
// advertised (R80).
//
// # Wire choices
//
// Every refusal is the closed envelope {"error","message","details"?} with
// the status the OpenWOP error registry gives its code (R145, R147). Where
// the registry has no fitting row the host picks the nearest one:
//
//   - A method a path does not serve is 404 not_found with an Allow header:
//     the registry has no 405 code, and an operation the host does not serve
//     is not_found (R146).
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
//     with witness "witnessable-gated"; hostEvents.types is empty because
//     the demo host emits no host-event type yet. GET /agents is served but
//     the agents family is not advertised.
//   - Any fault the host did not classify is 500 internal_error with a fixed
//     message; the cause goes to the log, never to the caller.
package main
