// Package interopmap is the library's index of an OpenWOP v2 interop map:
// the decoded document, the consistency checks and the lookups the
// bindings consult on every request. The map itself — its data files,
// Load, Builtin and the errors a host sees — is package mapping; a
// mapping.Map is this package's Map under a public name without methods,
// so a binding reads the lookups through a conversion:
//
//	m := (*interopmap.Map)(cfg.Map) // cfg.Map is a *mapping.Map
//
// Map sections and the lookups that read them:
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
// [Decode] runs the consistency checks of the upstream checker: the
// forward projection and mcp.tasks.status are total (one default row per
// status), at most one override per (status, interrupt kind), every
// requires entry is a real facet ([KnownFacet]), error codes, names and
// reasons are unique, reverse rows are unique by wire state. Two checks
// are ours: an override's kind must be one that produces its status, and
// every wire state the forward projection emits must have a reverse row.
//
// A Map is read-only after Decode: every slice it hands out is a copy, so
// one Map is safe to share between goroutines. The hot lookups
// (TaskState, A2AError, ReverseTaskState, MCPTaskStatus, A2AGate) do not
// allocate.
package interopmap
