package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// ErrRefused is wrapped by every [*RefusedError]: the guard will not let a
// request reach the destination.
var ErrRefused = errors.New("egress: destination refused")

// Reason says which arm of the egress guard refused a destination. The
// reasons are content-free: none repeats the URL, a name or an address.
type Reason string

// Refusal reasons.
const (
	// ReasonURL: not an absolute URL, or one with a fragment, an opaque
	// part or beyond the length limit.
	ReasonURL Reason = "malformed url"
	// ReasonScheme: not https (http only for an allowlisted origin).
	ReasonScheme Reason = "scheme not allowed"
	// ReasonUserinfo: the URL carries user:password@, which is never sent.
	ReasonUserinfo Reason = "userinfo not allowed"
	// ReasonPort: a port outside 1–65535 or not in canonical decimal.
	ReasonPort Reason = "port not allowed"
	// ReasonHost: a host that is no DNS name and no canonical IP literal
	// (decimal, octal or hex IPv4 forms, IPv6 zones, stray characters), a
	// single-label name, or a name reserved for local use (localhost,
	// *.local, *.internal, ...).
	ReasonHost Reason = "host not allowed"
	// ReasonResolve: the name did not resolve to any address.
	ReasonResolve Reason = "name does not resolve"
	// ReasonAddress: an address the host is or resolves to is not public
	// unicast.
	ReasonAddress Reason = "address not public"
)

// RefusedError is a destination the guard refused, with the reason. Its
// text never carries the URL or anything resolved from it.
type RefusedError struct {
	Reason Reason
}

func (e *RefusedError) Error() string { return "egress: destination refused: " + string(e.Reason) }

// Unwrap makes errors.Is(err, ErrRefused) true.
func (e *RefusedError) Unwrap() error { return ErrRefused }

func refused(r Reason) error { return &RefusedError{Reason: r} }

// Resolver looks up the addresses of a host name. *net.Resolver satisfies
// it; tests supply their own so that they control DNS.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// GuardOptions configure a [Guard]. The zero value is the strict guard:
// https only, public unicast only, the system resolver, direct dialling.
type GuardOptions struct {
	// Resolver resolves destination names; nil means net.DefaultResolver.
	Resolver Resolver
	// AllowOrigins are exact origins ("scheme://host[:port]") that skip the
	// scheme and address arms: local receivers in tests and private
	// deployments. An entry matches a URL whose scheme, host and port are
	// the same after normalisation (lower case, no trailing dot, default
	// port explicit); it never widens to other ports, schemes or
	// subdomains. Userinfo, fragments and malformed hosts stay refused.
	AllowOrigins []string
	// Deny adds the host's own blocks to the built-in denylist
	// (OpenWOP webhooks.md §Egress). An IPv4 block also applies to IPv6 forms embedding it.
	Deny []netip.Prefix
	// Proxy, when set, is an HTTP proxy every request tunnels through
	// with CONNECT. The tunnel is opened to the validated address of the
	// target, never to its name, so the proxy cannot resolve it again; the
	// proxy's own address is operator configuration and is not judged.
	// Only http:// proxy URLs are supported; userinfo becomes
	// Proxy-Authorization.
	Proxy *url.URL
	// Dial opens a TCP connection to an address the guard validated (or to
	// the proxy); nil means a net.Dialer. Tests use it to make sure no
	// connection ever leaves the machine.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
}

// Guard is the one egress guard of the library (OpenWOP RFC 0214 §B;
// webhooks.md §Egress): one predicate applied when a push config is
// registered, at every push delivery attempt, and to every request the
// host makes as an A2A or MCP client. Each check re-resolves the name, and
// the connection is made to the addresses it just validated, never to the
// name. A Guard is safe for concurrent use.
type Guard struct {
	resolver Resolver
	allow    map[string]bool
	policy   addrPolicy
	proxy    *url.URL
	dial     func(ctx context.Context, network, address string) (net.Conn, error)
}

// NewGuard validates o and returns a guard.
func NewGuard(o GuardOptions) (*Guard, error) {
	g := &Guard{resolver: o.Resolver, allow: map[string]bool{}, policy: newAddrPolicy(o.Deny), dial: o.Dial}
	if g.resolver == nil {
		g.resolver = net.DefaultResolver
	}
	if g.dial == nil {
		g.dial = (&net.Dialer{}).DialContext
	}
	var problems []error
	for _, raw := range o.AllowOrigins {
		origin, err := parseOrigin(raw)
		if err != nil {
			problems = append(problems, fmt.Errorf("AllowOrigins: %q is not an origin (scheme://host[:port]): %w", raw, err))
			continue
		}
		g.allow[origin] = true
	}
	for _, p := range o.Deny {
		if !p.IsValid() {
			problems = append(problems, errors.New("Deny: an invalid prefix"))
		}
	}
	if p := o.Proxy; p != nil {
		if p.Scheme != "http" || p.Host == "" || p.Port() == "" || (p.Path != "" && p.Path != "/") || p.RawQuery != "" {
			problems = append(problems, errors.New("Proxy: must be http://host:port"))
		}
		g.proxy = p
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("egress: invalid guard options: %w", errors.Join(problems...))
	}
	return g, nil
}

// maxURLLength bounds a destination URL; longer ones are refused.
const maxURLLength = 2048

// Destination is a URL the guard accepted, with the addresses a connection
// to it may use.
type Destination struct {
	// URL is the parsed URL.
	URL *url.URL
	// Origin is the normalised "scheme://host:port".
	Origin string
	// Allowlisted reports that Origin is one of GuardOptions.AllowOrigins.
	Allowlisted bool
	// Addrs are the validated addresses, in resolver order.
	Addrs []netip.AddrPort
	// hostPort is the URL's host:port as the transport will ask to dial it.
	hostPort string
}

// Check applies the guard to rawURL: the URL's form, the scheme, the host,
// and every address the host is or resolves to. It returns the
// destination a request may be sent to, or a [*RefusedError]. Check
// resolves on every call, so the answer reflects DNS now (OpenWOP RFC 0214 §B).
func (g *Guard) Check(ctx context.Context, rawURL string) (*Destination, error) {
	u, host, port, err := parseDestination(rawURL)
	if err != nil {
		return nil, err
	}
	d := &Destination{URL: u, hostPort: u.Host}
	if u.Port() == "" {
		d.hostPort = net.JoinHostPort(u.Hostname(), strconv.Itoa(int(port)))
	}
	literal, isIP := host.literal()
	d.Origin = u.Scheme + "://" + host.canonical() + ":" + strconv.Itoa(int(port))
	d.Allowlisted = g.allow[d.Origin]
	if !d.Allowlisted {
		if u.Scheme != "https" {
			return nil, refused(ReasonScheme)
		}
		if !isIP && reservedName(host.name) {
			return nil, refused(ReasonHost)
		}
	}
	var addrs []netip.Addr
	if isIP {
		addrs = []netip.Addr{literal}
	} else {
		// The trailing dot makes the name absolute: no search domain of the
		// resolver's configuration is ever appended to it.
		addrs, err = g.resolver.LookupNetIP(ctx, "ip", host.name+".")
		if err != nil || len(addrs) == 0 {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return nil, ctxErr
			}
			return nil, refused(ReasonResolve)
		}
	}
	d.Addrs = make([]netip.AddrPort, 0, len(addrs))
	for _, a := range addrs {
		if !d.Allowlisted && !g.policy.publicUnicast(a) {
			// One private answer refuses the name: a client could not tell
			// which address a connection would use.
			return nil, refused(ReasonAddress)
		}
		if a.Zone() != "" {
			return nil, refused(ReasonAddress)
		}
		ap := netip.AddrPortFrom(a.Unmap(), port)
		if !slices.Contains(d.Addrs, ap) {
			d.Addrs = append(d.Addrs, ap)
		}
	}
	return d, nil
}

// destHost is a URL host split into a DNS name or an IP literal.
type destHost struct {
	name string     // lower case, no trailing dot; empty for a literal
	ip   netip.Addr // valid for a literal
}

func (h destHost) literal() (netip.Addr, bool) { return h.ip, h.ip.IsValid() }

func (h destHost) canonical() string {
	switch {
	case h.ip.Is4():
		return h.ip.String()
	case h.ip.IsValid():
		return "[" + h.ip.String() + "]"
	}
	return h.name
}

// parseDestination parses and normalises a destination URL: absolute,
// http or https, no userinfo, no fragment, a canonical port and a host
// that is a DNS name or a canonical IP literal.
func parseDestination(raw string) (*url.URL, destHost, uint16, error) {
	if raw == "" || len(raw) > maxURLLength {
		return nil, destHost{}, 0, refused(ReasonURL)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, destHost{}, 0, refused(ReasonURL)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, destHost{}, 0, refused(ReasonScheme)
	case u.Opaque != "" || u.Host == "" || !strings.HasPrefix(raw[len(u.Scheme):], "://"):
		return nil, destHost{}, 0, refused(ReasonURL)
	case u.User != nil || strings.Contains(u.Host, "@"):
		return nil, destHost{}, 0, refused(ReasonUserinfo)
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return nil, destHost{}, 0, refused(ReasonURL)
	}
	if strings.HasSuffix(u.Host, ":") {
		return nil, destHost{}, 0, refused(ReasonPort)
	}
	port, err := parsePort(u.Port(), u.Scheme)
	if err != nil {
		return nil, destHost{}, 0, err
	}
	host, err := parseHost(u.Hostname(), strings.HasPrefix(u.Host, "["))
	if err != nil {
		return nil, destHost{}, 0, err
	}
	return u, host, port, nil
}

// parsePort reads a URL port: empty means the scheme's default; otherwise
// canonical decimal in 1–65535.
func parsePort(p, scheme string) (uint16, error) {
	if p == "" {
		if scheme == "https" {
			return 443, nil
		}
		return 80, nil
	}
	n, err := strconv.ParseUint(p, 10, 16)
	if err != nil || n == 0 || strconv.FormatUint(n, 10) != p {
		return 0, refused(ReasonPort)
	}
	return uint16(n), nil
}

// parseHost classifies a URL host (brackets removed). An IPv4 literal
// must be canonical dotted decimal: resolvers disagree about 2130706433,
// 0x7f.1 or 0177.0.0.1 (inet_aton reads them as 127.0.0.1), so any host
// whose last label is numeric and is not canonical is refused rather than
// guessed at. IPv6 literals must come in brackets and carry no zone.
func parseHost(h string, bracketed bool) (destHost, error) {
	if bracketed {
		a, err := netip.ParseAddr(h)
		if err != nil || !a.Is6() || a.Zone() != "" {
			return destHost{}, refused(ReasonHost)
		}
		return destHost{ip: a}, nil
	}
	h = strings.ToLower(h)
	h = strings.TrimSuffix(h, ".")
	if h == "" || len(h) > 253 {
		return destHost{}, refused(ReasonHost)
	}
	if endsInNumber(h) {
		a, err := netip.ParseAddr(h)
		if err != nil || !a.Is4() || a.String() != h {
			return destHost{}, refused(ReasonHost)
		}
		return destHost{ip: a}, nil
	}
	labels := strings.Split(h, ".")
	if len(labels) < 2 && h != "localhost" {
		// A single label would be completed with the resolver's search
		// domains: an intranet name by another route. localhost passes
		// here only so that an allowlist may name it; reservedName refuses
		// it everywhere else.
		return destHost{}, refused(ReasonHost)
	}
	for _, l := range labels {
		if !validLabel(l) {
			return destHost{}, refused(ReasonHost)
		}
	}
	return destHost{name: h}, nil
}

// endsInNumber reports whether the last label of h is numeric in any
// notation an IPv4 parser might accept (decimal, 0x hex, leading-zero
// octal), following the WHATWG URL host parser.
func endsInNumber(h string) bool {
	last := h[strings.LastIndexByte(h, '.')+1:]
	if last == "" {
		return false
	}
	if strings.HasPrefix(last, "0x") {
		for _, c := range last[2:] {
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
				return false
			}
		}
		return true
	}
	for _, c := range last {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// validLabel: 1–63 of [a-z0-9-_], not starting or ending with '-'.
// Internationalised names must arrive in their xn-- form.
func validLabel(l string) bool {
	if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
		return false
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// reservedName reports names that only ever mean something on the local
// network: localhost (RFC 6761), mDNS .local, .internal, .home.arpa, and
// .invalid. They are refused before any lookup; an allowlisted origin may
// still name one.
func reservedName(name string) bool {
	if name == "localhost" {
		return true
	}
	for _, suffix := range [...]string{".localhost", ".local", ".internal", ".home.arpa", ".invalid"} {
		if strings.HasSuffix(name, suffix) {
			return true
		}
	}
	return false
}

// parseOrigin normalises an allowlist entry to "scheme://host:port".
func parseOrigin(raw string) (string, error) {
	u, host, port, err := parseDestination(raw)
	if err != nil {
		return "", err
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.ForceQuery {
		return "", errors.New("an origin has no path or query")
	}
	return u.Scheme + "://" + host.canonical() + ":" + strconv.Itoa(int(port)), nil
}
