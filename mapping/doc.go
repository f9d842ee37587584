// Package mapping is the OpenWOP v2 interop map as data: which A2A 1.0 and
// MCP 2026-07-28 operation serves which v2 operation and under which
// facets, how run statuses project onto A2A task states and MCP task
// statuses and back, and the A2A error table. The bindings (a2a, mcp)
// consult it instead of hard-coding the rows.
//
// # The data
//
// data/interopmap.json is the library's own map. It carries the facts of
// the published spec/v2/interop-map.json (names, codes, statuses, paths,
// requires) in our own words, plus two newer facts: the RFC 0199 override
// row (waiting-input on a credential interrupt is TASK_STATE_AUTH_REQUIRED)
// and the RFC 0211 ErrorInfo reason of each A2A error row. [Builtin]
// serves it. A test keeps it in agreement with the published map row by
// row, and asserts that those two additions are the only differences.
//
// Map sections and the rules they implement:
//
//   - a2a.operations: [Map.A2AOperation], [SendMessageWhen], [Map.A2AGate]
//     (OpenWOP interop.md §The operation mappings; A2A 1.0.1 §5.3, §9.4).
//   - a2a.taskState: [Map.TaskState] — the forward projection, total over
//     the ten run statuses, with the credential override (OpenWOP RFC 0199 §D.1).
//   - a2a.taskStateReverse: [Map.ReverseTaskState] (OpenWOP RFC 0199 §D.1).
//   - a2a.errors: [Map.A2AError], [Map.A2AErrorByName],
//     [Map.A2AErrorByReason] — JSON-RPC, gRPC, HTTP, ErrorInfo reason and
//     host-as-client projection (OpenWOP RFC 0211 §A, §F).
//   - mcp.features: [Map.Features], [Map.RequiredFeatures] (OpenWOP interop.md §The operation mappings).
//   - mcp.methods, mcp.tasks.methods: [Map.MCPMethod], [Map.MCPTaskMethod],
//     [Map.MCPGate] (OpenWOP interop.md §The operation mappings, §MCP tasks and
//     cancellation).
//   - mcp.tasks.status: [Map.MCPTaskStatus] (OpenWOP interop.md §MCP tasks and cancellation).
//   - the element sections (card, fields, headers, meta, mrtr, cache,
//     authorization, tasks.fields): [Map.Elements].
//
// # Loading other maps
//
// [Load] (or a reusable [Loader]) reads any interop-map file: a strict JSON
// decode (no repeated member names, no trailing data), validation against
// our own JSON Schema ([Schema]; it accepts both the published map and
// ours), then the consistency checks of the upstream checker: the forward
// projection and mcp.tasks.status are total (one default row per status),
// at most one override per (status, interrupt kind), every requires entry
// is a real facet ([KnownFacet]), error codes, names and reasons are
// unique, reverse rows are unique by wire state. Two checks are ours: an
// override's kind must be one that produces its status, and every wire
// state the forward projection emits must have a reverse row. Failures are
// [ErrDecode], a [*SchemaError] or one [*RowError] per broken rule.
//
// # No shared state
//
// The package has no mutable globals. The embedded files are strings;
// [Builtin] decodes a fresh [*Map] on every call (about half a millisecond),
// so a host builds it once and passes it to its bindings. A Map is
// read-only after Load: every slice it hands out is a copy, so one Map is
// safe to share between goroutines. The hot lookups (TaskState, A2AError,
// ReverseTaskState, MCPTaskStatus, A2AGate) do not allocate.
package mapping
