package delegate

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/egress"
)

// fetchedCard is an agent card as Connect resolved it.
type fetchedCard struct {
	raw  []byte
	card *wire.AgentCard
	// legacy is the protocolVersion of a card in the A2A 0.3 shape (no
	// supportedInterfaces): such a peer offers only that version.
	legacy string
}

// fetchCard GETs the admission's card through the egress guard, within
// the card timeout and MaxCardBytes, and decodes it strictly. The card
// request carries no credential: the card URL is public by definition
// (A2A 1.0 §8.2), and a credential is presented only to the interface it
// was admitted for.
// It asks for the card of the host's preferred version with A2A-Version
// (A2A 1.0 §3.6.2): a server that keeps one card per version answers a
// request without the header with its oldest (0.3-shaped) card, which
// would refuse a peer that also serves 1.0.
func (c *Client) fetchCard(ctx context.Context, a *Admission) (*fetchedCard, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.CardTimeout)
	defer cancel()
	fail := func(problem string, err error) (*fetchedCard, error) {
		return nil, &CardError{Alias: a.Alias, Problem: problem, Err: err}
	}
	req, err := c.guard.Request(ctx, http.MethodGet, a.CardURL, nil)
	if err != nil {
		return fail("URL refused by the egress guard", err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set(wire.SvcParamVersion, c.policy.Preferred())
	resp, err := c.http.Do(req)
	if err != nil {
		return fail("could not be fetched", stripURL(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fail("request answered HTTP "+strconv.Itoa(resp.StatusCode), nil)
	}
	raw, err := egress.ReadAll(resp.Body, a.Limits.MaxCardBytes)
	if err != nil {
		if errors.Is(err, egress.ErrTooLarge) {
			return fail("is over the size limit", err)
		}
		return fail("could not be read", err)
	}
	card, legacy, problem := decodeCard(raw)
	if problem != "" {
		return fail("is malformed: "+problem, nil)
	}
	return &fetchedCard{raw: raw, card: card, legacy: legacy}, nil
}

// decodeCard reads an agent card strictly (see strict.go): exact member
// names, then the members Connect relies on — a name, skills with unique
// ids, and supportedInterfaces whose entries name a URL, a binding and a
// version (A2A 1.0 §8.2). A card in the A2A 0.3 shape (a top-level
// protocolVersion and no supportedInterfaces) is read for that version
// alone, so that the negotiation can refuse it for what it is rather than
// as a malformed card. problem is "" for a usable card.
func decodeCard(raw []byte) (card *wire.AgentCard, legacy, problem string) {
	if !json.Valid(raw) {
		return nil, "", "not JSON"
	}
	if p := checkKeys(raw); p != "" {
		return nil, "", "it has " + p
	}
	top, ok := members(raw)
	if !ok {
		return nil, "", "not a JSON object"
	}
	var c wire.AgentCard
	if _, has := top["supportedInterfaces"]; !has {
		var pv string
		if json.Unmarshal(top["protocolVersion"], &pv) != nil || pv == "" {
			return nil, "", "no supportedInterfaces"
		}
		// A 0.3 card: only what re-admission and the negotiation read, since
		// the rest (its security declarations) has another shape.
		var legacyCard struct {
			Name       string                    `json:"name"`
			Skills     []wire.AgentSkill         `json:"skills"`
			Signatures []wire.AgentCardSignature `json:"signatures"`
		}
		if err := json.Unmarshal(raw, &legacyCard); err != nil {
			return nil, "", "a member has the wrong type"
		}
		c.Name, c.Skills, c.Signatures = legacyCard.Name, legacyCard.Skills, legacyCard.Signatures
		legacy = pv
	} else if err := json.Unmarshal(raw, &c); err != nil {
		return nil, "", "a member has the wrong type"
	}
	if c.Name == "" {
		return nil, "", "no name"
	}
	if c.Skills == nil {
		return nil, "", "no skills"
	}
	for i, s := range c.Skills {
		if s.ID == "" {
			return nil, "", "a skill without an id"
		}
		for _, prev := range c.Skills[:i] {
			if prev.ID == s.ID {
				return nil, "", "two skills with one id"
			}
		}
	}
	if legacy != "" {
		return &c, legacy, ""
	}
	if len(c.SupportedInterfaces) == 0 {
		return nil, "", "no supportedInterfaces"
	}
	for _, iface := range c.SupportedInterfaces {
		if iface == nil || iface.URL == "" || iface.ProtocolBinding == "" || iface.ProtocolVersion == "" {
			return nil, "", "an interface without a url, protocolBinding or protocolVersion"
		}
	}
	return &c, "", ""
}

// verifySignature applies the admission's signature policy (A2A 1.0
// §8.4, Agent Card signing; OpenWOP interop.md §Cards). A card is verified
// when the admission requires a signature, and also whenever it carries
// signatures and the admission configures keys: a signature that is there
// but wrong is never ignored. It fails closed.
func (c *Client) verifySignature(ctx context.Context, a *Admission, fc *fetchedCard) error {
	signed := len(fc.card.Signatures) > 0
	switch {
	case a.RequireSignature && !signed:
		return &SignatureError{Alias: a.Alias, Unsigned: true}
	case !a.RequireSignature && (!signed || a.CardKeys == nil):
		return nil
	}
	if err := a.CardKeys.VerifyCard(ctx, fc.raw, fc.card); err != nil {
		return &SignatureError{Alias: a.Alias, Err: err}
	}
	return nil
}

// readmit checks that every skill the host admitted is on the card as it
// was admitted (admission-boundaries §18.3): same id, same [SkillDigest].
func readmit(a *Admission, card *wire.AgentCard) error {
	for _, want := range a.Skills {
		i := -1
		for j := range card.Skills {
			if card.Skills[j].ID == want.ID {
				i = j
				break
			}
		}
		if i < 0 {
			return &ReadmissionError{Alias: a.Alias, Skill: want.ID, Missing: true}
		}
		if SkillDigest(&card.Skills[i]) != want.Digest {
			return &ReadmissionError{Alias: a.Alias, Skill: want.ID}
		}
	}
	return nil
}
