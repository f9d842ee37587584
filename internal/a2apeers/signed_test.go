package a2apeers

import (
	"bytes"
	"crypto/ed25519"
	"io"
	"net/http"
	"testing"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/wopinterop/wopinterop/a2a/cardsig"
)

// TestSignedCard: with Script.CardSigner both peers serve their card with
// one signature of that signer, which a cardsig.Verifier trusting its key
// verifies on the bytes as fetched, and Peer.Card and Peer.CardJSON are
// that signed card.
func TestSignedCard(t *testing.T) {
	_, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := cardsig.NewSigner(key, cardsig.SignerOptions{KeyID: "peer-key"})
	if err != nil {
		t.Fatal(err)
	}
	verifier, err := cardsig.NewVerifier(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{signer.PublicKey()}})
	if err != nil {
		t.Fatal(err)
	}
	for name, start := range map[string]func(testing.TB, Script) *Peer{"a2a-go": StartGo, "a2a-js": StartNode} {
		t.Run(name, func(t *testing.T) {
			p := start(t, Script{CardSigner: signer})
			res, err := http.Get(p.CardURL)
			if err != nil {
				t.Fatal(err)
			}
			served, err := io.ReadAll(res.Body)
			res.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(served, p.CardJSON) {
				t.Fatalf("served %s\nPeer.CardJSON %s", served, p.CardJSON)
			}
			kid, err := verifier.Verify(served)
			if err != nil || kid != "peer-key" {
				t.Fatalf("Verify = %q, %v", kid, err)
			}
			if p.Card == nil || len(p.Card.Signatures) != 1 {
				t.Fatalf("Peer.Card signatures: %+v", p.Card)
			}
			// The unsigned card of the same script does not verify.
			if _, err := verifier.Verify(start(t, Script{}).CardJSON); err == nil {
				t.Fatal("an unsigned card verified")
			}
		})
	}
}
