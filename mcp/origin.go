package mcp

// Where a request may come from (guard step 2): the Origin allowlist and,
// on a loopback listener, the Host check that defeats DNS rebinding (MCP
// streamable HTTP §Security & Endpoint: an invalid Origin is 403).

import (
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
)

// originAllowed applies the Origin allowlist and, on a loopback listener,
// the Host check that defeats DNS rebinding (MCP streamable HTTP §Security
// & Endpoint: an invalid Origin is 403). The Host check comes first and
// holds whatever the allowlist says: a rebinding page keeps its own
// (foreign) Host.
func (s *Server) originAllowed(r *http.Request) bool {
	local, loopback := loopbackListener(r)
	if loopback && !isLoopbackHost(r.Host) {
		return false
	}
	for _, o := range r.Header.Values("Origin") {
		if s.anyOrig || s.origins[o] {
			continue
		}
		if !loopback || !s.opts.AllowOwnLoopbackOrigin || !isOwnOrigin(o, local, r.TLS != nil) {
			return false
		}
	}
	return true
}

// loopbackListener returns the local end of r's connection and whether it
// is a loopback address. It is where the connection really arrived, unlike
// the Host header, which the client writes.
func loopbackListener(r *http.Request) (netip.AddrPort, bool) {
	addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return netip.AddrPort{}, false
	}
	ap, err := netip.ParseAddrPort(addr.String())
	if err != nil {
		return netip.AddrPort{}, false
	}
	ap = netip.AddrPortFrom(ap.Addr().Unmap().WithZone(""), ap.Port())
	return ap, ap.Addr().IsLoopback()
}

var (
	loopbackV4 = netip.MustParseAddr("127.0.0.1")
	loopbackV6 = netip.IPv6Loopback()
)

// isOwnOrigin reports whether a browser Origin (RFC 6454 serialization:
// scheme://host[:port], default port omitted) names the loopback socket
// the request arrived on: the scheme of the connection (https exactly when
// it is TLS), the listener's port, and as host either the listener's own
// IP literal or "localhost" when the listener is 127.0.0.1 or [::1], the
// addresses localhost resolves to (RFC 6761 §6.3). Another loopback
// address, or the same address on another port, is another server.
func isOwnOrigin(origin string, local netip.AddrPort, tls bool) bool {
	scheme, hostport, ok := strings.Cut(origin, "://")
	wantScheme, defaultPort := "http", "80"
	if tls {
		wantScheme, defaultPort = "https", "443"
	}
	if !ok || scheme != wantScheme || hostport == "" || strings.ContainsAny(hostport, "/?#@") {
		return false
	}
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]"), defaultPort
	}
	if port != strconv.Itoa(int(local.Port())) {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return local.Addr() == loopbackV4 || local.Addr() == loopbackV6
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Zone() == "" && ip.Unmap() == local.Addr()
}

// isLoopbackHost reports whether a Host header names the loopback
// interface: localhost or a loopback IP, with or without a port.
func isLoopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}
