package main

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop"
	"github.com/wopinterop/wopinterop/a2a"
	"github.com/wopinterop/wopinterop/facets"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/isolation"
	"github.com/wopinterop/wopinterop/push"
)

// a2aRefreshedAt is the day the advertised A2A versions were last
// re-checked against upstream (a2a.refreshedAt). The advertisement goes
// stale 90 days later (RULES R6) and the host then refuses to start, on
// purpose: re-check the A2A release, then move this date.
const a2aRefreshedAt facets.Date = "2026-11-30"

// Where the A2A surface is mounted: the card at the well-known path, the
// JSON-RPC interface at a2aPath, HTTP+JSON below a2aRESTPath.
const (
	a2aPath     = "/a2a"
	a2aRESTPath = a2aPath + wopinterop.HTTPJSONSuffix
	a2aCardPath = "/.well-known/agent-card.json"
)

// bearerScheme names the card's one security scheme: the bearer keys the
// SubjectResolver checks, and nothing else (RULES R30).
const bearerScheme = "bearer"

// newInterop builds the library's Host for the demo: A2A 1.0 over the
// store, with streaming, durable tasks, push notifications, the extended
// card and per-agent cards, routing exactly the conformance-approval fixture (the OpenWOP
// suite requires the interface to route that one skill).
func newInterop(cfg config, base, version string, secret []byte) (*wopinterop.Host, error) {
	guard, err := push.NewGuard(push.GuardOptions{AllowOrigins: cfg.PushAllow})
	if err != nil {
		return nil, err
	}
	return wopinterop.New(wopinterop.Config{
		Store:         cfg.Store,
		Subjects:      cfg.Auth,
		Events:        cfg.Store,
		Inventory:     cfg.Store,
		BaseURL:       base,
		HostVersion:   version,
		RoutingSecret: secret,
		Logger:        cfg.Logger,
		Now:           cfg.Now,
		HostEvents: &facets.HostEvents{
			Status: facets.StatusStable, Since: protocolVersion, Witness: facets.WitnessGated,
		},
		A2A: &wopinterop.A2AConfig{
			Path:         a2aPath,
			CardPath:     a2aCardPath,
			HTTPJSON:     true,
			ExtendedCard: true,
			Facet: facets.A2A{
				RefreshedAt:       a2aRefreshedAt,
				Streaming:         true,
				DurableTasks:      true,
				AgentCards:        true,
				PushNotifications: true,
			},
			// Push deliveries go to https URLs of public hosts, and to the
			// -push-allow origins (local receivers).
			Push: &push.Options{Guard: guard},
			Card: a2a.CardConfig{
				Name:        implementationName,
				Description: "The wopinterop demo host: the OpenWOP conformance fixtures over an in-memory store.",
				Version:     version,
				SecuritySchemes: wire.NamedSecuritySchemes{
					bearerScheme: wire.HTTPAuthSecurityScheme{Scheme: "Bearer", Description: "an API key of the host's -keys"},
				},
				SecurityRequirements: wire.SecurityRequirementsOptions{{bearerScheme: {}}},
			},
			Routed: []interop.Workflow{fixture(memstore.FixtureApproval)},
		},
	})
}

// fixture returns the definition of one conformance fixture workflow.
func fixture(id string) interop.Workflow {
	for _, d := range memstore.ConformanceFixtures() {
		if d.Workflow.ID == id {
			return d.Workflow
		}
	}
	panic("host: no conformance fixture " + id) // a constant the tests cover
}

// fixtureIDs lists the five fixture workflows every tenant has; discovery
// advertises them in the root fixtures[] (the suite looks for
// conformance-approval there).
func fixtureIDs() []string {
	defs := memstore.ConformanceFixtures()
	ids := make([]string, len(defs))
	for i, d := range defs {
		ids[i] = d.Workflow.ID
	}
	return ids
}

// mountA2A registers the A2A surface on mux. Its handlers answer every
// request on an interface URL in the binding's own shape (RULES R66), so
// they bypass the OpenWOP-Version check and error envelope of the REST
// routes. Their requests also end when the host drains: a subscription
// stream never goes idle on its own and would hold the shutdown up.
func (s *server) mountA2A(mux *http.ServeMux, h *wopinterop.Host) {
	inner := http.NewServeMux()
	h.Mount(inner)
	drained := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := s.streamContext(r)
		defer cancel()
		inner.ServeHTTP(w, r.WithContext(ctx))
	})
	for _, p := range []string{a2aCardPath, a2aPath, a2aRESTPath, a2aRESTPath + "/"} {
		mux.Handle(p, drained)
	}
}

// parseRoutingSecret reads -routing-secret: hex, or standard or URL-safe
// base64 with or without padding, decoding to at least 32 bytes. Errors
// never repeat the value.
func parseRoutingSecret(s string) ([]byte, error) {
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
	case len(b) < isolation.MinRoutingSecretLen:
		return nil, fmt.Errorf("decodes to %d bytes, at least %d are needed", len(b), isolation.MinRoutingSecretLen)
	}
	return b, nil
}

// randomRoutingSecret is the default routing secret: fresh per process, so
// per-agent routing values change on every restart.
func randomRoutingSecret() []byte {
	b := make([]byte, isolation.MinRoutingSecretLen)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go ≥ 1.24).
	return b
}
