package facets

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Date is a civil date "YYYY-MM-DD" (refreshedAt, a date until). It is a
// string so its JSON form is the wire form; [ParseDate] and [Date.Valid]
// accept only real calendar dates. A Date names a whole UTC day: [Date.Time]
// is its first instant.
type Date string

const dateLayout = "2006-01-02"

// ParseDate parses a strict "YYYY-MM-DD" calendar date.
func ParseDate(s string) (Date, error) {
	if !wellFormedRevision(s) {
		return "", fmt.Errorf("facets: %q is not a calendar date YYYY-MM-DD", s)
	}
	return Date(s), nil
}

// DateOf returns the UTC civil date of t.
func DateOf(t time.Time) Date { return Date(t.UTC().Format(dateLayout)) }

// Valid reports whether d is a real calendar date in the strict form.
func (d Date) Valid() bool { return wellFormedRevision(string(d)) }

// Time returns midnight UTC starting d.
func (d Date) Time() (time.Time, error) {
	if !d.Valid() {
		return time.Time{}, errors.New("facets: not a calendar date YYYY-MM-DD")
	}
	t, err := time.Parse(dateLayout, string(d))
	if err != nil {
		return time.Time{}, fmt.Errorf("facets: %w", err)
	}
	return t, nil
}

// String returns d as written.
func (d Date) String() string { return string(d) }

// wellFormedRevision accepts exactly "YYYY-MM-DD" naming a real day.
func wellFormedRevision(s string) bool {
	if len(s) != len(dateLayout) {
		return false
	}
	_, err := time.Parse(dateLayout, s)
	return err == nil
}

func compareRevision(a, b string) int { return strings.Compare(a, b) }

// wellFormedMajorMinor accepts the canonical "major.minor": decimal numbers
// without leading zeros (so one version has one spelling and duplicates are
// visible), at most nine digits each.
func wellFormedMajorMinor(s string) bool {
	major, minor, ok := strings.Cut(s, ".")
	return ok && canonicalNumber(major) && canonicalNumber(minor)
}

func canonicalNumber(s string) bool {
	if s == "" || len(s) > 9 || (len(s) > 1 && s[0] == '0') {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// compareMajorMinor orders two canonical versions numerically.
func compareMajorMinor(a, b string) int {
	amaj, amin, _ := strings.Cut(a, ".")
	bmaj, bmin, _ := strings.Cut(b, ".")
	if c := compareNumber(amaj, bmaj); c != 0 {
		return c
	}
	return compareNumber(amin, bmin)
}

// compareNumber orders canonical decimal strings (no leading zeros).
func compareNumber(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}
