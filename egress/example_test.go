package egress_test

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/wopinterop/wopinterop/egress"
)

// exampleDNS answers from a table; a real host leaves Resolver nil.
type exampleDNS map[string]string

func (d exampleDNS) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	a, ok := d[host]
	if !ok {
		return nil, fmt.Errorf("no such host")
	}
	return []netip.Addr{netip.MustParseAddr(a)}, nil
}

func ExampleGuard_Check() {
	g, err := egress.NewGuard(egress.GuardOptions{Resolver: exampleDNS{
		"hooks.partner.net.":  "93.184.216.34",
		"rebind.partner.net.": "10.0.0.7",
	}})
	if err != nil {
		panic(err)
	}
	for _, u := range []string{
		"https://hooks.partner.net/a2a",
		"http://hooks.partner.net/a2a",
		"https://[::ffff:127.0.0.1]/",
		"https://0x7f.1/",
		"https://rebind.partner.net/",
	} {
		d, err := g.Check(context.Background(), u)
		if err != nil {
			fmt.Println(u, "->", err)
			continue
		}
		fmt.Println(u, "->", d.Origin, d.Addrs)
	}
	// Output:
	// https://hooks.partner.net/a2a -> https://hooks.partner.net:443 [93.184.216.34:443]
	// http://hooks.partner.net/a2a -> egress: destination refused: scheme not allowed
	// https://[::ffff:127.0.0.1]/ -> egress: destination refused: address not public
	// https://0x7f.1/ -> egress: destination refused: host not allowed
	// https://rebind.partner.net/ -> egress: destination refused: address not public
}
