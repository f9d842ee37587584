package isolation

import (
	"crypto/rand"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// ErrMalformedID reports a string that is not a tenant-bound id in any
// accepted form.
var ErrMalformedID = errors.New("isolation: malformed tenant-bound id")

const (
	maxTenantLen = 128
	minOpaqueLen = 16
	maxOpaqueLen = 128
	anonPrefix   = "anon:"
)

// NewOpaque mints a host opaque id segment: 26 characters of the RFC 4648
// base32 alphabet carrying 130 bits from crypto/rand. It never contains '~'
// (identity.md §5), so its projection is itself.
func NewOpaque() string { return rand.Text() }

// NewID mints a fresh tenant-bound id "tenant/opaque" for tenant.
//
// A new id never contains '~' (OpenWOP identity.md §5), so a tenant segment that holds
// one (a legacy tenant id the grammar still admits) is refused rather than
// minted into an id: ids already minted with '~' keep resolving through
// [ParseID], but none are added.
func NewID(tenant string) (string, error) {
	if !ValidTenant(tenant) {
		return "", fmt.Errorf("%w: tenant segment %q", ErrMalformedID, tenant)
	}
	if strings.IndexByte(tenant, '~') >= 0 {
		return "", fmt.Errorf("%w: tenant segment %q contains '~', which a new id must not", ErrMalformedID, tenant)
	}
	return tenant + "/" + NewOpaque(), nil
}

// ValidTenant reports whether t is a valid tenant segment:
// (anon:)?[A-Za-z0-9._~-]{1,128}.
func ValidTenant(t string) bool {
	t = strings.TrimPrefix(t, anonPrefix)
	return len(t) >= 1 && len(t) <= maxTenantLen && unreservedOnly(t)
}

// ValidOpaque reports whether o is a valid opaque segment:
// [A-Za-z0-9._~-]{16,128}.
func ValidOpaque(o string) bool {
	return len(o) >= minOpaqueLen && len(o) <= maxOpaqueLen && unreservedOnly(o)
}

// ValidBound reports whether id is a tenant-bound id in bound form
// (OpenWOP identity.md §5).
func ValidBound(id string) bool {
	t, o, ok := strings.Cut(id, "/")
	return ok && ValidTenant(t) && ValidOpaque(o)
}

// Split returns the tenant and opaque segments of a bound id.
func Split(id string) (tenant, opaque string, err error) {
	if !ValidBound(id) {
		return "", "", ErrMalformedID
	}
	t, o, _ := strings.Cut(id, "/")
	return t, o, nil
}

// TenantOf returns the tenant segment of a bound id, or "" if id is
// malformed.
func TenantOf(id string) string {
	t, _, err := Split(id)
	if err != nil {
		return ""
	}
	return t
}

func unreservedOnly(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isUnreserved(s[i]) && s[i] != '~' {
			return false
		}
	}
	return true
}

// isUnreserved reports the bytes that survive projection unchanged.
func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '.' || c == '_' || c == '-'
}

const upperHex = "0123456789ABCDEF"

// Project returns the single-path-segment wire form of a bound id: every
// byte outside [A-Za-z0-9._-] becomes '~' and two uppercase hex digits, so
// "acme/r1" becomes "acme~2Fr1" and "anon:x/..." becomes "anon~3Ax~2F...".
// Project the host's own ids exactly once, where they leave the host
// (OpenWOP identity.md §5).
func Project(id string) string {
	n := 0
	for i := 0; i < len(id); i++ {
		if !isUnreserved(id[i]) {
			n++
		}
	}
	if n == 0 {
		return id
	}
	var b strings.Builder
	b.Grow(len(id) + 2*n)
	for i := 0; i < len(id); i++ {
		c := id[i]
		if isUnreserved(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('~')
		b.WriteByte(upperHex[c>>4])
		b.WriteByte(upperHex[c&0xF])
	}
	return b.String()
}

// unproject reverses [Project]: unproject(Project(x)) == x for every byte
// string x. It fails on a '~' not followed by two hex digits, so a lone or
// truncated escape is refused rather than passed through; a double-projected
// id decodes to a string without '/', which [ParseID] then refuses. Like the
// conformance suite's codec it also reads lowercase hex and escapes of bytes
// Project leaves alone; [Project] remains the one spelling the host emits.
func unproject(s string) (string, error) {
	if strings.IndexByte(s, '~') < 0 {
		return s, nil
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '~' {
			b.WriteByte(c)
			continue
		}
		if i+2 >= len(s) {
			return "", ErrMalformedID
		}
		hi, ok1 := unhex(s[i+1])
		lo, ok2 := unhex(s[i+2])
		if !ok1 || !ok2 {
			return "", ErrMalformedID
		}
		b.WriteByte(hi<<4 | lo)
		i += 2
	}
	return b.String(), nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// ParseID accepts a tenant-bound id in any form a client may send and
// returns the bound form: the bound form itself ("acme/r…", as in JSON
// bodies or an already-unescaped path value), the projected form
// ("acme~2Fr…") or the percent-encoded form ("acme%2Fr…"). It decodes first
// and then matches the grammar (OpenWOP identity.md §5). Percent escapes are undone
// before '~' escapes, as a router would before handing over a path value, so
// a projected id whose '~' a client URL-encoded ("acme%7E2Fr…") also reads;
// in the percent-encoded bound form a '~' is literal. The bound form is
// returned without allocating.
func ParseID(s string) (string, error) {
	if strings.IndexByte(s, '/') >= 0 {
		if !ValidBound(s) {
			return "", ErrMalformedID
		}
		return s, nil
	}
	if strings.IndexByte(s, '%') >= 0 {
		dec, err := url.PathUnescape(s)
		if err != nil {
			return "", ErrMalformedID
		}
		if strings.IndexByte(dec, '/') >= 0 {
			if !ValidBound(dec) {
				return "", ErrMalformedID
			}
			return dec, nil
		}
		s = dec
	}
	dec, err := unproject(s)
	if err != nil || !ValidBound(dec) {
		return "", ErrMalformedID
	}
	return dec, nil
}
