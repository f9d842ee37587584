// Package facets is the typed form of what a host advertises about A2A and
// MCP in its OpenWOP v2 discovery document (GET /.well-known/openwop): the
// a2a, mcp and hostEvents family records (and the part of the agents record
// per-agent cards rest on), their validation, the version
// policies they declare and the refresh deadline they carry (OpenWOP v2
// interop.md §The facets, §The refresh SLA; capabilities.md §2–§4;
// RFC 0242 §B.3; events.md §Host events).
//
// A host describes its records as a [Declaration] ([A2A], [MCP],
// [HostEvents], [Agents]) and what its mounted surfaces really do as [Served];
// [Validator.Declare] fills defaults, validates, and returns an immutable
// [Advertisement] whose [Advertisement.Records] are the JSON records to
// embed. A declaration with any problem yields no advertisement: the error
// joins one [*FieldError] per problem, each naming the field
// ("a2a.preferredVersion") and wrapping [ErrInvalidFacet], so a host sees
// everything wrong at once instead of starting half-working.
//
// Defaults ([Validator.Declare] fills them): status "stable", since "2.0", witness
// "seam-gated" (the declaration's value for a2a and mcp; OpenWOP capabilities.md §2), versions
// ["1.0"] / revisions ["2026-07-28"] (the versions this library speaks),
// preferred the newest offered and floor the oldest offered. Claims are
// never defaulted: profiles, URLs, boolean facets and refreshedAt are the
// host's to state. The hostEvents record defaults the same way; its witness
// class is not in the stored declaration, so seam-gated is this package's
// choice and a host may set another. The agents record defaults its
// witness to witnessable-gated, the declaration's class for that family.
//
// What is checked, in order (each family's wire record against this
// package's own JSON Schema, then the rules). Each item names the OpenWOP source
// a [FieldError] for it carries in Rule:
//
//   - (interop.md §The facets; capabilities.md §2): a host that serves
//     A2A or MCP advertises the family; each record carries status, since and
//     witness; since is one of the host's protocolVersions when Served names
//     them.
//   - (facets/a2a.schema.json, facets/mcp.schema.json): the required
//     facets; A2A versions are canonical "major.minor" (no leading zeros) and
//     MCP revisions real calendar dates; no list repeats an entry.
//   - (capabilities.md §2): until is required when status is
//     experimental or deprecated and forbidden when stable; a date until
//     before today, or a version until before since or below the host's
//     newest protocol version, is refused (until_in_past); witness is one of
//     the five classes.
//   - (interop.md §REST is the wire; capabilities.md §2–§4): a facet is
//     claimed by the presence of its key, so a boolean facet not offered is
//     omitted (never false); the records carry no transport list, grpc block,
//     root profiles or supported flag.
//   - (interop.md §Legacy profiles are absent): profile ids match
//     a2a-<major>.<minor> / mcp-<YYYY-MM-DD>, and no -legacy id is
//     advertised.
//   - (interop.md §The refresh SLA): preferred and floor are offered,
//     floor ≤ preferred, no offered version is below the floor (interop.md
//     §The floor); refreshedAt is within the refresh window (≤ 90
//     days, configurable shorter) and at most one day ahead.
//   - (interop map, a2a.card): a2a-X.Y requires X.Y offered and
//     a2a.agentCardUrl, and the card needs a served JSON-RPC interface.
//   - (interop map, mcp.features; RFC 0198 §A.1): mcp-YYYY-MM-DD
//     requires the revision offered and mcp.features ⊇ the interop map's
//     requiredFor features (server-discover, mrtr, cacheable-lists for
//     mcp-2026-07-28); feature ids are the map's; a served extension (e.g.
//     io.modelcontextprotocol/tasks) requires the extensions feature, and the
//     extensions feature requires one.
//   - (interop.md §The facets): serverMount.transports ⊆ {stdio,
//     streamable-http}; serverMount needs serverUrls[0], an absolute http(s)
//     URL or an absolute path.
//   - (interop.md §The MCP round ceiling): mrtr.maxRounds is 1–16.
//   - (interop.md §Per-agent cards): agentCards requires the a2a-1.0
//     profile, GetExtendedAgentCard served, per-agent cards served and
//     agents.manifestRuntime advertised (an object; installScope host or
//     tenant).
//   - (RFC 0204): client is advertised only when the MCP client is
//     exposed.
//   - Implementation metadata, extension keys and the discovery endpoint
//     itself are outside this package (capabilities.md §1, §3); the
//     extension-key pattern (capabilities.md §3.2) is reused for host-event
//     types.
//   - (RFC 0242 §B.3): whenever an inbound surface is advertised
//     (a2a.agentCardUrl, mcp.serverUrls or mcp.serverMount), the hostEvents
//     record lists {"type":"negotiation.decided","delivery":"durable"}; the
//     advertisement adds it itself.
//   - (host-event.schema.json; events.md §Host events):
//     host-event types match the type pattern, delivery is durable or
//     ephemeral, no type is listed twice, and a protocol type keeps its fixed
//     class.
//
// Every claim is checked against [Served]: a facet the mounted code does
// not back (streaming advertised but not served, a card without a JSON-RPC
// interface, serverUrls without a mount, a feature with nothing behind it)
// is refused (interop map a2a.card, for the a2a boolean facets), and
// so is a surface served but not advertised.
//
// A facet yields its negotiate policy ([A2A.Policy], [MCP.Policy]) and
// its refresh deadline ([A2A.RefreshDeadline], [A2A.StaleAfter]) so a host
// can alarm before its advertisement goes stale. [ParseA2A], [ParseMCP]
// and [ParseDeclaration] strictly decode records from configuration.
//
// The schemas are this package's own (see [Schema]), written from the facts
// of the published OpenWOP v2 facet schemas and generated family records,
// and a little stricter than them; tests check that every record this
// package writes also passes the published ones. One deliberate difference:
// the OpenWOP conformance suite lets mcp.serverUrls hold a path joined to
// the base URL, which the published facet file's format "uri" refuses when
// a validator asserts formats; a host that wants records every such
// validator accepts advertises absolute URLs.
package facets
