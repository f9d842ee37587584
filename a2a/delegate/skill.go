package delegate

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/gowebpki/jcs"
)

// SkillDigest is the digest an admission pins a skill with
// ([AdmittedSkill].Digest): the lowercase hex SHA-256 of the RFC 8785
// (JCS) canonical JSON of the skill as the A2A 1.0 JSON binding encodes it
// on a card (a2a-go's AgentSkill encoding: id, name, description, tags,
// and examples, inputModes, outputModes, securityRequirements when set).
// Any change to what the card says of the skill — its description, its
// modes, its security — changes the digest, and [Client.Connect] then
// refuses the agent until the host admits it again.
//
// The host computes it from the card it reviewed when it admits the agent;
// Connect computes it again from the card it fetches, through the same
// encoding, so both sides agree whatever spacing or member order the card
// was served with.
func SkillDigest(s *wire.AgentSkill) string {
	canonical, err := canonicalSkill(s)
	if err != nil {
		// A skill a2a-go decoded always encodes; a hand-built one with an
		// unencodable security requirement gets a digest no card matches.
		return ""
	}
	sum := sha256.Sum256(canonical)
	return hex.EncodeToString(sum[:])
}

// canonicalSkill is the RFC 8785 canonical JSON SkillDigest hashes.
func canonicalSkill(s *wire.AgentSkill) ([]byte, error) {
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	return jcs.Transform(raw)
}

// validDigest reports whether d is a lowercase hex SHA-256.
func validDigest(d string) bool {
	if len(d) != 64 {
		return false
	}
	for i := 0; i < len(d); i++ {
		if c := d[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
