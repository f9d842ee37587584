package facets

import (
	"testing"
	"time"
)

func TestRefreshDeadline(t *testing.T) {
	day := 24 * time.Hour
	cases := []struct {
		name      string
		at        Date
		window    time.Duration
		now       time.Time
		deadline  time.Time
		remaining time.Duration
		stale     bool
	}{
		{"default window", "2026-11-20", 0, testNow,
			time.Date(2027, 2, 18, 0, 0, 0, 0, time.UTC), 79*day + 12*time.Hour, false},
		{"shorter window", "2026-11-20", 14 * day, testNow,
			time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC), 3*day + 12*time.Hour, false},
		{"at the deadline", "2026-09-01", 0, time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC),
			time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), 0, false},
		{"just past the deadline", "2026-09-01", 0, time.Date(2026, 11, 30, 0, 0, 0, 1, time.UTC),
			time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), -1, true},
		{"clock in another zone", "2026-11-20", 7 * day, time.Date(2026, 11, 27, 1, 0, 0, 0, time.FixedZone("UTC+2", 2*3600)),
			time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC), time.Hour, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := &A2A{RefreshedAt: c.at, RefreshWindow: c.window}
			m := &MCP{RefreshedAt: c.at, RefreshWindow: c.window}
			for name, f := range map[string]interface {
				RefreshDeadline() time.Time
				StaleAfter(time.Time) (time.Duration, bool)
			}{"a2a": a, "mcp": m} {
				if got := f.RefreshDeadline(); !got.Equal(c.deadline) {
					t.Errorf("%s RefreshDeadline = %v, want %v", name, got, c.deadline)
				}
				remaining, stale := f.StaleAfter(c.now)
				if remaining != c.remaining || stale != c.stale {
					t.Errorf("%s StaleAfter = %v, %v; want %v, %v", name, remaining, stale, c.remaining, c.stale)
				}
			}
		})
	}
}

// Validation and StaleAfter agree on the boundary: a facet validates
// exactly while it is not stale.
func TestRefreshValidationMatchesStaleAfter(t *testing.T) {
	v := newTestValidator(t)
	d, s := clientHost()
	d.MCP = nil
	s.MCP = ServedMCP{}
	d.A2A.RefreshedAt = "2026-09-01"
	deadline := d.A2A.RefreshDeadline()
	for _, now := range []time.Time{deadline.Add(-time.Nanosecond), deadline, deadline.Add(time.Nanosecond)} {
		_, stale := d.A2A.StaleAfter(now)
		_, err := v.Declare(now, d, s)
		if (err != nil) != stale {
			t.Errorf("at %v: stale = %v but Declare error = %v", now, stale, err)
		}
	}
}

func TestRefreshDeadlineOfBadDate(t *testing.T) {
	a := &A2A{RefreshedAt: "soon"}
	if !a.RefreshDeadline().IsZero() {
		t.Fatal("deadline of a non-date is not zero")
	}
	if _, stale := a.StaleAfter(testNow); !stale {
		t.Fatal("a facet without a date is not reported stale")
	}
}

func TestAdvertisementRefreshDeadlineIsEarliest(t *testing.T) {
	v := newTestValidator(t)
	d, s := clientHost()
	d.A2A.RefreshedAt, d.MCP.RefreshedAt = "2026-11-01", "2026-10-15"
	ad := mustDeclare(t, v, d, s)
	if got, want := ad.RefreshDeadline(), d.MCP.RefreshDeadline(); !got.Equal(want) {
		t.Fatalf("RefreshDeadline = %v, want the mcp one %v", got, want)
	}
	empty := mustDeclare(t, v, Declaration{}, Served{})
	if !empty.RefreshDeadline().IsZero() {
		t.Fatal("an empty advertisement has a deadline")
	}
}
