package facets

import (
	"testing"
	"time"

	goldenfile "github.com/wopinterop/wopinterop/internal/golden"
)

// testNow is the fixed clock of every test.
var testNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func newTestValidator(t testing.TB) *Validator {
	t.Helper()
	v, err := NewValidator(Options{})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// fullHost advertises everything the library can serve.
func fullHost() (Declaration, Served) {
	d := Declaration{
		A2A: &A2A{
			RefreshedAt:       "2026-11-20",
			Profiles:          []string{ProfileA2A10},
			AgentCardURL:      "https://agents.example.com/.well-known/agent-card.json",
			Streaming:         true,
			PushNotifications: true,
			DurableTasks:      true,
			AgentCards:        true,
		},
		MCP: &MCP{
			RefreshedAt: "2026-11-20",
			Profiles:    []string{ProfileMCP2026},
			Features:    []string{"server-discover", "mrtr", "cacheable-lists", "extensions"},
			ServerURLs:  []string{"https://agents.example.com/mcp"},
			ServerMount: &ServerMount{Transports: []string{TransportStreamableHTTP}},
			MRTR:        &MRTR{MaxRounds: 8},
			Client:      true,
		},
		HostEvents: &HostEvents{
			Types: []HostEventType{{Type: "acme.deploy-finished", Delivery: Durable}},
		},
		Agents: &Agents{ManifestRuntime: &ManifestRuntime{InstallScope: InstallScopeTenant}},
	}
	s := Served{
		ProtocolVersions: []string{"2.0"},
		A2A: ServedA2A{
			Versions: []string{A2AVersion}, JSONRPC: true, HTTPJSON: true,
			Streaming: true, PushNotifications: true, DurableTasks: true,
			ExtendedCard: true, AgentCards: true,
		},
		MCP: ServedMCP{
			Revisions: []string{MCPRevision}, Mount: true,
			Transports: []string{TransportStreamableHTTP},
			Extensions: []string{"io.modelcontextprotocol/tasks"},
			Discover:   true, MRTR: true, CacheableLists: true, Client: true,
		},
	}
	return d, s
}

// mcpServerHost fills little: an MCP mount claiming the current profile.
func mcpServerHost() (Declaration, Served) {
	d := Declaration{MCP: &MCP{
		RefreshedAt: "2026-11-01",
		Profiles:    []string{ProfileMCP2026},
		Features:    []string{"server-discover", "mrtr", "cacheable-lists"},
		ServerURLs:  []string{"https://tools.example.com/mcp"},
		ServerMount: &ServerMount{},
	}}
	s := Served{MCP: ServedMCP{
		Revisions: []string{MCPRevision}, Mount: true, Transports: []string{TransportStreamableHTTP},
		Discover: true, MRTR: true, CacheableLists: true,
	}}
	return d, s
}

// clientHost speaks both protocols only outbound: no inbound surface, so
// no hostEvents record.
func clientHost() (Declaration, Served) {
	d := Declaration{
		A2A: &A2A{RefreshedAt: "2026-10-15"},
		MCP: &MCP{RefreshedAt: "2026-10-15", Client: true, MRTR: &MRTR{MaxRounds: 4}},
	}
	s := Served{
		A2A: ServedA2A{Versions: []string{A2AVersion}},
		MCP: ServedMCP{Revisions: []string{MCPRevision}, Client: true},
	}
	return d, s
}

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, name, got)
}

func mustDeclare(t testing.TB, v *Validator, d Declaration, s Served) *Advertisement {
	t.Helper()
	ad, err := v.Declare(testNow, d, s)
	if err != nil {
		t.Fatalf("Declare: %v", err)
	}
	return ad
}
