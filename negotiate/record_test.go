package negotiate

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	goldenfile "github.com/wopinterop/wopinterop/internal/golden"
	"github.com/wopinterop/wopinterop/internal/sharedspec"
)

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, name, got)
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestOrigin(t *testing.T) {
	cases := []struct{ in, want string }{
		{"https://Agent.Example.COM/a2a/v1?x=1#f", "https://agent.example.com"},
		{"https://agent.example:443/", "https://agent.example"},
		{"http://agent.example:80", "http://agent.example"},
		{"http://agent.example:8080/x", "http://agent.example:8080"},
		{"https://agent.example:0443", "https://agent.example"},
		{"https://user:secret@agent.example/", "https://agent.example"},
		{"https://[2001:DB8::1]:8443/p", "https://[2001:db8::1]:8443"},
		{"https://127.0.0.1:443", "https://127.0.0.1"},
	}
	for _, c := range cases {
		got, ok := Origin(c.in)
		if !ok || got != c.want {
			t.Errorf("Origin(%q) = %q, %v; want %q", c.in, got, ok, c.want)
		}
		if d := peerDigest(c.in); d != sha(c.want) {
			t.Errorf("peerDigest(%q) = %s, want sha256(%q)", c.in, d, c.want)
		}
	}
	for _, bad := range []string{"", "agent.example", "/relative", "ftp://agent.example", "https://", "https://agent.example:99999", "https://agent.example:x", "mailto:a@b"} {
		if got, ok := Origin(bad); ok {
			t.Errorf("Origin(%q) = %q, want refusal", bad, got)
		}
		if d := peerDigest(bad); d != "" {
			t.Errorf("peerDigest(%q) = %q, want empty", bad, d)
		}
	}
}

func TestRecordGolden(t *testing.T) {
	p := a2aPolicy(t, true)
	peer := Peer{Authenticated: true, Origin: "https://peer.example:8443/a2a"}
	var all []byte
	for _, requested := range []string{"", "1.0", "0.3", "0.2", "7.0", "bogus"} {
		all = append(all, p.Inbound(requested, peer).Record()...)
		all = append(all, '\n')
	}
	all = append(all, p.Inbound("0.3", Peer{}).Record()...)
	all = append(all, '\n')
	golden(t, "records.golden", all)
}

func TestRecordIsValidJSONWithOnlyKnownFields(t *testing.T) {
	d := a2aPolicy(t, true).Inbound("0.3", Peer{Authenticated: true, Origin: "https://x.example"})
	var m map[string]any
	if err := json.Unmarshal(d.Record(), &m); err != nil {
		t.Fatal(err)
	}
	allowed := map[string]bool{"protocol": true, "outcome": true, "at": true, "version": true, "floor": true, "requested": true, "reason": true, "peerDigest": true}
	for k := range m {
		if !allowed[k] {
			t.Errorf("record carries unexpected field %q", k)
		}
	}
	if m["version"] != "0.3" || m["requested"] != "0.3" || m["peerDigest"] != sha("https://x.example") {
		t.Errorf("record = %v", m)
	}
}

func TestHandBuiltDecisionIsEscaped(t *testing.T) {
	d := Decision{Protocol: A2A, Outcome: Refused, Version: "1\"},\"x\":\"<y>\n\u00e9", At: fixedNow}
	var m map[string]any
	if err := json.Unmarshal(d.Record(), &m); err != nil {
		t.Fatalf("escaped record is not JSON: %v\n%s", err, d.Record())
	}
	if _, injected := m["x"]; injected {
		t.Fatal("a hand-built value injected a member")
	}
}

// schemaFor compiles the stored negotiationDecided extract with RFC 0242's
// optional `requested` added: the stored copy predates it (see
// shared/spec/openwop-v2/SOURCE.md) and is closed. The extract's $id points
// into its parent document, which the stored copy is not, so it is dropped.
func schemaFor(t *testing.T) func([]byte) {
	s := sharedspec.Schema(t, "openwop-v2/extracts/negotiationDecided.schema.json", nil, func(m map[string]any) {
		delete(m, "$id")
		props := m["properties"].(map[string]any)
		props["requested"] = map[string]any{"type": "string"}
	})
	return func(doc []byte) { t.Helper(); sharedspec.Validate(t, s, doc) }
}

// allDecisions exercises every branch in both protocols and directions.
func allDecisions(t *testing.T) []Decision {
	a2a := a2aPolicy(t, true)
	a2aStrict := a2aPolicy(t, false)
	mcp := mcpPolicy(t, []string{"2026-07-28", "2025-11-25"}, "2025-11-25", true)
	peers := []Peer{{Authenticated: true, Origin: "https://peer.example"}, {Origin: "http://peer.example:8080"}, {}}
	var out []Decision
	for _, peer := range peers {
		for _, v := range []string{"", "1.0", "1.0.1", "0.3", "0.2", "2.0", "junk"} {
			out = append(out, a2a.Inbound(v, peer), a2aStrict.Inbound(v, peer))
		}
		for _, v := range []string{"", "2026-07-28", "2025-11-25", "2025-06-18", "2027-01-01", "junk"} {
			out = append(out, mcp.Inbound(v, peer))
		}
		for _, offers := range [][]string{{"1.0"}, {"0.3"}, {"0.1"}, {"9.9"}, nil} {
			out = append(out, a2a.Outbound(offers, peer), a2aStrict.Outbound(offers, peer))
		}
		for _, offers := range [][]string{{"2026-07-28"}, {"2025-11-25"}, {"2024-11-05"}} {
			out = append(out, mcp.Outbound(offers, peer))
		}
	}
	return out
}

func TestEveryRecordValidatesAgainstUpstreamSchema(t *testing.T) {
	validate := schemaFor(t)
	for _, d := range allDecisions(t) {
		validate(d.Record())
		if d.Accepted() && d.Version == "" {
			t.Errorf("accepted record without version: %s", d.Record())
		}
		if d.Reason == ReasonBelowFloor && d.Version != "" {
			t.Errorf("below-floor record with version: %s", d.Record())
		}
	}
}

// TestNoFieldCarriesThePeerHost is the suite's content-free check: no field
// of any record contains the peer host in clear, even when the peer puts its
// host into the version header.
func TestNoFieldCarriesThePeerHost(t *testing.T) {
	const host = "peer-host-7f3a.example"
	p := a2aPolicy(t, true)
	m := mcpPolicy(t, []string{"2026-07-28"}, "2026-07-28", false)
	origins := []string{"https://" + host, "http://" + host + ":8080/path", "https://user:pw@" + host}
	for _, origin := range origins {
		peer := Peer{Authenticated: true, Origin: origin}
		for _, d := range []Decision{
			p.Inbound("", peer), p.Inbound("1.0", peer), p.Inbound(host, peer), p.Inbound("1.0."+host, peer),
			m.Inbound(host, peer), m.Inbound("2026-07-28", peer), p.Outbound([]string{host, "1.0"}, peer),
		} {
			rec := string(d.Record())
			if strings.Contains(strings.ToLower(rec), host) || strings.Contains(rec, "user") || strings.Contains(rec, "pw@") {
				t.Errorf("record leaks the peer: %s", rec)
			}
			if d.PeerDigest == "" {
				t.Errorf("record for %s has no peerDigest", origin)
			}
		}
	}
}
