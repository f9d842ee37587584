// Package egress is the one egress guard of the library: push delivery
// (package push) and both client directions — the A2A delegation client
// (a2a/delegate) and the MCP client — send requests only through a
// [Guard], so a destination named by configuration, by a peer or by
// content can never reach the host's own network (OpenWOP RFC 0214 §B;
// webhooks.md §Egress).
//
// A [Guard] is one predicate, applied when a destination is configured
// and again at every request:
//
//   - https only; an exact-origin allowlist ([GuardOptions.AllowOrigins])
//     admits local peers and receivers in tests and private deployments;
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
//     validated (every request is checked again and the dial never
//     resolves a second time: no DNS-rebinding window), follows no
//     redirect (the 3xx is returned as it is, and is a failure to every
//     caller), ignores the environment's proxy, refuses header values with
//     CR or LF, and verifies TLS against the URL's host name. A configured
//     proxy ([GuardOptions.Proxy]) is reached with CONNECT to the
//     validated address: the target is judged, never the proxy in its
//     place. It speaks HTTP/1.1 over kept-alive connections and writes
//     each request and reads its answer on the caller's goroutine, so a
//     push lane, which waits for each answer before its next push, pays
//     no hand-off to transport goroutines, and it writes a push's simple
//     request and reads the usual short answer without net/http's
//     general reader and writer (the same bytes; any other shape goes
//     to them); [Guard.NewClient], for the
//     A2A and MCP clients, is an http.Transport with the same rules.
//
// A refusal is a [*RefusedError] whose [Reason] is content-free: it never
// repeats the URL, a name or an address.
//
// A client reads a peer's answer with [ReadAll] or [LimitReader], which
// stop at a byte limit: memory follows the bytes actually received, never
// a Content-Length the peer announced, and a body over the limit is a
// [*TooLargeError], not a truncated document.
package egress
