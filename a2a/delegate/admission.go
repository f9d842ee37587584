package delegate

import (
	"time"

	"github.com/wopinterop/wopinterop/outbound"
)

// Admission is the record a host configures for one remote agent. A remote
// agent is reachable only through it: nothing in a message or in model
// output ever names an endpoint, a credential or a skill the host did not
// admit here (admission-boundaries §18.3).
type Admission struct {
	// Alias names the agent inside the host; workflows refer to it.
	Alias string
	// CardURL is where the agent card is fetched, through the egress guard.
	CardURL string
	// Skills are the admitted skills, each with the digest of its card
	// entry at admission ([SkillDigest]). A skill missing from the card or
	// whose digest changed needs re-admission before it is used.
	Skills []AdmittedSkill
	// Credential names the credential presented to the agent; the host's
	// [Credentials] resolves it at call time. Empty: no credential.
	Credential CredentialRef
	// DataClasses are the data-release classes the host may send to this
	// agent; a step naming another class is refused before anything is sent.
	DataClasses []string
	// Limits bound what a delegation may cost and what it may bring back.
	Limits Limits
	// MayRequestInput is whether the agent may ask for input mid-task. When
	// false, an input request ends the delegation (the remote task is
	// cancelled and reconciled) instead of reaching the host's callback.
	MayRequestInput bool
	// IdempotentSends is the peer's idempotency contract: it deduplicates a
	// SendMessage by messageId. A send whose effect is unknown is then
	// retried within Limits.Attempts with the same attempt id (and so the
	// same messageId); without it only a send that never reached the peer
	// is retried, with a new attempt id (admission-boundaries §18.9; A2A
	// 1.0 §3.3.1: an agent may use the messageId to detect duplicates).
	IdempotentSends bool
	// RequireSignature refuses a card without a valid signature from
	// CardKeys (A2A 1.0 §Agent Card signing; OpenWOP interop.md §Cards). It
	// fails closed.
	RequireSignature bool
	// CardKeys are the keys a card signature is verified with.
	CardKeys CardVerifier
	// Versions are the A2A versions the host admits for this agent
	// ("1.0"; a patch is ignored): Connect considers only the card's
	// interfaces of these versions, and the negotiation decides among
	// them as always — a restriction never lowers the floor. Empty: any
	// version the card offers.
	Versions []string
}

// AdmittedSkill is one skill the host admitted, pinned by digest.
type AdmittedSkill struct {
	ID string
	// Digest is the lowercase hex SHA-256 of the skill's RFC 8785
	// canonical JSON on the card at admission.
	Digest string
}

// CredentialRef names the credential presented to an agent by reference
// (the one type both client directions share).
type CredentialRef = outbound.CredentialRef

// Limits bound one delegation. Zero values take the documented defaults.
type Limits struct {
	// MaxArtifacts is how many artifacts a delegation may return (default 16).
	MaxArtifacts int
	// MaxArtifactBytes caps one artifact's decoded size (default 4 MiB).
	MaxArtifactBytes int64
	// MediaTypes are the admitted artifact media types; empty admits any.
	MediaTypes []string
	// Deadline bounds one delegation from send to a settled state
	// (default 5 minutes).
	Deadline time.Duration
	// Attempts is the attempt budget: how many sends one delegation may make
	// (default 1: no retry).
	Attempts int
	// MaxCardBytes caps the agent card's size (default 1 MiB).
	MaxCardBytes int64
	// MaxResponseBytes caps one response body or stream event (default 8 MiB).
	MaxResponseBytes int64
}

// Defaults of [Limits].
const (
	DefaultMaxArtifacts     = 16
	DefaultMaxArtifactBytes = 4 << 20
	DefaultDeadline         = 5 * time.Minute
	DefaultAttempts         = 1
	DefaultMaxCardBytes     = 1 << 20
	DefaultMaxResponseBytes = 8 << 20
)

// withDefaults returns l with every zero limit set to its default.
func (l Limits) withDefaults() Limits {
	if l.MaxArtifacts <= 0 {
		l.MaxArtifacts = DefaultMaxArtifacts
	}
	if l.MaxArtifactBytes <= 0 {
		l.MaxArtifactBytes = DefaultMaxArtifactBytes
	}
	if l.Deadline <= 0 {
		l.Deadline = DefaultDeadline
	}
	if l.Attempts <= 0 {
		l.Attempts = DefaultAttempts
	}
	if l.MaxCardBytes <= 0 {
		l.MaxCardBytes = DefaultMaxCardBytes
	}
	if l.MaxResponseBytes <= 0 {
		l.MaxResponseBytes = DefaultMaxResponseBytes
	}
	return l
}
