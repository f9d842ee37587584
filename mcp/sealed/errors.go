package sealed

import (
	"errors"
	"fmt"
)

// ErrInvalidState is the one sentinel every refusal of [Sealer.Open] wraps.
// The MCP mount answers all of them with the same JSON-RPC -32602 and a
// fixed message, so a caller learns nothing about which check failed
// (OpenWOP interop map, mcp.mrtr). The more specific errors below exist for tests, metrics and
// audit; none of their messages carries a claim.
var ErrInvalidState = errors.New("sealed: invalid requestState")

// The refusals of [Sealer.Open], in the order Open checks them. Each wraps
// [ErrInvalidState].
var (
	// ErrTampered: the value is not one this host sealed with a configured
	// key. Malformed encodings, a changed version or key id, any altered
	// byte, a truncation or an extension, and values sealed under a key that
	// is no longer configured all land here.
	ErrTampered = fmt.Errorf("%w: integrity check failed", ErrInvalidState)
	// ErrExpired: the value is authentic but its TTL has passed.
	ErrExpired = fmt.Errorf("%w: expired", ErrInvalidState)
	// ErrForeign: the value was sealed for another tenant, workspace or
	// principal than the Subject presenting it.
	ErrForeign = fmt.Errorf("%w: bound to another principal", ErrInvalidState)
	// ErrMismatch: the value was sealed for another request (tool name or
	// arguments) than the retry presenting it.
	ErrMismatch = fmt.Errorf("%w: bound to another request", ErrInvalidState)
	// ErrReplayed: the value passed every check but was already consumed.
	ErrReplayed = fmt.Errorf("%w: already used", ErrInvalidState)
)

// ErrKeyTooShort reports a current or previous key shorter than
// [MinKeyLen] bytes. The error states the length, never the bytes.
var ErrKeyTooShort = fmt.Errorf("sealed: key must be at least %d bytes", MinKeyLen)

// ErrInvalidGrant reports a [Grant] that [Sealer.Seal] refuses to seal: a
// run id or interrupt id outside the tenant-bound grammar, no or duplicate
// interrupt ids, a round outside 1..[MaxRound], or claims too large for
// [MaxSealedLen]. It is a programming error of the caller, never a client's.
var ErrInvalidGrant = errors.New("sealed: invalid grant")

// ErrArguments reports tool arguments [RequestDigest] cannot canonicalise:
// not a single JSON value, a duplicate object member name, or nesting deeper
// than [MaxArgumentDepth].
var ErrArguments = errors.New("sealed: arguments are not canonicalisable JSON")

// ErrLedgerFull reports a [MemoryLedger] holding Capacity unexpired ids. It
// fails closed: forgetting an unexpired id would let its state be replayed.
// It does not wrap [ErrInvalidState]; the mount answers it as a server
// fault.
var ErrLedgerFull = errors.New("sealed: memory ledger is full")
