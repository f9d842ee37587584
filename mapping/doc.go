// Package mapping is the OpenWOP v2 interop map as data: which A2A 1.0 and
// MCP 2026-07-28 operation serves which v2 operation and under which
// facets, how run statuses project onto A2A task states and MCP task
// statuses and back, and the A2A error table. A host chooses the map
// ([Builtin], or its own file through [Load]) and hands it to its bindings
// (a2a.Deps.Map, mcp.Options.Map); they consult its
// rows instead of hard-coding them. The lookups they use are the library's
// own (internal/interopmap); a host reads the rows from [Map.JSON].
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
// Map sections and the rules they carry:
//
//   - a2a.operations: each A2A method's v2 operation and the facets it
//     requires (OpenWOP interop.md §The operation mappings; A2A 1.0.1 §5.3, §9.4).
//   - a2a.taskState, a2a.taskStateReverse: the forward projection, total
//     over the ten run statuses, with the credential override, and the
//     reverse one (OpenWOP RFC 0199 §D.1).
//   - a2a.errors: JSON-RPC code, gRPC status, HTTP status, ErrorInfo reason
//     and host-as-client projection of each A2A error (OpenWOP RFC 0211 §A, §F).
//   - mcp.features, mcp.methods, mcp.tasks: the MCP features a profile
//     requires, each method's v2 operation and facets, and the task status
//     of each run status (OpenWOP interop.md §The operation mappings, §MCP
//     tasks and cancellation).
//   - the element sections (card, fields, headers, meta, mrtr, cache,
//     authorization, tasks.fields): the rule attached to each wire element.
//
// # Loading other maps
//
// [Load] reads any interop-map file: a strict JSON decode (no repeated
// member names, no trailing data), validation against our own JSON Schema
// (data/interopmap.schema.json; it accepts both the published map and
// ours), then the consistency checks of the upstream checker: the forward
// projection and mcp.tasks.status are total (one default row per status),
// at most one override per (status, interrupt kind), every requires entry
// is a real facet of the a2a or mcp family, error codes, names and reasons
// are unique, reverse rows are unique by wire state. Two checks are ours:
// an override's kind must be one that produces its status, and every wire
// state the forward projection emits must have a reverse row. Failures are
// [ErrDecode], a [*SchemaError] or one [*RowError] per broken rule.
//
// # No shared state
//
// The package has no mutable globals. The embedded files are strings;
// [Builtin] decodes a fresh [*Map] on every call (about half a millisecond),
// so a host builds it once and passes it to its bindings. A Map is
// read-only after Load, so one Map is safe to share between goroutines.
package mapping
