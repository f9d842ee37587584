package cardsig_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
	jose "github.com/go-jose/go-jose/v4"

	"github.com/wopinterop/wopinterop/a2a/cardsig"
)

// An agent signs its card; a consumer that trusts the agent's key
// verifies the bytes it fetched, and refuses them once they change.
func Example() {
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		panic(err)
	}
	signer, err := cardsig.NewSigner(key, cardsig.SignerOptions{KeyID: "agent-2026"})
	if err != nil {
		panic(err)
	}
	body, err := cardsig.SignCard(&wire.AgentCard{
		Name: "Route planner", Description: "Plans routes.", Version: "1.0.0",
		SupportedInterfaces: []*wire.AgentInterface{{URL: "https://agent.example/a2a", ProtocolBinding: wire.TransportProtocolJSONRPC, ProtocolVersion: "1.0"}},
		DefaultInputModes:   []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []wire.AgentSkill{{ID: "route", Name: "Route", Description: "Finds a route.", Tags: []string{"maps"}}},
	}, signer)
	if err != nil {
		panic(err)
	}

	// The consumer's key set holds the agent's public key, obtained out
	// of band (A2A 1.0 §8.4.3).
	verifier, err := cardsig.NewVerifier(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{signer.PublicKey()}})
	if err != nil {
		panic(err)
	}
	kid, err := verifier.Verify(body)
	fmt.Println("verified by", kid, err)

	var card map[string]any
	if err := json.Unmarshal(body, &card); err != nil {
		panic(err)
	}
	card["name"] = "Route planner (unofficial)"
	tampered, err := json.Marshal(card)
	if err != nil {
		panic(err)
	}
	_, err = verifier.Verify(tampered)
	var refusal *cardsig.Error
	if errors.As(err, &refusal) {
		fmt.Println("refused:", refusal.Reason)
	}
	// Output:
	// verified by agent-2026 <nil>
	// refused: signature_mismatch
}
