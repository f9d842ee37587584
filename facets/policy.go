package facets

import (
	"fmt"
	"slices"
	"time"

	"github.com/wopinterop/wopinterop/negotiate"
)

// negotiateConfig is the version policy the a2a facet declares: versions
// offered, preferredVersion, minimumVersion as the floor.
func (a *A2A) negotiateConfig(allowDowngrade bool, now func() time.Time) negotiate.Config {
	return negotiate.Config{
		Protocol:       negotiate.A2A,
		Offered:        slices.Clone(a.Versions),
		Preferred:      a.PreferredVersion,
		Floor:          a.MinimumVersion,
		AllowDowngrade: allowDowngrade,
		Now:            now,
	}
}

// Policy builds the negotiate.Policy of the a2a facet. allowDowngrade lets
// an authenticated peer use an offered version between the floor and the
// preferred one (OpenWOP interop.md §Downgrade above the floor); now stamps decisions (nil: time.Now). A facet
// that passed validation always yields a policy; the error, wrapping
// [ErrInvalidFacet], is for one that did not.
func (a *A2A) Policy(allowDowngrade bool, now func() time.Time) (*negotiate.Policy, error) {
	p, err := negotiate.NewPolicy(a.negotiateConfig(allowDowngrade, now))
	if err != nil {
		return nil, fmt.Errorf("%w: a2a: %w", ErrInvalidFacet, err)
	}
	return p, nil
}

// negotiateConfig is the version policy the mcp facet declares: revisions
// offered, preferredVersion, minimumRevision as the floor.
func (m *MCP) negotiateConfig(allowDowngrade bool, now func() time.Time) negotiate.Config {
	return negotiate.Config{
		Protocol:       negotiate.MCP,
		Offered:        slices.Clone(m.Revisions),
		Preferred:      m.PreferredVersion,
		Floor:          m.MinimumRevision,
		AllowDowngrade: allowDowngrade,
		Now:            now,
	}
}

// Policy is A2A.Policy for MCP.
func (m *MCP) Policy(allowDowngrade bool, now func() time.Time) (*negotiate.Policy, error) {
	p, err := negotiate.NewPolicy(m.negotiateConfig(allowDowngrade, now))
	if err != nil {
		return nil, fmt.Errorf("%w: mcp: %w", ErrInvalidFacet, err)
	}
	return p, nil
}

// advertises reports whether the a2a record claims facet, named
// "a2a.<key>" as in the interop map's requires lists. A nil record claims
// nothing.
func (a *A2A) advertises(facet string) bool {
	if a == nil {
		return false
	}
	switch facet {
	case "a2a.versions", "a2a.preferredVersion", "a2a.minimumVersion", "a2a.refreshedAt":
		return true
	case "a2a.profiles":
		return len(a.Profiles) > 0
	case "a2a.agentCardUrl":
		return a.AgentCardURL != ""
	case "a2a.streaming":
		return a.Streaming
	case "a2a.pushNotifications":
		return a.PushNotifications
	case "a2a.durableTasks":
		return a.DurableTasks
	case "a2a.agentCards":
		return a.AgentCards
	}
	return false
}

// advertises is A2A.advertises for "mcp.<key>".
func (m *MCP) advertises(facet string) bool {
	if m == nil {
		return false
	}
	switch facet {
	case "mcp.revisions", "mcp.preferredVersion", "mcp.minimumRevision", "mcp.refreshedAt":
		return true
	case "mcp.profiles":
		return len(m.Profiles) > 0
	case "mcp.features":
		return len(m.Features) > 0
	case "mcp.serverUrls":
		return len(m.ServerURLs) > 0
	case "mcp.serverMount":
		return m.ServerMount != nil
	case "mcp.mrtr":
		return m.MRTR != nil
	case "mcp.client":
		return m.Client
	}
	return false
}
