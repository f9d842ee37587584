package wopinterop_test

import (
	"crypto/ed25519"
	"encoding/json"
	"testing"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/wopinterop/wopinterop/a2a/cardsig"
)

// A2AConfig.CardSigner reaches the server: the public card and the
// extended card the Host mounts are signed with it (A2A 1.0 §8.4).
func TestA2ACardSigner(t *testing.T) {
	signer, err := cardsig.NewSigner(ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize)), cardsig.SignerOptions{KeyID: "host-key"})
	if err != nil {
		t.Fatal(err)
	}
	verifier, err := cardsig.NewVerifier(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{signer.PublicKey()}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := validConfig(newStore(t))
	cfg.A2A.CardSigner = signer
	srv := server(t, newHost(t, cfg))
	card := send(t, "GET", srv.URL+"/.well-known/agent-card.json", "", "")
	if kid, err := verifier.Verify(card.body); card.status != 200 || err != nil || kid != "host-key" {
		t.Fatalf("public card: HTTP %d, %q %v: %s", card.status, kid, err, card.body)
	}
	ext := send(t, "POST", srv.URL+"/a2a", acmeKey, `{"jsonrpc":"2.0","id":1,"method":"GetExtendedAgentCard"}`)
	var rpc struct{ Result json.RawMessage }
	if err := json.Unmarshal(ext.body, &rpc); err != nil || rpc.Result == nil {
		t.Fatalf("GetExtendedAgentCard: %s", ext.body)
	}
	if _, err := verifier.Verify(rpc.Result); err != nil {
		t.Fatalf("extended card: %v: %s", err, rpc.Result)
	}
}
