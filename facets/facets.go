package facets

import (
	"slices"
	"time"

	"github.com/wopinterop/wopinterop/negotiate"
)

// Status is a family record's stability claim (OpenWOP interop.md §The facets; capabilities.md §2).
type Status string

// The three statuses. A stable record carries no Until; an experimental or
// deprecated one must.
const (
	StatusStable       Status = "stable"
	StatusExperimental Status = "experimental"
	StatusDeprecated   Status = "deprecated"
)

// Witness is how a conformance suite can observe a family (OpenWOP capabilities.md §2).
type Witness string

// The witness classes. The declaration gives a2a and mcp SeamGated.
const (
	WitnessUnaided           Witness = "witnessable-unaided"
	WitnessGated             Witness = "witnessable-gated"
	WitnessSeamGated         Witness = "seam-gated"
	WitnessClaimsCheck       Witness = "claims-check"
	WitnessNegativeExistence Witness = "negative-existence"
)

// Delivery is a host-event type's delivery class (OpenWOP host-event.schema.json).
type Delivery string

// The two delivery classes.
const (
	Durable   Delivery = "durable"
	Ephemeral Delivery = "ephemeral"
)

// Defaults that [Validator.Declare] fills in. A2AVersion and MCPRevision are the
// versions this library speaks (the interop map's pins); defaultSince is the
// first OpenWOP v2 minor, where a host that adopted the library with v2
// began serving the family.
const (
	A2AVersion     = "1.0"
	MCPRevision    = "2026-07-28"
	defaultSince   = "2.0"
	defaultStatus  = StatusStable
	defaultWitness = WitnessSeamGated
)

// Profile ids this library can back (OpenWOP interop.md §Legacy profiles are absent; interop map, a2a.card and mcp.features).
const (
	ProfileA2A10   = "a2a-1.0"
	ProfileMCP2026 = "mcp-2026-07-28"
)

// negotiationDecided is the host-event type of a runless negotiation record
// (negotiate's record type); its delivery class is always durable (OpenWOP
// RFC 0242 §B; interop.md §The audit event).
const negotiationDecided = negotiate.EventType

// MCP transports a server mount may list (OpenWOP interop.md §The facets).
const (
	TransportStdio          = "stdio"
	TransportStreamableHTTP = "streamable-http"
)

// MaxRefreshWindow is the longest refresh window a facet may declare: an
// advertisement not re-checked against upstream for longer is
// non-conformant (OpenWOP interop.md §The refresh SLA).
const MaxRefreshWindow = 90 * 24 * time.Hour

// A2A is the a2a family record (OpenWOP interop.md §The facets;
// capabilities.md §2). Its JSON encoding is the
// wire record: a boolean facet that is not offered is omitted, never false,
// because a facet is claimed by the presence of its key (OpenWOP interop.md §REST is the wire; capabilities.md §2–§4). An empty
// field is omitted too, so validation reports a missing required field as
// missing rather than as an empty string.
//
// Build one and let [Validator.Declare] fill its defaults and
// validate it; after that, treat it as read-only.
type A2A struct {
	Status  Status  `json:"status,omitempty"`
	Since   string  `json:"since,omitempty"`
	Until   string  `json:"until,omitempty"`
	Witness Witness `json:"witness,omitempty"`
	// Versions lists every A2A version served, "major.minor".
	Versions []string `json:"versions,omitempty"`
	// PreferredVersion is served when a peer names none.
	PreferredVersion string `json:"preferredVersion,omitempty"`
	// MinimumVersion is the floor: nothing below it is ever used.
	MinimumVersion string `json:"minimumVersion,omitempty"`
	// RefreshedAt is the day the advertised versions were last re-checked
	// against upstream.
	RefreshedAt Date `json:"refreshedAt,omitempty"`
	// Profiles are the conformance profiles claimed, e.g. "a2a-1.0".
	Profiles []string `json:"profiles,omitempty"`
	// AgentCardURL is the public agent card; its presence claims an
	// inbound A2A surface.
	AgentCardURL      string `json:"agentCardUrl,omitempty"`
	Streaming         bool   `json:"streaming,omitempty"`
	PushNotifications bool   `json:"pushNotifications,omitempty"`
	DurableTasks      bool   `json:"durableTasks,omitempty"`
	// AgentCards publishes a per-agent card for each inventory entry
	// (RFC 0202).
	AgentCards bool `json:"agentCards,omitempty"`

	// RefreshWindow is how long after RefreshedAt the advertisement stays
	// fresh. Zero means MaxRefreshWindow; longer is refused. It is not part
	// of the wire record.
	RefreshWindow time.Duration `json:"-"`
}

// MCP is the mcp family record (OpenWOP interop.md §The facets;
// capabilities.md §2). Its JSON
// encoding is the wire record; Client is omitted when false.
type MCP struct {
	Status  Status  `json:"status,omitempty"`
	Since   string  `json:"since,omitempty"`
	Until   string  `json:"until,omitempty"`
	Witness Witness `json:"witness,omitempty"`
	// Revisions lists every MCP revision served, "YYYY-MM-DD".
	Revisions []string `json:"revisions,omitempty"`
	// PreferredVersion is the preferred revision (the upstream key keeps
	// this name).
	PreferredVersion string `json:"preferredVersion,omitempty"`
	// MinimumRevision is the floor.
	MinimumRevision string `json:"minimumRevision,omitempty"`
	RefreshedAt     Date   `json:"refreshedAt,omitempty"`
	// Profiles are the conformance profiles claimed, e.g. "mcp-2026-07-28".
	Profiles []string `json:"profiles,omitempty"`
	// Features are mcp.features ids from the interop map.
	Features []string `json:"features,omitempty"`
	// ServerURLs address the MCP server mount; ServerURLs[0] is the one a
	// suite uses. Absolute URLs or absolute paths joined to the base URL.
	ServerURLs  []string     `json:"serverUrls,omitempty"`
	ServerMount *ServerMount `json:"serverMount,omitempty"`
	MRTR        *MRTR        `json:"mrtr,omitempty"`
	// Client advertises the host's MCP client to pack code (RFC 0204).
	Client bool `json:"client,omitempty"`

	// RefreshWindow: as A2A.RefreshWindow.
	RefreshWindow time.Duration `json:"-"`
}

// ServerMount is mcp.serverMount: the MCP server's own transports, not a
// host transport claim (OpenWOP interop.md §The facets).
type ServerMount struct {
	Transports []string `json:"transports,omitempty"`
}

// MRTR is mcp.mrtr: the ceiling on multi-round tool result rounds (OpenWOP interop.md §The MCP round ceiling).
type MRTR struct {
	MaxRounds int `json:"maxRounds"`
}

// HostEventType is one entry of hostEvents.types[].
type HostEventType struct {
	Type     string   `json:"type"`
	Delivery Delivery `json:"delivery"`
}

// HostEvents is the hostEvents family record (OpenWOP RFC 0242 §B.3; host-event.schema.json; events.md §Host events).
// Types lists the host's own host-event types; the advertisement adds
// {negotiation.decided, durable} itself whenever an inbound surface is
// advertised, so a host need not list it.
type HostEvents struct {
	Status  Status          `json:"status,omitempty"`
	Since   string          `json:"since,omitempty"`
	Until   string          `json:"until,omitempty"`
	Witness Witness         `json:"witness,omitempty"`
	Types   []HostEventType `json:"types,omitempty"`
}

// Agents is the agents family record, restricted to what the interop
// surfaces depend on: its lifecycle fields and agents.manifestRuntime, the
// agent-manifest runtime floor whose inventory (GET /agents) per-agent A2A
// cards are published from. a2a.agentCards requires it (OpenWOP interop
// §Per-agent cards). The family's other facets (orchestrator,
// dispatch, memory, …) are not modelled: this package validates and
// writes only the record above.
type Agents struct {
	Status  Status  `json:"status,omitempty"`
	Since   string  `json:"since,omitempty"`
	Until   string  `json:"until,omitempty"`
	Witness Witness `json:"witness,omitempty"`
	// ManifestRuntime, when set, claims agents.manifestRuntime: the host
	// instantiates pack-declared agents and lists them on GET /agents. It
	// is an object even when empty ({}), because the facet is claimed by
	// the presence of its key.
	ManifestRuntime *ManifestRuntime `json:"manifestRuntime,omitempty"`
}

// ManifestRuntime is agents.manifestRuntime (RFC 0070).
type ManifestRuntime struct {
	// HandoffValidation claims that inbound tasks and outbound results are
	// validated against an agent's handoff schemas; omitted when not done.
	HandoffValidation bool `json:"handoffValidation,omitempty"`
	// InstallScope says how GET /agents is scoped (RFC 0074):
	// [InstallScopeHost] (one inventory for every caller, the default when
	// empty) or [InstallScopeTenant] (each caller sees only its tenant's
	// agents, and another tenant's agent is unknown).
	InstallScope string `json:"installScope,omitempty"`
}

// Values of [ManifestRuntime.InstallScope].
const (
	InstallScopeHost   = "host"
	InstallScopeTenant = "tenant"
)

// Declaration is everything a host advertises through this package. A nil
// family is not advertised.
type Declaration struct {
	A2A        *A2A        `json:"a2a,omitempty"`
	MCP        *MCP        `json:"mcp,omitempty"`
	HostEvents *HostEvents `json:"hostEvents,omitempty"`
	Agents     *Agents     `json:"agents,omitempty"`
}

// normalize fills what a host left empty: Status stable, Since "2.0",
// Witness seam-gated (OpenWOP capabilities.md §2), Versions ["1.0"], PreferredVersion the newest
// offered version and MinimumVersion the oldest. Claims (profiles, URLs,
// boolean facets) and RefreshedAt are never invented.
func (a *A2A) normalize() {
	normalizeLifecycle(&a.Status, &a.Since, &a.Witness)
	normalizeVersions(&a.Versions, A2AVersion, &a.PreferredVersion, &a.MinimumVersion, compareMajorMinor, wellFormedMajorMinor)
}

// normalize is A2A.normalize for MCP: Revisions ["2026-07-28"], preferred
// the newest, floor the oldest.
func (m *MCP) normalize() {
	normalizeLifecycle(&m.Status, &m.Since, &m.Witness)
	normalizeVersions(&m.Revisions, MCPRevision, &m.PreferredVersion, &m.MinimumRevision, compareRevision, wellFormedRevision)
}

// normalize fills Status, Since and Witness like A2A.normalize.
func (h *HostEvents) normalize() {
	normalizeLifecycle(&h.Status, &h.Since, &h.Witness)
}

// normalize fills Status and Since like A2A.normalize; Witness defaults to
// witnessable-gated, the declaration's class for the agents family.
func (g *Agents) normalize() {
	if g.Witness == "" {
		g.Witness = WitnessGated
	}
	normalizeLifecycle(&g.Status, &g.Since, &g.Witness)
}

// normalize normalizes every family present.
func (d *Declaration) normalize() {
	if d.A2A != nil {
		d.A2A.normalize()
	}
	if d.MCP != nil {
		d.MCP.normalize()
	}
	if d.HostEvents != nil {
		d.HostEvents.normalize()
	}
	if d.Agents != nil {
		d.Agents.normalize()
	}
}

func normalizeLifecycle(s *Status, since *string, w *Witness) {
	if *s == "" {
		*s = defaultStatus
	}
	if *since == "" {
		*since = defaultSince
	}
	if *w == "" {
		*w = defaultWitness
	}
}

// normalizeVersions fills an empty offered list with the version this
// library speaks, then an empty preferred version with the newest offered
// and an empty floor with the oldest (when every offered one is well
// formed; otherwise validation reports them and nothing is guessed).
func normalizeVersions(offered *[]string, pin string, preferred, floor *string, cmp func(a, b string) int, wellFormed func(string) bool) {
	if len(*offered) == 0 {
		*offered = []string{pin}
	}
	lo, hi, ok := bounds(*offered, cmp, wellFormed)
	if ok && *preferred == "" {
		*preferred = hi
	}
	if ok && *floor == "" {
		*floor = lo
	}
}

// bounds returns the lowest and highest of vs, or ok=false when any is
// malformed (then there is nothing sensible to default to).
func bounds(vs []string, cmp func(a, b string) int, wellFormed func(string) bool) (lo, hi string, ok bool) {
	for _, v := range vs {
		if !wellFormed(v) {
			return "", "", false
		}
	}
	return slices.MinFunc(vs, cmp), slices.MaxFunc(vs, cmp), true
}

// Clone returns a deep copy.
func (a *A2A) Clone() *A2A {
	if a == nil {
		return nil
	}
	c := *a
	c.Versions = slices.Clone(a.Versions)
	c.Profiles = slices.Clone(a.Profiles)
	return &c
}

// Clone returns a deep copy.
func (m *MCP) Clone() *MCP {
	if m == nil {
		return nil
	}
	c := *m
	c.Revisions = slices.Clone(m.Revisions)
	c.Profiles = slices.Clone(m.Profiles)
	c.Features = slices.Clone(m.Features)
	c.ServerURLs = slices.Clone(m.ServerURLs)
	if m.ServerMount != nil {
		c.ServerMount = &ServerMount{Transports: slices.Clone(m.ServerMount.Transports)}
	}
	if m.MRTR != nil {
		r := *m.MRTR
		c.MRTR = &r
	}
	return &c
}

// Clone returns a deep copy.
func (h *HostEvents) Clone() *HostEvents {
	if h == nil {
		return nil
	}
	c := *h
	c.Types = slices.Clone(h.Types)
	return &c
}

// Clone returns a deep copy.
func (g *Agents) Clone() *Agents {
	if g == nil {
		return nil
	}
	c := *g
	if g.ManifestRuntime != nil {
		mr := *g.ManifestRuntime
		c.ManifestRuntime = &mr
	}
	return &c
}

// Clone returns a deep copy.
func (d Declaration) Clone() Declaration {
	return Declaration{A2A: d.A2A.Clone(), MCP: d.MCP.Clone(), HostEvents: d.HostEvents.Clone(), Agents: d.Agents.Clone()}
}

// inbound reports whether the declaration advertises an inbound surface:
// a2a.agentCardUrl, mcp.serverUrls or mcp.serverMount (OpenWOP RFC 0242 §B.3).
func (d Declaration) inbound() bool {
	if d.A2A != nil && d.A2A.AgentCardURL != "" {
		return true
	}
	return d.MCP != nil && (len(d.MCP.ServerURLs) > 0 || d.MCP.ServerMount != nil)
}
