package negotiate_test

import (
	"fmt"
	"time"

	"github.com/wopinterop/wopinterop/negotiate"
)

func ExamplePolicy_Inbound() {
	policy, err := negotiate.NewPolicy(negotiate.Config{
		Protocol:       negotiate.A2A,
		Offered:        []string{"1.0", "0.3"},
		Preferred:      "1.0",
		Floor:          "0.3",
		AllowDowngrade: true,
		Now:            func() time.Time { return time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC) },
	})
	if err != nil {
		panic(err)
	}
	authenticated := negotiate.Peer{Authenticated: true}
	for _, requested := range []string{"", "1.0.1", "0.3", "0.2"} {
		d := policy.Inbound(requested, authenticated)
		fmt.Printf("%-6q -> %s %s %q\n", requested, d.Outcome, d.Reason, d.Version)
	}
	// An unauthenticated peer asking for the older version gets preferred.
	d := policy.Inbound("0.3", negotiate.Peer{})
	fmt.Println(string(d.Record()))
	// Output:
	// ""     -> accepted ok "1.0"
	// "1.0.1" -> accepted ok "1.0"
	// "0.3"  -> accepted ok "0.3"
	// "0.2"  -> refused below-floor ""
	// {"protocol":"a2a","outcome":"accepted","at":"2026-11-30T00:00:00Z","version":"1.0","floor":"0.3","requested":"0.3","reason":"unauthenticated"}
}
