// Package isolation holds the identity primitives every surface shares:
// the tenant-bound id grammar and its projection (OpenWOP identity.md §5),
// opaque id minting, per-agent routing values, and the read gate that makes
// an unreadable resource indistinguishable from an unknown one
// (OpenWOP v2 interop §Isolation; RULES R74–R80, R34, R38).
//
// Ids inside JSON bodies are always the bound form "tenant/opaque". On a URL
// path they travel as one projected segment, "tenant~2Fopaque"; [ParseID]
// also accepts "tenant%2Fopaque". Tenants are decided by the authenticated
// Subject only: the tenant segment of an id is never authority.
package isolation
