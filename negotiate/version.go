package negotiate

import "github.com/wopinterop/wopinterop/internal/version"

// Protocol names the protocol a decision is about.
type Protocol string

// The two protocols the library negotiates.
const (
	A2A Protocol = "a2a"
	MCP Protocol = "mcp"
)

// normalize returns the comparable form of a version named by a peer, and
// whether it is well formed, in the one grammar facets declares with
// (internal/version): A2A versions are canonical "major.minor", a patch
// component accepted and dropped because patch numbers are never negotiated
// (OpenWOP interop.md §The operation mappings); MCP revisions are real
// calendar dates "YYYY-MM-DD".
func normalize(p Protocol, v string) (string, bool) {
	switch p {
	case A2A:
		return version.A2A(v)
	case MCP:
		return v, version.Date(v)
	}
	return "", false
}

// compare orders two well-formed versions of protocol p: negative when
// a < b. A2A compares major then minor numerically; MCP revisions are dates
// and compare chronologically.
func compare(p Protocol, a, b string) int {
	if p == MCP {
		return version.CompareDates(a, b)
	}
	return version.CompareMajorMinor(a, b)
}
