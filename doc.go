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
// # Mounting
//
// This package composes the others from one [Config]: [New] validates it —
// every problem at once, each naming its field ([ConfigError], or a
// facets.FieldError for a facet claim the configuration does not back) —
// declares the facets, and builds the surfaces; [Host.Mount] puts them on
// the host's mux; [Host.Records] are the a2a, mcp, agents and hostEvents
// records for the host's GET /.well-known/openwop (OpenWOP interop.md §The facets; interop map, a2a.card; RFC 0242 §B.3);
// [Host.A2ATenant] is
// the a2aTenant of a GET /agents entry (OpenWOP RFC 0202 §B); [Host.Close] drains the
// negotiation.decided records still queued for the EventSink and must run
// before the store is closed (OpenWOP interop.md §The audit event; RFC 0242 §B).
//
//	host, err := wopinterop.New(wopinterop.Config{
//		Store: store, Subjects: resolver, Events: sink,
//		BaseURL: "https://agents.example.com", HostVersion: version,
//		A2A: &wopinterop.A2AConfig{
//			Facet:  facets.A2A{RefreshedAt: "2026-11-20", Streaming: true, DurableTasks: true},
//			Card:   a2a.CardConfig{Name: "…", Description: "…"},
//			Routed: workflows,
//		},
//	})
//	host.Mount(mux) // /.well-known/agent-card.json, /a2a (JSON-RPC), /a2a/rest/… (HTTP+JSON)
//	defer host.Close(ctx)
//
// examples/host is a runnable host on memstore; see the README for the
// walkthrough and ARCHITECTURE.md for how each spec rule is enforced.
package wopinterop
