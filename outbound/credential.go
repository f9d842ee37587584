package outbound

import (
	"context"
	"time"
)

// CredentialRef names a credential by reference, with what the host knows
// of its owner, scope and expiry: no secret lives in an admission record
// (admission-boundaries §18.3). Both client directions use it, so one
// resolver serves a host's remote agents and MCP servers alike.
type CredentialRef struct {
	// Name is the host's name for the credential.
	Name string
	// Owner and Scope say whose credential it is and what it may do; the
	// library records nothing of them but hands them to the resolver.
	Owner string
	Scope string
	// Expiry, when set, is when the credential stops being presented: a
	// request after it is refused before anything is sent.
	Expiry time.Time
}

// Expired reports whether ref has an expiry at or before now.
func (ref CredentialRef) Expired(now time.Time) bool {
	return !ref.Expiry.IsZero() && !now.Before(ref.Expiry)
}

// Credentials resolves a [CredentialRef] to what is presented, at every
// request (so a rotated or short-lived credential is picked up without
// reconnecting): "Authorization: {scheme} {value}", or "{value}" when
// scheme is empty; an empty value presents nothing. The value never
// reaches a log, an event or an error of the library. Implementations must
// be safe for concurrent use.
type Credentials interface {
	Credential(ctx context.Context, ref CredentialRef) (scheme, value string, err error)
}
