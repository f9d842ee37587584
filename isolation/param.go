package isolation

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/wopinterop/wopinterop/interop"
)

// ErrBareID reports a path parameter that carries only an opaque segment
// while bare ids are not admitted (OpenWOP identity.md §5). It wraps [ErrMalformedID]:
// a surface answers it as a validation error (REST 400 validation_error),
// never as a tenant mismatch and never as not-found.
var ErrBareID = fmt.Errorf("%w: bare opaque segment without a tenant", ErrMalformedID)

// BarePolicy says whether a bare opaque segment on a path parameter is bound
// to the caller's tenant (OpenWOP identity.md §5). A host admits bare ids only while it
// still advertises a 1.x protocol version.
type BarePolicy bool

const (
	// RefuseBare refuses a bare opaque segment with [ErrBareID]: the host
	// advertises no 1.x version.
	RefuseBare BarePolicy = false
	// BindBare binds a bare opaque segment to the caller's tenant: the
	// v1/v2 overlap, where a /v1/ create handed out opaque-only ids.
	BindBare BarePolicy = true
)

// ResolveParam turns a tenant-bound path or parameter value, as the client
// sent it, into the bound form "tenant/opaque" the host stores and every
// response names (OpenWOP identity.md §5). It accepts the bound form, the projected
// form ("acme~2Fr…") and the percent-encoded form ("acme%2Fr…").
//
// A value that, once decoded, holds no '/' is a bare opaque segment. Under
// [BindBare] it resolves under s.Tenant and never another tenant; under
// [RefuseBare] it is [ErrBareID]. The tenant always comes from the Subject
// (OpenWOP interop.md §Isolation), which is why this takes one rather than a tenant string. A
// Subject without a tenant resolves a bare segment to nothing: the answer
// is [ErrNotFound], as for any id it cannot read.
//
// ResolveParam does not check that the tenant segment of a bound value is
// the caller's: that is the read gate's job ([MatchTenant]).
func ResolveParam(s interop.Subject, raw string, bare BarePolicy) (string, error) {
	id, err := ParseID(raw)
	if err == nil {
		return id, nil
	}
	opaque, ok := bareSegment(raw)
	if !ok {
		return "", ErrMalformedID
	}
	if bare == RefuseBare {
		return "", ErrBareID
	}
	if !ValidTenant(s.Tenant) {
		return "", ErrNotFound
	}
	return s.Tenant + "/" + opaque, nil
}

// bareSegment reports whether raw is a bare opaque segment and returns it
// percent-decoded. Only URL escapes apply: v1 never projected ids, so a '~'
// in a bare segment is literal. A value that decodes to something holding
// '/' in either the percent or the projected reading was meant as a bound id
// and is not bare, so a broken bound id is never silently re-bound to the
// caller's tenant.
func bareSegment(raw string) (string, bool) {
	s := raw
	if strings.IndexByte(s, '%') >= 0 {
		dec, err := url.PathUnescape(s)
		if err != nil {
			return "", false
		}
		s = dec
	}
	if strings.IndexByte(s, '/') >= 0 {
		return "", false
	}
	if dec, err := unproject(s); err == nil && strings.IndexByte(dec, '/') >= 0 {
		return "", false
	}
	if !ValidOpaque(s) {
		return "", false
	}
	return s, true
}

// newIDFor mints a fresh tenant-bound id in the Subject's tenant of record.
// A task started through a per-agent routing value is a run of the caller's
// tenant (OpenWOP RFC 0202 §D.9): the tenant comes from the Subject, never from a routing
// value, a contextId or a client-written tenant field.
func newIDFor(s interop.Subject) (string, error) {
	return NewID(s.Tenant)
}
