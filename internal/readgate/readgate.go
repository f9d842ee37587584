// Package readgate is the read gate of the A2A and MCP surfaces: an
// unreadable resource is answered exactly like an unknown one (OpenWOP
// interop.md §Isolation; identity.md §5). [CheckReadable] refuses a bound
// id whose tenant segment is not the Subject's before a store is asked;
// [GateError] folds the store's refusals into the same [isolation.ErrNotFound].
//
// The gate is a cheap pre-filter: the RunStore still decides readability,
// and every one of its answers goes through GateError. A host's own REST
// surface, which answers 403 id_tenant_mismatch, uses
// isolation.MatchTenant instead.
package readgate

import (
	"errors"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/isolation"
)

// CheckReadable is the read gate every A2A and MCP surface applies to a
// bound id before it touches the store. It returns nil when the id may be
// readable and otherwise exactly [isolation.ErrNotFound]: the same value and message
// whether the id is malformed, unknown or another tenant's, because the gate
// never learns which (OpenWOP interop.md §Isolation; identity.md §5).
//
// An id in projected or percent-encoded form must be parsed first
// (isolation.ParseID), and a Subject without a tenant reads nothing. A
// readable tenant segment says nothing about workspace, principal or
// scope: the RunStore still decides.
func CheckReadable(s interop.Subject, id string) error {
	if isolation.MatchTenant(s, id) != nil {
		return isolation.ErrNotFound
	}
	return nil
}

// GateError folds the errors that would tell a caller a resource exists
// into [isolation.ErrNotFound]: [interop.ErrForbidden] (a store refusing a resource
// it knows), isolation.ErrTenantMismatch, and [interop.ErrNotFound] itself,
// whose store-written message might name the id or differ between
// "unknown" and "not yours". Every other error, and nil, passes through
// unchanged, so a surface can wrap each RunStore call in it and never leak
// a 403 (OpenWOP interop.md §Isolation).
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
		errors.Is(err, isolation.ErrTenantMismatch) {
		return isolation.ErrNotFound
	}
	return err
}
