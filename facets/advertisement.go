package facets

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"
)

// Family names: the keys of the records in the discovery document.
const (
	FamilyA2A        = "a2a"
	FamilyMCP        = "mcp"
	FamilyHostEvents = "hostEvents"
	FamilyAgents     = "agents"
)

// Advertisement is a validated declaration and the family records it puts
// in the discovery document (GET /.well-known/openwop). Only
// [Validator.Declare] makes one, so a host never holds a half-valid
// advertisement; it is immutable and safe for concurrent use.
type Advertisement struct {
	a2a        *A2A
	mcp        *MCP
	hostEvents *HostEvents
	agents     *Agents
	records    map[string]json.RawMessage
}

func newAdvertisement(d Declaration) (*Advertisement, error) {
	ad := &Advertisement{a2a: d.A2A, mcp: d.MCP, hostEvents: hostEventsRecord(d), agents: d.Agents, records: map[string]json.RawMessage{}}
	for name, rec := range map[string]any{FamilyA2A: ad.a2a, FamilyMCP: ad.mcp, FamilyHostEvents: ad.hostEvents, FamilyAgents: ad.agents} {
		if isNil(rec) {
			continue
		}
		raw, err := json.Marshal(rec)
		if err != nil {
			return nil, fmt.Errorf("facets: encode %s: %w", name, err)
		}
		ad.records[name] = raw
	}
	return ad, nil
}

func isNil(rec any) bool {
	switch r := rec.(type) {
	case *A2A:
		return r == nil
	case *MCP:
		return r == nil
	case *HostEvents:
		return r == nil
	case *Agents:
		return r == nil
	}
	return rec == nil
}

// Records returns the family records to embed in the discovery document,
// keyed by family name ("a2a", "mcp", "hostEvents", "agents"); a family not
// advertised has no key. The map and its bytes are the caller's copy.
//
// The records never carry a transport list, a grpc block, a root profiles
// list or a supported flag (OpenWOP interop.md §REST is the wire; capabilities.md §2–§4): the presence of a record is the
// claim, and the presence of a facet key is the facet's claim.
func (ad *Advertisement) Records() map[string]json.RawMessage {
	out := make(map[string]json.RawMessage, len(ad.records))
	for k, v := range ad.records {
		out[k] = bytes.Clone(v)
	}
	return out
}

// MarshalJSON encodes the records as one object with sorted keys, ready to
// be merged into the discovery root.
func (ad *Advertisement) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, k := range slices.Sorted(maps.Keys(ad.records)) {
		if i > 0 {
			buf.WriteByte(',')
		}
		key, _ := json.Marshal(k)
		buf.Write(key)
		buf.WriteByte(':')
		buf.Write(ad.records[k])
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// A2A returns a copy of the a2a record, or nil when none is advertised.
func (ad *Advertisement) A2A() *A2A { return ad.a2a.Clone() }

// MCP returns a copy of the mcp record, or nil when none is advertised.
func (ad *Advertisement) MCP() *MCP { return ad.mcp.Clone() }

// HostEvents returns a copy of the hostEvents record as advertised
// (including negotiation.decided when inbound), or nil.
func (ad *Advertisement) HostEvents() *HostEvents { return ad.hostEvents.Clone() }

// Agents returns a copy of the agents record, or nil when none is
// advertised.
func (ad *Advertisement) Agents() *Agents { return ad.agents.Clone() }

// Inbound reports whether an inbound A2A or MCP surface is advertised.
func (ad *Advertisement) Inbound() bool {
	return Declaration{A2A: ad.a2a, MCP: ad.mcp}.inbound()
}

// Advertises reports whether facet ("a2a.streaming", "mcp.serverMount",
// ...) is claimed; it is the advertised func that mapping.Map.A2AGate and
// MCPGate take (OpenWOP interop.md §The operation mappings).
func (ad *Advertisement) Advertises(facet string) bool {
	return ad.a2a.advertises(facet) || ad.mcp.advertises(facet)
}

// RefreshDeadline returns the earliest refresh deadline of the advertised
// families, or the zero time when neither a2a nor mcp is advertised.
func (ad *Advertisement) RefreshDeadline() time.Time {
	var ds []time.Time
	if ad.a2a != nil {
		ds = append(ds, ad.a2a.RefreshDeadline())
	}
	if ad.mcp != nil {
		ds = append(ds, ad.mcp.RefreshDeadline())
	}
	if len(ds) == 0 {
		return time.Time{}
	}
	return slices.MinFunc(ds, time.Time.Compare)
}
