package negotiate

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzInbound feeds arbitrary header values to both policies: a decision is
// always made, its record is valid JSON, and a malformed value never enters
// the record.
func FuzzInbound(f *testing.F) {
	for _, s := range []string{"", "1.0", "1.0.1", "0.3", "2026-07-28", "2025-03-26", "x", "1.", ".1", "1.0.0.0", "99999999999.0", "\"}", "2026-02-30"} {
		f.Add(s, true)
	}
	a2a := a2aPolicy(f, true)
	mcp := mcpPolicy(f, []string{"2026-07-28", "2025-11-25"}, "2025-11-25", true)
	f.Fuzz(func(t *testing.T, requested string, auth bool) {
		for _, p := range []*Policy{a2a, mcp} {
			d := p.Inbound(requested, Peer{Authenticated: auth, Origin: requested})
			if d.Outcome != Accepted && d.Outcome != Refused {
				t.Fatalf("outcome %q", d.Outcome)
			}
			if d.Accepted() && !p.offers(d.Version) {
				t.Fatalf("accepted unoffered %q", d.Version)
			}
			var m map[string]string
			if err := json.Unmarshal(d.Record(), &m); err != nil {
				t.Fatalf("record not JSON: %v", err)
			}
			if d.Requested != "" && !strings.HasPrefix(requested, d.Requested) {
				t.Fatalf("requested %q not derived from %q", d.Requested, requested)
			}
		}
	})
}

// FuzzOrigin: Origin never panics, and an accepted origin is its own origin.
func FuzzOrigin(f *testing.F) {
	for _, s := range []string{"https://a.example", "http://A.example:80/x", "https://[::1]:8443", "https://u:p@h:443", "ftp://x", "%zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o, ok := Origin(s)
		if !ok {
			return
		}
		again, ok2 := Origin(o)
		if !ok2 || again != o {
			t.Fatalf("Origin(%q) = %q, but Origin(%q) = %q, %v", s, o, o, again, ok2)
		}
	})
}
