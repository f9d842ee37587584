package main

import (
	"net/http"
	"strings"
)

// discoveryRoot is the closed v2 discovery root this host serves (RULES R4):
// root metadata plus one record per family it offers. Presence of a record
// is the claim, so nothing it does not serve appears, and none of the keys
// v2 deleted (supportedTransports, grpc, root profiles, supported flags) do.
type discoveryRoot struct {
	ProtocolVersions []string           `json:"protocolVersions"`
	PreferredVersion string             `json:"preferredVersion"`
	Implementation   implementationInfo `json:"implementation"`
	RunList          runListRecord      `json:"runList"`
	HostEvents       hostEventsRecord   `json:"hostEvents"`
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

// hostEventsRecord advertises GET /host/events. types lists every
// host-event type the host emits with its delivery class (RULES R143,
// R144); the demo host emits none yet, so the list is empty. Serving A2A or
// MCP adds negotiation.decided as durable (RULES R16).
type hostEventsRecord struct {
	Status  string          `json:"status"`
	Since   string          `json:"since"`
	Witness string          `json:"witness"`
	Types   []hostEventType `json:"types"`
}

type hostEventType struct {
	Type     string `json:"type"`
	Delivery string `json:"delivery"`
}

// discoveryDocument is the encoded root and its strong ETag, computed once:
// the bytes are the document's identity (capabilities.md §1.1).
type discoveryDocument struct {
	body []byte
	etag string
}

func newDiscoveryDocument(version string) (discoveryDocument, error) {
	root := discoveryRoot{
		ProtocolVersions: servedVersions(),
		PreferredVersion: protocolVersion,
		Implementation:   implementationInfo{Name: implementationName, Version: version},
		RunList: runListRecord{
			Status: "stable", Since: protocolVersion, Witness: "witnessable-gated",
			MaxPageSize: maxPageSize, Filters: []string{"workflowId", "status"},
		},
		HostEvents: hostEventsRecord{
			Status: "stable", Since: protocolVersion, Witness: "witnessable-gated",
			Types: []hostEventType{},
		},
	}
	body, err := encodeJSON(root)
	if err != nil {
		return discoveryDocument{}, err
	}
	return discoveryDocument{body: body, etag: strongETag(body)}, nil
}

// getDiscovery serves GET /.well-known/openwop without a credential
// (RULES R15). OpenWOP-Version was already checked by versioned.
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
