package hostapp

import (
	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop"
	"github.com/wopinterop/wopinterop/a2a"
	"github.com/wopinterop/wopinterop/egress"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/push"
)

// Where the A2A surface is mounted: the card at the well-known path, the
// JSON-RPC interface at a2aPath, HTTP+JSON below a2aRESTPath.
const (
	a2aPath     = "/a2a"
	a2aRESTPath = a2aPath + wopinterop.HTTPJSONSuffix
	a2aCardPath = "/.well-known/agent-card.json"
)

// bearerScheme names the card's one security scheme: the bearer keys the
// SubjectResolver checks, and nothing else (OpenWOP interop map, a2a.card).
const bearerScheme = "bearer"

// a2aConfig is the demo's A2A section: A2A 1.0 over the store, with
// streaming, durable tasks, push notifications, the extended card and
// per-agent cards, routing exactly the conformance-approval fixture (the
// OpenWOP suite requires the interface to route that one skill). signer,
// when not nil, signs every card served (-card-signing-key). stores, when
// not nil, are the push stores the replicas share.
func a2aConfig(version string, guard *egress.Guard, signer a2a.CardSigner, stores *PushStores) *wopinterop.A2AConfig {
	return &wopinterop.A2AConfig{
		Path:         a2aPath,
		CardPath:     a2aCardPath,
		HTTPJSON:     true,
		Record:       wopinterop.Record{RefreshedAt: upstreamRefreshedAt},
		Streaming:    true,
		DurableTasks: true,
		AgentCards:   true,
		ExtendedCard: true,
		// Push deliveries go to https URLs of public hosts, and to the
		// -push-allow origins (local receivers).
		Push: stores.options(guard),
		Card: a2a.CardConfig{
			Name:        implementationName,
			Description: "The wopinterop demo host: the OpenWOP conformance fixtures over an in-memory store.",
			Version:     version,
			SecuritySchemes: wire.NamedSecuritySchemes{
				bearerScheme: wire.HTTPAuthSecurityScheme{Scheme: "Bearer", Description: "an API key of the host's -keys"},
			},
			SecurityRequirements: wire.SecurityRequirementsOptions{{bearerScheme: {}}},
		},
		CardSigner: signer,
		Routed:     []interop.Workflow{fixture(memstore.FixtureApproval)},
	}
}

// options are the push options of the A2A section: deliveries through
// guard, to the stores s holds, in memory where it holds none.
func (s *PushStores) options(guard *egress.Guard) *push.Options {
	o := &push.Options{Guard: guard}
	if s != nil {
		o.Configs, o.Vault, o.Outbox, o.LeaseTTL = s.Configs, s.Vault, s.Outbox, s.LeaseTTL
	}
	return o
}
