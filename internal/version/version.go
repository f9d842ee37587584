// Package version is the one grammar of the protocol versions the library
// advertises and negotiates, shared by facets (what a host declares) and
// negotiate (what a peer names):
//
//   - an A2A version is "major.minor", each a decimal number without
//     leading zeros of at most nine digits, so one version has exactly one
//     spelling (A2A 1.0 §3.6 A2A-Version; OpenWOP facets/a2a.schema.json
//     versions[]). A peer may name a patch release ("1.0.1"): patch numbers
//     are never negotiated (OpenWOP interop.md §The operation mappings), so
//     [A2A] drops it;
//   - an MCP revision is a calendar date "YYYY-MM-DD" naming a real day of
//     the proleptic Gregorian calendar (MCP 2026-07-28 §Versioning), which
//     is also the grammar of the facets' dates (refreshedAt, a date until).
//
// Revisions order as strings; A2A versions order numerically (1.10 > 1.9).
package version

import "strings"

// maxDigits bounds each number so it fits an int32 and a comparison never
// has to think about overflow.
const maxDigits = 9

// MajorMinor reports whether s is a canonical A2A version "major.minor".
func MajorMinor(s string) bool {
	major, minor, ok := strings.Cut(s, ".")
	return ok && number(major) && number(minor)
}

// A2A returns the negotiable "major.minor" of a version a peer named,
// dropping a patch component ("1.0.1" → "1.0"), and whether s is well
// formed: a canonical "major.minor" optionally followed by ".patch" with
// the same number grammar.
func A2A(s string) (string, bool) {
	major, rest, ok := strings.Cut(s, ".")
	if !ok || !number(major) {
		return "", false
	}
	minor, patch, hasPatch := strings.Cut(rest, ".")
	if !number(minor) || hasPatch && !number(patch) {
		return "", false
	}
	return s[:len(major)+1+len(minor)], true
}

// CompareMajorMinor orders two canonical A2A versions numerically: negative
// when a < b, zero when equal, positive when a > b.
func CompareMajorMinor(a, b string) int {
	amaj, amin, _ := strings.Cut(a, ".")
	bmaj, bmin, _ := strings.Cut(b, ".")
	if c := compareNumber(amaj, bmaj); c != 0 {
		return c
	}
	return compareNumber(amin, bmin)
}

// Date reports whether s is exactly "YYYY-MM-DD" naming a real day: month
// 01–12, day 01 to the month's last day (29 February only in a leap year).
// MCP revisions are such dates.
func Date(s string) bool {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return false
	}
	year, ok1 := decimal(s[0:4])
	month, ok2 := decimal(s[5:7])
	day, ok3 := decimal(s[8:10])
	if !ok1 || !ok2 || !ok3 || month < 1 || month > 12 || day < 1 {
		return false
	}
	return day <= daysIn(year, month)
}

// CompareDates orders two well-formed dates (or MCP revisions)
// chronologically, which for this fixed-width form is byte order.
func CompareDates(a, b string) int { return strings.Compare(a, b) }

// number reports whether s is a decimal number without leading zeros of at
// most maxDigits digits.
func number(s string) bool {
	if len(s) > 1 && s[0] == '0' {
		return false
	}
	_, ok := decimal(s)
	return ok && len(s) <= maxDigits
}

// decimal returns the value of s, which must be 1 to maxDigits ASCII digits.
func decimal(s string) (int, bool) {
	if s == "" || len(s) > maxDigits {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// compareNumber orders canonical decimal strings: a longer one is larger.
func compareNumber(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}

func daysIn(year, month int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}
