package facets

import (
	"errors"
	"fmt"
	"time"

	"github.com/wopinterop/wopinterop/internal/version"
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

// wellFormedRevision accepts exactly "YYYY-MM-DD" naming a real day: the
// one grammar of MCP revisions and dates, shared with negotiate.
func wellFormedRevision(s string) bool { return version.Date(s) }

func compareRevision(a, b string) int { return version.CompareDates(a, b) }

// wellFormedMajorMinor accepts the canonical "major.minor": decimal numbers
// without leading zeros (so one version has one spelling and duplicates are
// visible), at most nine digits each — the grammar negotiate reads peers'
// versions with.
func wellFormedMajorMinor(s string) bool { return version.MajorMinor(s) }

// compareMajorMinor orders two canonical versions numerically.
func compareMajorMinor(a, b string) int { return version.CompareMajorMinor(a, b) }
