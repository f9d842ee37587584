package negotiate

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// Outcome is the result of a negotiation. There is no third value: a
// downgrade is an accepted outcome whose Version differs from Requested.
type Outcome string

// Outcomes.
const (
	Accepted Outcome = "accepted"
	Refused  Outcome = "refused"
)

// Reason explains an outcome (negotiation.decided reason).
type Reason string

// Reasons. BelowFloor is the one the conformance suite pins; the others are
// our reading of the enum (OpenWOP conformance scenarios v2-minimum-version-refused and v2-negotiation-authenticated).
const (
	ReasonOK              Reason = "ok"
	ReasonBelowFloor      Reason = "below-floor"
	ReasonUnauthenticated Reason = "unauthenticated"
	ReasonUnsupported     Reason = "unsupported"
)

// legacyHeaderlessRevision is the newest MCP revision a request without an
// MCP-Protocol-Version header can be (OpenWOP interop map, mcp.headers).
const legacyHeaderlessRevision = "2025-03-26"

// Policy is the one version policy of a protocol, used for every decision in
// both directions. Build it with [NewPolicy]; the zero value is unusable.
type Policy struct {
	protocol       Protocol
	offered        []string
	preferred      string
	floor          string
	allowDowngrade bool
	now            func() time.Time
}

// Config declares a protocol's advertised versions: the facet's
// versions/revisions, preferredVersion and minimumVersion/minimumRevision.
type Config struct {
	Protocol Protocol
	// Offered lists every version (A2A "major.minor") or revision (MCP
	// "YYYY-MM-DD") served, as advertised.
	Offered []string
	// Preferred is served when the peer names none. It must be offered.
	Preferred string
	// Floor is the lowest version ever used; it must be offered and not
	// above Preferred.
	Floor string
	// AllowDowngrade lets an authenticated peer use an offered version
	// between Floor and Preferred (OpenWOP interop.md §Downgrade above the floor). An unauthenticated peer never
	// gets one (OpenWOP interop.md §Negotiation is a protocol).
	AllowDowngrade bool
	// Now stamps decisions; nil means time.Now.
	Now func() time.Time
}

// NewPolicy validates c and returns its policy.
func NewPolicy(c Config) (*Policy, error) {
	if c.Protocol != A2A && c.Protocol != MCP {
		return nil, fmt.Errorf("negotiate: protocol %q is neither a2a nor mcp", c.Protocol)
	}
	if len(c.Offered) == 0 {
		return nil, errors.New("negotiate: no version offered")
	}
	for _, v := range c.Offered {
		n, ok := normalize(c.Protocol, v)
		if !ok || n != v {
			return nil, fmt.Errorf("negotiate: offered %s version %q is not well formed", c.Protocol, v)
		}
	}
	for i, v := range c.Offered {
		if slices.Contains(c.Offered[:i], v) {
			return nil, fmt.Errorf("negotiate: version %q offered twice", v)
		}
	}
	if !slices.Contains(c.Offered, c.Preferred) {
		return nil, fmt.Errorf("negotiate: preferred version %q is not offered", c.Preferred)
	}
	if !slices.Contains(c.Offered, c.Floor) {
		return nil, fmt.Errorf("negotiate: floor %q is not offered", c.Floor)
	}
	if compare(c.Protocol, c.Floor, c.Preferred) > 0 {
		return nil, fmt.Errorf("negotiate: floor %q is above preferred version %q", c.Floor, c.Preferred)
	}
	for _, v := range c.Offered {
		if compare(c.Protocol, v, c.Floor) < 0 {
			return nil, fmt.Errorf("negotiate: offered version %q is below the floor %q", v, c.Floor)
		}
	}
	now := c.Now
	if now == nil {
		now = time.Now
	}
	return &Policy{
		protocol:       c.Protocol,
		offered:        slices.Clone(c.Offered),
		preferred:      c.Preferred,
		floor:          c.Floor,
		allowDowngrade: c.AllowDowngrade,
		now:            now,
	}, nil
}

// Protocol returns the protocol the policy decides for.
func (p *Policy) Protocol() Protocol { return p.protocol }

// Preferred returns the preferred version.
func (p *Policy) Preferred() string { return p.preferred }

// Floor returns the minimum version.
func (p *Policy) Floor() string { return p.floor }

// Offered returns the offered versions in their advertised order. The slice
// is shared; callers must not modify it.
func (p *Policy) Offered() []string { return p.offered }

// offers reports whether v is offered exactly.
func (p *Policy) offers(v string) bool { return slices.Contains(p.offered, v) }

// Peer describes the other side of an exchange.
type Peer struct {
	// Authenticated is whether the exchange is authenticated: the inbound
	// caller's Subject, or the host's own outbound identity.
	Authenticated bool
	// Origin is the peer's origin ("https://agent.example"), used only to
	// compute the record's peerDigest; "" when unknown.
	Origin string
}

// Decision is the outcome of one negotiation. Bindings turn a refusal into
// their own wire error; [Decision.Record] is the audit payload.
type Decision struct {
	Protocol Protocol
	Outcome  Outcome
	Reason   Reason
	// Version is the version used; empty on a refusal.
	Version string
	// Requested is the well-formed version the requesting side named (patch
	// dropped), or "" when it named none or sent a malformed value.
	Requested string
	// RequestedRaw is exactly what the peer sent. It is for the binding's
	// error data only (e.g. MCP -32022 data.requested) and never enters the
	// audit record.
	RequestedRaw string
	// Floor is the advertised floor.
	Floor string
	// Supported lists the offered versions, for a refusal's supported list.
	// Shared with the policy: do not modify.
	Supported []string
	// PeerDigest is the lowercase hex SHA-256 of the peer origin, or "".
	PeerDigest string
	At         time.Time
}

// Accepted reports whether the decision lets the exchange proceed.
func (d Decision) Accepted() bool { return d.Outcome == Accepted }

func (p *Policy) decision(peer Peer) Decision {
	return Decision{
		Protocol:   p.protocol,
		Floor:      p.floor,
		Supported:  p.offered,
		PeerDigest: peerDigest(peer.Origin),
		At:         p.now().UTC(),
	}
}

func (d Decision) accept(version string, r Reason) Decision {
	d.Outcome, d.Version, d.Reason = Accepted, version, r
	return d
}

func (d Decision) refuse(r Reason) Decision {
	d.Outcome, d.Version, d.Reason = Refused, "", r
	return d
}

// Inbound decides the version of a request the host receives. requested is
// the version the peer named (A2A-Version, MCP-Protocol-Version or _meta
// protocolVersion), "" when it named none.
//
// A2A: none named → preferred; preferred or a newer offered version → that;
// an offered version between floor and preferred → that version only for an
// authenticated peer under a policy that allows downgrades, preferred
// otherwise; below the floor → refused below-floor; anything else → refused
// unsupported.
//
// MCP: a request's body is written in the revision it names, so the host
// cannot answer in another one: an unauthenticated request for a revision
// below preferred is refused (unauthenticated), and one that named none is
// treated as at most 2025-03-26 and served only if such a revision is
// offered (OpenWOP interop map, mcp.headers).
func (p *Policy) Inbound(requested string, peer Peer) Decision {
	d := p.decision(peer)
	d.RequestedRaw = requested
	if requested == "" {
		if p.protocol == MCP {
			return p.headerlessMCP(d)
		}
		return d.accept(p.preferred, ReasonOK)
	}
	v, ok := normalize(p.protocol, requested)
	if !ok {
		// A malformed value is never copied into the record: it could
		// carry anything, including the peer's host name.
		return d.refuse(ReasonUnsupported)
	}
	d.Requested = v
	switch {
	case compare(p.protocol, v, p.floor) < 0:
		return d.refuse(ReasonBelowFloor)
	case !p.offers(v):
		return d.refuse(ReasonUnsupported)
	case compare(p.protocol, v, p.preferred) >= 0:
		return d.accept(v, ReasonOK)
	}
	// An offered version between the floor and preferred: a downgrade.
	if peer.Authenticated && p.allowDowngrade {
		return d.accept(v, ReasonOK)
	}
	if p.protocol == MCP {
		if !peer.Authenticated {
			return d.refuse(ReasonUnauthenticated)
		}
		return d.refuse(ReasonUnsupported)
	}
	if !peer.Authenticated {
		return d.accept(p.preferred, ReasonUnauthenticated)
	}
	return d.accept(p.preferred, ReasonOK)
}

// Unauthenticated is the decision for an inbound request refused because
// it carries no valid credential: refused, reason unauthenticated, with the
// version the peer named (when well formed) as Requested. The exchange is
// still recorded before the 401 (OpenWOP interop.md §Negotiation is a
// protocol; RFC 0242 §B.4), so a peer that
// never authenticates leaves an audit trail of what it asked for.
func (p *Policy) Unauthenticated(requested string, peer Peer) Decision {
	d := p.decision(peer)
	d.RequestedRaw = requested
	if v, ok := normalize(p.protocol, requested); ok {
		d.Requested = v
	}
	return d.refuse(ReasonUnauthenticated)
}

func (p *Policy) headerlessMCP(d Decision) Decision {
	best := ""
	for _, v := range p.offered {
		if compare(MCP, v, legacyHeaderlessRevision) <= 0 && (best == "" || compare(MCP, v, best) > 0) {
			best = v
		}
	}
	if best == "" {
		return d.refuse(ReasonUnsupported)
	}
	return d.accept(best, ReasonOK)
}

// Outbound decides the version the host uses as a client, from the
// versions the peer advertises. The host asks for its preferred version when
// the peer offers it, otherwise for the newest version both sides offer; it
// never goes below its floor, and an unauthenticated exchange never goes
// below preferred (OpenWOP interop.md §Negotiation is a protocol, §The floor).
// Requested is what the host asks for.
func (p *Policy) Outbound(peerOffers []string, peer Peer) Decision {
	d := p.decision(peer)
	peerHasBelowFloor := false
	best := ""
	for _, raw := range peerOffers {
		v, ok := normalize(p.protocol, raw)
		if !ok {
			continue
		}
		if compare(p.protocol, v, p.floor) < 0 {
			peerHasBelowFloor = true
			continue
		}
		if !p.offers(v) {
			continue
		}
		if v == p.preferred {
			best = v
			break
		}
		if best == "" || compare(p.protocol, v, best) > 0 {
			best = v
		}
	}
	switch {
	case best == "" && peerHasBelowFloor:
		return d.refuse(ReasonBelowFloor)
	case best == "":
		return d.refuse(ReasonUnsupported)
	}
	d.Requested = best
	if best != p.preferred && compare(p.protocol, best, p.preferred) < 0 {
		if !peer.Authenticated {
			return d.refuse(ReasonUnauthenticated)
		}
		if !p.allowDowngrade {
			return d.refuse(ReasonUnsupported)
		}
	}
	return d.accept(best, ReasonOK)
}
