// Package wopinterop lets a Go workflow host speak A2A 1.0 and MCP
// 2026-07-28 exactly as the OpenWOP v2 interop specification requires,
// without the host learning either protocol.
//
// The host implements the small contract in package interop (RunStore,
// SubjectResolver, EventSink and optionally AgentInventory); the library
// projects the host's runs onto A2A tasks and MCP tools and tasks, and back.
// An A2A Task is the host's run and an MCP task is the host's run: the
// library keeps no second task store.
//
// Package map (dependencies point downwards only):
//
//	interop            the host contract; imports nothing of ours
//	interop/memstore   the embedded in-memory default host (examples, tests)
//	interop/interoptest conformance kit any RunStore runs
//	mapping            the interop map: operation rows, state projections,
//	                   error table, requires-gates
//	isolation          tenant-bound ids, projection, routing values, read gate
//	negotiate          version policy and negotiation.decided records
//	a2a, mcp, push     protocol surfaces (mounted as http.Handlers)
//
// examples/host is a runnable host on memstore; see the README for the mount
// recipe and ARCHITECTURE.md for how each spec rule is enforced.
package wopinterop
