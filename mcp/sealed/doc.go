// Package sealed makes the MCP multi-round (MRTR) requestState of the host
// as MCP server: an opaque, integrity-protected, single-use value that
// carries what the retry of an input_required answer needs, so any replica
// can serve the retry without server-side session state (OpenWOP interop map, mcp.methods).
//
// # What it implements
//
// The OpenWOP interop map's mcp.mrtr "requestState (host as server)" row: the
// state is integrity-protected, bound to the authenticated principal, a
// TTL, the originating request digest, the runId and the interrupt, single
// use, and a tampered value is refused.
//
//   - Integrity and secrecy: AES-256-GCM under a key derived with
//     HKDF-SHA256 from a host secret ([Config.Key]); the same secret on
//     every replica, so sealing is stateless. A previous secret keeps
//     states sealed before a rotation opening until they expire.
//   - Bindings: [Sealer.Seal] seals a [Grant] (run id, the open interrupt
//     ids of this round, the 1-based round, the [RequestDigest] of the
//     tools/call) with a digest of the Subject's tenant, workspace and
//     principal, an expiry and a 128-bit random id.
//   - Host grants: a request the host serves itself (a tool that is not a
//     workflow, a prompt) seals [Grant.InputKeys], the keys it asked
//     about, and [Grant.HostState], its own opaque state for the next
//     round, instead of a run and its interrupts; such a request binds
//     with [OperationDigest] when it is not a tools/call. Everything else
//     (principal, expiry, single use) is the same.
//   - Checks: [Sealer.Open] refuses, in order, a tampered value
//     ([ErrTampered]), an expired one ([ErrExpired]), one presented by
//     another Subject ([ErrForeign]) and one presented with another request
//     ([ErrMismatch]); only a state that passes all four is consumed in the
//     [Ledger], and a second use is [ErrReplayed]. All five wrap
//     [ErrInvalidState], which the mount answers with one -32602.
//   - Single use across replicas: the [Ledger] interface is small enough
//     for a shared database (one insert with a unique key);
//     [MemoryLedger] is the in-process default, pruned lazily and bounded.
//     Package mcp/sealed/sealedtest is the conformance kit a shared
//     ledger runs (single use under concurrency and across replicas,
//     retention until expiry, exact id comparison).
//
// The mcp.mrtr "InputRequiredResult (host as client)" row is the other side
// of the same value: a
// client persists requestState byte for byte and never parses it. Sealed
// values are printable base64url with a version prefix, short enough to
// sit in a JSON string (typically 300 to 400 characters, never more than
// [MaxSealedLen]), and nothing in them is readable without the key.
//
// The same row bounds rounds with mcp.mrtr.maxRounds (OpenWOP interop.md
// §The MCP round ceiling). The Round claim makes the same ceiling enforceable by the
// host as server: the mount seals round r+1 after opening round r and
// refuses to go past its limit, without storing a counter.
//
// # What it does not do
//
// It does not build InputRequiredResult, match inputResponses keys against
// the interrupt ids, resolve interrupts or choose the wire answer; the mcp
// mount does that with the [Claims] Open returns. Open never writes the
// claims into an error message.
package sealed
