// Package push is A2A push delivery (OpenWOP RFC 0214; webhooks.md §Egress): the egress guard,
// push-config storage and the at-least-once delivery worker. The A2A
// server (package a2a) serves the four push-config operations over a
// [Service] and supplies the [Projector] that renders run events as A2A
// StreamResponse bodies; nothing here speaks JSON-RPC.
//
// # The egress guard
//
// A [Guard] is one predicate applied when a config is registered (OpenWOP RFC 0214 §B)
// and again at every delivery attempt (OpenWOP RFC 0214 §B; webhooks.md §Egress):
//
//   - https only; an exact-origin allowlist ([GuardOptions.AllowOrigins])
//     admits local receivers in tests and private deployments;
//   - no userinfo, no fragment, a canonical port, a host that is a DNS name
//     of two or more labels or a canonical IP literal — 2130706433,
//     0x7f.1, 0177.0.0.1 and IPv6 zones are refused, never guessed at;
//     localhost and names reserved for local use are refused before any
//     lookup;
//   - the name is resolved (as an absolute name: no search domains) and
//     every address must be public unicast (OpenWOP webhooks.md §Egress): loopback,
//     unspecified, RFC 1918, link-local (169.254.169.254 included),
//     CGNAT, 0/8, 192.0.0/24, 198.18/15, documentation, multicast,
//     reserved and broadcast, ULA, and everything outside 2000::/3 are
//     refused; IPv4-mapped, IPv4-compatible, NAT64 (64:ff9b::/96), 6to4
//     and Teredo forms are judged by the IPv4 addresses they embed, and
//     local-use NAT64 (64:ff9b:1::/48) is refused; the host adds its own
//     blocks with [GuardOptions.Deny];
//   - [Guard.Client] sends requests only to the addresses the check just
//     validated (the dial never resolves again: no DNS-rebinding window),
//     follows no redirect (a 3xx is a failed delivery), ignores the
//     environment's proxy, refuses header values with CR or LF, and
//     verifies TLS against the URL's host name. A configured proxy
//     ([GuardOptions.Proxy]) is reached with CONNECT to the validated
//     address: the target is judged, never the proxy in its place.
//
// # Configs and secrets
//
// [Service.Register], [Service.Get], [Service.List] and [Service.Delete]
// are the push-config operations (OpenWOP interop map, a2a.operations; RFC 0214 §A, §E). A task may hold several
// configs; a config id is the client's or a random one ([MintConfigID]),
// never encoding tenant, workspace or principal. The token and the
// authentication credentials are sealed in a [Vault] and the config
// record ([Record], kept by a [ConfigStore]) holds only the reference, so
// they never reach a response, a log line, an event or persisted task
// state; they are discarded when the config is deleted or once the
// task's final push was attempted (OpenWOP RFC 0214 §A). Get and List return a [Config],
// which has no field for them.
//
// # Delivery
//
// After [Service.Start], every task with a live config is followed through
// RunStore.WatchRun under the Subject that registered it. Each run event
// is rendered once by the [Projector] (a statusUpdate per status change,
// an artifactUpdate per artifact chunk) and queued, through the [Outbox],
// for every config registered before it: a push is POSTed as
// application/a2a+json with "Authorization: {scheme} {credentials}", or
// "Bearer {token}" when only a token was given, and no OpenWOP signature
// (OpenWOP RFC 0214 §C). Each config's deliveries are attempted in run order; each push
// gets at least one attempt and retries follow the [RetryPolicy]
// (OpenWOP RFC 0214 §C; webhooks.md §Durability); an exhausted push becomes a durable host event of the task's
// tenant, [DeadLetterEventType], carrying only the task id, config id,
// attempt count and last status class — A2A clients never see it and
// recover state with GetTask. A delete stops a config's queued
// deliveries before their next attempt. [Service.Close] stops following
// runs and drains the queue until its context ends; what is left stays in
// the outbox for the next Start, so a durable Outbox and ConfigStore make
// delivery survive a restart.
//
// A replay fork never pushes and inherits nothing (OpenWOP RFC 0214 §D): configs belong to
// one task id and are never copied, and a config receives only events
// appended after it was registered, so history already in a log is never
// pushed.
package push
