package cardsig

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/cryptosigner"
)

// headerType is the typ of every signature made here: A2A 1.0 §8.4.2 says
// it SHOULD be "JOSE", and a2a-js refuses a signature without one.
const headerType = "JOSE"

// minRSABits is the smallest RSA modulus signed or trusted (RFC 7518
// §3.3: 2048 bits or larger MUST be used).
const minRSABits = 2048

// SignerOptions are what a [Signer] says about its key in every
// signature's protected header (A2A 1.0 §8.4.2).
type SignerOptions struct {
	// KeyID is the kid verifiers find the public key by. Empty: the
	// key's RFC 7638 thumbprint (SHA-256, base64url) — for [ParseSigner],
	// the JWK's own kid when it has one.
	KeyID string
	// JKU, when set, is the https URL of a JWK set that publishes the
	// public key (RFC 7515 §4.1.2). It is a hint for verifiers that choose
	// to fetch keys; this package's [Verifier] never does.
	JKU string
}

// Signer signs agent cards with one private key (A2A 1.0 §8.4.2): JWS
// (RFC 7515) over the card's canonical form ([Canonicalize]), the payload
// detached. The algorithm follows from the key: EdDSA for Ed25519, ES256,
// ES384 or ES512 for ECDSA on P-256, P-384 or P-521, RS256 for RSA of
// 2048 bits or more. A Signer is safe for concurrent use.
type Signer struct {
	signer jose.Signer
	alg    jose.SignatureAlgorithm
	kid    string
	public jose.JSONWebKey
}

// NewSigner returns a Signer of key. key may be any crypto.Signer — a
// key in memory or one held by a KMS — whose public key is Ed25519,
// ECDSA on P-256, P-384 or P-521, or RSA of at least 2048 bits.
func NewSigner(key crypto.Signer, opts SignerOptions) (*Signer, error) {
	if key == nil {
		return nil, errors.New("cardsig: no signing key")
	}
	pub := key.Public()
	alg, err := algorithmOf(pub)
	if err != nil {
		return nil, err
	}
	public := jose.JSONWebKey{Key: pub, Algorithm: string(alg), Use: "sig"}
	kid := opts.KeyID
	if kid == "" {
		sum, err := public.Thumbprint(crypto.SHA256)
		if err != nil {
			return nil, fmt.Errorf("cardsig: thumbprint of the key: %w", err)
		}
		kid = base64.RawURLEncoding.EncodeToString(sum)
	}
	public.KeyID = kid
	so := (&jose.SignerOptions{}).WithType(headerType).WithHeader("kid", kid)
	if opts.JKU != "" {
		if u, err := url.Parse(opts.JKU); err != nil || u.Scheme != "https" || u.Host == "" {
			return nil, fmt.Errorf("cardsig: JKU %q is not an absolute https URL", opts.JKU)
		}
		so = so.WithHeader("jku", opts.JKU)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: cryptosigner.Opaque(key)}, so)
	if err != nil {
		return nil, fmt.Errorf("cardsig: %w", err)
	}
	return &Signer{signer: s, alg: alg, kid: kid, public: public}, nil
}

// ParseSigner reads a private key — a JWK, or a PEM block of type
// "PRIVATE KEY" (PKCS #8), "EC PRIVATE KEY" or "RSA PRIVATE KEY" — and
// returns its Signer. A JWK's kid is the Signer's unless opts names one;
// a JWK whose alg or use contradicts signing with it is refused.
func ParseSigner(data []byte, opts SignerOptions) (*Signer, error) {
	trimmed := bytes.TrimSpace(data)
	if bytes.HasPrefix(trimmed, []byte("{")) {
		var jwk jose.JSONWebKey
		if err := jwk.UnmarshalJSON(trimmed); err != nil {
			// The cause is left out: a JSON error quotes the bytes it
			// stopped at, which here are private key material.
			return nil, errors.New("cardsig: not a valid JWK")
		}
		key, ok := jwk.Key.(crypto.Signer)
		if !ok || jwk.IsPublic() {
			return nil, errors.New("cardsig: the JWK is not an asymmetric private key")
		}
		if jwk.Use != "" && jwk.Use != "sig" {
			return nil, fmt.Errorf("cardsig: the JWK's use is %q, not sig", jwk.Use)
		}
		if opts.KeyID == "" {
			opts.KeyID = jwk.KeyID
		}
		s, err := NewSigner(key, opts)
		if err != nil {
			return nil, err
		}
		if jwk.Algorithm != "" && jwk.Algorithm != string(s.alg) {
			return nil, fmt.Errorf("cardsig: the JWK's alg is %q, the key signs %s", jwk.Algorithm, s.alg)
		}
		return s, nil
	}
	for rest := trimmed; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			return nil, errors.New("cardsig: neither a JWK nor a PEM private key")
		}
		var key any
		var err error
		switch block.Type {
		case "PRIVATE KEY":
			key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
		case "EC PRIVATE KEY":
			key, err = x509.ParseECPrivateKey(block.Bytes)
		case "RSA PRIVATE KEY":
			key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
		default:
			continue // e.g. "EC PARAMETERS" before the key
		}
		if err != nil {
			// As for a JWK, the parser's words may describe the key's
			// bytes: only the block type is named.
			return nil, fmt.Errorf("cardsig: the PEM %s block is not a key this package reads", block.Type)
		}
		signer, ok := key.(crypto.Signer)
		if !ok {
			return nil, fmt.Errorf("cardsig: PEM %s holds a %T, not a signing key", block.Type, key)
		}
		return NewSigner(signer, opts)
	}
}

// algorithmOf is the JWS algorithm a public key signs with.
func algorithmOf(pub crypto.PublicKey) (jose.SignatureAlgorithm, error) {
	switch k := pub.(type) {
	case ed25519.PublicKey:
		return jose.EdDSA, nil
	case *ecdsa.PublicKey:
		switch k.Curve {
		case elliptic.P256():
			return jose.ES256, nil
		case elliptic.P384():
			return jose.ES384, nil
		case elliptic.P521():
			return jose.ES512, nil
		}
		return "", fmt.Errorf("cardsig: ECDSA curve %s is not one JWS signs with", k.Curve.Params().Name)
	case *rsa.PublicKey:
		if k.N.BitLen() < minRSABits {
			return "", fmt.Errorf("cardsig: RSA key of %d bits, want at least %d", k.N.BitLen(), minRSABits)
		}
		return jose.RS256, nil
	}
	return "", fmt.Errorf("cardsig: a %T key is not one this package signs with", pub)
}

// KeyID is the kid of the Signer's signatures.
func (s *Signer) KeyID() string { return s.kid }

// Algorithm is the alg of the Signer's signatures (EdDSA, ES256, …).
func (s *Signer) Algorithm() string { return string(s.alg) }

// PublicKey is the Signer's public key as a JWK (kid, alg, use "sig"),
// what a verifier's key set holds.
func (s *Signer) PublicKey() jose.JSONWebKey { return s.public }

// Sign returns the signature of card, an agent card's JSON: a JWS over
// [Canonicalize](card) with the payload detached (A2A 1.0 §8.4.2). The
// card's own signatures member, if any, is not signed; the caller adds
// the result to it.
func (s *Signer) Sign(card []byte) (wire.AgentCardSignature, error) {
	payload, err := Canonicalize(card)
	if err != nil {
		return wire.AgentCardSignature{}, err
	}
	jws, err := s.signer.Sign(payload)
	if err != nil {
		return wire.AgentCardSignature{}, fmt.Errorf("cardsig: sign: %w", err)
	}
	compact, err := jws.DetachedCompactSerialize()
	if err != nil {
		return wire.AgentCardSignature{}, fmt.Errorf("cardsig: sign: %w", err)
	}
	protected, signature, ok := strings.Cut(compact, "..")
	if !ok {
		return wire.AgentCardSignature{}, errors.New("cardsig: sign: the detached JWS is not protected..signature")
	}
	return wire.AgentCardSignature{Protected: protected, Signature: signature}, nil
}

// SignCard returns card's JSON with a signature of s added to its
// signatures: the bytes to serve. card is not changed.
func SignCard(card *wire.AgentCard, s *Signer) ([]byte, error) {
	unsigned, err := json.Marshal(card)
	if err != nil {
		return nil, fmt.Errorf("cardsig: encode the card: %w", err)
	}
	sig, err := s.Sign(unsigned)
	if err != nil {
		return nil, err
	}
	signed := *card
	signed.Signatures = append(slices.Clone(card.Signatures), sig)
	return json.Marshal(&signed)
}
