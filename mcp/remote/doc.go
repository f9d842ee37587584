// Package remote is the host as an MCP client: a workflow step calls a tool
// on an MCP server the host admitted, over go-sdk's mcp.Client and its
// streamable client transport, speaking MCP 2026-07-28 (the stateless
// revision; there is no legacy initialize handshake).
//
// A server is reachable only through an [Admission] the host configures —
// an alias, the endpoint, a credential by reference, a pinned revision,
// the tools, resources and prompts admitted by digest, on whose behalf,
// and limits (admission-boundaries §18.3). [New] builds a [Client] over
// the host's MCP version policy, its event sink, the egress guard and the
// mcp facet's mrtr.maxRounds; [Client.Connect] opens a [Session] for one
// run:
//
//   - the alias names an admission, never a URL from content;
//   - server/discover goes out at the revision the host asks for, through
//     the egress guard (no redirects, responses within MaxResultBytes),
//     with the credential and the run's trace context; the revision is
//     decided by negotiate.Policy.Outbound from the server's
//     supportedVersions and recorded as one negotiation.decided on the
//     run's log, accepted or refused (OpenWOP interop.md §Negotiation is a
//     protocol, §The floor, §The audit event). A refusal is
//     400 interop_version_unsupported naming the protocol and the run;
//   - every request afterwards carries exactly the negotiated
//     MCP-Protocol-Version: the session's transport refuses anything else
//     before the network, including go-sdk's own fallback to the legacy
//     handshake, so no revision below the floor is ever sent.
//
// [Session.Tools] (and Resources, Prompts) project the server's lists
// through the admission: an item the admission does not name, or whose
// definition's digest ([ToolDigest], RFC 8785 canonical JSON) changed, is
// invisible, and the call path refuses it before anything is sent.
// Discovery is not permission. Lists follow pagination up to MaxPages and
// are cached per tenant, workspace, principal, server (its endpoint),
// revision and authorization context, for at most the server's ttlMs
// (OpenWOP interop map, mcp.cache); go-sdk's own per-session cache is kept
// empty. A session whose server advertises listChanged, once it relies on
// a cached list, keeps a subscriptions/listen stream open on a goroutine
// it owns (MCP 2026-07-28 basic/patterns/subscriptions): with nothing
// cached there is nothing to stale. A notifications/*/list_changed drops that
// list of the server under every authorization key, so the next list is
// fetched and projected afresh — a tool added that way stays invisible
// until the host admits it. The stream never blocks or fails Connect, is
// bounded event by event rather than as a whole, is opened again (and
// the lists dropped) when the server ends it, and ends with Session.Close.
// A session made for one exchange ([Client.Review], a ToolCaller call)
// opens none.
// [Client.InvalidateServer] and [Client.InvalidateCredential] drop lists
// on the host's word.
//
// Every request carries the run's W3C trace context ([WithTraceContext])
// in params._meta and in the traceparent header (OpenWOP interop.md §Trace
// context). [ProjectError] is the one place an error of the package
// becomes the OpenWOP error the host renders.
//
// [Session.Call] calls an admitted tool. The tool is checked against the
// admission and the arguments against the limits before anything is sent;
// the call declares in _meta clientCapabilities exactly the elicitation
// modes its [InputDecider] answers. An input_required answer (MCP
// 2026-07-28, SEP-2322) goes to the decider once per round, afresh, as an
// [InputRound]; the retry repeats the call with the answers and the
// server's requestState echoed unchanged, under a new JSON-RPC id. Round r
// is answered only when r <= MaxRounds (the mcp facet's mrtr.maxRounds), so
// the server sees at most MaxRounds + 1 requests; the round past it is
// refused with a [*RoundsError] (422 mcp_mrtr_rounds_exceeded) before the
// decider or the server sees it (OpenWOP interop.md §The MCP round
// ceiling). The whole call is bounded by Limits.Timeout.
//
// Every call has a local attempt id, and nothing is re-sent after a
// failure. How it ended is a reconciliation state (admission-boundaries
// §18.9): failed-no-effect only for a refusal that proves the tool never
// ran, failed-possible-effect for a tool error or a timeout (never
// "nothing happened"), disconnected-still-active for a lost connection,
// cancel-requested-remote-unknown when ctx was cancelled (go-sdk sends
// notifications/cancelled), completed-before-cancel when the result won.
// An end that is not a verified fact is recorded on the run's log as
// EventReconciled; what projecting the result into the run dropped
// (annotations, _meta, resource-link metadata, error data, a
// structuredContent its text does not carry) as one content-free
// EventTranslationLoss (§18.10).
//
// Admitting starts from a review of what a server offers: [Client.Review]
// negotiates and lists for an exchange of no run (an operator at start),
// [Session.Listed] lists on a run's session, and [Session.AdmitTools]
// admits on that session what the host decided from it (a one-off
// admission); [Session.AdmitUnlisted] admits one named tool of a server
// that declares no tools and so has no list to pin from.
//
// [Client.ToolCaller] is the client as the host contract's
// interop.ToolCaller, what a host hands its workflows (OpenWOP RFC 0204):
// one Connect and one Call per tool call, input requests answered through
// the call's own decision, the result in the contract's terms.
//
// Where a host must hand a workflow the server's answer as sent (OpenWOP
// host-services.md §mcp, RFC 0204: ctx.mcp resolves to the MCP result
// unaltered), the projection is not the only view: [CallOutcome].Raw is the
// final tools/call result byte for byte, [Session.ListPage] one tools/list
// page as listed (discovery, never permission: calls stay admission-checked),
// and [Session.Discovered] the server/discover result.
package remote
