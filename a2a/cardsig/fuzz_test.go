package cardsig_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/wopinterop/wopinterop/a2a/cardsig"
)

// validRefusal fails t unless err is an *Error with a known reason and
// an index in range.
func validRefusal(t *testing.T, err error, signatures int) {
	t.Helper()
	var e *cardsig.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not a *cardsig.Error", err, err)
	}
	switch e.Reason {
	case cardsig.ReasonUnsigned, cardsig.ReasonMalformedCard, cardsig.ReasonMalformedSignature, cardsig.ReasonAlgorithmRefused,
		cardsig.ReasonCriticalHeader, cardsig.ReasonUnknownKey, cardsig.ReasonMismatch:
	default:
		t.Fatalf("unknown reason %q", e.Reason)
	}
	if e.Index < -1 || signatures >= 0 && e.Index >= signatures {
		t.Fatalf("index %d", e.Index)
	}
}

// FuzzVerify feeds arbitrary bytes to the verifier: it never panics,
// every refusal is an *Error, and it accepts nothing but the card that
// was signed (its canonical form, however the bytes are written).
func FuzzVerify(f *testing.F) {
	s := edSigner(f)
	v := verifierOf(f, s)
	card := fixtureCard(f)
	body := signed(f, s, card)
	want := canonical(f, card)
	f.Add(body)
	f.Add(card)
	f.Add(withMember(card, "signatures", []byte(`[{},null,"x",{"protected":"e30","signature":"AA","header":{"kid":1}}]`)))
	f.Add([]byte(`{"signatures":[{"protected":"eyJhbGciOiJub25lIiwia2lkIjoiZml4dHVyZS1lZDI1NTE5In0","signature":""}]}`))
	f.Add([]byte(`[1,2,{"a":"\ud800"}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		kid, err := v.Verify(data)
		if err != nil {
			validRefusal(t, err, -1)
			return
		}
		if kid != edKID {
			t.Fatalf("accepted under kid %q", kid)
		}
		got, err := cardsig.Canonicalize(data)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("accepted a card other than the one signed: %s", got)
		}
	})
}

// FuzzVerifySignature fuzzes one signature entry of the fixture card —
// its protected header, signature and unprotected header — where a
// whole-card fuzzer rarely reaches. Only the entry that was signed
// verifies.
func FuzzVerifySignature(f *testing.F) {
	s := edSigner(f)
	v := verifierOf(f, s)
	card := fixtureCard(f)
	good, err := s.Sign(card)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good.Protected, good.Signature, []byte(nil))
	f.Add(good.Protected, good.Signature, []byte(`{"x5u":"https://evil.example"}`))
	f.Add(b64([]byte(`{"alg":"EdDSA","kid":"fixture-ed25519","crit":["b64"],"b64":false}`)), good.Signature, []byte(`{}`))
	f.Add(b64([]byte(`{"alg":"HS256","kid":"fixture-ed25519"}`)), "AAAA", []byte(`{"kid":"x"}`))
	f.Add(b64([]byte(`{"alg":"EdDSA","kid":"fixture-ed25519","jwk":{"kty":"OKP"}}`)), good.Signature, []byte(`null`))
	f.Fuzz(func(t *testing.T, protected, signature string, header []byte) {
		entry := map[string]any{"protected": protected, "signature": signature}
		if json.Valid(header) {
			entry["header"] = json.RawMessage(header)
		}
		list, err := json.Marshal([]any{entry})
		if err != nil {
			return // a string that is not UTF-8 cannot be a member
		}
		_, err = v.Verify(withMember(card, "signatures", list))
		if err != nil {
			validRefusal(t, err, 1)
			return
		}
		if protected != good.Protected || signature != good.Signature {
			t.Fatalf("accepted protected %q signature %q", protected, signature)
		}
	})
}
