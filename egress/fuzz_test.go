package egress

import (
	"context"
	"errors"
	"hash/fnv"
	"net/netip"
	"strings"
	"testing"
)

// hashResolver answers every name with one address picked by a hash of
// the name, public or not, so fuzzed names exercise both arms.
type hashResolver struct{ pool []netip.Addr }

func newHashResolver() hashResolver {
	var pool []netip.Addr
	for _, a := range []string{"93.184.216.34", "10.0.0.1", "127.0.0.1", "169.254.169.254", "2606:4700:4700::1111", "::ffff:192.168.0.1", "fd00::1", "64:ff9b::a00:1", "8.8.8.8"} {
		pool = append(pool, netip.MustParseAddr(a))
	}
	return hashResolver{pool: pool}
}

func (r hashResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if strings.HasPrefix(host, "nx") {
		return nil, errNXDomain
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(host))
	return []netip.Addr{r.pool[h.Sum32()%uint32(len(r.pool))]}, nil
}

// FuzzCheck fuzzes the destination parser and the guard. Whatever the
// input, the answer is a destination or a *RefusedError; an accepted
// destination has no userinfo or fragment, is https with only public
// addresses unless allowlisted, and its origin is a fixed point of the
// origin parser.
func FuzzCheck(f *testing.F) {
	for _, c := range refusedDestinations(f) {
		f.Add(c.url)
	}
	for _, u := range []string{
		"https://hooks.partner.net/a2a?x=1", "https://HOOKS.partner.net./", "https://[2002:5db8:d822::1]:8443/",
		"https://93.184.216.34/", "http://127.0.0.1:8080/hook", "https://[::ffff:93.184.216.34]/",
		"https://a.b/%2e%2e/", "https://xn--nxasmq6b.com/", "https://a_b.example.net/",
	} {
		f.Add(u)
	}
	g, err := NewGuard(GuardOptions{Resolver: newHashResolver(), AllowOrigins: []string{guardAllow}})
	if err != nil {
		f.Fatal(err)
	}
	policy := newAddrPolicy(nil)
	f.Fuzz(func(t *testing.T, raw string) {
		d, err := g.Check(context.Background(), raw)
		if err != nil {
			var re *RefusedError
			if d != nil || !errors.As(err, &re) || re.Reason == "" {
				t.Fatalf("%q: (%v, %v), want nil and a *RefusedError", raw, d, err)
			}
			if strings.Contains(err.Error(), raw) && raw != "" && len(raw) > 3 {
				t.Fatalf("%q: the refusal repeats the URL: %v", raw, err)
			}
			return
		}
		if d.URL.User != nil || d.URL.Fragment != "" || strings.Contains(raw, "#") || strings.Contains(raw, "@") && !strings.Contains(d.URL.Path+d.URL.RawQuery, "@") {
			t.Fatalf("%q: accepted with userinfo or a fragment", raw)
		}
		if len(d.Addrs) == 0 {
			t.Fatalf("%q: accepted without an address", raw)
		}
		if !d.Allowlisted {
			if d.URL.Scheme != "https" {
				t.Fatalf("%q: accepted scheme %q", raw, d.URL.Scheme)
			}
			for _, a := range d.Addrs {
				if !policy.publicUnicast(a.Addr()) {
					t.Fatalf("%q: accepted the non-public address %v", raw, a)
				}
			}
		}
		origin, err := parseOrigin(d.Origin)
		if err != nil || origin != d.Origin {
			t.Fatalf("%q: origin %q is not a fixed point (%q, %v)", raw, d.Origin, origin, err)
		}
		again, err := g.Check(context.Background(), raw)
		if err != nil || again.Origin != d.Origin {
			t.Fatalf("%q: a second check answered differently: %v", raw, err)
		}
	})
}

// FuzzPublicUnicast fuzzes the address arm: every spelling of an IPv4
// address inside IPv6 (mapped, compatible, NAT64, 6to4) is judged like the
// address itself, a zone is never public, and a public IPv6 address is
// global unicast or one of those forms.
func FuzzPublicUnicast(f *testing.F) {
	f.Add([]byte{127, 0, 0, 1}, []byte{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1})
	f.Add([]byte{93, 184, 216, 34}, []byte{0x26, 0x06, 0x47, 0, 0x47, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x11, 0x11})
	f.Add([]byte{10, 1, 2, 3}, []byte{0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1})
	f.Add([]byte{169, 254, 169, 254}, []byte{0x20, 0x02, 0xc0, 0xa8, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1})
	p := newAddrPolicy(nil)
	f.Fuzz(func(t *testing.T, v4b, v6b []byte) {
		if len(v4b) != 4 || len(v6b) != 16 {
			return
		}
		v4 := netip.AddrFrom4([4]byte(v4b))
		want := p.publicUnicast(v4)
		b := [4]byte(v4b)
		forms := map[string]netip.Addr{
			"mapped": netip.AddrFrom16([16]byte{10: 0xff, 11: 0xff, 12: b[0], 13: b[1], 14: b[2], 15: b[3]}),
			"nat64":  netip.AddrFrom16([16]byte{0: 0, 1: 0x64, 2: 0xff, 3: 0x9b, 12: b[0], 13: b[1], 14: b[2], 15: b[3]}),
			"6to4":   netip.AddrFrom16([16]byte{0: 0x20, 1: 0x02, 2: b[0], 3: b[1], 4: b[2], 5: b[3], 15: v6b[15]}),
		}
		if v4.As4() != [4]byte{} && v4 != netip.AddrFrom4([4]byte{0, 0, 0, 1}) {
			forms["compatible"] = netip.AddrFrom16([16]byte{12: b[0], 13: b[1], 14: b[2], 15: b[3]})
		}
		for name, a := range forms {
			if got := p.publicUnicast(a); got != want {
				t.Fatalf("%s form %v of %v: public=%v, the address itself %v", name, a, v4, got, want)
			}
		}
		v6 := netip.AddrFrom16([16]byte(v6b))
		if p.publicUnicast(v6.WithZone("eth0")) {
			t.Fatalf("%v with a zone judged public", v6)
		}
		if p.publicUnicast(v6) && !v6.Is4In6() && !p.global.Contains(v6) && !isCompatible(v6.As16()) && !p.nat64.Contains(v6) {
			t.Fatalf("%v outside 2000::/3 judged public", v6)
		}
	})
}
