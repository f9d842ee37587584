// Package negotiate is the one version policy both protocols use in both
// directions, and the content-free negotiation.decided audit record every
// decision produces (OpenWOP v2 interop.md §Negotiation is a protocol, §The
// floor, §The audit event; RFC 0242).
//
// A [Policy] is built from a facet's offered versions, preferred version and
// floor. [Policy.Inbound] decides the version of a request the host
// receives (from A2A-Version, or MCP-Protocol-Version / _meta
// protocolVersion); [Policy.Outbound] decides the version the host uses as a
// client from what a peer advertises (a2a/delegate calls it when the host
// connects to a remote A2A agent). A decision is a value: the protocol
// bindings own the wire shape of a refusal (A2A -32009 with
// supportedVersions, MCP -32022 with data.supported).
//
// The rules the policy enforces:
//
//   - A version below the floor is refused (reason below-floor), whatever
//     the downgrade policy says (OpenWOP interop.md §The floor; conformance scenario v2-minimum-version-refused).
//   - No version named: A2A is served at the preferred version (OpenWOP
//     interop.md §The facets, where preferredVersion is served when the peer
//     names none; this library follows it over A2A 1.0.1 §3.6.2, which reads
//     an absent version as 0.3); MCP is treated as at most
//     2025-03-26 and refused unless such a revision is offered (OpenWOP interop map, mcp.headers).
//   - A downgrade between floor and preferred is granted only to an
//     authenticated peer under a policy that allows it; an unauthenticated
//     exchange never lowers the version below preferred (OpenWOP interop.md §Negotiation is a protocol, §Downgrade above the floor).
//   - Versions are read in the one grammar facets declares them in
//     (internal/version): A2A "major.minor" without leading zeros, MCP
//     revisions real calendar days ("2026-02-31" is malformed). Patch
//     numbers are never negotiated: "1.0.1" is read as "1.0".
//   - A malformed value is refused as unsupported and never copied into the
//     record, which therefore cannot carry what a peer wrote there.
//
// Every decision, refusals included, yields exactly one record
// ([Decision.Record]): protocol, outcome, at, and when known version, floor,
// requested, reason and peerDigest — the lowercase hex SHA-256 of the peer's
// origin, never the origin itself (OpenWOP RFC 0242 §A; interop.md §The audit event). An [Auditor] hands records to
// the host's interop.EventSink off the request path: onto the run's log when
// the exchange belongs to a run, otherwise as a durable host event of the
// caller's tenant (OpenWOP interop.md §The audit event; RFC 0242 §B; host-event.schema.json).
//
// # Asynchronous or synchronous audit
//
// By default the Auditor is asynchronous: Record queues the record and
// returns, and one worker delivers it, retrying a failing sink with
// exponential backoff ([AuditorOptions] MaxAttempts, RetryBackoff,
// MaxBackoff; each attempt bounded by AttemptTimeout). A sink that
// recovers within the retries loses nothing, and the request never waits
// for it. The price is that a record can be lost: when the sink keeps
// failing past MaxAttempts, or the bounded queue is full (Record waits up
// to EnqueueWait for room while the sink works, not at all while it
// fails), or Close's context ends first. Each such record is dropped,
// counted in [Auditor.Stats] (a host exports Dropped as a metric) and
// logged once with its protocol and outcome only. A failing sink so costs
// a request at most EnqueueWait, never an error.
//
// With AuditorOptions.Synchronous, Record delivers on the request's
// goroutine and returns the sink's error, which the protocol surfaces turn
// into a server error: no record is ever lost, and a broken audit trail
// fails the requests it cannot record. A host whose audit trail is a legal
// obligation chooses this; one whose availability matters more keeps the
// default and alerts on Dropped.
package negotiate
