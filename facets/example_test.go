package facets_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/wopinterop/wopinterop/facets"
)

// A host declares what it advertises, says what it really mounts, and
// prints the records it embeds in GET /.well-known/openwop.
func Example() {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	v, err := facets.NewValidator(facets.Options{})
	if err != nil {
		panic(err)
	}
	decl := facets.Declaration{
		A2A: &facets.A2A{
			RefreshedAt:  "2026-11-20",
			Profiles:     []string{facets.ProfileA2A10},
			AgentCardURL: "https://agents.example.com/.well-known/agent-card.json",
			Streaming:    true,
		},
		MCP: &facets.MCP{
			RefreshedAt: "2026-11-20",
			Profiles:    []string{facets.ProfileMCP2026},
			Features:    []string{"server-discover", "mrtr", "cacheable-lists"},
			ServerURLs:  []string{"/mcp"},
			ServerMount: &facets.ServerMount{Transports: []string{facets.TransportStreamableHTTP}},
		},
	}
	served := facets.Served{
		A2A: facets.ServedA2A{Versions: []string{facets.A2AVersion}, JSONRPC: true, Streaming: true},
		MCP: facets.ServedMCP{
			Revisions: []string{facets.MCPRevision}, Mount: true,
			Transports: []string{facets.TransportStreamableHTTP},
			Discover:   true, MRTR: true, CacheableLists: true,
		},
	}
	ad, err := v.Declare(now, decl, served)
	if err != nil {
		panic(err)
	}
	raw, _ := json.Marshal(ad)
	var out bytes.Buffer
	_ = json.Indent(&out, raw, "", "  ")
	fmt.Println(out.String())

	remaining, stale := ad.A2A().StaleAfter(now)
	fmt.Printf("a2a stale=%v, re-check upstream within %d days\n", stale, int(remaining/(24*time.Hour)))

	// A claim the host does not back is refused, naming the field.
	served.A2A.Streaming = false
	_, err = v.Declare(now, decl, served)
	fmt.Println(errors.Is(err, facets.ErrInvalidFacet), err)
	// Output:
	// {
	//   "a2a": {
	//     "status": "stable",
	//     "since": "2.0",
	//     "witness": "seam-gated",
	//     "versions": [
	//       "1.0"
	//     ],
	//     "preferredVersion": "1.0",
	//     "minimumVersion": "1.0",
	//     "refreshedAt": "2026-11-20",
	//     "profiles": [
	//       "a2a-1.0"
	//     ],
	//     "agentCardUrl": "https://agents.example.com/.well-known/agent-card.json",
	//     "streaming": true
	//   },
	//   "hostEvents": {
	//     "status": "stable",
	//     "since": "2.0",
	//     "witness": "seam-gated",
	//     "types": [
	//       {
	//         "type": "negotiation.decided",
	//         "delivery": "durable"
	//       }
	//     ]
	//   },
	//   "mcp": {
	//     "status": "stable",
	//     "since": "2.0",
	//     "witness": "seam-gated",
	//     "revisions": [
	//       "2026-07-28"
	//     ],
	//     "preferredVersion": "2026-07-28",
	//     "minimumRevision": "2026-07-28",
	//     "refreshedAt": "2026-11-20",
	//     "profiles": [
	//       "mcp-2026-07-28"
	//     ],
	//     "features": [
	//       "server-discover",
	//       "mrtr",
	//       "cacheable-lists"
	//     ],
	//     "serverUrls": [
	//       "/mcp"
	//     ],
	//     "serverMount": {
	//       "transports": [
	//         "streamable-http"
	//       ]
	//     }
	//   }
	// }
	// a2a stale=false, re-check upstream within 79 days
	// true facets: a2a.streaming is claimed but not served (OpenWOP interop map a2a.card (capabilities))
}

// A host loading its facets from a configuration file.
func ExampleParseDeclaration() {
	config := []byte(`{"mcp": {"refreshedAt": "2026-11-20", "client": true}}`)
	decl, err := facets.ParseDeclaration(config)
	if err != nil {
		panic(err)
	}
	v, err := facets.NewValidator(facets.Options{})
	if err != nil {
		panic(err)
	}
	_, err = v.Declare(time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), decl, facets.Served{})
	for _, fe := range facets.FieldErrors(err) {
		fmt.Printf("%s: %s [%s]\n", fe.Field, fe.Reason, fe.Rule)
	}
	// Output:
	// mcp.revisions[0]: "2026-07-28" is not served (the host speaks no revision date) [OpenWOP interop.md §The facets]
	// mcp.client: is claimed but the MCP client is not exposed to pack code [OpenWOP RFC 0204]
}
