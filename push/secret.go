package push

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/wopinterop/wopinterop/isolation"
)

// Secret is what a push config's authorization is made of: the
// authentication credentials and the token (OpenWOP RFC 0214 §A). Its String,
// GoString, Format, LogValue and MarshalJSON all print "[redacted]", so a Secret
// that reaches a log line, an error or a JSON document by mistake still
// discloses nothing.
type Secret struct {
	// Credentials are authentication.credentials, sent as
	// "Authorization: {scheme} {credentials}".
	Credentials string
	// Token is the config's token, sent as "Authorization: Bearer {token}"
	// when no credentials are given (OpenWOP RFC 0214 §C).
	Token string
}

const redacted = "[redacted]"

func (Secret) String() string   { return redacted }
func (Secret) GoString() string { return redacted }

// Format covers every fmt verb, including the ones (%d, %t, ...) that would
// otherwise print the fields.
func (Secret) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, redacted) }

// LogValue keeps the secret out of structured logs.
func (Secret) LogValue() slog.Value { return slog.StringValue(redacted) }

// MarshalJSON keeps the secret out of JSON documents.
func (Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }

// ErrSecretNotFound reports a reference the vault does not hold (never
// sealed, or discarded).
var ErrSecretNotFound = errors.New("push: secret not found")

// Vault holds push secrets so that config records carry only a reference
// (OpenWOP RFC 0214 §A): a durable config store then never persists a credential,
// and discarding a secret is one call. A host with a secret manager
// implements it over that manager, and checks it with the kit in package
// push/pushtest. Implementations must be safe for concurrent use; a
// secret sealed on one replica opens on every other.
type Vault interface {
	// Seal stores s and returns an opaque reference to it: new for every
	// call, unguessable (about 128 random bits, not a counter) and
	// carrying nothing of s.
	Seal(ctx context.Context, s Secret) (ref string, err error)
	// Open returns the secret ref names, or ErrSecretNotFound.
	Open(ctx context.Context, ref string) (Secret, error)
	// Discard forgets ref; discarding an unknown ref is not an error.
	Discard(ctx context.Context, ref string) error
}

// MemoryVault is the in-memory [Vault]: secrets live only in this
// process and are gone when it ends.
type MemoryVault struct {
	mu      sync.Mutex
	secrets map[string]Secret
}

// NewMemoryVault returns an empty vault.
func NewMemoryVault() *MemoryVault { return &MemoryVault{secrets: map[string]Secret{}} }

// Seal implements [Vault].
func (v *MemoryVault) Seal(_ context.Context, s Secret) (string, error) {
	ref := "sec-" + isolation.NewOpaque()
	v.mu.Lock()
	defer v.mu.Unlock()
	v.secrets[ref] = s
	return ref, nil
}

// Open implements [Vault].
func (v *MemoryVault) Open(_ context.Context, ref string) (Secret, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	s, ok := v.secrets[ref]
	if !ok {
		return Secret{}, ErrSecretNotFound
	}
	return s, nil
}

// Discard implements [Vault].
func (v *MemoryVault) Discard(_ context.Context, ref string) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.secrets, ref)
	return nil
}

// Len is the number of secrets held; tests use it to check that secrets
// are discarded.
func (v *MemoryVault) Len() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.secrets)
}
