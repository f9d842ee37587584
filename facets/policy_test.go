package facets

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/internal/interopmap"
	"github.com/wopinterop/wopinterop/mapping"
	"github.com/wopinterop/wopinterop/negotiate"
)

func TestA2APolicyFromFacet(t *testing.T) {
	a := &A2A{Versions: []string{"1.1", "1.0"}, PreferredVersion: "1.1", MinimumVersion: "1.0"}
	clock := func() time.Time { return testNow }
	for _, allow := range []bool{false, true} {
		p, err := a.Policy(allow, clock)
		if err != nil {
			t.Fatal(err)
		}
		if p.Protocol() != negotiate.A2A || p.Preferred() != "1.1" || p.Floor() != "1.0" || !slices.Equal(p.Offered(), a.Versions) {
			t.Fatalf("policy = %v %q %q %v", p.Protocol(), p.Preferred(), p.Floor(), p.Offered())
		}
		d := p.Inbound("1.0", negotiate.Peer{Authenticated: true})
		want := "1.1"
		if allow {
			want = "1.0"
		}
		if d.Version != want || !d.At.Equal(testNow) {
			t.Errorf("allowDowngrade=%v: Inbound(1.0) = %q at %v, want %q at %v", allow, d.Version, d.At, want, testNow)
		}
		if d := p.Inbound("0.3", negotiate.Peer{Authenticated: true}); d.Reason != negotiate.ReasonBelowFloor {
			t.Errorf("Inbound(0.3) reason = %q, want below-floor", d.Reason)
		}
	}
	// The config is a copy: changing it does not reach the facet.
	c := a.negotiateConfig(false, nil)
	c.Offered[0] = "9.9"
	if a.Versions[0] != "1.1" {
		t.Fatal("negotiateConfig shares the facet's slice")
	}
}

func TestMCPPolicyFromFacet(t *testing.T) {
	m := &MCP{Revisions: []string{"2025-11-25", "2026-07-28"}, PreferredVersion: "2026-07-28", MinimumRevision: "2025-11-25"}
	p, err := m.Policy(true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.Protocol() != negotiate.MCP || p.Preferred() != "2026-07-28" || p.Floor() != "2025-11-25" {
		t.Fatalf("policy = %v %q %q", p.Protocol(), p.Preferred(), p.Floor())
	}
	if d := p.Inbound("2025-11-25", negotiate.Peer{}); d.Accepted() || d.Reason != negotiate.ReasonUnauthenticated {
		t.Errorf("unauthenticated downgrade = %v %q, want refused unauthenticated", d.Outcome, d.Reason)
	}
}

// Every facet that validates yields a policy.
func TestValidatedFacetsYieldPolicies(t *testing.T) {
	v := newTestValidator(t)
	for _, h := range hosts() {
		d, s := h.make()
		ad := mustDeclare(t, v, d, s)
		if a := ad.A2A(); a != nil {
			if _, err := a.Policy(false, nil); err != nil {
				t.Errorf("%s: a2a policy: %v", h.name, err)
			}
		}
		if m := ad.MCP(); m != nil {
			if _, err := m.Policy(false, nil); err != nil {
				t.Errorf("%s: mcp policy: %v", h.name, err)
			}
		}
	}
}

func TestPolicyOfInvalidFacet(t *testing.T) {
	cases := map[string]func() error{
		"a2a preferred not offered": func() error {
			_, err := (&A2A{Versions: []string{"1.0"}, PreferredVersion: "1.1", MinimumVersion: "1.0"}).Policy(false, nil)
			return err
		},
		"mcp no revisions": func() error {
			_, err := (&MCP{PreferredVersion: MCPRevision, MinimumRevision: MCPRevision}).Policy(false, nil)
			return err
		},
	}
	for name, f := range cases {
		if err := f(); !errors.Is(err, ErrInvalidFacet) {
			t.Errorf("%s: err = %v, want ErrInvalidFacet", name, err)
		}
	}
}

// The advertisement is the advertised func of the map's gates (OpenWOP interop.md §The operation mappings).
func TestAdvertisesDrivesTheGates(t *testing.T) {
	v := newTestValidator(t)
	m := (*interopmap.Map)(mapping.Builtin())

	d, s := fullHost()
	full := mustDeclare(t, v, d, s)
	d.A2A.Streaming = false
	d.MCP.ServerMount = nil
	d.MCP.ServerURLs, d.MCP.Features, d.MCP.Profiles = nil, nil, nil
	s.MCP = ServedMCP{Revisions: []string{MCPRevision}, Client: true}
	reduced := mustDeclare(t, v, d, s)

	if err := m.A2AGate("SubscribeToTask", "", full.Advertises); err != nil {
		t.Errorf("full host: SubscribeToTask gated: %v", err)
	}
	var off *interopmap.FacetOffError
	if err := m.A2AGate("SubscribeToTask", "", reduced.Advertises); !errors.As(err, &off) || off.Facet != "a2a.streaming" {
		t.Errorf("no streaming: SubscribeToTask gate = %v, want a2a.streaming off", err)
	}
	if err := m.MCPGate("tools/call", full.Advertises); err != nil {
		t.Errorf("full host: tools/call gated: %v", err)
	}
	if err := m.MCPGate("tools/call", reduced.Advertises); !errors.As(err, &off) || off.Facet != "mcp.serverMount" {
		t.Errorf("no mount: tools/call gate = %v, want mcp.serverMount off", err)
	}
}

func TestAdvertisesEveryKnownFacet(t *testing.T) {
	d, _ := fullHost()
	d.normalize()
	for _, f := range []string{
		"a2a.versions", "a2a.preferredVersion", "a2a.minimumVersion", "a2a.refreshedAt", "a2a.profiles",
		"a2a.agentCardUrl", "a2a.streaming", "a2a.pushNotifications", "a2a.durableTasks", "a2a.agentCards",
		"mcp.revisions", "mcp.preferredVersion", "mcp.minimumRevision", "mcp.refreshedAt", "mcp.profiles",
		"mcp.features", "mcp.serverUrls", "mcp.serverMount", "mcp.mrtr", "mcp.client",
	} {
		if !interopmap.KnownFacet(f) {
			t.Errorf("%s is not a facet the map knows", f)
		}
		if !d.A2A.advertises(f) && !d.MCP.advertises(f) {
			t.Errorf("full host does not advertise %s", f)
		}
	}
	var none *A2A
	if none.advertises("a2a.versions") || (*MCP)(nil).advertises("mcp.revisions") {
		t.Error("a nil record advertises something")
	}
	empty := &A2A{}
	for _, f := range []string{"a2a.profiles", "a2a.agentCardUrl", "a2a.streaming", "a2a.pushNotifications", "a2a.durableTasks", "a2a.agentCards", "a2a.bogus", "mcp.client"} {
		if empty.advertises(f) {
			t.Errorf("empty a2a advertises %s", f)
		}
	}
	emptyMCP := &MCP{}
	for _, f := range []string{"mcp.profiles", "mcp.features", "mcp.serverUrls", "mcp.serverMount", "mcp.mrtr", "mcp.client", "a2a.streaming"} {
		if emptyMCP.advertises(f) {
			t.Errorf("empty mcp advertises %s", f)
		}
	}
}
