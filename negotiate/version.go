package negotiate

import (
	"strconv"
	"strings"
)

// Protocol names the protocol a decision is about.
type Protocol string

// The two protocols the library negotiates.
const (
	A2A Protocol = "a2a"
	MCP Protocol = "mcp"
)

// normalize returns the comparable form of a version named by a peer, and
// whether it is well formed. A2A versions are "major.minor"; a patch
// component is accepted and dropped because patch numbers are never
// negotiated. MCP revisions are calendar dates "YYYY-MM-DD".
func normalize(p Protocol, v string) (string, bool) {
	switch p {
	case A2A:
		return normalizeA2A(v)
	case MCP:
		return v, validRevision(v)
	}
	return "", false
}

func normalizeA2A(v string) (string, bool) {
	major, rest, ok := strings.Cut(v, ".")
	if !ok || !digits(major) {
		return "", false
	}
	minor, patch, hasPatch := strings.Cut(rest, ".")
	if !digits(minor) || hasPatch && !digits(patch) {
		return "", false
	}
	if hasPatch {
		return v[:len(major)+1+len(minor)], true
	}
	return v, true
}

func digits(s string) bool {
	if s == "" || len(s) > 9 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func validRevision(v string) bool {
	if len(v) != 10 || v[4] != '-' || v[7] != '-' {
		return false
	}
	if !digits(v[:4]) || !digits(v[5:7]) || !digits(v[8:]) {
		return false
	}
	m, _ := strconv.Atoi(v[5:7])
	d, _ := strconv.Atoi(v[8:])
	return m >= 1 && m <= 12 && d >= 1 && d <= 31
}

// compare orders two well-formed versions of protocol p: negative when
// a < b. A2A compares major then minor numerically; MCP revisions are dates
// and compare as strings.
func compare(p Protocol, a, b string) int {
	if p == MCP {
		return strings.Compare(a, b)
	}
	amaj, amin, _ := strings.Cut(a, ".")
	bmaj, bmin, _ := strings.Cut(b, ".")
	if c := cmpNum(amaj, bmaj); c != 0 {
		return c
	}
	return cmpNum(amin, bmin)
}

func cmpNum(a, b string) int {
	a = strings.TrimLeft(a, "0")
	b = strings.TrimLeft(b, "0")
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}
