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
//	push/pushtest      conformance kit for push's ConfigStore, Vault, Outbox
//	mcp/sealed/sealedtest conformance kit for a sealed.Ledger
//	mapping            the interop map: operation rows, state projections,
//	                   error table, requires-gates
//	isolation          tenant-bound ids, projection, routing values, read gate
//	negotiate          version policy and negotiation.decided records
//	facets             the discovery records and what may be claimed
//	a2a, mcp, push     protocol surfaces (mounted as http.Handlers)
//	egress             the one egress guard: push delivery and both clients
//	a2a/delegate       the host as an A2A client: admitted agents, negotiation
//
// # Mounting
//
// This package composes the others from one [Config]: [New] validates it —
// every problem at once, each naming its field ([ConfigError], or a
// facets.FieldError for what a discovery record may not say) — and builds
// each configured surface: A2A ([A2AConfig]: the public card, JSON-RPC,
// optionally HTTP+JSON) and MCP ([MCPConfig]: one streamable-HTTP
// server). Each surface reports what it serves, and New declares the a2a
// and mcp records from that plus the host's own [Record] (lifecycle,
// versions, refreshedAt), so a record never claims what is not served.
//
// [Host.Routes] are the surfaces' (pattern, handler) pairs for any router
// — exact paths, and one prefix for the HTTP+JSON subtree — and
// [Host.Mount] registers them on an http.ServeMux. [Host.NewMCP] builds a
// further MCP server in one call (its own callers, the host's store,
// audit trail, requestState keys and version policy). With
// [MCPConfig].Client, [Host.MCPClient] is the host's MCP client (package
// mcp/remote) under the mcp record's policy and round ceiling, whose
// ToolCaller the host hands its workflows; the record then claims
// client: true (OpenWOP RFC 0204). [Host.Records] are
// the a2a, mcp, agents and hostEvents records for the host's GET
// /.well-known/openwop (OpenWOP interop.md §The facets; interop map,
// a2a.card; RFC 0242 §B.3); [Host.A2ATenant] is the a2aTenant of a GET
// /agents entry (OpenWOP RFC 0202 §B). On shutdown [Host.Drain] answers
// what is still waiting in each protocol's shape, and [Host.Close] ends
// MCP listen streams, stops push delivery and delivers the
// negotiation.decided records still queued for the EventSink; it must run
// before the store is closed (OpenWOP interop.md §The audit event; RFC
// 0242 §B).
//
//	host, err := wopinterop.New(wopinterop.Config{
//		Store: store, Subjects: resolver, Events: sink,
//		BaseURL: "https://agents.example.com", HostVersion: version,
//		A2A: &wopinterop.A2AConfig{
//			Record:    wopinterop.Record{RefreshedAt: "2026-11-20"},
//			Streaming: true, DurableTasks: true,
//			Card:      a2a.CardConfig{Name: "…", Description: "…"},
//			Routed:    workflows,
//		},
//		MCP: &wopinterop.MCPConfig{
//			Record:  wopinterop.Record{RefreshedAt: "2026-11-20"},
//			SealKey: sealKey,
//			Server:  mcp.Options{ServerInfo: mcp.Implementation{Name: "…", Version: version}},
//		},
//	})
//	for _, rt := range host.Routes() { // or host.Mount(mux)
//		router.Handle(rt.Pattern, rt.Handler) // /.well-known/agent-card.json, /a2a, /mcp
//	}
//	srv.RegisterOnShutdown(host.Drain)
//	defer host.Close(ctx)
//
// examples/host is a runnable host on memstore; see the README for the
// walkthrough and ARCHITECTURE.md for how each spec rule is enforced.
package wopinterop
