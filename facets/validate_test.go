package facets

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/mapping"
)

func TestGoodDeclarations(t *testing.T) {
	v := newTestValidator(t)
	cases := map[string]func() (Declaration, Served){
		"full":        fullHost,
		"mcp server":  mcpServerHost,
		"client only": clientHost,
		"mcp mount at a path": func() (Declaration, Served) {
			d, s := mcpServerHost()
			d.MCP.ServerURLs = []string{"/mcp"}
			return d, s
		},
		"experimental until a future date": func() (Declaration, Served) {
			d, s := fullHost()
			d.A2A.Status, d.A2A.Until = StatusExperimental, "2027-03-01"
			return d, s
		},
		"deprecated until a future version": func() (Declaration, Served) {
			d, s := fullHost()
			s.ProtocolVersions = []string{"2.0", "2.1"}
			d.MCP.Status, d.MCP.Until = StatusDeprecated, "2.3"
			return d, s
		},
		"until today": func() (Declaration, Served) {
			d, s := fullHost()
			d.A2A.Status, d.A2A.Until = StatusExperimental, "2026-11-30"
			return d, s
		},
		"downgrade range above the floor": func() (Declaration, Served) {
			d, s := fullHost()
			d.A2A.Versions = []string{"1.0", "1.1"}
			s.A2A.Versions = []string{"1.0", "1.1"}
			return d, s
		},
		"refreshed yesterday under a 30-day window": func() (Declaration, Served) {
			d, s := clientHost()
			d.A2A.RefreshedAt, d.A2A.RefreshWindow = "2026-11-29", 30*24*time.Hour
			return d, s
		},
		"refreshed tomorrow": func() (Declaration, Served) {
			d, s := clientHost()
			d.A2A.RefreshedAt = "2026-12-01"
			return d, s
		},
		"refreshed 89 days before today": func() (Declaration, Served) {
			d, s := clientHost()
			d.MCP.RefreshedAt = "2026-09-02" // deadline 2026-12-01T00:00Z, after testNow
			return d, s
		},
		"host events without inbound": func() (Declaration, Served) {
			d, s := clientHost()
			d.HostEvents = &HostEvents{Types: []HostEventType{{Type: "channel.presence", Delivery: Ephemeral}}}
			return d, s
		},
		"served extra features not claimed": func() (Declaration, Served) {
			d, s := fullHost()
			d.A2A.Streaming = false
			return d, s
		},
		"nothing at all": func() (Declaration, Served) { return Declaration{}, Served{} },
		"agents without a2a": func() (Declaration, Served) {
			return Declaration{Agents: &Agents{ManifestRuntime: &ManifestRuntime{}}}, Served{}
		},
		"agents without manifestRuntime": func() (Declaration, Served) {
			d, s := fullHost()
			d.A2A.AgentCards, s.A2A.AgentCards = false, false
			d.Agents.ManifestRuntime = nil
			return d, s
		},
	}
	for name, mk := range cases {
		t.Run(name, func(t *testing.T) {
			d, s := mk()
			if _, err := v.Declare(testNow, d, s); err != nil {
				t.Fatalf("Declare refused a good declaration: %v", err)
			}
		})
	}
}

type badCase struct {
	name   string
	mutate func(d *Declaration, s *Served)
	field  string // the FieldError.Field that must be reported
	rule   string // its Rule
	reason string // a substring of its Reason
}

func badCases() []badCase {
	return []badCase{
		// a2a: versions, preferred, floor (OpenWOP facets/a2a.schema.json and facets/mcp.schema.json; interop.md §The refresh SLA, §The floor)
		{"a2a preferred not offered", func(d *Declaration, s *Served) { d.A2A.PreferredVersion = "1.1" },
			"a2a.preferredVersion", ruleRefresh, `"1.1" is not in a2a.versions`},
		{"a2a floor not offered", func(d *Declaration, s *Served) { d.A2A.MinimumVersion = "0.3" },
			"a2a.minimumVersion", ruleRefresh, `"0.3" is not in a2a.versions`},
		{"a2a floor above preferred", func(d *Declaration, s *Served) {
			d.A2A.Versions, s.A2A.Versions = []string{"1.0", "1.1"}, []string{"1.0", "1.1"}
			d.A2A.PreferredVersion, d.A2A.MinimumVersion = "1.0", "1.1"
		}, "a2a.minimumVersion", ruleRefresh, `"1.1" is above a2a.preferredVersion "1.0"`},
		{"a2a version below the floor", func(d *Declaration, s *Served) {
			d.A2A.Versions, s.A2A.Versions = []string{"0.9", "1.0"}, []string{"0.9", "1.0"}
		}, "a2a.versions[0]", ruleFloor, `"0.9" is below a2a.minimumVersion "1.0"`},
		{"a2a version with a leading zero", func(d *Declaration, s *Served) { d.A2A.Versions = []string{"1.0", "01.0"} },
			"a2a.versions[1]", ruleRequired, "not a well-formed major.minor"},
		{"a2a version malformed", func(d *Declaration, s *Served) { d.A2A.Versions = []string{"1.0", "v2"} },
			"a2a.versions[1]", ruleRequired, `"v2"`},
		{"a2a versions repeated", func(d *Declaration, s *Served) { d.A2A.Versions = []string{"1.0", "1.0"} },
			"a2a.versions", "", "items at 0 and 1 are equal"},
		{"a2a version not served", func(d *Declaration, s *Served) { d.A2A.Versions = []string{"1.0", "1.1"} },
			"a2a.versions[1]", ruleFamilies, `"1.1" is not served`},
		// lifecycle (OpenWOP interop.md §The facets; capabilities.md §2)
		{"experimental without until", func(d *Declaration, s *Served) { d.A2A.Status = StatusExperimental },
			"a2a.until", ruleStatus, "required when status is experimental"},
		{"stable with until", func(d *Declaration, s *Served) { d.MCP.Until = "2027-01-01" },
			"mcp.until", ruleStatus, "absent when status is stable"},
		{"until date in the past", func(d *Declaration, s *Served) {
			d.A2A.Status, d.A2A.Until = StatusDeprecated, "2026-11-29"
		}, "a2a.until", ruleStatus, "until_in_past"},
		{"until version before since", func(d *Declaration, s *Served) {
			s.ProtocolVersions = []string{"2.0", "2.1"}
			d.MCP.Since, d.MCP.Status, d.MCP.Until = "2.1", StatusExperimental, "2.0"
		}, "mcp.until", ruleStatus, "before since"},
		{"until version below the newest protocol version", func(d *Declaration, s *Served) {
			s.ProtocolVersions = []string{"2.0", "2.3"}
			d.A2A.Status, d.A2A.Until = StatusExperimental, "2.1"
		}, "a2a.until", ruleStatus, `below the host's newest protocol version "2.3"`},
		{"until not a calendar date", func(d *Declaration, s *Served) {
			d.A2A.Status, d.A2A.Until = StatusExperimental, "2027-02-30"
		}, "a2a.until", ruleStatus, "not a calendar date"},
		{"witness unknown", func(d *Declaration, s *Served) { d.A2A.Witness = "self-declared" },
			"a2a.witness", "", "seam-gated"},
		{"status unknown", func(d *Declaration, s *Served) { d.MCP.Status = "beta" },
			"mcp.status", "", "stable"},
		{"since malformed", func(d *Declaration, s *Served) { d.A2A.Since = "02.0" },
			"a2a.since", "", "pattern"},
		{"since not a protocol version", func(d *Declaration, s *Served) { d.A2A.Since = "2.4" },
			"a2a.since", ruleFamilies, "protocolVersions"},
		// refresh SLA (OpenWOP interop.md §The refresh SLA)
		{"a2a refreshedAt stale", func(d *Declaration, s *Served) { d.A2A.RefreshedAt = "2026-08-01" },
			"a2a.refreshedAt", ruleRefresh, "older than the 90-day refresh window"},
		{"mcp refreshedAt exactly 90 days before today", func(d *Declaration, s *Served) { d.MCP.RefreshedAt = "2026-09-01" },
			"mcp.refreshedAt", ruleRefresh, "older than the 90-day refresh window"},
		{"refreshedAt in the future", func(d *Declaration, s *Served) { d.A2A.RefreshedAt = "2026-12-02" },
			"a2a.refreshedAt", ruleRefresh, "more than one day in the future"},
		{"refreshedAt not a date", func(d *Declaration, s *Served) { d.MCP.RefreshedAt = "2026-02-30" },
			"mcp.refreshedAt", "", "date"},
		{"refresh window above 90 days", func(d *Declaration, s *Served) { d.A2A.RefreshWindow = 91 * 24 * time.Hour },
			"a2a.RefreshWindow", ruleRefresh, "2184h0m0s is not a window of at most 90 days"},
		{"negative refresh window", func(d *Declaration, s *Served) { d.MCP.RefreshWindow = -time.Hour },
			"mcp.RefreshWindow", ruleRefresh, "not a window"},
		{"shorter refresh window exceeded", func(d *Declaration, s *Served) {
			d.MCP.RefreshWindow, d.MCP.RefreshedAt = 7*24*time.Hour, "2026-11-20"
		}, "mcp.refreshedAt", ruleRefresh, "older than the 7-day refresh window"},
		// a2a profiles and card (OpenWOP interop.md §Legacy profiles are absent; interop map, a2a.card)
		{"a2a legacy profile", func(d *Declaration, s *Served) { d.A2A.Profiles = []string{ProfileA2A10, "a2a-0.3-legacy"} },
			"a2a.profiles[1]", ruleProfiles, "legacy"},
		{"a2a profile version not offered", func(d *Declaration, s *Served) { d.A2A.Profiles = []string{"a2a-1.1"} },
			"a2a.profiles[0]", ruleA2AProfile, "a2a.versions does not offer"},
		{"a2a profile without card", func(d *Declaration, s *Served) {
			d.A2A.AgentCardURL, d.A2A.Streaming, d.A2A.PushNotifications, d.A2A.DurableTasks, d.A2A.AgentCards = "", false, false, false, false
			s.A2A = ServedA2A{Versions: []string{A2AVersion}}
		}, "a2a.agentCardUrl", ruleA2AProfile, `required by profile "a2a-1.0"`},
		{"a2a card without JSON-RPC", func(d *Declaration, s *Served) { s.A2A.JSONRPC = false },
			"a2a.agentCardUrl", ruleA2AProfile, "no A2A JSON-RPC interface"},
		{"a2a card URL relative", func(d *Declaration, s *Served) { d.A2A.AgentCardURL = "/agent-card.json" },
			"a2a.agentCardUrl", ruleA2AProfile, "absolute http(s) URL"},
		{"a2a card URL with credentials", func(d *Declaration, s *Served) { d.A2A.AgentCardURL = "https://u:p@agents.example.com/card" },
			"a2a.agentCardUrl", ruleA2AProfile, "absolute http(s) URL"},
		{"a2a interface served without card", func(d *Declaration, s *Served) {
			d.A2A.AgentCardURL, d.A2A.Profiles = "", nil
			d.A2A.Streaming, d.A2A.PushNotifications, d.A2A.DurableTasks, d.A2A.AgentCards = false, false, false, false
		}, "a2a.agentCardUrl", ruleFamilies, "an A2A interface is served"},
		{"a2a absent while served", func(d *Declaration, s *Served) { d.A2A = nil },
			"a2a", ruleFamilies, "the host serves A2A"},
		{"a2a profile with a leading zero", func(d *Declaration, s *Served) { d.A2A.Profiles = []string{ProfileA2A10, "a2a-01.0"} },
			"a2a.profiles[1]", ruleProfiles, "not a profile id"},
		// a2a boolean facets (OpenWOP interop.md §Per-agent cards; interop map, a2a.card)
		{"streaming not served", func(d *Declaration, s *Served) { s.A2A.Streaming = false },
			"a2a.streaming", ruleServed, "not served"},
		{"push not served", func(d *Declaration, s *Served) { s.A2A.PushNotifications = false },
			"a2a.pushNotifications", ruleServed, "not served"},
		{"durable tasks not served", func(d *Declaration, s *Served) { s.A2A.DurableTasks = false },
			"a2a.durableTasks", ruleServed, "not served"},
		{"streaming claimed with nothing inbound", func(d *Declaration, s *Served) {
			d.A2A.AgentCardURL, d.A2A.Profiles, d.A2A.AgentCards = "", nil, false
			s.A2A.JSONRPC, s.A2A.HTTPJSON = false, false
		}, "a2a.streaming", ruleServed, "without a2a.agentCardUrl"},
		{"agentCards without the a2a-1.0 profile", func(d *Declaration, s *Served) { d.A2A.Profiles = nil },
			"a2a.agentCards", ruleAgentCards, `requires profile "a2a-1.0"`},
		{"agentCards without extended card", func(d *Declaration, s *Served) { s.A2A.ExtendedCard = false },
			"a2a.agentCards", ruleAgentCards, "GetExtendedAgentCard"},
		{"agentCards without per-agent cards", func(d *Declaration, s *Served) { s.A2A.AgentCards = false },
			"a2a.agentCards", ruleAgentCards, "per-agent cards"},
		{"agentCards without the agents family", func(d *Declaration, s *Served) { d.Agents = nil },
			"agents.manifestRuntime", ruleAgentCards, "required by a2a.agentCards"},
		{"agentCards without agents.manifestRuntime", func(d *Declaration, s *Served) { d.Agents.ManifestRuntime = nil },
			"agents.manifestRuntime", ruleAgentCards, "required by a2a.agentCards"},
		// agents
		{"agents installScope unknown", func(d *Declaration, s *Served) { d.Agents.ManifestRuntime.InstallScope = "galaxy" },
			"agents.manifestRuntime.installScope", "", "tenant"},
		{"agents experimental without until", func(d *Declaration, s *Served) { d.Agents.Status = StatusExperimental },
			"agents.until", ruleStatus, "required when status is experimental"},
		{"agents since not a protocol version", func(d *Declaration, s *Served) { d.Agents.Since = "2.4" },
			"agents.since", ruleFamilies, "protocolVersions"},
		{"agents witness unknown", func(d *Declaration, s *Served) { d.Agents.Witness = "hearsay" },
			"agents.witness", "", "witnessable-gated"},
		// mcp versions (OpenWOP facets/a2a.schema.json and facets/mcp.schema.json; interop.md §The refresh SLA)
		{"mcp preferred not offered", func(d *Declaration, s *Served) { d.MCP.PreferredVersion = "2025-11-25" },
			"mcp.preferredVersion", ruleRefresh, `"2025-11-25" is not in mcp.revisions`},
		{"mcp revision not a calendar date", func(d *Declaration, s *Served) { d.MCP.Revisions = []string{"2026-07-28", "2026-02-30"} },
			"mcp.revisions[1]", ruleRequired, "not a well-formed revision date"},
		{"mcp revision not served", func(d *Declaration, s *Served) {
			d.MCP.Revisions, d.MCP.MinimumRevision = []string{"2025-11-25", "2026-07-28"}, "2025-11-25"
		}, "mcp.revisions[0]", ruleFamilies, "not served"},
		{"mcp floor above preferred", func(d *Declaration, s *Served) {
			d.MCP.Revisions, s.MCP.Revisions = []string{"2025-11-25", "2026-07-28"}, []string{"2025-11-25", "2026-07-28"}
			d.MCP.PreferredVersion, d.MCP.MinimumRevision = "2025-11-25", "2026-07-28"
		}, "mcp.minimumRevision", ruleRefresh, "above mcp.preferredVersion"},
		// mcp profiles and features (OpenWOP interop.md §Legacy profiles are absent; interop map, mcp.features)
		{"mcp profile lacks a required feature", func(d *Declaration, s *Served) {
			d.MCP.Features = []string{"server-discover", "cacheable-lists", "extensions"}
		}, "mcp.features", ruleMCPProfile, `lacks "mrtr", which profile "mcp-2026-07-28" requires`},
		{"mcp profile revision not offered", func(d *Declaration, s *Served) { d.MCP.Profiles = []string{ProfileMCP2026, "mcp-2025-11-25"} },
			"mcp.profiles[1]", ruleMCPProfile, "mcp.revisions does not offer"},
		{"mcp legacy profile", func(d *Declaration, s *Served) { d.MCP.Profiles = []string{"mcp-2025-06-18-legacy"} },
			"mcp.profiles[0]", ruleProfiles, "legacy"},
		{"mcp profile not a calendar date", func(d *Declaration, s *Served) { d.MCP.Profiles = []string{"mcp-2026-13-01"} },
			"mcp.profiles[0]", ruleProfiles, "not a profile id"},
		{"mcp features repeated", func(d *Declaration, s *Served) { d.MCP.Features = append(d.MCP.Features, "mrtr") },
			"mcp.features", "", "are equal"},
		{"mcp feature unknown to the map", func(d *Declaration, s *Served) { d.MCP.Features = append(d.MCP.Features, "telepathy") },
			"mcp.features[4]", ruleMCPProfile, "not a feature of the interop map"},
		{"mcp mrtr feature not served", func(d *Declaration, s *Served) { s.MCP.MRTR = false },
			"mcp.features[1]", ruleMCPProfile, `"mrtr" is claimed but not served`},
		{"mcp discover feature not served", func(d *Declaration, s *Served) { s.MCP.Discover = false },
			"mcp.features[0]", ruleMCPProfile, `"server-discover" is claimed but not served`},
		{"mcp cacheable lists not served", func(d *Declaration, s *Served) { s.MCP.CacheableLists = false },
			"mcp.features[2]", ruleMCPProfile, `"cacheable-lists" is claimed but not served`},
		{"mcp extensions feature with no extension", func(d *Declaration, s *Served) { s.MCP.Extensions = nil },
			"mcp.features[3]", ruleMCPProfile, `"extensions" is claimed but not served`},
		{"mcp tasks served without extensions feature", func(d *Declaration, s *Served) {
			d.MCP.Features = []string{"server-discover", "mrtr", "cacheable-lists"}
		}, "mcp.features", ruleMCPProfile, "io.modelcontextprotocol/tasks"},
		// mcp mount (OpenWOP interop.md §The facets, §The MCP round ceiling; RFC 0204)
		{"mcp transport outside the enum", func(d *Declaration, s *Served) {
			d.MCP.ServerMount.Transports = []string{TransportStreamableHTTP, "grpc"}
		}, "mcp.serverMount.transports[1]", "", "stdio"},
		{"mcp transport not served", func(d *Declaration, s *Served) {
			d.MCP.ServerMount.Transports = []string{TransportStdio}
		}, "mcp.serverMount.transports[0]", ruleServerMount, `"stdio" is not served`},
		{"mcp serverMount without serverUrls", func(d *Declaration, s *Served) { d.MCP.ServerURLs = nil },
			"mcp.serverUrls", ruleServerMount, "addressing mcp.serverMount"},
		{"mcp serverUrls without a mount", func(d *Declaration, s *Served) {
			d.MCP.ServerMount, d.MCP.Features, d.MCP.Profiles = nil, nil, nil
			s.MCP = ServedMCP{Revisions: []string{MCPRevision}, Client: true}
		}, "mcp.serverUrls", ruleServerMount, "no MCP server is mounted"},
		{"mcp serverMount without a mount", func(d *Declaration, s *Served) {
			d.MCP.Features, d.MCP.Profiles = nil, nil
			s.MCP = ServedMCP{Revisions: []string{MCPRevision}, Client: true}
		}, "mcp.serverMount", ruleServerMount, "no MCP server is mounted"},
		{"mcp mount served without serverUrls", func(d *Declaration, s *Served) {
			d.MCP.ServerURLs, d.MCP.ServerMount = nil, nil
		}, "mcp.serverUrls", ruleServerMount, "an MCP server is mounted"},
		{"mcp mount served without serverMount", func(d *Declaration, s *Served) { d.MCP.ServerMount = nil },
			"mcp.serverMount", ruleServerMount, "an MCP server is mounted"},
		{"mcp serverUrl relative", func(d *Declaration, s *Served) { d.MCP.ServerURLs = []string{"mcp"} },
			"mcp.serverUrls[0]", ruleServerMount, "neither an absolute http(s) URL nor an absolute path"},
		{"mcp mrtr zero rounds", func(d *Declaration, s *Served) { d.MCP.MRTR.MaxRounds = 0 },
			"mcp.mrtr.maxRounds", "", "minimum"},
		{"mcp mrtr seventeen rounds", func(d *Declaration, s *Served) { d.MCP.MRTR.MaxRounds = 17 },
			"mcp.mrtr.maxRounds", "", "maximum"},
		{"mcp client not exposed", func(d *Declaration, s *Served) { s.MCP.Client = false },
			"mcp.client", ruleMCPClient, "not exposed"},
		{"mcp absent while mounted", func(d *Declaration, s *Served) { d.MCP = nil },
			"mcp", ruleFamilies, "the host serves MCP"},
		// hostEvents (OpenWOP RFC 0242 §B.3; host-event.schema.json; events.md §Host events)
		{"host event type malformed", func(d *Declaration, s *Served) { d.HostEvents.Types[0].Type = "Deploy" },
			"hostEvents.types[0].type", "", "pattern"},
		{"host event delivery unknown", func(d *Declaration, s *Served) { d.HostEvents.Types[0].Delivery = "sometimes" },
			"hostEvents.types[0].delivery", "", "durable"},
		{"host event type twice", func(d *Declaration, s *Served) {
			d.HostEvents.Types = append(d.HostEvents.Types, HostEventType{Type: "acme.deploy-finished", Delivery: Ephemeral})
		}, "hostEvents.types[1]", ruleEventTypes, "listed twice"},
		{"negotiation.decided ephemeral", func(d *Declaration, s *Served) {
			d.HostEvents.Types = []HostEventType{{Type: negotiationDecided, Delivery: Ephemeral}}
		}, "hostEvents.types[0].delivery", ruleHostEventDoc, `must be "durable"`},
		{"channel.presence durable", func(d *Declaration, s *Served) {
			d.HostEvents.Types = []HostEventType{{Type: "channel.presence", Delivery: Durable}}
		}, "hostEvents.types[0].delivery", ruleHostEventDoc, `must be "ephemeral"`},
		{"host events record with no types", func(d *Declaration, s *Served) {
			d.A2A.AgentCardURL = ""
			*d = Declaration{HostEvents: &HostEvents{}}
			d.HostEvents.normalize()
			*s = Served{}
		}, "hostEvents.types", "", "is required"},
		{"host events witness unknown", func(d *Declaration, s *Served) { d.HostEvents.Witness = "trust-me" },
			"hostEvents.witness", "", "seam-gated"},
	}
}

func TestBadDeclarations(t *testing.T) {
	v := newTestValidator(t)
	cases := badCases()
	if len(cases) < 25 {
		t.Fatalf("only %d bad cases", len(cases))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, s := fullHost()
			d.normalize()
			c.mutate(&d, &s)
			err := v.validate(testNow, d, s)
			if !errors.Is(err, ErrInvalidFacet) {
				t.Fatalf("Validate = %v, want an ErrInvalidFacet", err)
			}
			if !strings.Contains(err.Error(), c.field) {
				t.Errorf("error does not name %s:\n%v", c.field, err)
			}
			var found *FieldError
			for _, fe := range FieldErrors(err) {
				if fe.Field == c.field && fe.Rule == c.rule && strings.Contains(fe.Reason, c.reason) {
					found = fe
				}
			}
			if found == nil {
				t.Fatalf("no FieldError{Field: %q, Rule: %q, Reason ~ %q} in:\n%v", c.field, c.rule, c.reason, err)
			}
			if ad, err := v.Declare(testNow, d, s); ad != nil || err == nil {
				t.Errorf("Declare accepted what Validate refused")
			}
		})
	}
}

// Every problem is reported at once, across families, and each message
// names its field.
func TestAllProblemsJoined(t *testing.T) {
	v := newTestValidator(t)
	d, s := fullHost()
	d.normalize()
	d.A2A.PreferredVersion = "1.1"
	d.MCP.MRTR.MaxRounds = 17
	d.HostEvents.Types[0].Delivery = "sometimes"
	s.MCP.Client = false
	err := v.validate(testNow, d, s)
	got := map[string]bool{}
	for _, fe := range FieldErrors(err) {
		got[fe.Field] = true
		if !strings.HasPrefix(fe.Error(), "facets: "+fe.Field+" ") {
			t.Errorf("message %q does not start with its field", fe.Error())
		}
		if !errors.Is(fe, ErrInvalidFacet) {
			t.Errorf("%v does not wrap ErrInvalidFacet", fe)
		}
	}
	for _, f := range []string{"a2a.preferredVersion", "mcp.mrtr.maxRounds", "hostEvents.types[0].delivery", "mcp.client"} {
		if !got[f] {
			t.Errorf("%s not reported; got %v", f, err)
		}
	}
}

func TestFieldErrorMessage(t *testing.T) {
	v := newTestValidator(t)
	d, s := fullHost()
	d.normalize()
	d.A2A.PreferredVersion = "1.1"
	err := v.validate(testNow, d, s)
	const want = `facets: a2a.preferredVersion "1.1" is not in a2a.versions (OpenWOP interop.md §The refresh SLA)`
	if err == nil || err.Error() != want {
		t.Fatalf("Validate = %v, want exactly %q", err, want)
	}
}

// Validate checks what it is given: an unnormalized declaration misses
// its required lifecycle fields, and Declare is what fills them.
func TestValidateDoesNotNormalize(t *testing.T) {
	v := newTestValidator(t)
	d, s := mcpServerHost()
	err := v.validate(testNow, d, s)
	for _, f := range []string{"mcp.status", "mcp.since", "mcp.witness", "mcp.revisions"} {
		if !strings.Contains(err.Error(), f+" is required") {
			t.Errorf("Validate(unnormalized) does not report %s: %v", f, err)
		}
	}
	d.normalize()
	if err := v.validate(testNow, d, s); err != nil {
		t.Fatalf("Validate(normalized) = %v", err)
	}
}

func TestNormalizeDefaults(t *testing.T) {
	a := &A2A{Versions: []string{"1.0", "1.2", "1.1"}}
	a.normalize()
	if a.Status != StatusStable || a.Since != "2.0" || a.Witness != WitnessSeamGated {
		t.Errorf("lifecycle defaults = %q %q %q", a.Status, a.Since, a.Witness)
	}
	if a.PreferredVersion != "1.2" || a.MinimumVersion != "1.0" {
		t.Errorf("preferred, floor = %q, %q; want newest and oldest", a.PreferredVersion, a.MinimumVersion)
	}
	m := &MCP{}
	m.normalize()
	if len(m.Revisions) != 1 || m.Revisions[0] != MCPRevision || m.PreferredVersion != MCPRevision || m.MinimumRevision != MCPRevision {
		t.Errorf("mcp defaults = %+v", m)
	}
	// A host's own choices survive.
	kept := &A2A{Status: StatusExperimental, Since: "2.1", Witness: WitnessGated, Versions: []string{"1.0", "1.1"}, PreferredVersion: "1.0", MinimumVersion: "1.0"}
	kept.normalize()
	if kept.Status != StatusExperimental || kept.Since != "2.1" || kept.Witness != WitnessGated || kept.PreferredVersion != "1.0" {
		t.Errorf("Normalize overwrote host values: %+v", kept)
	}
	// Malformed versions leave preferred and floor for validation to name.
	bad := &A2A{Versions: []string{"1.0", "x"}}
	bad.normalize()
	if bad.PreferredVersion != "" || bad.MinimumVersion != "" {
		t.Errorf("Normalize guessed from malformed versions: %+v", bad)
	}
	// Claims are never invented.
	if a.Profiles != nil || a.AgentCardURL != "" || a.Streaming || a.RefreshedAt != "" {
		t.Errorf("Normalize invented a claim: %+v", a)
	}
}

func TestPinsMatchTheMap(t *testing.T) {
	v := newTestValidator(t)
	p := v.m.Pins()
	if p.A2A.Negotiated != A2AVersion || p.MCP.Revision != MCPRevision {
		t.Fatalf("library pins %s/%s, map pins %s/%s", A2AVersion, MCPRevision, p.A2A.Negotiated, p.MCP.Revision)
	}
	if got := v.m.RequiredFeatures(ProfileMCP2026); len(got) != 3 {
		t.Fatalf("map requires %v for %s", got, ProfileMCP2026)
	}
}

// Where a rule and the schema fault the same field, only the rule's more
// specific message is reported.
func TestRuleMessageReplacesSchemaMessage(t *testing.T) {
	v := newTestValidator(t)
	d, s := fullHost()
	d.normalize()
	d.A2A.AgentCardURL = "/agent-card.json" // also not a "uri" to the schema
	fes := FieldErrors(v.validate(testNow, d, s))
	if len(fes) != 1 || fes[0].Rule != ruleA2AProfile {
		t.Fatalf("got %d problems %v, want the one a2a.card message", len(fes), fes)
	}
	if got := checkRecord(v.schemas.a2a, "a2a", d.A2A); len(got) != 1 || got[0].Field != "a2a.agentCardUrl" {
		t.Fatalf("the schema alone should fault a2a.agentCardUrl, got %v", got.err())
	}
}

// A feature the map knows but this package cannot check against Served is
// refused rather than trusted.
func TestFeatureTheLibraryCannotVerify(t *testing.T) {
	builtin, err := mapping.Builtin().JSON()
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(builtin, &doc); err != nil {
		t.Fatal(err)
	}
	mcp := doc["mcp"].(map[string]any)
	mcp["features"] = append(mcp["features"].([]any), map[string]any{"id": "sampling", "requiredFor": []any{}, "meaning": "Sampling requests are answered."})
	raw, _ := json.Marshal(doc)
	m, err := mapping.Load(raw)
	if err != nil {
		t.Fatal(err)
	}
	v, err := NewValidator(Options{Map: m})
	if err != nil {
		t.Fatal(err)
	}
	d, s := fullHost()
	d.MCP.Features = append(d.MCP.Features, "sampling")
	_, err = v.Declare(testNow, d, s)
	fes := FieldErrors(err)
	if len(fes) != 1 || fes[0].Field != "mcp.features[4]" || !strings.Contains(fes[0].Reason, "cannot be verified") {
		t.Fatalf("Declare = %v, want mcp.features[4] cannot be verified", err)
	}
	// The same feature is unknown to the built-in map.
	_, err = newTestValidator(t).Declare(testNow, d, s)
	if fes := FieldErrors(err); len(fes) != 1 || !strings.Contains(fes[0].Reason, "not a feature of the interop map") {
		t.Fatalf("built-in map: %v", err)
	}
}
