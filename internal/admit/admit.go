// Package admit is the step every request of a protocol surface takes
// before its method: resolve the Subject through the host's
// SubjectResolver, decide the protocol version through the surface's
// negotiate.Policy, and record the decision as one negotiation.decided
// through the negotiate.Auditor — a refusal included (OpenWOP interop.md
// §Negotiation is a protocol, §The audit event). The A2A bindings and the
// MCP mount both take it; each turns what it returns into its own wire
// shape.
//
// The one audit-failure policy: a decision the Auditor cannot record fails
// the request as a server error (an [*AuditError]), whatever the decision
// was, a refusal of an unauthenticated caller included. That is what
// negotiate.AuditorOptions.Synchronous promises a host — "a broken audit
// trail fails the requests it cannot record" — and with the default
// asynchronous Auditor, Record fails only once the request's context has
// ended, when no answer reaches anyone.
package admit

import (
	"context"
	"errors"
	"net/http"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/negotiate"
)

// Gate is a surface's admission step.
type Gate struct {
	Subjects interop.SubjectResolver
	Policy   *negotiate.Policy
	Auditor  *negotiate.Auditor
	// AllowAnonymous admits a Subject the resolver returned without error
	// but not authenticated (its negotiation then is unauthenticated:
	// no downgrade). Without it such a caller is refused as
	// unauthenticated.
	AllowAnonymous bool
}

// AuditError is a decision the Auditor could not record; the surface
// answers it as a server error.
type AuditError struct{ Err error }

func (e *AuditError) Error() string { return "admit: negotiation record failed: " + e.Err.Error() }
func (e *AuditError) Unwrap() error { return e.Err }

// Authenticate resolves r's Subject. A caller the resolver does not accept
// is one refused exchange: it is recorded as a refused negotiation.decided,
// reason unauthenticated, requested naming the version the request named
// (requested, as the surface reads it), for no tenant — the resolver
// vouched for none — and then refused with an error that wraps
// interop.ErrUnauthenticated (no credential, or an anonymous caller the
// surface does not admit), interop.ErrForbidden, or the resolver's fault.
// The same record for all three: in none of them did an authenticated
// peer take part, and the record's reason enum has no "forbidden"; the
// version was never what decided. When the record fails, the *AuditError
// is returned instead.
func (g *Gate) Authenticate(r *http.Request, requested string) (interop.Subject, error) {
	sub, err := g.Subjects.ResolveSubject(r)
	if err == nil && (sub.Authenticated || g.AllowAnonymous) {
		return sub, nil
	}
	if err == nil {
		err = interop.ErrUnauthenticated
	}
	d := g.Policy.Unauthenticated(requested, negotiate.Peer{Origin: r.Header.Get("Origin")})
	if rerr := g.Auditor.Record(r.Context(), d, negotiate.Scope{}); rerr != nil {
		return interop.Subject{}, &AuditError{Err: rerr}
	}
	return interop.Subject{}, err
}

// Negotiate decides the version requested by a peer and records the
// decision for scope, accepted or refused; the surface answers a refusal
// in its own shape. When the record fails, the *AuditError is returned.
func (g *Gate) Negotiate(ctx context.Context, requested string, peer negotiate.Peer, scope negotiate.Scope) (negotiate.Decision, error) {
	d := g.Policy.Inbound(requested, peer)
	if err := g.Auditor.Record(ctx, d, scope); err != nil {
		return d, &AuditError{Err: err}
	}
	return d, nil
}

// ScopeOf is the record scope of an authenticated caller: its tenant and
// workspace.
func ScopeOf(sub interop.Subject) negotiate.Scope {
	return negotiate.Scope{Tenant: sub.Tenant, Workspace: sub.Workspace}
}

// IsAuditFailure reports an *AuditError in err's chain.
func IsAuditFailure(err error) bool {
	_, ok := errors.AsType[*AuditError](err)
	return ok
}
