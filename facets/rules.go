package facets

// The OpenWOP sources a [FieldError] names in Rule: the section whose
// requirement the failed check enforces.
const (
	ruleFamilies     = "OpenWOP interop.md §The facets"                         // a family per served protocol; status, since, witness
	ruleRequired     = "OpenWOP facets/a2a.schema.json, facets/mcp.schema.json" // the required facets and their grammars
	ruleStatus       = "OpenWOP capabilities.md §2"                             // until, witness
	rulePresence     = "OpenWOP interop.md §REST is the wire"                   // a facet is claimed by its key; closed records
	ruleProfiles     = "OpenWOP interop.md §Legacy profiles are absent"
	ruleRefresh      = "OpenWOP interop.md §The refresh SLA" // offered preferred and floor, refreshedAt
	ruleFloor        = "OpenWOP interop.md §The floor"
	ruleA2AProfile   = "OpenWOP interop map a2a.card" // a2a-X.Y needs the card and a JSON-RPC interface
	ruleMCPProfile   = "OpenWOP interop map mcp.features; RFC 0198 §A.1"
	ruleServerMount  = "OpenWOP interop.md §The facets (mcp.serverMount)"
	ruleRoundCeiling = "OpenWOP interop.md §The MCP round ceiling"
	ruleAgentCards   = "OpenWOP interop.md §Per-agent cards"
	ruleMCPClient    = "OpenWOP RFC 0204"
	ruleHostEvents   = "OpenWOP RFC 0242 §B.3" // negotiation.decided listed when an inbound surface is served
	ruleServed       = "OpenWOP interop map a2a.card (capabilities)"
	ruleEventTypes   = "OpenWOP events.md §Host events"
	ruleHostEventDoc = "OpenWOP host-event.schema.json"
)
