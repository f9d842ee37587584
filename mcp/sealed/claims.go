package sealed

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/wopinterop/wopinterop/isolation"
)

const (
	// MaxRound is the largest round a requestState can carry. The MCP facet
	// caps mcp.mrtr.maxRounds at 16; the wider field leaves room without
	// changing the encoding.
	MaxRound = 1<<16 - 1

	// idLen is the size of the random single-use id (jti): 128 bits.
	idLen = 16
)

// Grant is what the mount knows when a run suspends and it answers a
// tools/call with input_required (OpenWOP interop map, mcp.mrtr): the caller-visible parts of
// the claims. [Sealer.Seal] adds the principal binding, the expiry and a
// fresh single-use id.
type Grant struct {
	// RunID is the suspended run, in bound form ("tenant/opaque").
	RunID string
	// InterruptIDs are the open interrupts this round asks about, each in
	// bound form and each a key of inputRequests (OpenWOP interop map, mcp.mrtr). At least one,
	// no duplicates; the order is kept.
	InterruptIDs []string
	// Round is the 1-based round number of this input_required answer, so a
	// ceiling like mcp.mrtr.maxRounds can be enforced across retries
	// without server-side storage (OpenWOP interop.md §The MCP round ceiling).
	Round int
	// RequestDigest is [RequestDigest] of the originating tools/call (or
	// [OperationDigest] of another request).
	RequestDigest [32]byte

	// InputKeys and HostState make a host grant instead of a run grant:
	// the input_required answer of a request the host serves itself (a
	// tool that is not a workflow, a prompt, a resource read) rather than
	// one a suspended run caused. A host grant has no RunID and no
	// InterruptIDs. InputKeys are this round's inputRequests keys, chosen
	// by the host: at least one, none empty, no duplicates, the order
	// kept. HostState is the host's own opaque state for the next round,
	// sealed with the rest (so the client can neither read nor alter it);
	// it may be empty, and it shares the [MaxSealedLen] budget, so it
	// should stay well under 2 KiB.
	InputKeys []string
	HostState []byte
}

// hostGrant reports whether g is a host grant (see [Grant.InputKeys]).
func (g *Grant) hostGrant() bool {
	return g.RunID == "" && len(g.InterruptIDs) == 0 && len(g.InputKeys) > 0
}

// Claims is what [Sealer.Open] returns for a valid, fresh requestState.
// The principal binding is checked by Open and not exposed.
type Claims struct {
	Grant
	// ID is the single-use id (jti): 128 random bits, base64url without
	// padding (22 characters). The [Ledger] records it on Open.
	ID string
	// ExpiresAt is the end of the TTL, at millisecond precision.
	ExpiresAt time.Time
}

// validate reports why g cannot be sealed.
func (g *Grant) validate() error {
	if g.hostGrant() {
		return g.validateHost()
	}
	if len(g.InputKeys) > 0 || len(g.HostState) > 0 {
		return fmt.Errorf("%w: a run grant carries no input keys or host state", ErrInvalidGrant)
	}
	if !isolation.ValidBound(g.RunID) {
		return fmt.Errorf("%w: run id is not a tenant-bound id", ErrInvalidGrant)
	}
	if len(g.InterruptIDs) == 0 {
		return fmt.Errorf("%w: no interrupt id", ErrInvalidGrant)
	}
	for i, id := range g.InterruptIDs {
		if !isolation.ValidBound(id) {
			return fmt.Errorf("%w: interrupt id %d is not a tenant-bound id", ErrInvalidGrant, i)
		}
		for _, prev := range g.InterruptIDs[:i] {
			if prev == id {
				return fmt.Errorf("%w: interrupt id %d is a duplicate", ErrInvalidGrant, i)
			}
		}
	}
	if g.Round < 1 || g.Round > MaxRound {
		return fmt.Errorf("%w: round %d outside 1..%d", ErrInvalidGrant, g.Round, MaxRound)
	}
	return nil
}

// validateHost reports why the host grant g cannot be sealed.
func (g *Grant) validateHost() error {
	for i, k := range g.InputKeys {
		if k == "" {
			return fmt.Errorf("%w: input key %d is empty", ErrInvalidGrant, i)
		}
		for _, prev := range g.InputKeys[:i] {
			if prev == k {
				return fmt.Errorf("%w: input key %d is a duplicate", ErrInvalidGrant, i)
			}
		}
	}
	if g.Round < 1 || g.Round > MaxRound {
		return fmt.Errorf("%w: round %d outside 1..%d", ErrInvalidGrant, g.Round, MaxRound)
	}
	return nil
}

// sealedClaims is the plaintext of a requestState.
type sealedClaims struct {
	id        [idLen]byte
	expiresAt int64 // Unix milliseconds
	principal [32]byte
	grant     Grant
}

// The plaintext encoding (version 1), every field in this order:
//
//	id          16 bytes
//	expiresAt    8 bytes, big-endian two's complement Unix milliseconds
//	principal   32 bytes
//	request     32 bytes
//	round       uvarint
//	runID       uvarint length, bytes
//	interrupts  uvarint count, then per id: uvarint length, bytes
//
// A host grant (no run id) spells its input keys where a run grant has its
// interrupt ids, after an empty run id, and adds one last field:
//
//	hostState   uvarint length, bytes
//
// Varints must be minimal and nothing may follow the last field, so every
// claims value has exactly one encoding; the empty run id tells the two
// layouts apart (a run grant's id is never empty). A binary layout rather than JSON
// keeps typical states to 300–400 characters; the bytes are authenticated
// before they are decoded.
const fixedClaimsLen = idLen + 8 + 32 + 32

// appendClaims appends the encoding of c to dst.
func appendClaims(dst []byte, c *sealedClaims) []byte {
	dst = append(dst, c.id[:]...)
	dst = binary.BigEndian.AppendUint64(dst, uint64(c.expiresAt))
	dst = append(dst, c.principal[:]...)
	dst = append(dst, c.grant.RequestDigest[:]...)
	dst = binary.AppendUvarint(dst, uint64(c.grant.Round))
	dst = appendBytes(dst, c.grant.RunID)
	ids := c.grant.InterruptIDs
	if c.grant.RunID == "" {
		ids = c.grant.InputKeys
	}
	dst = binary.AppendUvarint(dst, uint64(len(ids)))
	for _, id := range ids {
		dst = appendBytes(dst, id)
	}
	if c.grant.RunID == "" {
		dst = appendBytes(dst, string(c.grant.HostState))
	}
	return dst
}

// claimsLen is len(appendClaims(nil, c)) without encoding.
func claimsLen(c *sealedClaims) int {
	n := fixedClaimsLen + uvarintLen(uint64(c.grant.Round)) + uvarintLen(uint64(len(c.grant.RunID))) + len(c.grant.RunID)
	ids := c.grant.InterruptIDs
	if c.grant.RunID == "" {
		ids = c.grant.InputKeys
		n += uvarintLen(uint64(len(c.grant.HostState))) + len(c.grant.HostState)
	}
	n += uvarintLen(uint64(len(ids)))
	for _, id := range ids {
		n += uvarintLen(uint64(len(id))) + len(id)
	}
	return n
}

func appendBytes(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

var errClaimsEncoding = errors.New("malformed claims encoding")

// decodeClaims is the inverse of appendClaims. It refuses any input that
// appendClaims would not produce byte for byte.
func decodeClaims(b []byte, c *sealedClaims) error {
	if len(b) < fixedClaimsLen {
		return errClaimsEncoding
	}
	copy(c.id[:], b)
	b = b[idLen:]
	c.expiresAt = int64(binary.BigEndian.Uint64(b))
	b = b[8:]
	copy(c.principal[:], b)
	b = b[32:]
	copy(c.grant.RequestDigest[:], b)
	b = b[32:]

	round, b, ok := readUvarint(b)
	if !ok || round < 1 || round > MaxRound {
		return errClaimsEncoding
	}
	c.grant.Round = int(round)
	if c.grant.RunID, b, ok = readString(b); !ok {
		return errClaimsEncoding
	}
	n, b, ok := readUvarint(b)
	// Every id takes at least one byte, so a count above the remaining
	// length is a lie; checking first bounds the allocation.
	if !ok || n == 0 || n > uint64(len(b)) {
		return errClaimsEncoding
	}
	ids := make([]string, n)
	for i := range ids {
		if ids[i], b, ok = readString(b); !ok {
			return errClaimsEncoding
		}
	}
	if c.grant.RunID != "" {
		c.grant.InterruptIDs = ids
	} else {
		c.grant.InputKeys = ids
		var state string
		if state, b, ok = readString(b); !ok {
			return errClaimsEncoding
		}
		if state != "" {
			c.grant.HostState = []byte(state)
		}
	}
	if len(b) != 0 {
		return errClaimsEncoding
	}
	return nil
}

// readUvarint reads one minimal uvarint.
func readUvarint(b []byte) (uint64, []byte, bool) {
	v, n := binary.Uvarint(b)
	if n <= 0 || n != uvarintLen(v) {
		return 0, nil, false
	}
	return v, b[n:], true
}

func readString(b []byte) (string, []byte, bool) {
	n, b, ok := readUvarint(b)
	if !ok || n > uint64(len(b)) {
		return "", nil, false
	}
	return string(b[:n]), b[n:], true
}

// claims turns the decoded plaintext into the public view.
func (c *sealedClaims) claims() Claims {
	return Claims{
		Grant:     c.grant,
		ID:        base64.RawURLEncoding.EncodeToString(c.id[:]),
		ExpiresAt: time.UnixMilli(c.expiresAt),
	}
}
