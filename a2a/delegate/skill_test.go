package delegate

import (
	"testing"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/internal/golden"
)

// TestSkillDigestGolden pins the canonical bytes SkillDigest hashes and the
// digest itself: RFC 8785 sorts members by UTF-16 code units, writes
// strings with only the escapes it requires (no \u003c for "<", UTF-8 as
// is) and drops insignificant whitespace.
func TestSkillDigestGolden(t *testing.T) {
	s := testSkill()
	s.SecurityRequirements = wire.SecurityRequirementsOptions{{"bearer": {"read", "write"}}}
	canonical, err := canonicalSkill(&s)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "skill_canonical.json", append(canonical, '\n'))
	golden.Check(t, "skill_digest.txt", []byte(SkillDigest(&s)+"\n"))
	if d := SkillDigest(&s); !validDigest(d) {
		t.Fatalf("%q is not a lowercase hex SHA-256", d)
	}
	// Every member counts.
	base := SkillDigest(&s)
	for name, mod := range map[string]func(*wire.AgentSkill){
		"id":          func(s *wire.AgentSkill) { s.ID += "x" },
		"name":        func(s *wire.AgentSkill) { s.Name += "x" },
		"description": func(s *wire.AgentSkill) { s.Description += "x" },
		"tags":        func(s *wire.AgentSkill) { s.Tags = append(s.Tags, "x") },
		"examples":    func(s *wire.AgentSkill) { s.Examples = nil },
		"inputModes":  func(s *wire.AgentSkill) { s.InputModes = []string{"application/json"} },
		"outputModes": func(s *wire.AgentSkill) { s.OutputModes = s.OutputModes[:1] },
		"security":    func(s *wire.AgentSkill) { s.SecurityRequirements = nil },
	} {
		c := s
		c.Tags = append([]string(nil), s.Tags...)
		mod(&c)
		if SkillDigest(&c) == base {
			t.Errorf("changing %s leaves the digest as it was", name)
		}
	}
}
