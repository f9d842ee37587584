package delegate

import (
	"context"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
)

// CardVerifier verifies an agent card's signatures. raw is the card exactly
// as fetched; card is its decoded form. A nil error means at least one
// signature verified with a trusted key. The a2a/cardsig package implements
// it.
type CardVerifier interface {
	VerifyCard(ctx context.Context, raw []byte, card *wire.AgentCard) error
}
