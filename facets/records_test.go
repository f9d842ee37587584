package facets

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func hosts() []struct {
	name string
	make func() (Declaration, Served)
} {
	return []struct {
		name string
		make func() (Declaration, Served)
	}{
		{"full", fullHost},
		{"mcp-server", mcpServerHost},
		{"client-only", clientHost},
	}
}

func indent(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Indent(&buf, b, "", "  "); err != nil {
		t.Fatal(err)
	}
	buf.WriteByte('\n')
	return buf.Bytes()
}

func TestRecordsGolden(t *testing.T) {
	v := newTestValidator(t)
	for _, h := range hosts() {
		t.Run(h.name, func(t *testing.T) {
			d, s := h.make()
			ad := mustDeclare(t, v, d, s)
			raw, err := json.Marshal(ad)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, h.name+".golden", indent(t, raw))
			// Each record alone is the encoding of its typed copy.
			recs := ad.Records()
			for name, want := range map[string]any{FamilyA2A: ad.A2A(), FamilyMCP: ad.MCP(), FamilyHostEvents: ad.HostEvents(), FamilyAgents: ad.Agents()} {
				got, ok := recs[name]
				if isNil(want) {
					if ok {
						t.Errorf("record %s present for a family not advertised: %s", name, got)
					}
					continue
				}
				enc, _ := json.Marshal(want)
				if !bytes.Equal(got, enc) {
					t.Errorf("record %s = %s, typed copy encodes %s", name, got, enc)
				}
			}
		})
	}
}

// The wire record of each family, byte for byte: field order and names are
// the upstream camelCase keys.
func TestFacetEncodingGolden(t *testing.T) {
	d, _ := fullHost()
	d.normalize()
	d.A2A.Until, d.A2A.Status = "2027-06-01", StatusExperimental
	for name, rec := range map[string]any{"a2a-record.golden": d.A2A, "mcp-record.golden": d.MCP} {
		raw, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		golden(t, name, append(raw, '\n'))
	}
}

func TestNegotiationDecidedListedWhenInbound(t *testing.T) {
	v := newTestValidator(t)
	want := HostEventType{Type: negotiationDecided, Delivery: Durable}
	cases := []struct {
		name   string
		decl   func() (Declaration, Served)
		listed bool
	}{
		{"a2a card only", func() (Declaration, Served) {
			d, s := fullHost()
			d.MCP, s.MCP = nil, ServedMCP{}
			d.HostEvents = nil
			return d, s
		}, true},
		{"mcp mount only", mcpServerHost, true},
		{"outbound only", clientHost, false},
		{"outbound only with a host type", func() (Declaration, Served) {
			d, s := clientHost()
			d.HostEvents = &HostEvents{Types: []HostEventType{{Type: "acme.sync", Delivery: Ephemeral}}}
			return d, s
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, s := c.decl()
			ad := mustDeclare(t, v, d, s)
			he := ad.HostEvents()
			if ad.Inbound() != c.listed {
				t.Fatalf("Inbound() = %v, want %v", ad.Inbound(), c.listed)
			}
			got := he != nil && slices.Contains(he.Types, want)
			if got != c.listed {
				t.Fatalf("negotiation.decided listed = %v, want %v (record %+v)", got, c.listed, he)
			}
			_, hasKey := ad.Records()[FamilyHostEvents]
			if c.listed && !hasKey {
				t.Fatal("inbound host without a hostEvents record")
			}
			if d.HostEvents == nil && !c.listed && hasKey {
				t.Fatal("hostEvents record invented for a host with nothing to list")
			}
		})
	}
}

// A host that lists negotiation.decided itself keeps one entry.
func TestNegotiationDecidedNotDuplicated(t *testing.T) {
	v := newTestValidator(t)
	d, s := fullHost()
	d.HostEvents.Types = append(d.HostEvents.Types, HostEventType{Type: negotiationDecided, Delivery: Durable})
	ad := mustDeclare(t, v, d, s)
	n := 0
	for _, ty := range ad.HostEvents().Types {
		if ty.Type == negotiationDecided {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("negotiation.decided listed %d times", n)
	}
}

// walk calls fn for every member of every object in v, with the path of
// keys leading to it.
func walk(v any, path []string, fn func(path []string, key string, val any)) {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			fn(path, k, val)
			walk(val, append(slices.Clone(path), k), fn)
		}
	case []any:
		for _, val := range x {
			walk(val, path, fn)
		}
	}
}

// OpenWOP interop.md §REST is the wire, §gRPC and capabilities.md §2–§4: no
// transport list (except the MCP server's own), no grpc
// block, no root profiles, no supported flag, no false facet.
func TestRecordsCarryNoForbiddenKeys(t *testing.T) {
	v := newTestValidator(t)
	for _, h := range hosts() {
		t.Run(h.name, func(t *testing.T) {
			d, s := h.make()
			raw, err := json.Marshal(mustDeclare(t, v, d, s))
			if err != nil {
				t.Fatal(err)
			}
			var doc map[string]any
			if err := json.Unmarshal(raw, &doc); err != nil {
				t.Fatal(err)
			}
			for k := range doc {
				if k != FamilyA2A && k != FamilyMCP && k != FamilyHostEvents && k != FamilyAgents {
					t.Errorf("unexpected root key %q", k)
				}
			}
			walk(doc, nil, func(path []string, key string, val any) {
				at := strings.Join(append(slices.Clone(path), key), ".")
				switch {
				case key == "supportedTransports" || key == "grpc" || key == "supported":
					t.Errorf("forbidden key %s", at)
				case key == "profiles" && len(path) == 0:
					t.Errorf("root profiles at %s", at)
				case key == "transports" && at != "mcp.serverMount.transports":
					t.Errorf("transport list at %s", at)
				case strings.Contains(key, "."):
					t.Errorf("dotted key %s", at)
				case val == false:
					t.Errorf("facet %s encoded as false; omit it", at)
				}
			})
		})
	}
}

func TestUnofferedBooleanFacetsOmitted(t *testing.T) {
	d, _ := fullHost()
	d.normalize()
	d.A2A.Streaming, d.A2A.PushNotifications, d.A2A.DurableTasks, d.A2A.AgentCards = false, false, false, false
	d.MCP.Client = false
	for name, rec := range map[string]any{"a2a": d.A2A, "mcp": d.MCP} {
		raw, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"streaming", "pushNotifications", "durableTasks", "agentCards", "client"} {
			if _, ok := m[k]; ok {
				t.Errorf("%s record carries %q although it is not offered: %s", name, k, raw)
			}
		}
	}
}

func TestAdvertisementIsImmutable(t *testing.T) {
	v := newTestValidator(t)
	d, s := fullHost()
	ad := mustDeclare(t, v, d, s)
	before, _ := json.Marshal(ad)

	// Neither the declaration it came from nor the copies it hands out
	// reach into it.
	d.A2A.Versions = append(d.A2A.Versions, "9.9")
	d.MCP.ServerMount.Transports[0] = "stdio"
	a := ad.A2A()
	a.Profiles[0] = "a2a-9.9"
	m := ad.MCP()
	m.Features[0] = "x"
	m.MRTR.MaxRounds = 99
	ad.HostEvents().Types[0].Type = "x.y"
	ad.Records()[FamilyA2A][0] = 'X'

	after, _ := json.Marshal(ad)
	if diff := cmp.Diff(string(before), string(after)); diff != "" {
		t.Fatalf("advertisement changed (-before +after):\n%s", diff)
	}
}

func TestDeclareDoesNotTouchInput(t *testing.T) {
	v := newTestValidator(t)
	d, s := mcpServerHost()
	mustDeclare(t, v, d, s)
	if d.MCP.Status != "" || d.MCP.Revisions != nil {
		t.Fatalf("Declare normalized the caller's declaration: %+v", d.MCP)
	}
}

func TestDeclareRefusesWithoutAdvertisement(t *testing.T) {
	v := newTestValidator(t)
	d, s := fullHost()
	s.A2A.Streaming = false
	ad, err := v.Declare(testNow, d, s)
	if ad != nil || !errors.Is(err, ErrInvalidFacet) {
		t.Fatalf("Declare = %v, %v; want nil, ErrInvalidFacet", ad, err)
	}
}
