package isolation

import (
	"bytes"
	"fmt"
	"log/slog"

	"github.com/wopinterop/wopinterop/internal/routing"
	"github.com/wopinterop/wopinterop/interop"
)

// MinRoutingSecretLen is the shortest host secret [NewRoutingKeys]
// accepts: 32 bytes, the SHA-256 output size. A shorter HMAC key would be
// weaker than the hash it keys (RFC 2104 §3 advises against it).
const MinRoutingSecretLen = 32

// ErrRoutingSecretTooShort reports a routing secret (current or previous)
// shorter than [MinRoutingSecretLen] bytes.
var ErrRoutingSecretTooShort = fmt.Errorf("isolation: routing secret must be at least %d bytes", MinRoutingSecretLen)

// RoutingKeys derives per-agent routing values, the a2aTenant R of an agent
// inventory entry (OpenWOP RFC 0202 §B). It is immutable and safe for
// concurrent use; every replica configured with the same secret and host
// version derives the same values, so nothing is stored. The host mints
// values for its GET /agents entries with [RoutingKeys.ForAgent] and hands
// the keys to the A2A surface (a2a.Options.Routing), which alone resolves a
// value back to an agent — among the agents the caller already sees, after
// authentication, in constant time, answering every unknown value alike
// (OpenWOP RFC 0202 §D.6; interop.md §Per-agent cards).
//
// R is HMAC-SHA256 over a domain label, the host version and the agent id,
// keyed with the host secret, truncated to 24 base64url characters. The
// only per-call input is the agent id: R cannot encode a tenant, workspace
// or principal because no method accepts one. As a consequence, one agent
// id installed in two tenants has one R; that is harmless, because R is
// resolved only among the caller's own visible agents and grants nothing
// (OpenWOP interop map, a2a.fields).
//
// R is stable for an (agent, host version) pair and changes when the host
// version does. Rotating the secret: configure the new secret as current and
// the old one with [WithPreviousSecret]. New values are minted with the
// current secret, values minted with the previous one keep resolving, and
// once peers have re-read their cards the previous secret is dropped.
//
// Create one with [NewRoutingKeys]; the zero value holds no secret and is
// not usable.
type RoutingKeys routing.Keys

// RoutingOption configures [NewRoutingKeys].
type RoutingOption func(*routingOptions)

type routingOptions struct{ previous []byte }

// WithPreviousSecret keeps values minted under the secret being rotated out
// resolvable for one overlap. It is never used to mint. The secret is
// copied; it must also be at least [MinRoutingSecretLen] bytes.
func WithPreviousSecret(secret []byte) RoutingOption {
	return func(o *routingOptions) { o.previous = bytes.Clone(secret) }
}

// NewRoutingKeys returns routing keys for secret and hostVersion. The secret
// is copied and must be at least [MinRoutingSecretLen] bytes of high-entropy
// host configuration; a shorter one is refused with an error wrapping
// [ErrRoutingSecretTooShort] that states the length and never the bytes.
func NewRoutingKeys(secret []byte, hostVersion string, opts ...RoutingOption) (*RoutingKeys, error) {
	if len(secret) < MinRoutingSecretLen {
		return nil, fmt.Errorf("%w: the current secret has %d", ErrRoutingSecretTooShort, len(secret))
	}
	var o routingOptions
	for _, opt := range opts {
		opt(&o)
	}
	if o.previous != nil && len(o.previous) < MinRoutingSecretLen {
		return nil, fmt.Errorf("%w: the previous secret has %d", ErrRoutingSecretTooShort, len(o.previous))
	}
	return (*RoutingKeys)(routing.New(secret, o.previous, hostVersion)), nil
}

// Derive returns the routing value R of the agent with id agentID. It is
// deterministic, depends on nothing but the secret, the host version and
// agentID, and always matches ^[A-Za-z0-9_-]{24}$, a subset of the R grammar
// ^[A-Za-z0-9._~-]{1,128}$.
func (k *RoutingKeys) Derive(agentID string) string { return (*routing.Keys)(k).Derive(agentID) }

// ForAgent returns the a2aTenant value of an inventory entry, or ok=false
// for an entry with no routed workflow, which gets none (OpenWOP RFC 0202 §B). Only
// a.ID enters the value.
func (k *RoutingKeys) ForAgent(a interop.Agent) (r string, ok bool) {
	return (*routing.Keys)(k).ForAgent(a)
}

// String describes the keys without their secrets.
func (k RoutingKeys) String() string { return routing.Keys(k).String() }

// GoString keeps %#v from printing the secrets.
func (k RoutingKeys) GoString() string { return k.String() }

// LogValue keeps structured logs from printing the secrets.
func (k RoutingKeys) LogValue() slog.Value { return routing.Keys(k).LogValue() }
