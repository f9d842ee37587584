package hostapp

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/wopinterop/wopinterop"
	"github.com/wopinterop/wopinterop/egress"
	"github.com/wopinterop/wopinterop/facets"
	"github.com/wopinterop/wopinterop/isolation"
	"github.com/wopinterop/wopinterop/mcp/sealed"
)

// upstreamRefreshedAt is the day the advertised A2A versions and MCP
// revisions were last re-checked against upstream (a2a.refreshedAt and
// mcp.refreshedAt). Each advertisement goes stale 90 days later (OpenWOP interop.md §The refresh SLA)
// and the host then refuses to start, on purpose: re-check the A2A release
// and the MCP revision, then move this date. One constant, because the
// demo re-checks both at once.
const upstreamRefreshedAt facets.Date = "2026-11-30"

// newInterop builds the library's Host for the demo: the A2A section
// (a2a.go) and the MCP section (mcp.go) over one store, one resolver and
// one audit trail.
func newInterop(cfg config, base, version string, routingSecret, sealKey []byte) (*wopinterop.Host, error) {
	guard, err := egress.NewGuard(egress.GuardOptions{AllowOrigins: cfg.PushAllow})
	if err != nil {
		return nil, err
	}
	mcpSection := withMCPBodyTimeout(withInterruptPages(mcpConfig(version, sealKey), links{base: base}), cfg.BodyTimeout)
	mcpSection.Ledger = cfg.Ledger
	if cfg.Workflows != nil && len(cfg.Tenants) > 0 {
		// The host exposes its MCP client to conformance-mcp-client, which
		// it registers in every tenant: the client facet's claim.
		if mcpSection.Client, err = mcpClientConfig(cfg); err != nil {
			return nil, err
		}
	}
	return wopinterop.New(wopinterop.Config{
		Store:         cfg.Store,
		Subjects:      cfg.Auth,
		Events:        cfg.Store,
		Inventory:     cfg.Store,
		BaseURL:       base,
		HostVersion:   version,
		RoutingSecret: routingSecret,
		Logger:        cfg.Logger,
		Now:           cfg.Now,
		HostEvents: &facets.HostEvents{
			Status: facets.StatusStable, Since: protocolVersion, Witness: facets.WitnessGated,
		},
		// Per-agent cards (a2a.agentCards) are published from the agent
		// inventory of GET /agents, which is per tenant.
		Agents: &facets.Agents{
			Status: facets.StatusStable, Since: protocolVersion,
			ManifestRuntime: &facets.ManifestRuntime{InstallScope: facets.InstallScopeTenant},
		},
		A2A: withBodyTimeout(a2aConfig(version, guard, cfg.CardSigner, cfg.Push), cfg.BodyTimeout),
		MCP: mcpSection,
	})
}

// withBodyTimeout gives the A2A interfaces the host's -body-timeout, so
// every route of the host cuts a slow body at the same time.
func withBodyTimeout(c *wopinterop.A2AConfig, d time.Duration) *wopinterop.A2AConfig {
	c.BodyTimeout = d
	return c
}

// withMCPBodyTimeout is withBodyTimeout for the MCP mount.
func withMCPBodyTimeout(c *wopinterop.MCPConfig, d time.Duration) *wopinterop.MCPConfig {
	c.Server.BodyTimeout = d
	return c
}

// withInterruptPages sends MCP clients that declare URL-mode elicitation
// to an interrupt's own URL for input no form may ask: a nested answer or
// a secret field (see interrupts.go).
func withInterruptPages(c *wopinterop.MCPConfig, l links) *wopinterop.MCPConfig {
	c.Server.InterruptURL = l.interruptURL
	return c
}

// mountInterop registers the library's routes on mux: the agent card, the
// A2A interfaces and the MCP servers. Their handlers answer every request
// on their URLs in the protocol's own shape (OpenWOP RFC 0211 §C; interop
// map, mcp.methods), so they bypass the OpenWOP-Version check and error
// envelope of the REST routes. They are not cut off when the host drains:
// the library's own Drain (newHandler calls it as the drain starts)
// answers what is still waiting in each protocol's shape and ends its
// streams, whereas a cancelled request context would look like a client
// that went away — an in-flight MCP tools/call would end with no answer at
// all.
func mountInterop(mux *http.ServeMux, routes []wopinterop.Route) {
	for _, rt := range routes {
		mux.Handle(rt.Pattern, rt.Handler)
	}
}

// parseRoutingSecret reads -routing-secret (see decodeSecret).
func parseRoutingSecret(s string) ([]byte, error) {
	return decodeSecret(s, isolation.MinRoutingSecretLen)
}

// parseSealKey reads -seal-key (see decodeSecret).
func parseSealKey(s string) ([]byte, error) {
	return decodeSecret(s, sealed.MinKeyLen)
}

// decodeSecret reads a secret flag: hex, or standard or URL-safe base64
// with or without padding, decoding to at least minLen bytes. Errors never
// repeat the value.
func decodeSecret(s string, minLen int) ([]byte, error) {
	s = strings.TrimSpace(s)
	var b []byte
	if raw, err := hex.DecodeString(s); err == nil {
		b = raw
	} else {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			if raw, err := enc.DecodeString(s); err == nil {
				b = raw
				break
			}
		}
	}
	switch {
	case b == nil:
		return nil, fmt.Errorf("not hex or base64")
	case len(b) < minLen:
		return nil, fmt.Errorf("decodes to %d bytes, at least %d are needed", len(b), minLen)
	}
	return b, nil
}

// randomRoutingSecret is the default routing secret: fresh per process, so
// per-agent routing values change on every restart.
func randomRoutingSecret() []byte { return randomSecret(isolation.MinRoutingSecretLen) }

// randomSealKey is the default requestState key: fresh per process, so an
// MRTR round pending across a restart cannot be continued (the client gets
// -32602 and starts the call again).
func randomSealKey() []byte { return randomSecret(sealed.MinKeyLen) }

func randomSecret(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go ≥ 1.24).
	return b
}
