// Package memstore is the embedded default host: an in-memory
// [interop.RunStore], [interop.AgentInventory] and [interop.EventSink] whose
// workflows are plain Go functions. Examples and tests run on it, and a host
// can start with it before writing its own store.
//
// # Workflows and runs
//
// A workflow is a [WorkflowFunc] registered per tenant with [Store.Register]
// (its input schema is compiled once, there). [Store.CreateRun] validates
// the inputs against that schema (santhosh-tekuri/jsonschema/v6) and starts
// the function on its own goroutine (a workflow registered with
// WorkflowDef.Inline, one that never waits, runs on CreateRun's goroutine
// instead, with the same answer and log); the function drives its run through a
// [RunContext]: it can suspend on an interrupt ([RunContext.Interrupt]),
// publish artifacts ([RunContext.PublishArtifact]), fail with a safe message
// ([Fail], or [Fault] when the host rather than the work broke, which sets
// Run.Fault) and must return when its context is cancelled. A panicking
// workflow fails its run with a generic message; the panic is logged, never
// shown. The Store owns these goroutines: [Store.Close] cancels them and
// waits for them.
//
// The event log of a run is a sequence of OpenWOP RunEventDocs
// ([interop.RunEvent]: eventId, runId, sequence from 0 up by one, type,
// timestamp, schemaVersion and the registered payload):
//
//	run.started {workflowId, transport}                      -> running
//	node.suspended {nodeId, interruptId, kind, key}          -> waiting-approval | waiting-input | waiting-external (OpenWOP interrupt.md §Payload)
//	interrupt.resolved {nodeId, interruptId, kind, action?}  -> running (reason "withdrawn" when the workflow stopped waiting)
//	artifact.created {artifactId, artifactType, summary}     -> unchanged (the chunk itself rides along as Chunk)
//	wopinterop.cancel-requested {reason}                     -> cancelling (a vendor type: OpenWOP registers none for this step)
//	run.completed {outputs}                                  -> completed
//	run.failed {error: {code, message}}                      -> failed
//	run.cancelled {reason}                                   -> cancelled
//
// plus audit events appended through [Store.AppendRunEvent] (e.g.
// negotiation.decided; OpenWOP interop.md §The audit event; RFC 0242 §B), which keep the status. Run inputs are
// not copied into run.started: they stay on the run.
//
// # Guarantees (interop package documentation)
//
//   - Unreadable is unknown (OpenWOP interop.md §Isolation): a Subject reads a run iff it is in
//     the Subject's tenant and, when the Subject names a workspace, in that
//     workspace. Everything else answers with the very error text of an id
//     that never existed. Lookups start from the Subject's tenant, never
//     from the tenant segment of the id.
//   - Idempotent creation (OpenWOP interop map, a2a.operations): the key is scoped to (tenant,
//     principal); a repeat, also a concurrent one, returns the first run
//     with created=false and starts nothing (while that run is retained;
//     see Retention).
//   - At-most-once resolution (OpenWOP interrupt.md §Resolve surfaces, §Approver enforcement): approver lists, approval
//     actions and resume schemas are enforced; the first resolution wins and
//     every other attempt gets ErrAlreadyResolved.
//   - Refusals change nothing: every check runs before the first write.
//   - Ordered watch: [Store.WatchRun] and [Store.PollEvents] read the
//     append-only log by sequence, without gaps, and end after the terminal
//     event.
//   - Stable listing (OpenWOP interop map, a2a.operations): runs are kept sorted by status timestamp
//     (newest first, id descending), and cursors are signed keyset positions.
//     Every combination of workspace, contextId and workflowId keeps its
//     runs in one B-tree per status with its count, so a page and its
//     Total cost O(page + log n) in a tenant of n runs, and creating a run
//     O(log n); only a statusAfter bound counts its matching runs one by one.
//   - Returned values are copies: callers can never change store state.
//
// # MCP tools
//
// A workflow registered with a [WorkflowDef].ToolCaller (the host's MCP
// client, e.g. mcp/remote's) calls tools on the MCP servers its host
// admitted with [RunContext.CallTool], on behalf of its run. The server's
// input requests during a call become clarification interrupts of the run
// (waiting-input), and only a user's resolution is sent back. A workflow
// without one calls no tool ([ErrNoToolCaller]).
//
// # Host events
//
// [Store.PublishHostEvent] keeps durable host events per tenant and fans
// ephemeral ones out to live subscribers only; [Store.SubscribeHostEvents]
// is the feed behind GET /host/events, with Last-Event-ID resumption and
// workspace scoping (OpenWOP host-event.schema.json; events.md §Host events; RFC 0242 §B.4).
// The durable events — negotiation.decided records among them — are
// bounded twice: at most [DefaultHostEventRetention] per tenant
// ([WithHostEventRetention]) and none older than [DefaultHostEventMaxAge]
// ([WithHostEventMaxAge]). Last-Event-ID resumes only within that
// retention: an evicted or expired id reads like an unknown one.
//
// # Retention
//
// By default a Store keeps every run for its life. [WithRunRetention]
// purges a terminal run once its status timestamp is older than the TTL,
// with its event log, interrupts and idempotency key. A purged run is
// indistinguishable from an id never minted: every method answers
// ErrNotFound with the same text, ListRuns neither lists nor counts it,
// WatchRun and PollEvents refuse it, and AppendRunEvent refuses an audit
// record for it (the negotiate Auditor then files the record as a host
// event of the tenant). Its idempotency key is freed with it, so the
// dedupe window of a key ends TTL after its run ended: a repeat after that
// starts a new run. Keeping keys longer would keep a record per run
// without bound, which is what retention removes; a host that needs a
// longer window sets a longer TTL. Runs that are not terminal are never
// purged, whatever their age.
//
// Expiry runs on one goroutine the Store owns: started by the first write
// that keeps something that can expire, every quarter of the shortest
// retention (between 10 ms and 1 min), recovering and logging a panic, and
// stopped by [Store.Close]. A purge removes at most 1024 runs per hold of
// a tenant's lock and rebuilds the tenant's maps once the deleted
// outnumber the kept (Go maps never shrink), so the heap returns to its
// baseline. Creating runs pays nothing for it.
//
// Runs that are kept cost little to keep: the garbage collector marks
// every one of them on each cycle, so a run that settled holds no context
// and no spare capacity, its log stores per event only what differs
// (event ids and the run id are rebuilt on read), and runs whose first
// messages carry equal flat metadata share one copy of it.
//
// # Fixtures
//
// [ConformanceFixtures] are the workflows the conformance suite drives
// (conformance-noop, -approval, -failure, -delay, -cancellable);
// [Store.RegisterFixtures] installs them in a tenant. [InterruptFixtures]
// add the interrupts the suite resolves over A2A, MCP and REST
// (conformance-approval-approvers, -credential, -clarification, -nested,
// -sensitive); the credential's connectUrl is on the host's origin, so
// [Store.RegisterInterruptFixtures] takes it from the host.
//
// Store does not implement [interop.InputDeliverer]: a message for a run
// that is running but not suspended is refused by the library (OpenWOP interop map, a2a.operations).
package memstore
