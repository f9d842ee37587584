package hostapp

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/wopinterop/wopinterop/facets"
)

// discoveryRoot is the closed v2 discovery root this host serves (OpenWOP interop.md §REST is the wire; capabilities.md §2–§4):
// root metadata, the conformance fixtures every tenant has (with
// conformance-mcp-client when the mcp record claims client), and one record
// per family it offers. Presence of a record is the claim, so nothing it
// does not serve appears, and none of the keys v2 deleted
// (supportedTransports, grpc, root profiles, supported flags) do. The a2a,
// mcp, agents and hostEvents records are the library's
// (wopinterop.Host.Records): mcp names the server URL, its transports,
// features (with "extensions" for the Tasks extension) and mrtr.maxRounds;
// agents carries manifestRuntime, which a2a.agentCards requires (OpenWOP
// interop §Per-agent cards); hostEvents lists negotiation.decided as durable because A2A and
// MCP are served inbound (OpenWOP RFC 0242 §B.3).
type discoveryRoot struct {
	ProtocolVersions []string           `json:"protocolVersions"`
	PreferredVersion string             `json:"preferredVersion"`
	Implementation   implementationInfo `json:"implementation"`
	Fixtures         []string           `json:"fixtures"`
	RunList          runListRecord      `json:"runList"`
	A2A              json.RawMessage    `json:"a2a"`
	MCP              json.RawMessage    `json:"mcp"`
	Agents           json.RawMessage    `json:"agents"`
	HostEvents       json.RawMessage    `json:"hostEvents"`
	OAuth            *oauthRecord       `json:"oauth,omitempty"`
	Conformance      *conformanceRecord `json:"conformance,omitempty"`
}

// oauthRecord advertises the credential interrupt (OpenWOP oauth §The
// credential interrupt, RFC 0199 §C.1): conformance-credential suspends on
// one instead of failing. No provider is listed, because the host cannot
// acquire a token for any: no grant completes here.
type oauthRecord struct {
	Status              string `json:"status"`
	Since               string `json:"since"`
	Witness             string `json:"witness"`
	CredentialInterrupt bool   `json:"credentialInterrupt"`
}

// conformanceRecord names the seams profile served under
// /conformance/seams/ (RFC 0168 §C.1); present only with
// -conformance-seams.
type conformanceRecord struct {
	SeamsProfile string `json:"seamsProfile"`
}

type implementationInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// runListRecord advertises GET /runs (capabilities.md §runList).
type runListRecord struct {
	Status      string   `json:"status"`
	Since       string   `json:"since"`
	Witness     string   `json:"witness"`
	MaxPageSize int      `json:"maxPageSize"`
	Filters     []string `json:"filters"`
}

// discoveryDocument is the encoded root and its strong ETag, computed once:
// the bytes are the document's identity (capabilities.md §1.1).
type discoveryDocument struct {
	body []byte
	etag string
}

// newDiscoveryDocument encodes the root around records, the library's
// family records; it needs a2a, mcp, agents and hostEvents. base decides
// whether conformance-credential is served (a secure origin) and with it
// the oauth record; seams adds the conformance record.
func newDiscoveryDocument(version, base string, seams bool, records map[string]json.RawMessage) (discoveryDocument, error) {
	a2aRecord, mcpRecord, hostEvents := records[facets.FamilyA2A], records[facets.FamilyMCP], records[facets.FamilyHostEvents]
	agents := records[facets.FamilyAgents]
	if a2aRecord == nil || mcpRecord == nil || hostEvents == nil || agents == nil {
		return discoveryDocument{}, errors.New("host: the a2a, mcp, agents and hostEvents records are missing")
	}
	fixtures := fixtureIDs(base)
	var m struct {
		Client bool `json:"client"`
	}
	if err := json.Unmarshal(mcpRecord, &m); err == nil && m.Client {
		// OpenWOP RFC 0204: the ctx.mcp fixture exactly when mcp.client is
		// advertised.
		fixtures = append(fixtures, mcpClientWorkflowID)
	}
	root := discoveryRoot{
		ProtocolVersions: servedVersions(),
		PreferredVersion: protocolVersion,
		Implementation:   implementationInfo{Name: implementationName, Version: version},
		Fixtures:         fixtures,
		RunList: runListRecord{
			Status: "stable", Since: protocolVersion, Witness: "witnessable-gated",
			MaxPageSize: maxPageSize, Filters: []string{"workflowId", "status"},
		},
		A2A:        a2aRecord,
		MCP:        mcpRecord,
		Agents:     agents,
		HostEvents: hostEvents,
	}
	if connectURL(base) != "" {
		root.OAuth = &oauthRecord{Status: "stable", Since: protocolVersion, Witness: "witnessable-gated", CredentialInterrupt: true}
	}
	if seams {
		root.Conformance = &conformanceRecord{SeamsProfile: seamsProfile}
	}
	body, err := encodeJSON(root)
	if err != nil {
		return discoveryDocument{}, err
	}
	return discoveryDocument{body: body, etag: strongETag(body)}, nil
}

// getDiscovery serves GET /.well-known/openwop without a credential
// (OpenWOP capabilities.md §1). OpenWOP-Version was already checked by versioned.
func (s *server) getDiscovery(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("ETag", s.discovery.etag)
	h.Set("Cache-Control", "no-cache")
	h.Set("Vary", "OpenWOP-Version")
	if inm := r.Header.Values("If-None-Match"); len(inm) > 0 && etagMatches(strings.Join(inm, ","), s.discovery.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	writeBody(w, http.StatusOK, s.discovery.body)
}
