package interop

import (
	"net/http"
	"slices"
)

// Subject is the authenticated caller of one request. It is produced only by
// a [SubjectResolver] from the request's credential (OpenWOP interop.md §Isolation).
type Subject struct {
	// Tenant is the tenant of record. Runs the Subject creates belong to it
	// and every read is scoped to it. Empty only for an anonymous caller the
	// host places in no tenant.
	Tenant string
	// Workspace optionally narrows the tenant.
	Workspace string
	// Principal is the stable identifier of the caller inside its tenant. It
	// scopes idempotency keys and approver eligibility.
	Principal string
	// Authenticated is false for an anonymous caller. The zero Subject is
	// anonymous, so a forgotten assignment never grants authentication.
	Authenticated bool
	// Scopes are the authorizations the credential carries, e.g.
	// "approvals:respond". The library does not interpret them; the RunStore
	// does.
	Scopes []string
	// Actor is the forwarding peer when an end user reaches the host through
	// an A2A peer (OpenWOP identity.md §1.4): the Subject itself is then anonymous and the
	// peer never lends it authority.
	Actor *Subject
}

// HasScope reports whether s carries scope.
func (s Subject) HasScope(scope string) bool { return slices.Contains(s.Scopes, scope) }

// Clone returns a deep copy of s, for code that keeps a Subject beyond the
// call that passed it (a store's record, a push config's watcher).
func (s Subject) Clone() Subject {
	s.Scopes = slices.Clone(s.Scopes)
	if s.Actor != nil {
		actor := s.Actor.Clone()
		s.Actor = &actor
	}
	return s
}

// SubjectResolver authenticates a request. It returns [ErrUnauthenticated]
// when the request carries no valid credential and the host serves no
// anonymous callers, and [ErrForbidden] when the credential is valid but may
// not use the surface at all. Any other error is treated as a server fault.
//
// ResolveSubject is called on every request before any protocol work and must
// not read the request body.
type SubjectResolver interface {
	ResolveSubject(r *http.Request) (Subject, error)
}

// SubjectResolverFunc adapts a function to [SubjectResolver].
type SubjectResolverFunc func(r *http.Request) (Subject, error)

// ResolveSubject calls f(r).
func (f SubjectResolverFunc) ResolveSubject(r *http.Request) (Subject, error) { return f(r) }
