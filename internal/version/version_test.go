package version

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestDate(t *testing.T) {
	good := []string{
		"2026-07-28", "2025-03-26", "0000-01-01", "0001-01-01", "9999-12-31",
		"2024-02-29", // leap year
		"2000-02-29", // divisible by 400: leap
		"2026-01-31", "2026-03-31", "2026-04-30", "2026-12-31",
	}
	bad := []string{
		"", "2026-02-31", "2026-02-30", "2026-02-29", // no such days
		"1900-02-29", "2100-02-29", // divisible by 100, not by 400: not leap
		"2026-04-31", "2026-06-31", "2026-09-31", "2026-11-31", // 30-day months
		"2026-00-10", "2026-13-01", "2026-07-00", "2026-07-32", "2026-13-40",
		"2026-7-28", "2026-07-8", "26-07-28", "02026-07-28", // widths
		"2026/07/28", "2026-07-28T00:00:00Z", " 2026-07-28", "2026-07-28 ",
		"２026-07-28", "+026-07-28", "2026-+7-28", "2026-07--1", "abcd-ef-gh",
		"1.0",
	}
	for _, s := range good {
		if !Date(s) {
			t.Errorf("Date(%q) = false, want true", s)
		}
	}
	for _, s := range bad {
		if Date(s) {
			t.Errorf("Date(%q) = true, want false", s)
		}
	}
}

// TestDateAgreesWithTime walks every day of four centuries (leap rules for
// 100 and 400 included) plus every impossible day-of-month, and checks the
// grammar against the standard library's calendar.
func TestDateAgreesWithTime(t *testing.T) {
	for year := 1899; year <= 2301; year++ {
		for month := 0; month <= 13; month++ {
			for day := 0; day <= 32; day++ {
				s := fmt.Sprintf("%04d-%02d-%02d", year, month, day)
				_, err := time.Parse(time.DateOnly, s)
				if got, want := Date(s), err == nil; got != want {
					t.Fatalf("Date(%q) = %v, time.Parse says %v", s, got, want)
				}
			}
		}
	}
}

func TestCompareDates(t *testing.T) {
	order := []string{"2024-11-05", "2025-03-26", "2025-11-25", "2026-02-28", "2026-07-28"}
	for i := range order {
		for j := range order {
			got := CompareDates(order[i], order[j])
			if (got < 0) != (i < j) || (got == 0) != (i == j) {
				t.Errorf("CompareDates(%s, %s) = %d", order[i], order[j], got)
			}
		}
	}
}

func TestMajorMinor(t *testing.T) {
	good := []string{"0.0", "0.3", "1.0", "1.10", "10.2", "999999999.0", "0.999999999"}
	bad := []string{
		"", "1", "1.", ".1", ".", "1..0",
		"01.0", "1.01", "00.0", "1.00", // leading zeros: one version, one spelling
		"1.0.1", "1.0.0", // a patch is not a declared version
		"a.b", "1.-1", "-1.0", "+1.0", "1.+0", " 1.0", "1.0 ", "1,0", "v1.0",
		"1000000000.0", "1.1000000000", // ten digits
		"１.0",
	}
	for _, s := range good {
		if !MajorMinor(s) {
			t.Errorf("MajorMinor(%q) = false, want true", s)
		}
	}
	for _, s := range bad {
		if MajorMinor(s) {
			t.Errorf("MajorMinor(%q) = true, want false", s)
		}
	}
}

func TestA2A(t *testing.T) {
	cases := []struct {
		in, want string
		ok       bool
	}{
		{"1.0", "1.0", true},
		{"0.3", "0.3", true},
		{"1.10", "1.10", true},
		{"1.0.1", "1.0", true}, // patch dropped: never negotiated
		{"1.0.0", "1.0", true},
		{"2.3.999999999", "2.3", true},
		{"1.0.01", "", false}, // the patch obeys the same number grammar
		{"1.0.", "", false},
		{"1.0.0.0", "", false},
		{"1.0.x", "", false},
		{"01.0", "", false},
		{"1.00", "", false},
		{"01.00", "", false},
		{"1", "", false},
		{"", "", false},
		{"one.zero", "", false},
		{"peer.example", "", false},
		{"99999999999.0", "", false},
		{"2026-07-28", "", false},
	}
	for _, c := range cases {
		got, ok := A2A(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("A2A(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestCompareMajorMinor(t *testing.T) {
	order := []string{"0.0", "0.3", "0.9", "0.10", "1.0", "1.2", "1.10", "2.0", "10.0", "999999999.999999999"}
	for i := range order {
		for j := range order {
			got := CompareMajorMinor(order[i], order[j])
			if (got < 0) != (i < j) || (got == 0) != (i == j) {
				t.Errorf("CompareMajorMinor(%s, %s) = %d", order[i], order[j], got)
			}
		}
	}
}

// FuzzDate: the grammar agrees with the standard library's calendar on any
// input of the right width.
func FuzzDate(f *testing.F) {
	for _, s := range []string{"2026-07-28", "2024-02-29", "2026-02-31", "2026-13-01", "0000-00-00", "2026-07-2x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, err := time.Parse(time.DateOnly, s)
		want := err == nil && len(s) == len(time.DateOnly)
		if got := Date(s); got != want {
			t.Fatalf("Date(%q) = %v, time.Parse says %v", s, got, want)
		}
	})
}

// FuzzA2A: a well-formed peer version yields a canonical "major.minor"
// that is a prefix of what was sent, and a canonical version is its own
// negotiable form.
func FuzzA2A(f *testing.F) {
	for _, s := range []string{"1.0", "1.0.1", "01.0", "1.", "1.0.0.0", "99999999999.0", "0.3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, ok := A2A(s)
		if !ok {
			if v != "" || MajorMinor(s) {
				t.Fatalf("A2A(%q) = %q, false; MajorMinor = %v", s, v, MajorMinor(s))
			}
			return
		}
		if !MajorMinor(v) || !strings.HasPrefix(s, v) {
			t.Fatalf("A2A(%q) = %q: not a canonical prefix", s, v)
		}
		if MajorMinor(s) != (v == s) {
			t.Fatalf("A2A(%q) = %q but MajorMinor(%q) = %v", s, v, s, MajorMinor(s))
		}
		if CompareMajorMinor(v, v) != 0 {
			t.Fatalf("CompareMajorMinor(%q, itself) != 0", v)
		}
	})
}

func BenchmarkDate(b *testing.B) {
	for b.Loop() {
		if !Date("2026-07-28") {
			b.Fatal("refused")
		}
	}
}

func BenchmarkA2A(b *testing.B) {
	for b.Loop() {
		if _, ok := A2A("1.0"); !ok {
			b.Fatal("refused")
		}
	}
}
