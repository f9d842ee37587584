package egress

import (
	"net/netip"
)

// The address arm of the egress guard (OpenWOP webhooks.md §Egress). A destination
// address must be public unicast: every IANA special-purpose block that is
// not globally reachable is refused, and so is everything IANA has not
// allocated as global unicast. IPv6 forms that embed an IPv4 address are
// judged by the embedded address rather than refused wholesale, so a
// mapped spelling of a private address can never pass and a 6to4 or NAT64
// form of a public one is not refused for its prefix alone.

// addrPolicy holds the blocks the guard judges addresses against. It is
// built per Guard (newAddrPolicy) rather than kept in package variables,
// so nothing a caller does can change another Guard's tables.
type addrPolicy struct {
	// v4 are the IPv4 blocks that are never a destination, followed
	// by the host's own IPv4 denylist.
	v4 []netip.Prefix
	// v6 are the non-global blocks inside 2000::/3.
	v6 []netip.Prefix
	// extra6 is the host's own IPv6 denylist, applied to every IPv6
	// address before anything else.
	extra6 []netip.Prefix
	// Everything outside global (2000::/3) is refused unless it is one of
	// the embedding forms judged by its IPv4.
	global, nat64, nat64Local, sixToFour, teredo netip.Prefix
}

func newAddrPolicy(extra []netip.Prefix) addrPolicy {
	p := addrPolicy{
		v4: []netip.Prefix{
			netip.MustParsePrefix("0.0.0.0/8"),       // "this network", incl. 0.0.0.0
			netip.MustParsePrefix("10.0.0.0/8"),      // RFC 1918
			netip.MustParsePrefix("100.64.0.0/10"),   // CGNAT shared address space
			netip.MustParsePrefix("127.0.0.0/8"),     // loopback
			netip.MustParsePrefix("169.254.0.0/16"),  // link-local, cloud metadata
			netip.MustParsePrefix("172.16.0.0/12"),   // RFC 1918
			netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
			netip.MustParsePrefix("192.0.2.0/24"),    // TEST-NET-1
			netip.MustParsePrefix("192.88.99.0/24"),  // deprecated 6to4 relay anycast
			netip.MustParsePrefix("192.168.0.0/16"),  // RFC 1918
			netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
			netip.MustParsePrefix("198.51.100.0/24"), // TEST-NET-2
			netip.MustParsePrefix("203.0.113.0/24"),  // TEST-NET-3
			netip.MustParsePrefix("224.0.0.0/4"),     // multicast
			netip.MustParsePrefix("240.0.0.0/4"),     // reserved, incl. 255.255.255.255
		},
		v6: []netip.Prefix{
			// IETF protocol assignments. A handful of global anycast
			// services live inside; no webhook receiver does, so the block
			// goes whole (Teredo, 2001::/32, is judged before this).
			netip.MustParsePrefix("2001::/23"),
			netip.MustParsePrefix("2001:db8::/32"), // documentation
			netip.MustParsePrefix("3fff::/20"),     // documentation (RFC 9637)
		},
		global:     netip.MustParsePrefix("2000::/3"),
		nat64:      netip.MustParsePrefix("64:ff9b::/96"),
		nat64Local: netip.MustParsePrefix("64:ff9b:1::/48"), // local-use NAT64: never global
		sixToFour:  netip.MustParsePrefix("2002::/16"),
		teredo:     netip.MustParsePrefix("2001::/32"),
	}
	for _, x := range extra {
		x = x.Masked()
		if x.Addr().Is4In6() {
			// A mapped prefix names IPv4 addresses: judge it as IPv4.
			if bits := x.Bits() - 96; bits >= 0 {
				x = netip.PrefixFrom(x.Addr().Unmap(), bits)
			}
		}
		if x.Addr().Is4() {
			p.v4 = append(p.v4, x)
		} else {
			p.extra6 = append(p.extra6, x)
		}
	}
	return p
}

// publicUnicast reports whether a may be dialled as a destination.
func (p *addrPolicy) publicUnicast(a netip.Addr) bool {
	if !a.IsValid() || a.Zone() != "" {
		// A zone only has meaning for link-local addresses.
		return false
	}
	if a.Is4() {
		return p.publicV4(a)
	}
	if a.Is4In6() {
		// ::ffff:0:0/96, however it was spelled (a MUST of OpenWOP webhooks.md §Egress).
		return p.publicV4(a.Unmap())
	}
	for _, x := range p.extra6 {
		if x.Contains(a) {
			return false
		}
	}
	b := a.As16()
	switch {
	case isCompatible(b):
		// IPv4-compatible ::/96; :: and ::1 embed 0.0.0.0 and 0.0.0.1,
		// which 0/8 refuses.
		return p.publicV4(netip.AddrFrom4([4]byte(b[12:16])))
	case p.nat64.Contains(a):
		return p.publicV4(netip.AddrFrom4([4]byte(b[12:16])))
	case p.nat64Local.Contains(a):
		return false
	case p.sixToFour.Contains(a):
		return p.publicV4(netip.AddrFrom4([4]byte(b[2:6])))
	case p.teredo.Contains(a):
		// Teredo carries the server's IPv4 in bits 32–63 and the client's,
		// inverted, in bits 96–127: both must be public.
		client := [4]byte{^b[12], ^b[13], ^b[14], ^b[15]}
		return p.publicV4(netip.AddrFrom4([4]byte(b[4:8]))) && p.publicV4(netip.AddrFrom4(client))
	case !p.global.Contains(a):
		// Unallocated, ULA fc00::/7, link-local fe80::/10, site-local,
		// multicast ff00::/8, discard-only 100::/64, SRv6 5f00::/16, ...
		return false
	}
	for _, x := range p.v6 {
		if x.Contains(a) {
			return false
		}
	}
	return true
}

func (p *addrPolicy) publicV4(a netip.Addr) bool {
	for _, x := range p.v4 {
		if x.Contains(a) {
			return false
		}
	}
	return true
}

// isCompatible reports whether b is in ::/96 (the first 96 bits zero).
func isCompatible(b [16]byte) bool {
	for _, x := range b[:12] {
		if x != 0 {
			return false
		}
	}
	return true
}
