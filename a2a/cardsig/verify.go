package cardsig

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
	jose "github.com/go-jose/go-jose/v4"
	"github.com/gowebpki/jcs"
)

// accepted are the JWS algorithms a signature may use (RFC 7518 §3.1):
// the asymmetric ones. none and the HMACs are not among them — an HMAC
// verified with a public key as its secret is the classic forgery (RFC
// 8725 §2.1).
var accepted = map[jose.SignatureAlgorithm]bool{
	jose.EdDSA: true,
	jose.ES256: true, jose.ES384: true, jose.ES512: true,
	jose.RS256: true, jose.RS384: true, jose.RS512: true,
	jose.PS256: true, jose.PS384: true, jose.PS512: true,
}

// maxSignatures is the most signatures a card may carry: enough for key
// rotation (A2A 1.0 §8.4.3), few enough that a card stuffed with
// signatures under a trusted kid cannot make a verifier spend long.
const maxSignatures = 16

// Verifier verifies agent cards' signatures against a fixed set of
// trusted public keys (A2A 1.0 §8.4.3). It never fetches a key: a jku or
// an embedded key in a signature's header is ignored, since whoever can
// forge a card can point either at a key of their own. A Verifier is
// safe for concurrent use.
type Verifier struct {
	keys map[string]trustedKey
}

// trustedKey is a public key of the set: an ed25519.PublicKey, an
// *ecdsa.PublicKey or an *rsa.PublicKey.
type trustedKey struct {
	key any
	// alg is the key's own alg, when its JWK names one.
	alg jose.SignatureAlgorithm
}

// NewVerifier returns a Verifier that trusts keys. Each key needs a kid,
// unique in the set; a private key is trusted by its public half. A
// symmetric key, a key whose use is not "sig", an RSA key under 2048 bits
// and a key type JWS does not sign with are refused.
func NewVerifier(keys jose.JSONWebKeySet) (*Verifier, error) {
	if len(keys.Keys) == 0 {
		return nil, errors.New("cardsig: the key set is empty")
	}
	v := &Verifier{keys: make(map[string]trustedKey, len(keys.Keys))}
	for i, k := range keys.Keys {
		switch {
		case k.KeyID == "":
			return nil, fmt.Errorf("cardsig: key %d has no kid", i)
		case v.keys[k.KeyID].key != nil:
			return nil, fmt.Errorf("cardsig: kid %q names two keys", k.KeyID)
		case k.Use != "" && k.Use != "sig":
			return nil, fmt.Errorf("cardsig: key %q is for %q, not sig", k.KeyID, k.Use)
		}
		if _, symmetric := k.Key.([]byte); symmetric {
			return nil, fmt.Errorf("cardsig: key %q is symmetric: a card's signature is verified with a public key", k.KeyID)
		}
		pub := k.Public()
		if pub.Key == nil || !pub.Valid() {
			return nil, fmt.Errorf("cardsig: key %q is not a valid key", k.KeyID)
		}
		if _, err := algorithmOf(pub.Key); err != nil {
			return nil, fmt.Errorf("cardsig: key %q: %w", k.KeyID, err)
		}
		alg := jose.SignatureAlgorithm(k.Algorithm)
		if alg != "" && !fits(alg, pub.Key) {
			return nil, fmt.Errorf("cardsig: key %q: its alg %s does not fit the key", k.KeyID, alg)
		}
		v.keys[k.KeyID] = trustedKey{key: pub.Key, alg: alg}
	}
	return v, nil
}

// VerifyCard verifies raw, an agent card's JSON exactly as fetched: nil
// means at least one of its signatures verified with a trusted key over
// its canonical form. card is not consulted: what is verified is raw,
// which card must have been decoded from. It implements the card check of
// a delegation's admission; ctx is unused, since no key is fetched.
func (v *Verifier) VerifyCard(_ context.Context, raw []byte, _ *wire.AgentCard) error {
	_, err := v.Verify(raw)
	return err
}

// Verify verifies card, an agent card's JSON exactly as received, and
// returns the kid of the first signature that verified with a trusted
// key. Every error is an [*Error].
func (v *Verifier) Verify(card []byte) (kid string, err error) {
	obj, err := decodeCard(card)
	if err != nil {
		return "", err
	}
	entries, err := signaturesOf(obj)
	if err != nil {
		return "", err
	}
	payload, err := payloadOf(obj)
	if err != nil {
		return "", &Error{Reason: ReasonMalformedCard, Index: -1, Err: err}
	}
	var worst *Error
	for i, e := range entries {
		kid, err := v.verifyOne(e, payload)
		if err == nil {
			return kid, nil
		}
		err.Index = i
		if worst == nil || err.Reason.rank() > worst.Reason.rank() {
			worst = err
		}
	}
	return "", worst
}

// entry is one element of signatures[], its headers decoded.
type entry struct {
	protected, signature string
	header               map[string]json.RawMessage // the protected header
	unprotected          map[string]json.RawMessage
	kid                  string
}

// signaturesOf reads the card's signatures member (A2A 1.0 §4.4.7).
func signaturesOf(obj map[string]any) ([]any, error) {
	v, ok := obj[signaturesMember]
	if !ok || v == nil {
		return nil, cardError(ReasonUnsigned, "no signatures member")
	}
	list, ok := v.([]any)
	if !ok {
		return nil, cardError(ReasonMalformedCard, "signatures is %s, not an array", kindOf(v))
	}
	if len(list) == 0 {
		return nil, cardError(ReasonUnsigned, "signatures is empty")
	}
	if len(list) > maxSignatures {
		return nil, cardError(ReasonMalformedCard, "%d signatures, more than %d", len(list), maxSignatures)
	}
	return list, nil
}

// verifyOne verifies one element of signatures[] over payload and
// returns its kid.
func (v *Verifier) verifyOne(elem any, payload []byte) (string, *Error) {
	e, bad := parseEntry(elem)
	if bad != nil {
		return "", bad
	}
	fail := func(r Reason, err error, format string, args ...any) *Error {
		return &Error{Reason: r, KeyID: e.kid, Detail: fmt.Sprintf(format, args...), Err: err}
	}
	alg := jose.SignatureAlgorithm(stringMember(e.header, "alg"))
	key, ok := v.keys[e.kid]
	if !ok {
		return "", fail(ReasonUnknownKey, nil, "no trusted key has this kid")
	}
	if key.alg != "" && key.alg != alg || !fits(alg, key.key) {
		return "", fail(ReasonAlgorithmRefused, nil, "alg %s does not fit the trusted key", alg)
	}
	// The detached compact form carries exactly what is signed: the
	// protected header and the signature; the unprotected header, already
	// checked, takes no part in verification.
	jws, err := jose.ParseDetached(e.protected+".."+e.signature, payload, []jose.SignatureAlgorithm{alg})
	if err != nil {
		return "", fail(ReasonMalformedSignature, err, "not a JWS")
	}
	if _, err := jws.Verify(key.key); err != nil {
		return "", fail(ReasonMismatch, nil, "the signature does not verify over the card's canonical form")
	}
	return e.kid, nil
}

// parseEntry checks one element of signatures[]: protected is unpadded
// base64url (RFC 7515 §2) of a JSON object without duplicate members
// naming an accepted alg and a kid, both strings; header, if any, is an
// object sharing no member with it (RFC 7515 §7.2.1); neither names an
// extension (crit, b64); signature is unpadded base64url.
func parseEntry(elem any) (*entry, *Error) {
	e := &entry{}
	fail := func(r Reason, format string, args ...any) (*entry, *Error) {
		return nil, &Error{Reason: r, KeyID: e.kid, Detail: fmt.Sprintf(format, args...)}
	}
	obj, ok := elem.(map[string]any)
	if !ok {
		return fail(ReasonMalformedSignature, "a signature is a JSON object, not %s", kindOf(elem))
	}
	if e.protected, ok = obj["protected"].(string); !ok || e.protected == "" {
		return fail(ReasonMalformedSignature, "protected is not a non-empty string")
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(e.protected)
	if err != nil {
		return fail(ReasonMalformedSignature, "protected is not unpadded base64url")
	}
	if e.header, err = headerObject(raw); err != nil {
		return fail(ReasonMalformedSignature, "the protected header is not a JSON object: %v", err)
	}
	e.kid = stringMember(e.header, "kid")
	// alg before the signature, so that alg none, whose signature is
	// empty (RFC 7518 §3.6), is refused as what it is.
	alg := stringMember(e.header, "alg")
	switch {
	case alg == "":
		return fail(ReasonMalformedSignature, "the protected header has no alg string")
	case !accepted[jose.SignatureAlgorithm(alg)]:
		return fail(ReasonAlgorithmRefused, "alg %q is not an asymmetric JWS algorithm", alg)
	case e.kid == "":
		return fail(ReasonMalformedSignature, "the protected header has no kid string")
	}
	if h, ok := obj["header"]; ok {
		b, _ := json.Marshal(h) // a decoded JSON value always encodes
		if e.unprotected, err = headerObject(b); err != nil {
			return fail(ReasonMalformedSignature, "header is not a JSON object")
		}
	}
	for _, name := range []string{"crit", "b64"} {
		_, inProtected := e.header[name]
		_, inUnprotected := e.unprotected[name]
		if inProtected || inUnprotected {
			return fail(ReasonCriticalHeader, "the header names %s: no JWS extension is understood here", name)
		}
	}
	for name := range e.unprotected {
		if _, dup := e.header[name]; dup {
			return fail(ReasonMalformedSignature, "%s is in both the protected and the unprotected header", name)
		}
	}
	if e.signature, ok = obj["signature"].(string); !ok || e.signature == "" {
		return fail(ReasonMalformedSignature, "signature is not a non-empty string")
	}
	if _, err := base64.RawURLEncoding.Strict().DecodeString(e.signature); err != nil {
		return fail(ReasonMalformedSignature, "signature is not unpadded base64url")
	}
	return e, nil
}

// headerObject decodes a JOSE header: a JSON object whose member names
// are unique (RFC 7515 §4; jcs refuses duplicates).
func headerObject(b []byte) (map[string]json.RawMessage, error) {
	strict, err := jcs.Transform(b)
	if err != nil {
		return nil, err
	}
	var h map[string]json.RawMessage
	if err := json.Unmarshal(strict, &h); err != nil {
		return nil, err
	}
	if h == nil {
		return nil, errors.New("null")
	}
	return h, nil
}

// stringMember is h[name] when it is a JSON string, else "".
func stringMember(h map[string]json.RawMessage, name string) string {
	var s string
	if raw, ok := h[name]; !ok || json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// fits reports whether key verifies signatures of alg (RFC 7518 §3.1,
// RFC 8037 §3.1).
func fits(alg jose.SignatureAlgorithm, key any) bool {
	switch k := key.(type) {
	case ed25519.PublicKey:
		return alg == jose.EdDSA
	case *ecdsa.PublicKey:
		return alg == jose.ES256 && k.Curve == elliptic.P256() ||
			alg == jose.ES384 && k.Curve == elliptic.P384() ||
			alg == jose.ES512 && k.Curve == elliptic.P521()
	case *rsa.PublicKey:
		switch alg {
		case jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512:
			return k.N.BitLen() >= minRSABits
		}
	}
	return false
}
