package facets_test

import (
	"strings"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/facets"
)

// TestReadmeSnippet keeps the README's facet declaration example compiling
// and true: the declaration it shows is valid and advertises the audit type.
func TestReadmeSnippet(t *testing.T) {
	v, _ := facets.NewValidator(facets.Options{})
	ad, err := v.Declare(time.Now(), facets.Declaration{
		A2A: &facets.A2A{RefreshedAt: facets.DateOf(time.Now()), Profiles: []string{facets.ProfileA2A10},
			AgentCardURL: "https://agents.example.com/.well-known/agent-card.json"},
	}, facets.Served{A2A: facets.ServedA2A{Versions: []string{facets.A2AVersion}, JSONRPC: true}})
	if err != nil {
		t.Fatal(err)
	}
	policy, err := ad.A2A().Policy(false, nil)
	if err != nil || policy.Preferred() != facets.A2AVersion {
		t.Fatalf("policy %v, %v", policy, err)
	}
	if he := string(ad.Records()["hostEvents"]); !strings.Contains(he, `"negotiation.decided"`) {
		t.Fatalf("hostEvents record %s lacks negotiation.decided", he)
	}
}
