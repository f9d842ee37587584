package postgres

import (
	"bytes"
	"crypto/rand"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wopinterop/wopinterop/postgres/internal/pgtest"
	"github.com/wopinterop/wopinterop/push"
	"github.com/wopinterop/wopinterop/push/pushtest"
)

func newVaultKey(t testing.TB) []byte {
	t.Helper()
	k := make([]byte, VaultKeySize)
	_, _ = rand.Read(k)
	return k
}

func openVault(t testing.TB, pool *pgxpool.Pool, keys ...[]byte) *Vault {
	t.Helper()
	v, err := NewVault(testCtx(t), pool, VaultConfig{Keys: keys})
	if err != nil {
		t.Fatalf("NewVault: %v", err)
	}
	return v
}

// The PostgreSQL vault passes the push kit's Vault checks, with a second
// connection pool on the same database as the second replica.
func TestVaultConformance(t *testing.T) {
	key := newVaultKey(t) // every database's, so that replicas share it
	set := newReplicaSet(func(t testing.TB, pool *pgxpool.Pool) push.Vault { return openVault(t, pool, key) })
	pushtest.RunConformance(t, pushtest.Harness{NewVault: set.first, VaultReplica: set.replica})
}

// TestVaultStoresNoPlaintext: a sealed secret's row holds neither of its
// strings, in any column, nor the key.
func TestVaultStoresNoPlaintext(t *testing.T) {
	pool := migratedPool(t)
	key := newVaultKey(t)
	v := openVault(t, pool, key)
	s := push.Secret{Credentials: "cred-" + rand.Text(), Token: "tok-" + rand.Text()}
	ref, err := v.Seal(testCtx(t), s)
	if err != nil {
		t.Fatal(err)
	}
	var keyID, row string
	var nonce, sealed []byte
	if err := pool.QueryRow(testCtx(t),
		`SELECT key_id, nonce, sealed, t::text FROM wopinterop_push_secrets t WHERE ref = $1`, ref).
		Scan(&keyID, &nonce, &sealed, &row); err != nil {
		t.Fatalf("reading the row: %v", err)
	}
	stored := [][]byte{[]byte(keyID), nonce, sealed, []byte(row)}
	for _, needle := range [][]byte{[]byte(s.Credentials), []byte(s.Token), key} {
		for _, col := range stored {
			if bytes.Contains(col, needle) {
				t.Fatalf("the stored row %q holds the secret's bytes %q", row, needle)
			}
		}
	}
	if len(nonce) != 12 || len(sealed) <= len(s.Credentials)+len(s.Token) {
		t.Fatalf("nonce %d bytes, ciphertext %d bytes: not an AES-GCM seal", len(nonce), len(sealed))
	}
	got, err := v.Open(testCtx(t), ref)
	if err != nil || got != s {
		t.Fatalf("Open = %v: the secret does not round-trip", err)
	}
}

// TestVaultRotation: a secret sealed under A opens once the keys are
// [B, A], and new secrets are sealed under B; under [B] alone it fails
// closed with ErrVaultKeyUnknown, not a secret and not "not found".
func TestVaultRotation(t *testing.T) {
	pool := migratedPool(t)
	a, b := newVaultKey(t), newVaultKey(t)
	s := push.Secret{Credentials: "under-a", Token: "tok-a"}
	ref, err := openVault(t, pool, a).Seal(testCtx(t), s)
	if err != nil {
		t.Fatal(err)
	}
	rotated := openVault(t, pool, b, a)
	if got, err := rotated.Open(testCtx(t), ref); err != nil || got != s {
		t.Fatalf("Open under [B, A] of a secret sealed under A = %v", err)
	}
	sB := push.Secret{Token: "under-b"}
	refB, err := rotated.Seal(testCtx(t), sB)
	if err != nil {
		t.Fatal(err)
	}
	var keyA, keyB string
	if err := pool.QueryRow(testCtx(t), `SELECT key_id FROM wopinterop_push_secrets WHERE ref = $1`, ref).Scan(&keyA); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(testCtx(t), `SELECT key_id FROM wopinterop_push_secrets WHERE ref = $1`, refB).Scan(&keyB); err != nil {
		t.Fatal(err)
	}
	if keyA != vaultKeyID(a) || keyB != vaultKeyID(b) {
		t.Fatalf("key ids %s, %s: want the first sealed under A, the second under B (the first key of the config)", keyA, keyB)
	}
	onlyB := openVault(t, pool, b)
	got, err := onlyB.Open(testCtx(t), ref)
	if !errors.Is(err, ErrVaultKeyUnknown) || errors.Is(err, push.ErrSecretNotFound) || got != (push.Secret{}) {
		t.Fatalf("Open under [B] of a secret sealed under A = %v, %v; want ErrVaultKeyUnknown and no secret", err, got == push.Secret{})
	}
	if got, err := onlyB.Open(testCtx(t), refB); err != nil || got != sB {
		t.Fatalf("Open under [B] of a secret sealed under B = %v", err)
	}
}

// TestVaultTamperFailsClosed: a row's ciphertext altered, or moved under
// another ref, does not open.
func TestVaultTamperFailsClosed(t *testing.T) {
	pool := migratedPool(t)
	v := openVault(t, pool, newVaultKey(t))
	ref1, err := v.Seal(testCtx(t), push.Secret{Token: "one"})
	if err != nil {
		t.Fatal(err)
	}
	ref2, err := v.Seal(testCtx(t), push.Secret{Token: "two"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(testCtx(t), `UPDATE wopinterop_push_secrets SET sealed = (SELECT sealed FROM wopinterop_push_secrets WHERE ref = $1), nonce = (SELECT nonce FROM wopinterop_push_secrets WHERE ref = $1) WHERE ref = $2`, ref1, ref2); err != nil {
		t.Fatal(err)
	}
	if got, err := v.Open(testCtx(t), ref2); !errors.Is(err, ErrVaultCorrupt) || got != (push.Secret{}) {
		t.Fatalf("Open of a ciphertext moved to another ref = %v; want ErrVaultCorrupt", err)
	}
	if _, err := pool.Exec(testCtx(t), `UPDATE wopinterop_push_secrets SET sealed = set_byte(sealed, 0, get_byte(sealed, 0) # 1) WHERE ref = $1`, ref1); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Open(testCtx(t), ref1); !errors.Is(err, ErrVaultCorrupt) {
		t.Fatalf("Open of an altered ciphertext = %v; want ErrVaultCorrupt", err)
	}
}

// TestVaultConfigRefused: only 32-byte keys, at least one, none twice.
func TestVaultConfigRefused(t *testing.T) {
	pool := migratedPool(t)
	k := newVaultKey(t)
	for name, tc := range map[string]struct {
		keys [][]byte
		want string
	}{
		"none":      {nil, "postgres: invalid vault key: no key configured"},
		"AES-128":   {[][]byte{make([]byte, 16)}, "postgres: invalid vault key: key 0 is 16 bytes, want 32"},
		"too long":  {[][]byte{k, make([]byte, 33)}, "postgres: invalid vault key: key 1 is 33 bytes, want 32"},
		"duplicate": {[][]byte{k, bytes.Clone(k)}, "postgres: invalid vault key: key 1 is given twice"},
	} {
		t.Run(name, func(t *testing.T) {
			v, err := NewVault(testCtx(t), pool, VaultConfig{Keys: tc.keys})
			if !errors.Is(err, ErrVaultKey) || err.Error() != tc.want || v != nil {
				t.Fatalf("NewVault = %v, %v; want nil, %q", v, err, tc.want)
			}
		})
	}
}

// TestVaultRefusesStaleSchema: like every store, the vault refuses a
// database Migrate has not brought up to date.
func TestVaultRefusesStaleSchema(t *testing.T) {
	_, err := NewVault(testCtx(t), pgtest.NewPool(t), VaultConfig{Keys: [][]byte{newVaultKey(t)}})
	if !errors.Is(err, ErrSchemaBehind) || !strings.Contains(err.Error(), "wopinterop_schema_migrations") {
		t.Fatalf("NewVault on an empty database = %v, want ErrSchemaBehind", err)
	}
}
