package facets

// Served describes what the host really serves, filled by the code that
// mounts the surfaces (the library's root package, or a host composing the
// packages itself) from what it actually wired — never from the facets.
// Validation refuses any claim Served does not back: an advertisement that
// promises more than the host does would send peers into errors.
type Served struct {
	// ProtocolVersions are the OpenWOP "major.minor" versions the host
	// serves (its root protocolVersions). When set, each family's since must
	// be one of them and an until written as a version must not be below
	// the newest. Empty skips those two checks.
	ProtocolVersions []string
	A2A              ServedA2A
	MCP              ServedMCP
}

// ServedA2A is what the host's A2A side really does.
type ServedA2A struct {
	// Versions are the A2A versions the bindings speak ("1.0"). Every
	// advertised version must be one of them.
	Versions []string
	// JSONRPC and HTTPJSON report the inbound interfaces mounted. A card is
	// only advertised with a JSON-RPC interface behind it (OpenWOP interop map, a2a.card).
	JSONRPC  bool
	HTTPJSON bool
	// Streaming: SendStreamingMessage and SubscribeToTask are served.
	Streaming bool
	// PushNotifications: the push-config operations and delivery are wired.
	PushNotifications bool
	// DurableTasks: task state outlives the request (returnImmediately,
	// resubscription).
	DurableTasks bool
	// ExtendedCard: GetExtendedAgentCard is served (the public card says
	// capabilities.extendedAgentCard: true).
	ExtendedCard bool
	// AgentCards: per-agent cards are published from the host's agent
	// inventory (agents.manifestRuntime).
	AgentCards bool
}

// ServedMCP is what the host's MCP side really does.
type ServedMCP struct {
	// Revisions are the MCP revisions the mount and client speak
	// ("2026-07-28"). Every advertised revision must be one of them.
	Revisions []string
	// Mount: an MCP server is mounted.
	Mount bool
	// Transports are the mount's transports ("streamable-http", "stdio").
	Transports []string
	// Extensions are the extension ids server/discover lists, e.g.
	// "io.modelcontextprotocol/tasks".
	Extensions []string
	// Discover, MRTR and CacheableLists back the map features
	// server-discover, mrtr and cacheable-lists.
	Discover       bool
	MRTR           bool
	CacheableLists bool
	// Client: the host's MCP client is exposed to pack code (mcp.client).
	Client bool
}
