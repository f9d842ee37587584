package isolation

import (
	"errors"
	"fmt"

	"github.com/wopinterop/wopinterop/interop"
)

// ErrNotFound is the one not-found answer of isolation: it wraps
// [interop.ErrNotFound], and its message names no id, tenant or reason, so
// a resource that does not exist, one of another tenant and one the store
// refused all read the same (OpenWOP interop.md §Isolation). [ResolveParam]
// answers it for a bare id of a caller without a tenant, and the A2A and MCP
// surfaces' read gate for every unreadable id.
var ErrNotFound = fmt.Errorf("isolation: %w", interop.ErrNotFound)

// ErrTenantMismatch reports a well-formed tenant-bound id whose tenant
// segment is not the caller's. It is what a REST surface answers with
// 403 id_tenant_mismatch (OpenWOP identity.md §5). The A2A and MCP surfaces never show it:
// their read gate answers a foreign id exactly like an unknown one.
var ErrTenantMismatch = errors.New("isolation: id tenant segment is not the caller's")

// MatchTenant is the tenant check of the read gate, in the shape a REST
// surface answers: nil when the bound id's tenant segment is the Subject's,
// [ErrMalformedID] when id is not a bound id (a projected or
// percent-encoded id must be parsed first with [ParseID] or
// [ResolveParam]), and [ErrTenantMismatch] otherwise (including a Subject
// without a tenant). It is a cheap pre-filter, not the decision: a
// readable tenant segment says nothing about workspace, principal or
// scope, and the [interop.RunStore] still decides. The A2A and MCP
// surfaces fold both refusals, and the store's, into one not-found answer.
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
