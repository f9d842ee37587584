package cardsig_test

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
	jose "github.com/go-jose/go-jose/v4"

	"github.com/wopinterop/wopinterop/a2a/cardsig"
)

// Key ids of the fixture keys.
const (
	edKID = "fixture-ed25519"
	ecKID = "fixture-p256"
)

// edKey is the fixture Ed25519 key: fixed, so its signatures are golden
// (RFC 8032 signatures are deterministic).
func edKey() ed25519.PrivateKey {
	seed := make([]byte, ed25519.SeedSize)
	for i := range seed {
		seed[i] = byte(i)
	}
	return ed25519.NewKeyFromSeed(seed)
}

// ecKey is a P-256 key drawn once per test binary.
var ecKey = sync.OnceValue(func() *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	return k
})

// rsaKey is a 2048-bit RSA key drawn once per test binary.
var rsaKey = sync.OnceValue(func() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return k
})

func newSigner(t testing.TB, key crypto.Signer, opts cardsig.SignerOptions) *cardsig.Signer {
	t.Helper()
	s, err := cardsig.NewSigner(key, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// edSigner and ecSigner sign with the fixture keys.
func edSigner(t testing.TB) *cardsig.Signer {
	return newSigner(t, edKey(), cardsig.SignerOptions{KeyID: edKID})
}

func ecSigner(t testing.TB) *cardsig.Signer {
	return newSigner(t, ecKey(), cardsig.SignerOptions{KeyID: ecKID})
}

// verifierOf trusts the public keys of signers.
func verifierOf(t testing.TB, signers ...*cardsig.Signer) *cardsig.Verifier {
	t.Helper()
	var set jose.JSONWebKeySet
	for _, s := range signers {
		set.Keys = append(set.Keys, s.PublicKey())
	}
	v, err := cardsig.NewVerifier(set)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// fixtureCard is testdata/card.json without its final newline: a card as
// an agent serves it, an unknown member included.
func fixtureCard(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "card.json"))
	if err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSpace(b)
}

// withSignatures returns card (a JSON object's bytes) with a signatures
// member of sigs appended, every other byte kept as it was.
func withSignatures(t testing.TB, card []byte, sigs ...any) []byte {
	t.Helper()
	list, err := json.Marshal(sigs)
	if err != nil {
		t.Fatal(err)
	}
	return withMember(card, "signatures", list)
}

// withMember appends member name with the raw JSON value to card.
func withMember(card []byte, name string, value []byte) []byte {
	out := bytes.Clone(card[:bytes.LastIndexByte(card, '}')])
	out = append(out, `,"`+name+`":`...)
	out = append(out, value...)
	return append(out, '}')
}

// signed is card with s's signature appended.
func signed(t testing.TB, s *cardsig.Signer, card []byte) []byte {
	t.Helper()
	sig, err := s.Sign(card)
	if err != nil {
		t.Fatal(err)
	}
	return withSignatures(t, card, sig)
}

// b64 is unpadded base64url (RFC 7515 §2).
func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// jsonOf marshals v or fails t.
func jsonOf(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// crafted is a signature entry made by hand: protected is the base64url
// of header's JSON, signature that of sign(signing input), where the
// signing input is BASE64URL(header) "." BASE64URL(payload) (RFC 7515
// §5.1).
func crafted(t testing.TB, header any, payload []byte, sign func(input []byte) []byte) wire.AgentCardSignature {
	t.Helper()
	protected := b64(jsonOf(t, header))
	return wire.AgentCardSignature{Protected: protected, Signature: b64(sign([]byte(protected + "." + b64(payload))))}
}

// canonical is cardsig.Canonicalize(card) or fails t.
func canonical(t testing.TB, card []byte) []byte {
	t.Helper()
	p, err := cardsig.Canonicalize(card)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// wantRefusal fails t unless err is an *cardsig.Error equal to want in
// every field; want.Err stands for "some cause" when non-nil.
func wantRefusal(t testing.TB, err error, want cardsig.Error) {
	t.Helper()
	var got *cardsig.Error
	if !errors.As(err, &got) {
		t.Fatalf("error %v (%T), want a *cardsig.Error", err, err)
	}
	if got.Reason != want.Reason || got.Index != want.Index || got.KeyID != want.KeyID || got.Detail != want.Detail ||
		(got.Err == nil) != (want.Err == nil) {
		t.Fatalf("refusal\n got {Reason:%s Index:%d KeyID:%q Detail:%q Err:%v}\nwant {Reason:%s Index:%d KeyID:%q Detail:%q Err:%v}",
			got.Reason, got.Index, got.KeyID, got.Detail, got.Err, want.Reason, want.Index, want.KeyID, want.Detail, want.Err)
	}
}

// errSome marks a refusal that carries an underlying cause.
var errSome = errors.New("some cause")
