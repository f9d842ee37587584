// Package interop is the host contract: the types and interfaces a workflow
// host implements so that wopinterop can project its runs onto A2A tasks and
// MCP tools/tasks without the host learning either protocol.
//
// A host implements three small interfaces:
//
//   - [SubjectResolver] turns an authenticated *http.Request into a [Subject].
//     The Subject is the only source of tenant, workspace and principal
//     (OpenWOP v2 interop §Isolation); nothing a client writes into a message
//     (A2A tenant, contextId, MCP _meta) ever selects one.
//   - [RunStore] is the host's run engine as seven methods: ListWorkflows
//     (the caller's workflows, which become A2A skills and MCP tools) and the
//     six run operations the interop map's rows name — createRun, getRun,
//     listRuns, cancelRun, resolveInterruptByRun and streamRunEvents
//     (CreateRun, GetRun, ListRuns, CancelRun, ResolveInterrupt, WatchRun).
//     The map's seventh operation, getCapabilities, is the host's own
//     discovery document, not the store's. [InputDeliverer] is an optional
//     eighth, and [RunWaiter] an optional status-only wait the blocking
//     calls use instead of following WatchRun (same Subject scoping and
//     the same unknown-is-unreadable answer as GetRun). An A2A Task and an MCP task are the host's run; the library
//     keeps no second task store.
//   - [EventSink] receives the audit records the library produces
//     (negotiation.decided, push dead letters) and places them on a run's
//     event log or in the tenant's durable host-event stream.
//
// [AgentInventory] is optional; a host that has agents (personas with routed
// workflows) implements it to get per-agent A2A cards.
//
// [ToolCaller] goes the other way: the host's MCP client as a workflow step
// calls it — a tool on an MCP server the host admitted, named by the
// host's alias, on behalf of a run ([ToolCall], [ToolResult]; OpenWOP RFC
// 0204, the mcp record's client facet). Package mcp/remote provides one;
// the host hands it to its workflows (memstore: WorkflowDef.ToolCaller and
// RunContext.CallTool).
//
// # Guarantees the library relies on
//
// Every RunStore method takes the caller's Subject and enforces the host's
// own authorization and tenant scoping. In particular:
//
//   - Unreadable is unknown. A run the Subject may not read is reported with
//     [ErrNotFound], exactly as a run that never existed. The library relies
//     on this to answer foreign tenants byte-for-byte like unknown ids.
//   - Idempotent creation. CreateRun with an IdempotencyKey already used by the
//     same tenant and principal returns the existing run and created=false,
//     also when the two calls race; it never creates a second run.
//   - At-most-once resolution. ResolveInterrupt succeeds for exactly one
//     caller per interrupt; every later or concurrent attempt gets
//     [ErrAlreadyResolved] and changes nothing.
//   - Refusals change nothing. A method returning an error has appended no
//     event and created no run.
//   - Ordered watch. WatchRun yields every event after the given sequence, in
//     sequence order, without gaps, and ends after the terminal event.
//   - Event documents. Every event is an OpenWOP RunEventDoc
//     (run-event.schema.json): [RunEvent]'s JSON form is the document —
//     eventId, runId, sequence from 0, type, timestamp, schemaVersion and
//     the type's registered payload (run.started {workflowId, transport},
//     node.suspended {nodeId, interruptId}, run.failed {error: {code,
//     message}}, run.completed {outputs}, run.cancelled {reason}, …). Types
//     are registered ones or vendor "<org>.<name>" types, never a made-up
//     name in a registered namespace such as "run.cancelling";
//     [RunEvent.Validate] checks a document. The store also fills Status
//     (and Chunk on artifact.created), which the library reads but which
//     are not part of the document.
//   - Stable listing. ListRuns orders by status timestamp, newest first, with
//     the run id as tie-breaker, and its cursors stay valid while runs change.
//
// The conformance kit in package interoptest checks each of these against a
// store; the embedded default, package memstore, passes it, and so does the
// PostgreSQL reference store of this repository's postgres module, shared
// by several replicas.
//
// Errors returned by the interfaces are wrapped with %w; the library
// classifies them with errors.Is against the sentinels in this package and
// turns them into wire bytes only at the protocol binding.
package interop
