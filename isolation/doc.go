// Package isolation holds the identity primitives every surface shares: the
// tenant-bound id grammar and its projection, opaque id minting, per-agent
// routing values, and the tenant check of the read gate that makes an
// unreadable resource indistinguishable from an unknown one. It implements OpenWOP identity.md §5
// and the isolation and per-agent-card parts of the v2 interop spec.
//
// # Ids (ids.go, param.go)
//
// A tenant-bound id (runId, interruptId, subscriptionId, deliveryId,
// effectId) is "tenant/opaque" in the grammar of OpenWOP identity.md §5, checked by
// [ValidBound], [ValidTenant] and [ValidOpaque]. [NewOpaque] and [NewID] mint
// ids with a 26-character, 130-bit opaque segment that never contains '~'
// (OpenWOP identity.md §5; interop.md §MCP tasks and cancellation); a task
// started through a routing value is minted in the Subject's tenant of record,
// never one the value names (OpenWOP RFC 0202 §D.9).
//
// Ids inside JSON bodies are always the bound form. On a URL path an id is
// one projected segment: [Project] turns every byte outside [A-Za-z0-9._-]
// into '~' and two uppercase hex digits, so "acme/r1…" becomes "acme~2Fr1…",
// "anon:x/…" becomes "anon~3Ax~2F…" and a legacy '~' becomes "~7E" (OpenWOP identity.md §5).
// The host projects its own ids exactly once, where they leave it. The A2A
// Task.id is the bound form; the MCP taskId is the projected form
// (OpenWOP RFC 0198 §C.5; interop.md §MCP tasks and cancellation). [ParseID] reads every form a client may send (bound, projected,
// "tenant%2Fopaque") and decodes before matching the grammar (OpenWOP identity.md §5);
// [ResolveParam] adds the v1/v2 overlap rule
// for path parameters: a bare opaque segment binds to the caller's tenant
// under [BindBare] and is [ErrBareID], a validation error, under
// [RefuseBare] (OpenWOP identity.md §5).
//
// # The read gate (gate.go)
//
// Unreadable is unknown (OpenWOP interop.md §Isolation; identity.md §5).
// [MatchTenant] is the gate's tenant check: nil for a bound id whose tenant
// segment is the Subject's, [ErrMalformedID] or [ErrTenantMismatch]
// otherwise, which a REST surface answers as 400 or 403
// id_tenant_mismatch. The A2A and MCP surfaces fold both refusals, and the
// store's interop.ErrForbidden and interop.ErrNotFound, into the one
// [ErrNotFound], whose message names nothing (the library's read gate,
// internal/readgate). The gate is a cheap pre-filter: the RunStore still
// decides readability.
//
// # Routing values (routing.go)
//
// [RoutingKeys] derives each agent's a2aTenant value R from a host secret, the
// host version and the agent id alone, so R encodes no tenant, workspace or
// principal and every replica agrees without storage (OpenWOP RFC 0202 §B).
// The host mints R for its agent inventory entries ([RoutingKeys.ForAgent])
// and hands the keys to the A2A surface, which alone resolves R: among the
// agents the caller already sees, after authentication and authorization
// (OpenWOP RFC 0202 §D.6), in constant time, answering everything else —
// another tenant's R, a never-minted or malformed one — with one not-found
// (OpenWOP interop.md §Per-agent cards; internal/routing). R is a routing
// value only (OpenWOP interop map, a2a.fields): it selects an agent and never
// a tenant; a task started through it is a run of the caller's tenant
// (OpenWOP RFC 0202 §D.9). A previous secret keeps old values resolving
// through a rotation.
//
// Not here: card content (OpenWOP RFC 0202 §C; interop.md §Per-agent cards) and the wire answers (-32001,
// -32602, 400, 403) belong to the protocol surfaces, which build on these
// helpers.
package isolation
