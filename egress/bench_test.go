package egress

import (
	"context"
	"net/netip"
	"testing"
)

// staticResolver answers from a fixed table without recording anything.
type staticResolver map[string][]netip.Addr

func (r staticResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if as, ok := r[host]; ok {
		return as, nil
	}
	return nil, errNXDomain
}

func BenchmarkGuardCheck(b *testing.B) {
	g, err := NewGuard(GuardOptions{Resolver: staticResolver{"hooks.partner.net.": {netip.MustParseAddr("93.184.216.34")}}})
	if err != nil {
		b.Fatal(err)
	}
	for _, u := range []string{"https://93.184.216.34/hook", "https://hooks.partner.net/a2a?x=1", "https://[::ffff:10.0.0.1]/"} {
		b.Run(u, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = g.Check(context.Background(), u)
			}
		})
	}
}

func BenchmarkPublicUnicast(b *testing.B) {
	p := newAddrPolicy(nil)
	addrs := []netip.Addr{netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("2606:4700:4700::1111"), netip.MustParseAddr("2001:0:4136:e378:8000:63bf:a247:2bdd")}
	b.ReportAllocs()
	for b.Loop() {
		for _, a := range addrs {
			_ = p.publicUnicast(a)
		}
	}
}

// benchService is a started service whose configs point at one loopback
// receiver answering 204, lanes configs in all.
