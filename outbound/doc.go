// Package outbound holds what the host's two client directions share — the
// A2A delegation client (a2a/delegate) and the MCP client: the OpenWOP error
// a host renders when an outbound exchange is refused, the identity of one
// attempt, and the reconciliation state an attempt ends in when its effect
// on the remote side is not known for certain.
//
// The vocabulary follows the OpenWOP interop spec's admission-boundaries
// chapter (§18.9): a local timeout or a lost connection never becomes
// "nothing happened", and a retry is a new attempt unless the peer's
// idempotency contract covers it.
package outbound
