package postgres

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wopinterop/wopinterop/push"
)

var _ push.Vault = (*Vault)(nil)

// VaultKeySize is the size of a vault key: AES-256.
const VaultKeySize = 32

// ErrVaultKey reports a [VaultConfig] whose keys cannot be used.
var ErrVaultKey = errors.New("postgres: invalid vault key")

// ErrVaultKeyUnknown reports a stored secret sealed under a key the
// vault is no longer configured with: Open fails rather than guess.
var ErrVaultKeyUnknown = errors.New("postgres: push secret sealed under a key not configured")

// ErrVaultCorrupt reports a stored secret that does not authenticate
// under its key: it was altered, or moved to another ref.
var ErrVaultCorrupt = errors.New("postgres: push secret fails authentication")

// VaultConfig configures [NewVault].
type VaultConfig struct {
	// Keys are AES-256 keys, VaultKeySize bytes each, at least one. The
	// first seals every new secret; all of them open. To rotate, put the
	// new key first and keep the old ones until no secret sealed under
	// them is left (every secret is discarded when its config is).
	Keys [][]byte
}

// vaultKey is one configured key: its id as stored and its cipher.
type vaultKey struct {
	id   string
	aead cipher.AEAD
}

// Vault is a [push.Vault] on PostgreSQL, shared by every replica of a
// host. A secret is stored encrypted with AES-256-GCM under the first
// configured key (NIST SP 800-38D), a fresh random nonce per secret, the
// ref as additional data; the database never sees the plaintext, so a
// dump or a backup of it discloses no credential without the keys. Refs
// are 130 random bits from crypto/rand. It needs no closing. Safe for
// concurrent use.
type Vault struct {
	pool *pgxpool.Pool
	keys []vaultKey // keys[0] seals
	byID map[string]cipher.AEAD
}

// NewVault returns the vault over pool, whose database [Migrate] has
// brought up to date (else [ErrSchemaBehind]). It refuses a config with
// no key, a key that is not VaultKeySize bytes, or a key given twice
// ([ErrVaultKey]). The keys are copied.
func NewVault(ctx context.Context, pool *pgxpool.Pool, cfg VaultConfig) (*Vault, error) {
	if len(cfg.Keys) == 0 {
		return nil, fmt.Errorf("%w: no key configured", ErrVaultKey)
	}
	v := &Vault{pool: pool, byID: map[string]cipher.AEAD{}}
	for i, k := range cfg.Keys {
		if len(k) != VaultKeySize {
			return nil, fmt.Errorf("%w: key %d is %d bytes, want %d", ErrVaultKey, i, len(k), VaultKeySize)
		}
		block, err := aes.NewCipher(append([]byte(nil), k...))
		if err != nil {
			return nil, fmt.Errorf("%w: key %d: %w", ErrVaultKey, i, err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("%w: key %d: %w", ErrVaultKey, i, err)
		}
		id := vaultKeyID(k)
		if _, dup := v.byID[id]; dup {
			return nil, fmt.Errorf("%w: key %d is given twice", ErrVaultKey, i)
		}
		v.byID[id] = aead
		v.keys = append(v.keys, vaultKey{id: id, aead: aead})
	}
	if err := checkSchema(ctx, pool); err != nil {
		return nil, err
	}
	return v, nil
}

// vaultKeyID names a key in the rows it sealed without disclosing it: a
// truncated SHA-256 of a domain label and the key. A 256-bit random key
// cannot be recovered from its hash.
func vaultKeyID(key []byte) string {
	h := sha256.New()
	h.Write([]byte("wopinterop push vault key id\x00"))
	h.Write(key)
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// sealedSecret is the plaintext sealed: push.Secret marshals as
// "[redacted]" by design, so the vault encodes its fields itself.
type sealedSecret struct {
	Credentials string `json:"c"`
	Token       string `json:"t"`
}

// additionalData binds a ciphertext to its ref and key id.
func additionalData(ref, keyID string) []byte {
	return []byte(ref + "\x00" + keyID)
}

// Seal implements [push.Vault].
func (v *Vault) Seal(ctx context.Context, s push.Secret) (string, error) {
	plain, err := json.Marshal(sealedSecret{Credentials: s.Credentials, Token: s.Token})
	if err != nil {
		return "", fmt.Errorf("postgres: seal push secret: %w", err)
	}
	k := v.keys[0]
	nonce := make([]byte, k.aead.NonceSize())
	_, _ = rand.Read(nonce) // crypto/rand.Read never fails (Go 1.24+)
	ref := "sec-" + rand.Text()
	sealed := k.aead.Seal(nil, nonce, plain, additionalData(ref, k.id))
	clear(plain)
	if _, err := v.pool.Exec(ctx,
		`INSERT INTO wopinterop_push_secrets (ref, key_id, nonce, sealed) VALUES ($1, $2, $3, $4)`,
		ref, k.id, nonce, sealed); err != nil {
		return "", fmt.Errorf("postgres: seal push secret: %w", err)
	}
	return ref, nil
}

// Open implements [push.Vault]. A secret sealed under a key no longer
// configured is [ErrVaultKeyUnknown], one that does not authenticate
// [ErrVaultCorrupt]: neither yields a secret.
func (v *Vault) Open(ctx context.Context, ref string) (push.Secret, error) {
	var keyID string
	var nonce, sealed []byte
	err := v.pool.QueryRow(ctx,
		`SELECT key_id, nonce, sealed FROM wopinterop_push_secrets WHERE ref = $1`, ref).Scan(&keyID, &nonce, &sealed)
	if errors.Is(err, pgx.ErrNoRows) {
		return push.Secret{}, push.ErrSecretNotFound
	}
	if err != nil {
		return push.Secret{}, fmt.Errorf("postgres: open push secret: %w", err)
	}
	aead, ok := v.byID[keyID]
	if !ok {
		return push.Secret{}, fmt.Errorf("%w (key id %s)", ErrVaultKeyUnknown, keyID)
	}
	if len(nonce) != aead.NonceSize() {
		return push.Secret{}, ErrVaultCorrupt
	}
	plain, err := aead.Open(nil, nonce, sealed, additionalData(ref, keyID))
	if err != nil {
		return push.Secret{}, ErrVaultCorrupt
	}
	defer clear(plain)
	var s sealedSecret
	if err := json.Unmarshal(plain, &s); err != nil {
		return push.Secret{}, ErrVaultCorrupt
	}
	return push.Secret{Credentials: s.Credentials, Token: s.Token}, nil
}

// Discard implements [push.Vault].
func (v *Vault) Discard(ctx context.Context, ref string) error {
	if _, err := v.pool.Exec(ctx, `DELETE FROM wopinterop_push_secrets WHERE ref = $1`, ref); err != nil {
		return fmt.Errorf("postgres: discard push secret: %w", err)
	}
	return nil
}
