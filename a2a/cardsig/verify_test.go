package cardsig_test

import (
	"bytes"
	"crypto"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"strings"
	"testing"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
	jose "github.com/go-jose/go-jose/v4"

	"github.com/wopinterop/wopinterop/a2a/cardsig"
)

// One changed byte anywhere in the card but its signatures — a letter of
// a value, of a member name, a digit, a quote, a brace — and the card is
// refused: as not a card at all, or as not the card that was signed. The
// fixture's one member with an empty value goes first: to A2A 1.0 §8.4.1
// it is absent whatever its name (TestTamperedMembersRefused).
func TestTamperedByteRefused(t *testing.T) {
	card := bytes.Replace(fixtureCard(t), []byte(`"description":"",`), nil, 1)
	s := edSigner(t)
	body := signed(t, s, card)
	v := verifierOf(t, s)
	if _, err := v.Verify(body); err != nil {
		t.Fatal(err)
	}
	// card is a prefix of body but for its closing brace.
	for i := range len(card) - 1 {
		tampered := bytes.Clone(body)
		tampered[i] = flip(tampered[i])
		_, err := v.Verify(tampered)
		var e *cardsig.Error
		if err == nil || !errorsAs(err, &e) || e.Reason != cardsig.ReasonMismatch && e.Reason != cardsig.ReasonMalformedCard {
			t.Fatalf("byte %d %q→%q: %v\n%s", i, body[i], tampered[i], err, tampered)
		}
	}
}

// flip changes b to another byte of its kind, so most changes still
// parse: a letter to the next letter, a digit to the next digit.
func flip(b byte) byte {
	switch {
	case b == 'z' || b == 'Z':
		return b - 1
	case b == '9':
		return '8'
	case b >= 'a' && b < 'z', b >= 'A' && b < 'Z', b >= '0' && b < '9':
		return b + 1
	}
	return b ^ 0x01
}

func errorsAs(err error, e **cardsig.Error) bool {
	var ok bool
	*e, ok = err.(*cardsig.Error)
	return ok
}

// Members added, removed or renamed anywhere — an unknown one included,
// since what is verified is the card as received — are refused as a
// mismatch. A member added with a default value (an empty string, array
// or object, null) is not a change: A2A 1.0 §8.4.1 reads it as absent.
func TestTamperedMembersRefused(t *testing.T) {
	card := fixtureCard(t)
	s := edSigner(t)
	sig, err := s.Sign(card)
	if err != nil {
		t.Fatal(err)
	}
	v := verifierOf(t, s)
	replace := func(old, new string) []byte {
		if !bytes.Contains(card, []byte(old)) {
			t.Fatalf("the fixture has no %s", old)
		}
		return bytes.Replace(card, []byte(old), []byte(new), 1)
	}
	mismatch := cardsig.Error{Reason: cardsig.ReasonMismatch, Index: 0, KeyID: edKID, Detail: "the signature does not verify over the card's canonical form"}
	for name, tampered := range map[string][]byte{
		"top-level member added":        withMember(card, "iconUrl", []byte(`"https://evil.example/icon.png"`)),
		"unknown member added":          withMember(card, "x-extra", []byte(`true`)),
		"optional false added":          replace(`"streaming":true,`, `"streaming":true,"extendedAgentCard":false,`),
		"skill member added":            replace(`"id":"route",`, `"id":"route","outputModes":["text/html"],`),
		"interface added":               replace(`"supportedInterfaces":[`, `"supportedInterfaces":[{"url":"https://evil.example/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"},`),
		"unknown member removed":        replace(`,"x-vendor":{"tier":"gold"}`, ``),
		"unknown member changed":        replace(`"gold"`, `"platinum"`),
		"scope removed":                 replace(`"oauth":["routes.read"]`, `"oauth":[]`),
		"member renamed":                replace(`"organization"`, `"org"`),
		"elements reordered":            replace(`["text/plain","application/json"]`, `["application/json","text/plain"]`),
		"number changed":                replace(`0.25`, `0.5`),
		"plain false became true":       replace(`"required":false`, `"required":true`),
		"plain false elsewhere dropped": replace(`,"strict":false`, ``),
	} {
		_, err := v.Verify(withSignatures(t, tampered, sig))
		t.Run(name, func(t *testing.T) { wantRefusal(t, err, mismatch) })
	}
	for name, same := range map[string][]byte{
		"empty string added":       withMember(card, "iconUrl", []byte(`""`)),
		"null added":               withMember(card, "documentationUrl", []byte(`null`)),
		"empty list added":         replace(`"id":"route",`, `"id":"route","outputModes":[],`),
		"empty member renamed":     replace(`"description":"",`, `"eescription":"",`),
		"plain false removed":      replace(`"required":false,`, ``),
		"whitespace added":         replace(`"version":"1.2.0"`, "\n  \"version\" :\t\"1.2.0\"  "),
		"members reordered":        replace(`"name":"Route planner","provider"`, `"provider"`),
		"number written as 2.5e-1": replace(`0.25`, `2.5e-1`),
	} {
		if name == "members reordered" {
			same = withMember(same, "name", []byte(`"Route planner"`))
		}
		if _, err := v.Verify(withSignatures(t, same, sig)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// The signature removed, the card is unsigned; a card never signed, or
// with signatures null or empty, is refused alike (A2A 1.0 §8.4.3: a
// verifier that requires a signature fails closed).
func TestUnsignedRefused(t *testing.T) {
	card := fixtureCard(t)
	v := verifierOf(t, edSigner(t))
	for _, tc := range []struct {
		name, detail string
		body         []byte
	}{
		{"never signed", "no signatures member", card},
		{"signatures null", "no signatures member", withMember(card, "signatures", []byte(`null`))},
		{"signature removed", "signatures is empty", withMember(card, "signatures", []byte(`[]`))},
	} {
		_, err := v.Verify(tc.body)
		t.Run(tc.name, func(t *testing.T) {
			wantRefusal(t, err, cardsig.Error{Reason: cardsig.ReasonUnsigned, Index: -1, Detail: tc.detail})
		})
	}
}

// Each way a signature is refused, with the whole error.
func TestSignatureRefusals(t *testing.T) {
	card := fixtureCard(t)
	payload := canonical(t, card)
	ed := edSigner(t)
	v := verifierOf(t, ed, ecSigner(t))
	edPub := edKey().Public().(ed25519.PublicKey)
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: must(x509.MarshalPKIXPublicKey(edPub))})
	hs256 := func(secret []byte) func([]byte) []byte {
		return func(input []byte) []byte {
			m := hmac.New(sha256.New, secret)
			m.Write(input)
			return m.Sum(nil)
		}
	}
	edSign := func(input []byte) []byte { return ed25519.Sign(edKey(), input) }
	none := func([]byte) []byte { return nil }
	header := func(kv ...any) map[string]any {
		h := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			h[kv[i].(string)] = kv[i+1]
		}
		return h
	}
	// A key under the fixture's kid that the verifier does not trust.
	_, other, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	impostor := newSigner(t, other, cardsig.SignerOptions{KeyID: edKID})
	goodSig, err := ed.Sign(card)
	if err != nil {
		t.Fatal(err)
	}
	ref := func(r cardsig.Reason, kid, detail string) cardsig.Error {
		return cardsig.Error{Reason: r, Index: 0, KeyID: kid, Detail: detail}
	}
	cases := []struct {
		name string
		sig  any
		want cardsig.Error
	}{
		{"wrong key under a trusted kid", must(impostor.Sign(card)),
			ref(cardsig.ReasonMismatch, edKID, "the signature does not verify over the card's canonical form")},
		{"unknown kid", must(newSigner(t, other, cardsig.SignerOptions{KeyID: "stranger"}).Sign(card)),
			ref(cardsig.ReasonUnknownKey, "stranger", "no trusted key has this kid")},
		{"alg none", crafted(t, header("alg", "none", "kid", edKID, "typ", "JOSE"), payload, none),
			ref(cardsig.ReasonAlgorithmRefused, edKID, `alg "none" is not an asymmetric JWS algorithm`)},
		{"HS256 keyed with the public key", crafted(t, header("alg", "HS256", "kid", edKID, "typ", "JOSE"), payload, hs256(pubPEM)),
			ref(cardsig.ReasonAlgorithmRefused, edKID, `alg "HS256" is not an asymmetric JWS algorithm`)},
		{"HS256 keyed with the raw public key", crafted(t, header("alg", "HS256", "kid", edKID), payload, hs256(edPub)),
			ref(cardsig.ReasonAlgorithmRefused, edKID, `alg "HS256" is not an asymmetric JWS algorithm`)},
		{"unknown alg", crafted(t, header("alg", "ES256K", "kid", edKID), payload, edSign),
			ref(cardsig.ReasonAlgorithmRefused, edKID, `alg "ES256K" is not an asymmetric JWS algorithm`)},
		{"alg of another key type", crafted(t, header("alg", "ES256", "kid", edKID), payload, edSign),
			ref(cardsig.ReasonAlgorithmRefused, edKID, "alg ES256 does not fit the trusted key")},
		{"crit", crafted(t, header("alg", "EdDSA", "kid", edKID, "crit", []string{"exp"}, "exp", 1), payload, edSign),
			ref(cardsig.ReasonCriticalHeader, edKID, "the header names crit: no JWS extension is understood here")},
		{"b64 false (RFC 7797)", crafted(t, header("alg", "EdDSA", "kid", edKID, "b64", false), payload, edSign),
			ref(cardsig.ReasonCriticalHeader, edKID, "the header names b64: no JWS extension is understood here")},
		{"crit in the unprotected header", wire.AgentCardSignature{Protected: goodSig.Protected, Signature: goodSig.Signature, Header: map[string]any{"crit": []string{"x"}}},
			ref(cardsig.ReasonCriticalHeader, edKID, "the header names crit: no JWS extension is understood here")},
		{"kid in both headers", wire.AgentCardSignature{Protected: goodSig.Protected, Signature: goodSig.Signature, Header: map[string]any{"kid": "other"}},
			ref(cardsig.ReasonMalformedSignature, edKID, "kid is in both the protected and the unprotected header")},
		{"unprotected header not an object", map[string]any{"protected": goodSig.Protected, "signature": goodSig.Signature, "header": "x"},
			ref(cardsig.ReasonMalformedSignature, edKID, "header is not a JSON object")},
		{"no kid", crafted(t, header("alg", "EdDSA"), payload, edSign),
			ref(cardsig.ReasonMalformedSignature, "", "the protected header has no kid string")},
		{"kid not a string", crafted(t, header("alg", "EdDSA", "kid", 7), payload, edSign),
			ref(cardsig.ReasonMalformedSignature, "", "the protected header has no kid string")},
		{"no alg", crafted(t, header("kid", edKID), payload, edSign),
			ref(cardsig.ReasonMalformedSignature, edKID, "the protected header has no alg string")},
		{"protected padded", map[string]any{"protected": goodSig.Protected + "=", "signature": goodSig.Signature},
			ref(cardsig.ReasonMalformedSignature, "", "protected is not unpadded base64url")},
		{"protected in standard base64", map[string]any{"protected": "eyJhbGciOiJFZERTQSJ9+/", "signature": goodSig.Signature},
			ref(cardsig.ReasonMalformedSignature, "", "protected is not unpadded base64url")},
		{"protected header an array", map[string]any{"protected": b64([]byte(`["alg"]`)), "signature": goodSig.Signature},
			ref(cardsig.ReasonMalformedSignature, "", "the protected header is not a JSON object: json: cannot unmarshal array into Go value of type map[string]json.RawMessage")},
		{"protected header with a duplicate member", map[string]any{"protected": b64([]byte(`{"alg":"EdDSA","kid":"` + edKID + `","kid":"stranger"}`)), "signature": goodSig.Signature},
			ref(cardsig.ReasonMalformedSignature, "", `the protected header is not a JSON object: Duplicate key: "kid"`)},
		{"protected missing", map[string]any{"signature": goodSig.Signature},
			ref(cardsig.ReasonMalformedSignature, "", "protected is not a non-empty string")},
		{"signature missing", map[string]any{"protected": goodSig.Protected},
			ref(cardsig.ReasonMalformedSignature, edKID, "signature is not a non-empty string")},
		{"signature padded", map[string]any{"protected": goodSig.Protected, "signature": goodSig.Signature + "=="},
			ref(cardsig.ReasonMalformedSignature, edKID, "signature is not unpadded base64url")},
		{"signature not a string", map[string]any{"protected": goodSig.Protected, "signature": 1},
			ref(cardsig.ReasonMalformedSignature, edKID, "signature is not a non-empty string")},
		{"signature truncated", map[string]any{"protected": goodSig.Protected, "signature": goodSig.Signature[:20]},
			ref(cardsig.ReasonMismatch, edKID, "the signature does not verify over the card's canonical form")},
		{"entry not an object", "eyJhbGciOiJFZERTQSJ9..sig",
			ref(cardsig.ReasonMalformedSignature, "", "a signature is a JSON object, not a string")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := v.Verify(withSignatures(t, card, tc.sig))
			wantRefusal(t, err, tc.want)
			if !strings.HasPrefix(err.Error(), "cardsig: "+string(tc.want.Reason)+" (signature 0") {
				t.Errorf("message %q", err)
			}
		})
	}
}

// A card that is not one JSON object in UTF-8 without duplicate members
// is refused before any signature is read: encoding/json would take the
// last of two names, so the verified card and the card a client reads
// could differ.
func TestMalformedCardRefused(t *testing.T) {
	s := edSigner(t)
	v := verifierOf(t, s)
	body := signed(t, s, fixtureCard(t))
	dupName := append(bytes.Clone(body[:len(body)-1]), `,"name":"Evil planner"}`...)
	for _, tc := range []struct {
		name string
		body []byte
		want cardsig.Error
	}{
		{"duplicate member after signing", dupName, cardsig.Error{Reason: cardsig.ReasonMalformedCard, Index: -1, Detail: "not canonicalizable JSON (RFC 8785)", Err: errSome}},
		{"invalid UTF-8", bytes.Replace(body, []byte("Route planner"), []byte("Route \xff planner"), 1), cardsig.Error{Reason: cardsig.ReasonMalformedCard, Index: -1, Detail: "not canonicalizable JSON (RFC 8785)", Err: errSome}},
		{"trailing bytes", append(bytes.Clone(body), `{}`...), cardsig.Error{Reason: cardsig.ReasonMalformedCard, Index: -1, Detail: "not canonicalizable JSON (RFC 8785)", Err: errSome}},
		{"not JSON", []byte("<html>"), cardsig.Error{Reason: cardsig.ReasonMalformedCard, Index: -1, Detail: "not canonicalizable JSON (RFC 8785)", Err: errSome}},
		{"empty", []byte{}, cardsig.Error{Reason: cardsig.ReasonMalformedCard, Index: -1, Detail: "not canonicalizable JSON (RFC 8785)", Err: errSome}},
		{"an array", []byte(`[{"name":"x"}]`), cardsig.Error{Reason: cardsig.ReasonMalformedCard, Index: -1, Detail: "a card is a JSON object, not an array"}},
		{"signatures an object", withMember(fixtureCard(t), "signatures", []byte(`{"protected":"e30"}`)), cardsig.Error{Reason: cardsig.ReasonMalformedCard, Index: -1, Detail: "signatures is an object, not an array"}},
		{"seventeen signatures", withMember(fixtureCard(t), "signatures", []byte(`[`+strings.Repeat(`{},`, 16)+`{}]`)), cardsig.Error{Reason: cardsig.ReasonMalformedCard, Index: -1, Detail: "17 signatures, more than 16"}},
	} {
		_, err := v.Verify(tc.body)
		t.Run(tc.name, func(t *testing.T) { wantRefusal(t, err, tc.want) })
	}
}

// Several signatures (key rotation, A2A 1.0 §8.4.3): one that verifies
// is enough, wherever it is; when none does, the error is about the one
// that got furthest — a mismatch under a trusted key before a refused
// header, before an unknown kid — and says which.
func TestSeveralSignatures(t *testing.T) {
	card := fixtureCard(t)
	ed, ec := edSigner(t), ecSigner(t)
	v := verifierOf(t, ec)
	unknown := must(ed.Sign(card))
	good := must(ec.Sign(card))
	if kid, err := v.Verify(withSignatures(t, card, unknown, map[string]any{"protected": "!"}, good)); err != nil || kid != ecKID {
		t.Fatalf("%q %v", kid, err)
	}
	tampered := bytes.Replace(card, []byte("Route planner"), []byte("Route plotter"), 1)
	_, err := v.Verify(withSignatures(t, tampered, unknown, map[string]any{"protected": "!"}, good, unknown))
	wantRefusal(t, err, cardsig.Error{Reason: cardsig.ReasonMismatch, Index: 2, KeyID: ecKID, Detail: "the signature does not verify over the card's canonical form"})
	_, err = v.Verify(withSignatures(t, card, unknown, map[string]any{"protected": "!"}))
	wantRefusal(t, err, cardsig.Error{Reason: cardsig.ReasonMalformedSignature, Index: 1, Detail: "protected is not unpadded base64url"})
	_, err = v.Verify(withSignatures(t, card, unknown))
	wantRefusal(t, err, cardsig.Error{Reason: cardsig.ReasonUnknownKey, Index: 0, KeyID: edKID, Detail: "no trusted key has this kid"})
}

// The key set trusts only keys it can use safely and unambiguously.
func TestNewVerifierRefusals(t *testing.T) {
	edPub := edKey().Public()
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	jwk := func(key any, kid, alg, use string) jose.JSONWebKey {
		return jose.JSONWebKey{Key: key, KeyID: kid, Algorithm: alg, Use: use}
	}
	for _, tc := range []struct {
		name string
		keys []jose.JSONWebKey
		want string
	}{
		{"empty", nil, "cardsig: the key set is empty"},
		{"no kid", []jose.JSONWebKey{jwk(edPub, "", "", "")}, "cardsig: key 0 has no kid"},
		{"kid twice", []jose.JSONWebKey{jwk(edPub, "a", "", ""), jwk(ecKey().Public(), "a", "", "")}, `cardsig: kid "a" names two keys`},
		{"for encryption", []jose.JSONWebKey{jwk(edPub, "a", "", "enc")}, `cardsig: key "a" is for "enc", not sig`},
		{"symmetric", []jose.JSONWebKey{jwk([]byte("0123456789abcdef0123456789abcdef"), "a", "HS256", "")}, `cardsig: key "a" is symmetric: a card's signature is verified with a public key`},
		{"RSA-1024", []jose.JSONWebKey{jwk(&small.PublicKey, "a", "", "")}, `cardsig: key "a": cardsig: RSA key of 1024 bits, want at least 2048`},
		{"alg not fitting", []jose.JSONWebKey{jwk(edPub, "a", "ES256", "")}, `cardsig: key "a": its alg ES256 does not fit the key`},
		{"no key", []jose.JSONWebKey{{KeyID: "a"}}, `cardsig: key "a" is not a valid key`},
	} {
		if _, err := cardsig.NewVerifier(jose.JSONWebKeySet{Keys: tc.keys}); err == nil || err.Error() != tc.want {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	// A private key is trusted by its public half.
	v, err := cardsig.NewVerifier(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{jwk(ecKey(), ecKID, "ES256", "sig")}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(signed(t, ecSigner(t), fixtureCard(t))); err != nil {
		t.Fatal(err)
	}
}

// A JWK's alg pins its key to that algorithm (RFC 7517 §4.4): an RSA key
// published for PS256 does not verify an RS256 signature.
func TestKeyAlgPinsAlgorithm(t *testing.T) {
	card := fixtureCard(t)
	s := newSigner(t, rsaKey(), cardsig.SignerOptions{KeyID: "rsa"})
	pinned := s.PublicKey()
	pinned.Algorithm = "PS256"
	v, err := cardsig.NewVerifier(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{pinned}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = v.Verify(signed(t, s, card))
	wantRefusal(t, err, cardsig.Error{Reason: cardsig.ReasonAlgorithmRefused, Index: 0, KeyID: "rsa", Detail: "alg RS256 does not fit the trusted key"})
	// A PS256 signature made by hand with the same key verifies.
	sig := crafted(t, map[string]any{"alg": "PS256", "kid": "rsa", "typ": "JOSE"}, canonical(t, card), func(input []byte) []byte {
		sum := sha256.Sum256(input)
		out, err := rsa.SignPSS(rand.Reader, rsaKey(), crypto.SHA256, sum[:], &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash})
		if err != nil {
			t.Fatal(err)
		}
		return out
	})
	if _, err := v.Verify(withSignatures(t, card, sig)); err != nil {
		t.Fatal(err)
	}
}

// VerifyCard verifies the bytes it is given, whatever the decoded card
// says: a struct whose signatures were edited proves nothing.
func TestVerifyCardReadsRawBytes(t *testing.T) {
	s := edSigner(t)
	v := verifierOf(t, s)
	body := signed(t, s, fixtureCard(t))
	var card wire.AgentCard
	if err := json.Unmarshal(body, &card); err != nil {
		t.Fatal(err)
	}
	if err := v.VerifyCard(t.Context(), body, nil); err != nil {
		t.Fatal(err)
	}
	card.Signatures = nil
	if err := v.VerifyCard(t.Context(), body, &card); err != nil {
		t.Fatalf("the decoded card's signatures were consulted: %v", err)
	}
	unsigned := fixtureCard(t)
	card.Signatures = []wire.AgentCardSignature{must(s.Sign(unsigned))}
	err := v.VerifyCard(t.Context(), unsigned, &card)
	wantRefusal(t, err, cardsig.Error{Reason: cardsig.ReasonUnsigned, Index: -1, Detail: "no signatures member"})
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
