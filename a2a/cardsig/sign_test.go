package cardsig_test

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"strings"
	"testing"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
	jose "github.com/go-jose/go-jose/v4"

	"github.com/wopinterop/wopinterop/a2a/cardsig"
	"github.com/wopinterop/wopinterop/internal/golden"
)

// A Verifier is the a2a/delegate CardVerifier, by method shape (the
// interface is restated here: cardsig does not import delegate).
var _ interface {
	VerifyCard(ctx context.Context, raw []byte, card *wire.AgentCard) error
} = (*cardsig.Verifier)(nil)

// Every key type signs, and what it signs verifies with its public key:
// the protected header says alg, kid and typ JOSE, and jku when set
// (A2A 1.0 §8.4.2).
func TestSignVerifyRoundTrip(t *testing.T) {
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p521, err := ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		key  crypto.Signer
		alg  string
		jku  string
	}{
		{"Ed25519", edKey(), "EdDSA", ""},
		{"P-256", ecKey(), "ES256", "https://agent.example.test/.well-known/jwks.json"},
		{"P-384", p384, "ES384", ""},
		{"P-521", p521, "ES512", ""},
		{"RSA-2048", rsaKey(), "RS256", ""},
	}
	card := fixtureCard(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newSigner(t, tc.key, cardsig.SignerOptions{KeyID: "k-" + tc.name, JKU: tc.jku})
			if s.Algorithm() != tc.alg || s.KeyID() != "k-"+tc.name {
				t.Fatalf("alg %s kid %s", s.Algorithm(), s.KeyID())
			}
			sig, err := s.Sign(card)
			if err != nil {
				t.Fatal(err)
			}
			header, err := base64.RawURLEncoding.Strict().DecodeString(sig.Protected)
			if err != nil {
				t.Fatal(err)
			}
			want := `{"alg":"` + tc.alg + `","kid":"k-` + tc.name + `","typ":"JOSE"}`
			if tc.jku != "" {
				want = `{"alg":"` + tc.alg + `","jku":"` + tc.jku + `","kid":"k-` + tc.name + `","typ":"JOSE"}`
			}
			if string(header) != want || sig.Header != nil {
				t.Fatalf("protected header %s (unprotected %v), want %s", header, sig.Header, want)
			}
			v := verifierOf(t, s)
			kid, err := v.Verify(withSignatures(t, card, sig))
			if err != nil || kid != s.KeyID() {
				t.Fatalf("Verify: %q, %v", kid, err)
			}
			if err := v.VerifyCard(t.Context(), withSignatures(t, card, sig), nil); err != nil {
				t.Fatalf("VerifyCard: %v", err)
			}
			// The public key a verifier is configured with travels as a JWK.
			pub := s.PublicKey()
			if !pub.IsPublic() || pub.KeyID != s.KeyID() || pub.Algorithm != tc.alg || pub.Use != "sig" {
				t.Fatalf("public key %+v", pub)
			}
		})
	}
}

// An EdDSA signature is deterministic (RFC 8032 §5.1.6), so the bytes of
// the fixture card's signature are golden: any change to the
// canonicalization, the header or the signing input shows here.
func TestSignatureGolden(t *testing.T) {
	card := fixtureCard(t)
	s := newSigner(t, edKey(), cardsig.SignerOptions{KeyID: edKID, JKU: "https://agent.example.test/.well-known/jwks.json"})
	sig, err := s.Sign(card)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "card.canonical.golden", append(canonical(t, card), '\n'))
	golden.Check(t, "card.signature.golden", append(jsonOf(t, sig), '\n'))
	// The golden signature is the one RFC 8032 gives for the golden
	// signing input: checked here with crypto/ed25519 alone.
	raw, err := base64.RawURLEncoding.DecodeString(sig.Signature)
	if err != nil {
		t.Fatal(err)
	}
	input := sig.Protected + "." + b64(canonical(t, card))
	if !ed25519.Verify(edKey().Public().(ed25519.PublicKey), []byte(input), raw) {
		t.Fatal("the signature is not Ed25519 over BASE64URL(header) '.' BASE64URL(canonical card)")
	}
}

// SignCard serves what Sign signs: the card's JSON with the signature
// appended to the ones it had, the card itself unchanged.
func TestSignCard(t *testing.T) {
	card := &wire.AgentCard{
		Name: "Agent", Description: "Does things.", Version: "1.0.0",
		SupportedInterfaces: []*wire.AgentInterface{{URL: "https://a.example.test/a2a", ProtocolBinding: wire.TransportProtocolJSONRPC, ProtocolVersion: "1.0"}},
		DefaultInputModes:   []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills:     []wire.AgentSkill{{ID: "s", Name: "S", Description: "d", Tags: []string{}}},
		Signatures: []wire.AgentCardSignature{{Protected: "e30", Signature: "AA"}},
	}
	body, err := cardsig.SignCard(card, edSigner(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(card.Signatures) != 1 {
		t.Fatal("SignCard changed the card")
	}
	var got wire.AgentCard
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Signatures) != 2 || got.Signatures[0].Protected != "e30" || got.Signatures[0].Signature != "AA" {
		t.Fatalf("signatures %+v", got.Signatures)
	}
	// The earlier signature is malformed ({} header, no alg); the new one
	// verifies all the same.
	if kid, err := verifierOf(t, edSigner(t)).Verify(body); err != nil || kid != edKID {
		t.Fatalf("Verify: %q, %v", kid, err)
	}
}

// Without a KeyID the kid is the key's RFC 7638 thumbprint; a jku must be
// an https URL; keys JWS does not sign with are refused.
func TestNewSigner(t *testing.T) {
	s := newSigner(t, edKey(), cardsig.SignerOptions{})
	jwk := jose.JSONWebKey{Key: edKey().Public()}
	sum, err := jwk.Thumbprint(crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	if s.KeyID() != b64(sum) {
		t.Errorf("default kid %q, want the thumbprint %q", s.KeyID(), b64(sum))
	}
	p224, err := ecdsa.GenerateKey(elliptic.P224(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		key  crypto.Signer
		opts cardsig.SignerOptions
		want string
	}{
		"nil key":      {nil, cardsig.SignerOptions{}, "cardsig: no signing key"},
		"P-224":        {p224, cardsig.SignerOptions{}, "cardsig: ECDSA curve P-224 is not one JWS signs with"},
		"RSA-1024":     {small, cardsig.SignerOptions{}, "cardsig: RSA key of 1024 bits, want at least 2048"},
		"http jku":     {edKey(), cardsig.SignerOptions{JKU: "http://example.test/jwks.json"}, `cardsig: JKU "http://example.test/jwks.json" is not an absolute https URL`},
		"relative jku": {edKey(), cardsig.SignerOptions{JKU: "/jwks.json"}, `cardsig: JKU "/jwks.json" is not an absolute https URL`},
	} {
		if _, err := cardsig.NewSigner(tc.key, tc.opts); err == nil || err.Error() != tc.want {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
}

// A signer that cannot canonicalize the card signs nothing.
func TestSignRefusesMalformedCard(t *testing.T) {
	_, err := edSigner(t).Sign([]byte(`{"name":"a","name":"b"}`))
	wantRefusal(t, err, cardsig.Error{Reason: cardsig.ReasonMalformedCard, Index: -1, Detail: "not canonicalizable JSON (RFC 8785)", Err: errSome})
}

// ParseSigner reads a private JWK (its kid kept) or a PEM key (PKCS #8,
// SEC 1, PKCS #1), and refuses public, symmetric and contradictory keys
// without quoting the file.
func TestParseSigner(t *testing.T) {
	ed, ec, rk := edKey(), ecKey(), rsaKey()
	jwkOf := func(k any, kid, alg, use string) []byte {
		b, err := json.Marshal(jose.JSONWebKey{Key: k, KeyID: kid, Algorithm: alg, Use: use})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	der := func(b []byte, err error) []byte {
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	pemOf := func(typ string, der []byte) []byte {
		return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
	}
	params := pem.EncodeToMemory(&pem.Block{Type: "EC PARAMETERS", Bytes: []byte{6, 8, 42, 134, 72, 206, 61, 3, 1, 7}})
	ok := []struct {
		name, alg, kid string
		data           []byte
	}{
		{"JWK Ed25519", "EdDSA", "jwk-kid", jwkOf(ed, "jwk-kid", "", "")},
		{"JWK P-256 alg and use", "ES256", "ec", jwkOf(ec, "ec", "ES256", "sig")},
		{"PKCS #8 Ed25519", "EdDSA", "", pemOf("PRIVATE KEY", der(x509.MarshalPKCS8PrivateKey(ed)))},
		{"SEC 1 after EC PARAMETERS", "ES256", "", append(params, pemOf("EC PRIVATE KEY", der(x509.MarshalECPrivateKey(ec)))...)},
		{"PKCS #1", "RS256", "", pemOf("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rk))},
	}
	for _, tc := range ok {
		s, err := cardsig.ParseSigner(tc.data, cardsig.SignerOptions{})
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if s.Algorithm() != tc.alg || tc.kid != "" && s.KeyID() != tc.kid || s.KeyID() == "" {
			t.Errorf("%s: alg %s kid %q", tc.name, s.Algorithm(), s.KeyID())
		}
	}
	if s, err := cardsig.ParseSigner(ok[2].data, cardsig.SignerOptions{KeyID: "override"}); err != nil || s.KeyID() != "override" {
		t.Errorf("KeyID override: %v", err)
	}

	secret := `{"kty":"oct","k":"c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0","kid":"hs"}`
	bad := []struct {
		name string
		data []byte
		want string
	}{
		{"public JWK", jwkOf(ed.Public(), "pub", "", ""), "cardsig: the JWK is not an asymmetric private key"},
		{"symmetric JWK", []byte(secret), "cardsig: the JWK is not an asymmetric private key"},
		{"JWK for encryption", jwkOf(ec, "ec", "", "enc"), `cardsig: the JWK's use is "enc", not sig`},
		{"JWK alg contradicts", jwkOf(ec, "ec", "ES384", ""), `cardsig: the JWK's alg is "ES384", the key signs ES256`},
		{"broken JWK", []byte(`{"kty":"OKP","crv":"Ed25519","d":"c2VjcmV0"`), "cardsig: not a valid JWK"},
		{"public PEM", pemOf("PUBLIC KEY", der(x509.MarshalPKIXPublicKey(ed.Public()))), "cardsig: neither a JWK nor a PEM private key"},
		{"garbage", []byte("s3cret-key-material"), "cardsig: neither a JWK nor a PEM private key"},
	}
	for _, tc := range bad {
		_, err := cardsig.ParseSigner(tc.data, cardsig.SignerOptions{})
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
		if err != nil && (strings.Contains(err.Error(), "c2VjcmV0") || strings.Contains(err.Error(), "s3cret")) {
			t.Errorf("%s: the error quotes the key: %v", tc.name, err)
		}
	}
	if _, err := cardsig.ParseSigner(pemOf("PRIVATE KEY", []byte("not DER")), cardsig.SignerOptions{}); err == nil ||
		err.Error() != "cardsig: the PEM PRIVATE KEY block is not a key this package reads" {
		t.Errorf("bad DER: %v", err)
	}
}

// Two signers' signatures of one card differ only in what they must: an
// ES256 signature is randomized, yet both verify.
func TestES256SignaturesVerifyThoughRandomized(t *testing.T) {
	card := fixtureCard(t)
	s := ecSigner(t)
	a, err := s.Sign(card)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Sign(card)
	if err != nil {
		t.Fatal(err)
	}
	if a.Protected != b.Protected || a.Signature == b.Signature {
		t.Fatalf("two ES256 signatures: %+v %+v", a, b)
	}
	v := verifierOf(t, s)
	for _, sig := range []wire.AgentCardSignature{a, b} {
		if _, err := v.Verify(withSignatures(t, card, sig)); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(canonical(t, withSignatures(t, card, a)), canonical(t, card)) {
		t.Fatal("the signatures member is part of the payload")
	}
}
