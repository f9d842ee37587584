package isolation

import (
	"errors"
	"fmt"

	"github.com/wopinterop/wopinterop/interop"
)

// ErrNotFound is the one error the read gate answers with. It wraps
// [interop.ErrNotFound], and its message names no id, tenant or reason, so
// a resource that does not exist, one of another tenant and one the store
// refused all read the same (OpenWOP interop.md §Isolation).
var ErrNotFound = fmt.Errorf("isolation: %w", interop.ErrNotFound)

// ErrTenantMismatch reports a well-formed tenant-bound id whose tenant
// segment is not the caller's. It is what a REST surface answers with
// 403 id_tenant_mismatch (OpenWOP identity.md §5). The A2A and MCP surfaces never show it:
// [GateError] and [CheckReadable] turn it into [ErrNotFound].
var ErrTenantMismatch = errors.New("isolation: id tenant segment is not the caller's")

// readable reports whether the tenant segment of the bound id equals the
// Subject's tenant. A malformed id, an id in projected or percent-encoded
// form (parse it first with [ParseID] or [ResolveParam]) and any id seen by
// a Subject without a tenant are not readable.
//
// The gate is a cheap pre-filter, not the decision: it refuses what can
// never be readable before a store is asked, but a readable tenant segment
// says nothing about workspace, principal or scope. The [interop.RunStore]
// still decides, and its refusals go through [GateError].
func readable(s interop.Subject, id string) bool {
	return MatchTenant(s, id) == nil
}

// MatchTenant is the REST-shaped form of the gate: nil when the bound id's
// tenant segment is the Subject's, [ErrMalformedID] when id is not a bound
// id, and [ErrTenantMismatch] otherwise (including a Subject without a
// tenant). Protocol surfaces use [CheckReadable] instead, which folds both
// refusals into [ErrNotFound].
func MatchTenant(s interop.Subject, id string) error {
	t, _, err := Split(id)
	if err != nil {
		return ErrMalformedID
	}
	// t is never empty here, so a Subject without a tenant reads nothing.
	if t != s.Tenant {
		return ErrTenantMismatch
	}
	return nil
}

// CheckReadable is the read gate every A2A and MCP surface applies to a
// bound id before it touches the store. It returns nil when the id may be
// readable and otherwise exactly [ErrNotFound]: the same value and message
// whether the id is malformed, unknown or another tenant's, because the gate
// never learns which (OpenWOP interop.md §Isolation; identity.md §5).
func CheckReadable(s interop.Subject, id string) error {
	if MatchTenant(s, id) != nil {
		return ErrNotFound
	}
	return nil
}

// GateError folds the errors that would tell a caller a resource exists
// into [ErrNotFound]: [interop.ErrForbidden] (a store refusing a resource
// it knows), [ErrTenantMismatch], and [interop.ErrNotFound] itself, whose
// store-written message might name the id or differ between "unknown" and
// "not yours". Every other error, and nil, passes through unchanged, so a
// surface can wrap each RunStore call in it and never leak a 403 (OpenWOP interop.md §Isolation).
//
// Do not pass a [interop.SubjectResolver] error through GateError: there
// ErrForbidden means the caller may not use the surface at all, which
// discloses nothing about a resource and is answered as such.
func GateError(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, interop.ErrNotFound) ||
		errors.Is(err, interop.ErrForbidden) ||
		errors.Is(err, ErrTenantMismatch) {
		return ErrNotFound
	}
	return err
}
