package negotiate

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var fixedNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func mustPolicy(t testing.TB, c Config) *Policy {
	t.Helper()
	if c.Now == nil {
		c.Now = func() time.Time { return fixedNow }
	}
	p, err := NewPolicy(c)
	if err != nil {
		t.Fatalf("NewPolicy(%+v): %v", c, err)
	}
	return p
}

// a2aPolicy offers 0.3 and 1.0 with a 0.3 floor so that the downgrade band
// exists; the downgrade switch is the test's.
func a2aPolicy(t testing.TB, allowDowngrade bool) *Policy {
	return mustPolicy(t, Config{Protocol: A2A, Offered: []string{"1.0", "0.3"}, Preferred: "1.0", Floor: "0.3", AllowDowngrade: allowDowngrade})
}

func mcpPolicy(t testing.TB, offered []string, floor string, allowDowngrade bool) *Policy {
	return mustPolicy(t, Config{Protocol: MCP, Offered: offered, Preferred: "2026-07-28", Floor: floor, AllowDowngrade: allowDowngrade})
}

type want struct {
	outcome   Outcome
	reason    Reason
	version   string
	requested string
}

func check(t *testing.T, got Decision, w want) {
	t.Helper()
	g := want{got.Outcome, got.Reason, got.Version, got.Requested}
	if diff := cmp.Diff(w, g, cmp.AllowUnexported(want{})); diff != "" {
		t.Errorf("decision mismatch (-want +got):\n%s", diff)
	}
	if got.At != fixedNow {
		t.Errorf("At = %v, want %v", got.At, fixedNow)
	}
	if got.Outcome == Refused && got.Version != "" {
		t.Errorf("refusal carries version %q", got.Version)
	}
}

func TestInboundA2A(t *testing.T) {
	authed := Peer{Authenticated: true, Origin: "https://peer.example"}
	anon := Peer{Origin: "https://peer.example"}
	strict := mustPolicy(t, Config{Protocol: A2A, Offered: []string{"1.0"}, Preferred: "1.0", Floor: "1.0"})
	cases := []struct {
		name      string
		policy    *Policy
		requested string
		peer      Peer
		want      want
	}{
		{"absent header serves preferred", a2aPolicy(t, true), "", authed, want{Accepted, ReasonOK, "1.0", ""}},
		{"absent header, anonymous", a2aPolicy(t, true), "", anon, want{Accepted, ReasonOK, "1.0", ""}},
		{"preferred offered", a2aPolicy(t, true), "1.0", authed, want{Accepted, ReasonOK, "1.0", "1.0"}},
		{"patch is not negotiated", a2aPolicy(t, true), "1.0.1", authed, want{Accepted, ReasonOK, "1.0", "1.0"}},
		{"downgrade authenticated allowed", a2aPolicy(t, true), "0.3", authed, want{Accepted, ReasonOK, "0.3", "0.3"}},
		{"downgrade authenticated, policy forbids", a2aPolicy(t, false), "0.3", authed, want{Accepted, ReasonOK, "1.0", "0.3"}},
		{"downgrade unauthenticated never lowers", a2aPolicy(t, true), "0.3", anon, want{Accepted, ReasonUnauthenticated, "1.0", "0.3"}},
		{"below floor", a2aPolicy(t, true), "0.2", authed, want{Refused, ReasonBelowFloor, "", "0.2"}},
		{"below floor on a 1.0-only host", strict, "0.3", authed, want{Refused, ReasonBelowFloor, "", "0.3"}},
		{"below floor unauthenticated", strict, "0.3", anon, want{Refused, ReasonBelowFloor, "", "0.3"}},
		{"above preferred, not offered", a2aPolicy(t, true), "2.0", authed, want{Refused, ReasonUnsupported, "", "2.0"}},
		{"between floor and preferred, not offered", a2aPolicy(t, true), "0.5", authed, want{Refused, ReasonUnsupported, "", "0.5"}},
		{"malformed header", a2aPolicy(t, true), "one.zero", authed, want{Refused, ReasonUnsupported, "", ""}},
		{"malformed host name in header", a2aPolicy(t, true), "peer.example", authed, want{Refused, ReasonUnsupported, "", ""}},
		{"major only", a2aPolicy(t, true), "1", authed, want{Refused, ReasonUnsupported, "", ""}},
		{"leading zeros are not a version", a2aPolicy(t, true), "01.00", authed, want{Refused, ReasonUnsupported, "", ""}},
		{"patch with a leading zero", a2aPolicy(t, true), "1.0.01", authed, want{Refused, ReasonUnsupported, "", ""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := c.policy.Inbound(c.requested, c.peer)
			check(t, d, c.want)
			if d.Protocol != A2A || d.Floor != c.policy.Floor() {
				t.Errorf("protocol/floor = %s/%s", d.Protocol, d.Floor)
			}
			if d.RequestedRaw != c.requested {
				t.Errorf("RequestedRaw = %q, want %q", d.RequestedRaw, c.requested)
			}
			if !slices.Equal(d.Supported, c.policy.Offered()) {
				t.Errorf("Supported = %v", d.Supported)
			}
		})
	}
}

func TestInboundMCP(t *testing.T) {
	authed := Peer{Authenticated: true}
	anon := Peer{}
	current := mcpPolicy(t, []string{"2026-07-28"}, "2026-07-28", false)
	twoEras := mcpPolicy(t, []string{"2026-07-28", "2025-11-25"}, "2025-11-25", true)
	twoErasStrict := mcpPolicy(t, []string{"2026-07-28", "2025-11-25"}, "2025-11-25", false)
	withHeaderless := mcpPolicy(t, []string{"2026-07-28", "2025-03-26"}, "2025-03-26", true)
	cases := []struct {
		name      string
		policy    *Policy
		requested string
		peer      Peer
		want      want
	}{
		{"current revision", current, "2026-07-28", authed, want{Accepted, ReasonOK, "2026-07-28", "2026-07-28"}},
		{"current revision anonymous", current, "2026-07-28", anon, want{Accepted, ReasonOK, "2026-07-28", "2026-07-28"}},
		{"not offered, newer", current, "2027-01-01", authed, want{Refused, ReasonUnsupported, "", "2027-01-01"}},
		{"below floor", current, "2025-11-25", authed, want{Refused, ReasonBelowFloor, "", "2025-11-25"}},
		{"absent header, no legacy revision offered", current, "", authed, want{Refused, ReasonUnsupported, "", ""}},
		{"absent header served as 2025-03-26 when offered", withHeaderless, "", authed, want{Accepted, ReasonOK, "2025-03-26", ""}},
		{"older offered revision, authenticated", twoEras, "2025-11-25", authed, want{Accepted, ReasonOK, "2025-11-25", "2025-11-25"}},
		{"older offered revision, unauthenticated", twoEras, "2025-11-25", anon, want{Refused, ReasonUnauthenticated, "", "2025-11-25"}},
		{"older offered revision, policy forbids downgrade", twoErasStrict, "2025-11-25", authed, want{Refused, ReasonUnsupported, "", "2025-11-25"}},
		{"malformed revision", current, "2026-13-40", authed, want{Refused, ReasonUnsupported, "", ""}},
		{"no such day", current, "2026-02-31", authed, want{Refused, ReasonUnsupported, "", ""}},
		{"no such day below the floor", current, "2025-02-29", authed, want{Refused, ReasonUnsupported, "", ""}},
		{"leap day", twoEras, "2024-02-29", authed, want{Refused, ReasonBelowFloor, "", "2024-02-29"}},
		{"malformed a2a-style value", current, "1.0", authed, want{Refused, ReasonUnsupported, "", ""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			check(t, c.policy.Inbound(c.requested, c.peer), c.want)
		})
	}
}

func TestUnauthenticated(t *testing.T) {
	a2a := a2aPolicy(t, true)
	mcp := mcpPolicy(t, []string{"2026-07-28"}, "2026-07-28", false)
	cases := []struct {
		name      string
		policy    *Policy
		requested string
		want      want
	}{
		{"a2a preferred named", a2a, "1.0", want{Refused, ReasonUnauthenticated, "", "1.0"}},
		{"a2a patch dropped", a2a, "1.0.1", want{Refused, ReasonUnauthenticated, "", "1.0"}},
		{"a2a none named", a2a, "", want{Refused, ReasonUnauthenticated, "", ""}},
		{"a2a malformed never copied", a2a, "peer.example", want{Refused, ReasonUnauthenticated, "", ""}},
		{"mcp current", mcp, "2026-07-28", want{Refused, ReasonUnauthenticated, "", "2026-07-28"}},
		{"mcp below floor is still unauthenticated", mcp, "2025-11-25", want{Refused, ReasonUnauthenticated, "", "2025-11-25"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := c.policy.Unauthenticated(c.requested, Peer{Origin: "https://peer.example"})
			check(t, d, c.want)
			if d.RequestedRaw != c.requested || d.Floor != c.policy.Floor() || d.PeerDigest != peerDigest("https://peer.example") {
				t.Errorf("RequestedRaw/Floor/PeerDigest = %q/%q/%q", d.RequestedRaw, d.Floor, d.PeerDigest)
			}
		})
	}
}

func TestOutbound(t *testing.T) {
	authed := Peer{Authenticated: true, Origin: "https://remote.example"}
	anon := Peer{Origin: "https://remote.example"}
	cases := []struct {
		name   string
		policy *Policy
		peer   []string
		auth   Peer
		want   want
	}{
		{"a2a peer offers preferred", a2aPolicy(t, true), []string{"0.3", "1.0"}, authed, want{Accepted, ReasonOK, "1.0", "1.0"}},
		{"a2a patch in peer card", a2aPolicy(t, true), []string{"1.0.1"}, authed, want{Accepted, ReasonOK, "1.0", "1.0"}},
		{"a2a only older, authenticated, allowed", a2aPolicy(t, true), []string{"0.3"}, authed, want{Accepted, ReasonOK, "0.3", "0.3"}},
		{"a2a only older, unauthenticated", a2aPolicy(t, true), []string{"0.3"}, anon, want{Refused, ReasonUnauthenticated, "", "0.3"}},
		{"a2a only older, policy forbids", a2aPolicy(t, false), []string{"0.3"}, authed, want{Refused, ReasonUnsupported, "", "0.3"}},
		{"a2a peer below floor", mustPolicy(t, Config{Protocol: A2A, Offered: []string{"1.0"}, Preferred: "1.0", Floor: "1.0"}), []string{"0.3"}, authed, want{Refused, ReasonBelowFloor, "", ""}},
		{"a2a nothing common", a2aPolicy(t, true), []string{"2.0"}, authed, want{Refused, ReasonUnsupported, "", ""}},
		{"a2a garbage ignored", a2aPolicy(t, true), []string{"x", "1.0"}, authed, want{Accepted, ReasonOK, "1.0", "1.0"}},
		{"a2a peer offers nothing", a2aPolicy(t, true), nil, authed, want{Refused, ReasonUnsupported, "", ""}},
		{"mcp current", mcpPolicy(t, []string{"2026-07-28"}, "2026-07-28", false), []string{"2025-11-25", "2026-07-28"}, authed, want{Accepted, ReasonOK, "2026-07-28", "2026-07-28"}},
		{"mcp peer only legacy", mcpPolicy(t, []string{"2026-07-28"}, "2026-07-28", false), []string{"2025-11-25"}, authed, want{Refused, ReasonBelowFloor, "", ""}},
		{"mcp newest common when preferred missing", mcpPolicy(t, []string{"2026-07-28", "2025-11-25", "2025-06-18"}, "2025-06-18", true), []string{"2025-06-18", "2025-11-25"}, authed, want{Accepted, ReasonOK, "2025-11-25", "2025-11-25"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := c.policy.Outbound(c.peer, c.auth)
			check(t, d, c.want)
			if d.Accepted() && compare(d.Protocol, d.Version, c.policy.Floor()) < 0 {
				t.Errorf("outbound version %s below floor %s", d.Version, c.policy.Floor())
			}
		})
	}
}

// TestNeverBelowFloorOrPreferredWhenUnauthenticated sweeps every requested
// version against the two invariants of OpenWOP interop.md §Negotiation is a
// protocol (Authentication, The floor).
func TestNeverBelowFloorOrPreferredWhenUnauthenticated(t *testing.T) {
	p := mustPolicy(t, Config{Protocol: A2A, Offered: []string{"1.2", "1.1", "1.0"}, Preferred: "1.2", Floor: "1.0", AllowDowngrade: true})
	for maj := 0; maj <= 2; maj++ {
		for min := 0; min <= 3; min++ {
			v := string(rune('0'+maj)) + "." + string(rune('0'+min))
			for _, auth := range []bool{false, true} {
				d := p.Inbound(v, Peer{Authenticated: auth})
				if !d.Accepted() {
					continue
				}
				if compare(A2A, d.Version, p.Floor()) < 0 {
					t.Errorf("%s auth=%v accepted below floor: %s", v, auth, d.Version)
				}
				if !auth && d.Version != p.Preferred() {
					t.Errorf("%s unauthenticated accepted %s, not preferred", v, d.Version)
				}
				if !p.offers(d.Version) {
					t.Errorf("%s accepted unoffered %s", v, d.Version)
				}
			}
		}
	}
}

func TestNewPolicyRefusesBadConfig(t *testing.T) {
	cases := []struct {
		name string
		c    Config
		msg  string
	}{
		{"unknown protocol", Config{Protocol: "grpc", Offered: []string{"1.0"}, Preferred: "1.0", Floor: "1.0"}, "neither a2a nor mcp"},
		{"nothing offered", Config{Protocol: A2A, Preferred: "1.0", Floor: "1.0"}, "no version offered"},
		{"malformed offered", Config{Protocol: A2A, Offered: []string{"v1"}, Preferred: "v1", Floor: "v1"}, `"v1" is not well formed`},
		{"patch offered", Config{Protocol: A2A, Offered: []string{"1.0.1"}, Preferred: "1.0.1", Floor: "1.0.1"}, "not well formed"},
		{"duplicate", Config{Protocol: A2A, Offered: []string{"1.0", "1.0"}, Preferred: "1.0", Floor: "1.0"}, "offered twice"},
		{"preferred not offered", Config{Protocol: A2A, Offered: []string{"1.0"}, Preferred: "1.1", Floor: "1.0"}, "preferred version"},
		{"floor not offered", Config{Protocol: A2A, Offered: []string{"1.0"}, Preferred: "1.0", Floor: "0.3"}, "floor"},
		{"floor above preferred", Config{Protocol: A2A, Offered: []string{"1.0", "0.3"}, Preferred: "0.3", Floor: "1.0"}, "above preferred"},
		{"mcp revision not a date", Config{Protocol: MCP, Offered: []string{"2026-7-28"}, Preferred: "2026-7-28", Floor: "2026-7-28"}, "not well formed"},
		{"mcp revision no such day", Config{Protocol: MCP, Offered: []string{"2026-02-31"}, Preferred: "2026-02-31", Floor: "2026-02-31"}, "not well formed"},
		{"a2a leading zero offered", Config{Protocol: A2A, Offered: []string{"01.0"}, Preferred: "01.0", Floor: "01.0"}, "not well formed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewPolicy(c.c)
			if err == nil || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("err = %v, want it to mention %q", err, c.msg)
			}
		})
	}
}

func TestOfferedIsCopied(t *testing.T) {
	offered := []string{"1.0"}
	p := mustPolicy(t, Config{Protocol: A2A, Offered: offered, Preferred: "1.0", Floor: "1.0"})
	offered[0] = "9.9"
	if p.Offered()[0] != "1.0" {
		t.Fatal("policy shares the caller's slice")
	}
}
