package facets

import (
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/negotiate"
)

func TestDate(t *testing.T) {
	for _, s := range []string{"2026-11-30", "2024-02-29", "0001-01-01"} {
		d, err := ParseDate(s)
		if err != nil || !d.Valid() || d.String() != s {
			t.Errorf("ParseDate(%q) = %q, %v", s, d, err)
		}
		tm, err := d.Time()
		if err != nil || DateOf(tm) != d || tm.Location() != time.UTC || tm.Hour() != 0 {
			t.Errorf("%q.Time() = %v, %v", s, tm, err)
		}
	}
	for _, s := range []string{"", "2026-02-30", "2025-02-29", "2026-13-01", "2026-1-01", "2026-01-01T00:00:00Z", "26-01-01", "2026/01/01", " 2026-01-01"} {
		if d, err := ParseDate(s); err == nil {
			t.Errorf("ParseDate(%q) = %q, want an error", s, d)
		}
		if Date(s).Valid() {
			t.Errorf("Date(%q).Valid() = true", s)
		}
		if _, err := Date(s).Time(); err == nil {
			t.Errorf("Date(%q).Time() did not fail", s)
		}
	}
	late := time.Date(2026, 11, 30, 23, 30, 0, 0, time.FixedZone("UTC-5", -5*3600))
	if got := DateOf(late); got != "2026-12-01" {
		t.Errorf("DateOf(%v) = %q, want the UTC date 2026-12-01", late, got)
	}
}

func TestMajorMinor(t *testing.T) {
	good := []string{"0.0", "1.0", "1.10", "10.2", "999999999.0"}
	bad := []string{"", "1", "1.", ".1", "01.0", "1.01", "1.0.1", "a.b", "1.-1", "1000000000.0", "+1.0"}
	for _, s := range good {
		if !wellFormedMajorMinor(s) {
			t.Errorf("%q refused", s)
		}
	}
	for _, s := range bad {
		if wellFormedMajorMinor(s) {
			t.Errorf("%q accepted", s)
		}
	}
	order := []string{"0.9", "1.0", "1.2", "1.10", "2.0", "10.0"}
	for i := range order {
		for j := range order {
			got := compareMajorMinor(order[i], order[j])
			if (got < 0) != (i < j) || (got == 0) != (i == j) {
				t.Errorf("compare(%s, %s) = %d", order[i], order[j], got)
			}
		}
	}
}

// TestOneVersionGrammar: a version or revision a facet may declare is
// exactly one negotiate accepts as offered, so a policy built from a valid
// facet never fails and nothing negotiate would accept is refused here.
func TestOneVersionGrammar(t *testing.T) {
	a2a := []string{"1.0", "0.3", "1.10", "10.2", "01.0", "1.01", "1.0.1", "1.", "1", "v1.0", "1000000000.0"}
	for _, v := range a2a {
		_, err := negotiate.NewPolicy(negotiate.Config{Protocol: negotiate.A2A, Offered: []string{v}, Preferred: v, Floor: v})
		if got := wellFormedMajorMinor(v); got != (err == nil) {
			t.Errorf("a2a %q: facets well formed = %v, negotiate.NewPolicy error = %v", v, got, err)
		}
	}
	mcp := []string{"2026-07-28", "2024-02-29", "2000-02-29", "2026-02-31", "2026-02-29", "1900-02-29", "2026-04-31", "2026-13-01", "2026-00-01", "2026-7-28"}
	for _, v := range mcp {
		_, err := negotiate.NewPolicy(negotiate.Config{Protocol: negotiate.MCP, Offered: []string{v}, Preferred: v, Floor: v})
		if got := wellFormedRevision(v); got != (err == nil) {
			t.Errorf("mcp %q: facets well formed = %v, negotiate.NewPolicy error = %v", v, got, err)
		}
	}
}
