package sealed

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"time"

	"github.com/wopinterop/wopinterop/interop"
)

const (
	// MinKeyLen is the shortest host secret a [Sealer] accepts: 32 bytes,
	// the size of the AES-256 key derived from it.
	MinKeyLen = 32

	// DefaultTTL is how long a requestState stays valid when
	// [Config.TTL] is zero. A round waits for a person to answer an
	// elicitation, so it is minutes rather than seconds.
	DefaultTTL = 10 * time.Minute

	// MaxSealedLen is the longest sealed value Seal produces and Open
	// reads. Typical states have 300 to 400 characters.
	MaxSealedLen = 4096

	// Prefix starts every sealed value: the format version. A future format
	// gets a new prefix, so old and new values are told apart before any
	// decoding.
	Prefix = "rs1."

	kidLen   = 4
	nonceLen = 12 // the standard 96-bit GCM nonce
	tagLen   = 16
	// headerLen is the binary header: key id, then nonce.
	headerLen = kidLen + nonceLen
	// maxPlaintextLen keeps the sealed value within MaxSealedLen.
	maxPlaintextLen = (MaxSealedLen-len(Prefix))*6/8 - headerLen - tagLen

	// HKDF info labels: one subkey per purpose, so the host secret is never
	// used directly and the key id reveals nothing about the AEAD key.
	infoAEAD  = "wopinterop/mcp/sealed/v1/requestState/aes-256-gcm"
	infoKeyID = "wopinterop/mcp/sealed/v1/requestState/key-id"
)

// b64 is strict so each byte string has exactly one spelling: a value whose
// last character differs only in discarded bits does not decode.
var b64 = base64.RawURLEncoding.Strict()

// Config configures [NewSealer]. Key is required; every other field has a
// documented default.
type Config struct {
	// Key is the current host secret: at least [MinKeyLen] bytes of
	// high-entropy configuration, the same on every replica. New states are
	// sealed with it.
	Key []byte
	// PreviousKeys keep states sealed before a rotation opening until they
	// expire; they never seal. Each must also be at least MinKeyLen bytes.
	// Drop a previous key one TTL after it stopped being current.
	PreviousKeys [][]byte
	// TTL is how long a state is valid after Seal; 0 means [DefaultTTL].
	TTL time.Duration
	// Ledger records consumed states; nil means a fresh [MemoryLedger]
	// with its defaults on the clock Now, which is correct for a single
	// replica only.
	Ledger Ledger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// String describes the configuration without its keys.
func (c Config) String() string {
	return fmt.Sprintf("sealed.Config{keys: redacted, previousKeys: %d, ttl: %s}", len(c.PreviousKeys), c.TTL)
}

// GoString keeps %#v from printing the keys.
func (c Config) GoString() string { return c.String() }

// LogValue keeps structured logs from printing the keys.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(slog.Int("previousKeys", len(c.PreviousKeys)), slog.Duration("ttl", c.TTL))
}

// Sealer seals and opens MCP MRTR requestState values (OpenWOP interop map, mcp.mrtr).
//
// A sealed value is [Prefix] followed by the unpadded base64url encoding of
// a 4-byte key id, a random 96-bit nonce and the AES-256-GCM ciphertext of
// the claims, with the prefix and key id as additional authenticated data.
// The AEAD key and the key id are derived from each host secret with
// HKDF-SHA256 under separate labels; the key id only picks which key to try
// and is itself authenticated. The value is opaque to clients: they persist
// and echo it byte for byte (OpenWOP interop map, mcp.mrtr) and can neither read nor alter it.
//
// Random nonces are safe for about 2^32 seals per key; rotate the key long
// before that (a busy host might rotate monthly).
//
// A Sealer holds no secret bytes after construction, only the derived
// cipher states. It is immutable and safe for concurrent use.
type Sealer struct {
	keys   []sealKey // keys[0] is current and the only one that seals
	ttl    time.Duration
	ledger Ledger
	now    func() time.Time
	// random supplies nonces and ids; nil means crypto/rand. Tests inject a
	// deterministic reader to produce golden values.
	random io.Reader
}

type sealKey struct {
	id   [kidLen]byte
	aead cipher.AEAD
}

// NewSealer returns a Sealer for cfg. It refuses a missing or short key
// with an error wrapping [ErrKeyTooShort] that gives the length, never the
// bytes.
func NewSealer(cfg Config) (*Sealer, error) {
	s := &Sealer{ttl: cfg.TTL, ledger: cfg.Ledger, now: cfg.Now}
	if s.ttl < 0 {
		return nil, fmt.Errorf("sealed: negative TTL %s", s.ttl)
	}
	if s.ttl == 0 {
		s.ttl = DefaultTTL
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.ledger == nil {
		// The same clock for both: a ledger on another clock could judge a
		// state Open still accepts as past its retention.
		s.ledger = NewMemoryLedger(MemoryLedgerConfig{Now: s.now})
	}
	secrets := append([][]byte{cfg.Key}, cfg.PreviousKeys...)
	kept := make([]int, 0, len(secrets)) // kept[j] is the index in secrets of s.keys[j]
	for i, secret := range secrets {
		if len(secret) < MinKeyLen {
			which := "the current key"
			if i > 0 {
				which = fmt.Sprintf("previous key %d", i-1)
			}
			return nil, fmt.Errorf("%w: %s has %d", ErrKeyTooShort, which, len(secret))
		}
		k, err := deriveKey(secret)
		if err != nil {
			return nil, err
		}
		if j := slices.IndexFunc(s.keys, func(o sealKey) bool { return o.id == k.id }); j >= 0 {
			if subtle.ConstantTimeCompare(secrets[kept[j]], secret) == 1 {
				continue // the same secret listed twice: harmless, keep one
			}
			// Two different secrets with one 32-bit id: a 2^-32 accident
			// that would make Open try the wrong key. Refuse it up front.
			return nil, fmt.Errorf("sealed: keys %d and %d (0 is current) derive the same key id; replace one", kept[j], i)
		}
		s.keys = append(s.keys, k)
		kept = append(kept, i)
	}
	return s, nil
}

func deriveKey(secret []byte) (sealKey, error) {
	var k sealKey
	aeadKey, err := hkdf.Key(sha256.New, secret, nil, infoAEAD, 32)
	if err != nil {
		return k, fmt.Errorf("sealed: derive key: %w", err)
	}
	kid, err := hkdf.Key(sha256.New, secret, nil, infoKeyID, kidLen)
	if err != nil {
		return k, fmt.Errorf("sealed: derive key id: %w", err)
	}
	copy(k.id[:], kid)
	block, err := aes.NewCipher(aeadKey)
	if err != nil {
		return k, fmt.Errorf("sealed: %w", err)
	}
	if k.aead, err = cipher.NewGCM(block); err != nil {
		return k, fmt.Errorf("sealed: %w", err)
	}
	return k, nil
}

// TTL reports how long the states this Sealer seals stay valid.
func (s *Sealer) TTL() time.Duration { return s.ttl }

// String describes the Sealer without key material.
func (s *Sealer) String() string {
	return fmt.Sprintf("sealed.Sealer{keys: %d, ttl: %s}", len(s.keys), s.ttl)
}

// GoString keeps %#v from walking into the cipher states.
func (s *Sealer) GoString() string { return s.String() }

// LogValue keeps structured logs to the same description.
func (s *Sealer) LogValue() slog.Value {
	return slog.GroupValue(slog.Int("keys", len(s.keys)), slog.Duration("ttl", s.ttl))
}

// Seal returns a requestState for g, bound to subject, valid for the TTL
// from now, with a fresh 128-bit single-use id, sealed under the current
// key. It fails only for an invalid grant ([ErrInvalidGrant]).
func (s *Sealer) Seal(subject interop.Subject, g Grant) (string, error) {
	if err := g.validate(); err != nil {
		return "", err
	}
	c := sealedClaims{
		expiresAt: s.now().Add(s.ttl).UnixMilli(),
		principal: principalDigest(subject),
		grant:     g,
	}
	n := claimsLen(&c)
	if n > maxPlaintextLen {
		return "", fmt.Errorf("%w: claims need %d bytes, at most %d fit", ErrInvalidGrant, n, maxPlaintextLen)
	}
	key := &s.keys[0]
	buf := make([]byte, headerLen, headerLen+n+tagLen)
	copy(buf, key.id[:])
	var random [nonceLen + idLen]byte
	if err := s.read(random[:]); err != nil {
		return "", err
	}
	copy(buf[kidLen:], random[:nonceLen])
	copy(c.id[:], random[nonceLen:])
	buf = appendClaims(buf, &c)

	aad := additionalData(key.id)
	plain := buf[headerLen:]
	// Encrypt in place; the capacity reserved above holds the tag.
	ct := key.aead.Seal(plain[:0], buf[kidLen:headerLen], plain, aad[:])
	buf = buf[:headerLen+len(ct)]

	out := make([]byte, len(Prefix)+b64.EncodedLen(len(buf)))
	copy(out, Prefix)
	b64.Encode(out[len(Prefix):], buf)
	return string(out), nil
}

func (s *Sealer) read(b []byte) error {
	if s.random == nil {
		rand.Read(b) // never fails; crashes the process if the OS cannot supply randomness
		return nil
	}
	if _, err := io.ReadFull(s.random, b); err != nil {
		return fmt.Errorf("sealed: random source: %w", err)
	}
	return nil
}

// additionalData authenticates the version prefix and the key id, so
// neither can be changed without the tag failing.
func additionalData(kid [kidLen]byte) [len(Prefix) + kidLen]byte {
	var aad [len(Prefix) + kidLen]byte
	copy(aad[:], Prefix)
	copy(aad[len(Prefix):], kid[:])
	return aad
}

// Expectation is what the retry itself establishes: who presents the state
// and which call it repeats.
type Expectation struct {
	// Subject is the authenticated caller of the retry.
	Subject interop.Subject
	// RequestDigest is [RequestDigest] of the retry's tool name and
	// arguments.
	RequestDigest [32]byte
}

// Open verifies a requestState presented by a retry and consumes it.
//
// The checks run in this order, and each refusal wraps [ErrInvalidState]:
//
//  1. integrity: version prefix, encoding, key id and AEAD tag
//     ([ErrTampered]);
//  2. expiry against the Sealer's clock ([ErrExpired]; a state is expired
//     from its ExpiresAt on);
//  3. principal binding: tenant, workspace, principal and authentication
//     of expect.Subject ([ErrForeign]);
//  4. request digest ([ErrMismatch]);
//  5. single use: the [Ledger] records the id atomically; a second Open of
//     the same value, on any replica sharing the ledger, gets
//     [ErrReplayed], and of N concurrent Opens exactly one succeeds.
//
// A state refused by steps 1–4 is not consumed, so a forged, expired,
// foreign or misdirected attempt cannot burn a genuine state. A ledger
// failure is returned wrapped as it is, not as ErrInvalidState: it is a
// server fault, and the state was not consumed unless the ledger recorded
// it. No error message carries a claim.
func (s *Sealer) Open(ctx context.Context, sealed string, expect Expectation) (Claims, error) {
	var c sealedClaims
	if !s.unseal(sealed, &c) {
		return Claims{}, ErrTampered
	}
	if s.now().UnixMilli() >= c.expiresAt {
		return Claims{}, ErrExpired
	}
	want := principalDigest(expect.Subject)
	if subtle.ConstantTimeCompare(c.principal[:], want[:]) != 1 {
		return Claims{}, ErrForeign
	}
	if subtle.ConstantTimeCompare(c.grant.RequestDigest[:], expect.RequestDigest[:]) != 1 {
		return Claims{}, ErrMismatch
	}
	claims := c.claims()
	fresh, err := s.ledger.Consume(ctx, claims.ID, claims.ExpiresAt)
	if err != nil {
		return Claims{}, fmt.Errorf("sealed: ledger: %w", err)
	}
	if !fresh {
		return Claims{}, ErrReplayed
	}
	return claims, nil
}

// unseal authenticates and decodes sealed into c. It accepts exactly the
// strings Seal produces under a configured key.
func (s *Sealer) unseal(sealed string, c *sealedClaims) bool {
	if len(sealed) > MaxSealedLen || len(sealed) < len(Prefix) || sealed[:len(Prefix)] != Prefix {
		return false
	}
	body := sealed[len(Prefix):]
	// The decoder skips '\r' and '\n'; refuse them (and everything outside
	// the alphabet) first so no two strings decode to the same bytes.
	for i := 0; i < len(body); i++ {
		ch := body[i]
		if !('a' <= ch && ch <= 'z' || 'A' <= ch && ch <= 'Z' || '0' <= ch && ch <= '9' || ch == '-' || ch == '_') {
			return false
		}
	}
	buf := make([]byte, b64.DecodedLen(len(body)))
	n, err := b64.Decode(buf, []byte(body))
	if err != nil || n < headerLen+tagLen {
		return false
	}
	buf = buf[:n]
	var kid [kidLen]byte
	copy(kid[:], buf)
	aad := additionalData(kid)
	nonce, ct := buf[kidLen:headerLen], buf[headerLen:]
	// Key ids are unique (NewSealer guarantees it), so at most one key is
	// tried and the in-place decryption may clobber ct.
	for i := range s.keys {
		k := &s.keys[i]
		if k.id != kid {
			continue
		}
		plain, err := k.aead.Open(ct[:0], nonce, ct, aad[:])
		return err == nil && decodeClaims(plain, c) == nil
	}
	return false
}
