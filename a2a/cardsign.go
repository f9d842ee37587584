package a2a

// Signed cards (A2A 1.0 §8.4; OpenWOP interop map, a2a.card
// signatures[]): with Options.CardSigner every card the server serves —
// the public card, the caller's view of the host card, per-agent cards —
// carries a signature over exactly what is served.

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"sync"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
)

// CardSigner signs agent cards (A2A 1.0 §8.4.2): given a card's JSON,
// without signatures, it returns the signature to add to the card's
// signatures[] — a JWS over the card's RFC 8785 canonical form with the
// payload detached. a2a/cardsig's Signer is one; a host may bring its
// own, e.g. backed by a KMS.
type CardSigner interface {
	Sign(card []byte) (wire.AgentCardSignature, error)
}

// maxSignedCards bounds the signatures kept: one per card version served.
// A server serves the public card, one extended view per set of
// startable workflows and one card per agent and such set, so a few
// hundred cover most hosts; past the bound the cache starts over.
const maxSignedCards = 1024

// cardSignatures signs cards and remembers each signature by the digest
// of the unsigned card's JSON, so a card is signed once per version
// however often it is served, and a card that changes is signed anew.
type cardSignatures struct {
	signer CardSigner
	mu     sync.Mutex
	sigs   map[[sha256.Size]byte]wire.AgentCardSignature
}

func newCardSignatures(signer CardSigner) *cardSignatures {
	if signer == nil {
		return nil
	}
	return &cardSignatures{signer: signer, sigs: make(map[[sha256.Size]byte]wire.AgentCardSignature)}
}

// signed is card with its signature (signCard), or the error.
func (s *Server) signed(ctx context.Context, card *wire.AgentCard) (*wire.AgentCard, error) {
	if err := s.signCard(ctx, card); err != nil {
		return nil, err
	}
	return card, nil
}

// signCard sets card's signatures to the one signature of the server's
// signer, when it has one. The signature is over the card's JSON, and
// the canonical form ignores how the binding then encodes it, so it
// verifies over the bytes served. A panic in the host's signer is the
// internal error.
func (s *Server) signCard(ctx context.Context, card *wire.AgentCard) (err error) {
	c := s.cardSigs
	if c == nil {
		return nil
	}
	defer s.recoverInto(ctx, "card signer", "", &err)
	card.Signatures = nil
	unsigned, err := json.Marshal(card)
	if err != nil {
		return err
	}
	key := sha256.Sum256(unsigned)
	c.mu.Lock()
	sig, ok := c.sigs[key]
	c.mu.Unlock()
	if !ok {
		if sig, err = c.signer.Sign(unsigned); err != nil {
			return err
		}
		c.mu.Lock()
		if len(c.sigs) >= maxSignedCards {
			clear(c.sigs)
		}
		c.sigs[key] = sig
		c.mu.Unlock()
	}
	card.Signatures = []wire.AgentCardSignature{sig}
	return nil
}
