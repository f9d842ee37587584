// Package routing derives and resolves per-agent routing values, the
// a2aTenant R of an agent inventory entry (OpenWOP RFC 0202 §B). The host
// configures them as isolation.RoutingKeys, which is this package's Keys
// under a public name: a host mints values (Derive, ForAgent), and only the
// A2A surface resolves them (Resolve, ResolveFrom), converting
// (*routing.Keys)(cfg.Routing).
package routing

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"log/slog"
	"sync"

	"github.com/wopinterop/wopinterop/interop"
)

const (
	// valueLen is the length of every routing value: 24 base64url
	// characters, the first 18 bytes (144 bits) of the MAC. 144 bits keeps
	// two agents from ever sharing a value (the birthday bound is near 2^72
	// agents), keeps a forged value hopeless to guess, and is a whole number
	// of base64 characters, so every value has exactly one spelling. It is
	// above the 22 characters the conformance suite uses as its proxy for
	// 128 bits, and short enough for a path segment or a JSON field.
	valueLen = 24

	macLen = valueLen * 6 / 8
	// domain separates this MAC from any other use of the secret.
	domain = "a2a-tenant"
)

// ErrUnknownValue is the one error [Keys.Resolve] returns. It wraps
// [interop.ErrNotFound] and carries nothing of the value, so another
// tenant's value, a value this host never minted and a malformed value are
// answered identically (OpenWOP interop.md §Per-agent cards).
var ErrUnknownValue = fmt.Errorf("isolation: routing value: %w", interop.ErrNotFound)

// Keys derives and resolves per-agent routing values. It is immutable and
// safe for concurrent use; every replica configured with the same secret
// and host version derives the same values, so nothing is stored.
//
// R is HMAC-SHA256 over a domain label, the host version and the agent id,
// keyed with the host secret, truncated to valueLen base64url characters.
// The only per-call input is the agent id: R cannot encode a tenant,
// workspace or principal because no method accepts one. One agent id
// installed in two tenants has one R; that is harmless, because R is
// resolved only among the caller's own visible agents and grants nothing
// (OpenWOP interop map, a2a.fields). A previous secret keeps values minted
// under it resolving through a rotation; it never mints.
type Keys struct {
	current     []byte
	previous    []byte
	hostVersion string
	// Keyed MAC states are pooled because keying HMAC costs more than the
	// MAC of a short message; a pool per secret, nil for no previous.
	currentMACs  *sync.Pool
	previousMACs *sync.Pool
}

// New returns keys for the current secret, an optional previous one (nil
// for none) and hostVersion. It copies both secrets; their length is the
// caller's to check (isolation.NewRoutingKeys).
func New(current, previous []byte, hostVersion string) *Keys {
	k := &Keys{current: bytes.Clone(current), previous: bytes.Clone(previous), hostVersion: hostVersion}
	k.currentMACs = newMACPool(k.current)
	if k.previous != nil {
		k.previousMACs = newMACPool(k.previous)
	}
	return k
}

// Derive returns the routing value R of the agent with id agentID. It is
// deterministic, depends on nothing but the secret, the host version and
// agentID, and always matches ^[A-Za-z0-9_-]{24}$, a subset of the R grammar
// ^[A-Za-z0-9._~-]{1,128}$.
func (k *Keys) Derive(agentID string) string {
	m := k.currentMACs.Get().(*routingMAC)
	defer k.currentMACs.Put(m)
	m.msg = routingMessage(m.msg[:0], k.hostVersion, agentID)
	var out [valueLen]byte
	base64.RawURLEncoding.Encode(out[:], m.compute(m.msg))
	return string(out[:])
}

// ForAgent returns the a2aTenant value of an inventory entry, or ok=false
// for an entry with no routed workflow, which gets none (OpenWOP RFC 0202 §B). Only
// a.ID enters the value.
func (k *Keys) ForAgent(a interop.Agent) (r string, ok bool) {
	if len(a.Workflows) == 0 {
		return "", false
	}
	return k.Derive(a.ID), true
}

// Resolve finds the agent whose routing value is r among visible, the
// agents the caller's Subject may see (from [interop.AgentInventory]),
// after the caller was authenticated and authorized (OpenWOP RFC 0202 §D.6). Each
// candidate is compared in constant time, every candidate is examined, and
// values minted under the previous secret also match. Agents without a
// routed workflow have no value and never match.
//
// Anything else — another tenant's value, a never-minted one, a malformed
// one — is [ErrUnknownValue], the same value every time (OpenWOP interop.md §Per-agent cards).
func (k *Keys) Resolve(r string, visible []interop.Agent) (interop.Agent, error) {
	var want [macLen]byte
	if !decodeRoutingValue(r, &want) {
		return interop.Agent{}, ErrUnknownValue
	}
	cur := k.currentMACs.Get().(*routingMAC)
	defer k.currentMACs.Put(cur)
	var prev *routingMAC
	if k.previousMACs != nil {
		prev = k.previousMACs.Get().(*routingMAC)
		defer k.previousMACs.Put(prev)
	}
	found := -1
	for i, a := range visible {
		if len(a.Workflows) == 0 {
			continue
		}
		cur.msg = routingMessage(cur.msg[:0], k.hostVersion, a.ID)
		match := subtle.ConstantTimeCompare(cur.compute(cur.msg), want[:])
		if prev != nil {
			match |= subtle.ConstantTimeCompare(prev.compute(cur.msg), want[:])
		}
		if match == 1 && found < 0 {
			found = i
		}
	}
	if found < 0 {
		return interop.Agent{}, ErrUnknownValue
	}
	return visible[found], nil
}

// ResolveFrom lists the agents visible to s through inv and resolves r among
// them. A nil inventory (a host without agents) has no values. An inventory
// refusal of the Subject (ErrNotFound, ErrForbidden) means it sees no agent
// and is answered as an unknown value; any other inventory error is returned
// wrapped, as a server fault.
func (k *Keys) ResolveFrom(ctx context.Context, inv interop.AgentInventory, s interop.Subject, r string) (interop.Agent, error) {
	if inv == nil {
		return interop.Agent{}, ErrUnknownValue
	}
	agents, err := inv.ListAgents(ctx, s)
	if err != nil {
		if errors.Is(err, interop.ErrNotFound) || errors.Is(err, interop.ErrForbidden) {
			return interop.Agent{}, ErrUnknownValue
		}
		return interop.Agent{}, fmt.Errorf("isolation: list agents: %w", err)
	}
	return k.Resolve(r, agents)
}

// String describes the keys without their secrets (isolation.RoutingKeys
// prints through it).
func (k Keys) String() string {
	return fmt.Sprintf("isolation.RoutingKeys{hostVersion: %q, previousSecret: %t, secrets: redacted}", k.hostVersion, k.previous != nil)
}

// LogValue keeps structured logs from printing the secrets.
func (k Keys) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("hostVersion", k.hostVersion),
		slog.Bool("previousSecret", k.previous != nil),
	)
}

// decodeRoutingValue accepts exactly the strings Derive produces: 24
// characters of the unpadded base64url alphabet. The explicit checks come
// first because the base64 decoder would otherwise skip '\r' and '\n'.
func decodeRoutingValue(r string, out *[macLen]byte) bool {
	if len(r) != valueLen {
		return false
	}
	for i := 0; i < len(r); i++ {
		c := r[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	n, err := base64.RawURLEncoding.Decode(out[:], []byte(r))
	return err == nil && n == macLen
}

// routingMAC is one keyed HMAC with its scratch buffers.
type routingMAC struct {
	h   hash.Hash
	msg []byte
	sum []byte
}

func newMACPool(key []byte) *sync.Pool {
	return &sync.Pool{New: func() any {
		return &routingMAC{h: hmac.New(sha256.New, key), msg: make([]byte, 0, 64), sum: make([]byte, 0, sha256.Size)}
	}}
}

// compute returns the first macLen bytes of the MAC of msg. The
// result aliases m.sum and is valid until the next call.
func (m *routingMAC) compute(msg []byte) []byte {
	m.h.Reset()
	m.h.Write(msg)
	m.sum = m.h.Sum(m.sum[:0])
	return m.sum[:macLen]
}

// routingMessage appends the MAC input for (hostVersion, agentID) to buf.
// Each field is length-prefixed so no two inputs share an encoding: the
// version "1.2" with agent "3x" and the version "1.23" with agent "x" differ.
func routingMessage(buf []byte, hostVersion, agentID string) []byte {
	for _, f := range [...]string{domain, hostVersion, agentID} {
		buf = binary.BigEndian.AppendUint32(buf, uint32(len(f)))
		buf = append(buf, f...)
	}
	return buf
}
