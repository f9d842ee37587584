package hostapp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/wopinterop/wopinterop/examples/host/mcpfixtures"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
)

// This file is what the store holds at start: the conformance fixtures and
// agents every tenant has, and the demo's tenant-specific workflow and
// agent, which show that what a caller sees is its tenant's.

// The demo tenants of the default -keys. The tenant-specific extras exist
// only when these tenants do.
const (
	tenantAcme   = "acme"
	tenantGlobex = "globex"
)

// connectPath is where conformance-credential's connectUrl points on the
// host's origin. The demo has no authorization server, so nothing is
// served there: no grant can complete and no credential ever resolves.
const connectPath = "/connect/" + memstore.CredentialProvider

// connectURL is the connectUrl of conformance-credential, or "" when the
// origin is not https or loopback http, where a credential interrupt must
// not send a user (OpenWOP oauth §The credential interrupt).
func connectURL(base string) string {
	if !memstore.SecureOrigin(base) {
		return ""
	}
	return base + connectPath
}

// seed gives every tenant the conformance fixtures, the interrupt fixtures
// and the demo and conformance agents; acme also gets acmeReport and
// globex the globex analyst.
func seed(store *memstore.Store, tenants []string, base string) error {
	// The MCP conformance suite's fixtures live in their own tenant, which
	// only the /mcp-conformance mount reaches.
	if err := mcpfixtures.Register(store, mcpfixtures.Tenant); err != nil {
		return fmt.Errorf("register the MCP conformance fixtures: %w", err)
	}
	interrupts := memstore.InterruptFixtureOptions{ConnectURL: connectURL(base)}
	for _, t := range tenants {
		if err := store.RegisterFixtures(t); err != nil {
			return fmt.Errorf("register fixtures for %q: %w", t, err)
		}
		if err := store.RegisterInterruptFixtures(t, interrupts); err != nil {
			return fmt.Errorf("register interrupt fixtures for %q: %w", t, err)
		}
		agents := []interop.Agent{demoAgent(), conformanceAgent()}
		switch t {
		case tenantAcme:
			if err := store.Register(t, acmeReport()); err != nil {
				return fmt.Errorf("register %s for %q: %w", acmeReportID, t, err)
			}
		case tenantGlobex:
			agents = append(agents, globexAnalyst())
		}
		for _, a := range agents {
			if err := store.AddAgent(t, a); err != nil {
				return fmt.Errorf("add agent %s for %q: %w", a.ID, t, err)
			}
		}
	}
	return nil
}

// fixtureIDs lists the fixture workflows every tenant has, in registration
// order; discovery advertises them in the root fixtures[] (the suite runs a
// fixture-dependent scenario only when its fixture is listed).
// conformance-credential is among them only on a secure origin.
func fixtureIDs(base string) []string {
	var ids []string
	for _, d := range memstore.ConformanceFixtures() {
		ids = append(ids, d.Workflow.ID)
	}
	defs, _ := memstore.InterruptFixtures(memstore.InterruptFixtureOptions{ConnectURL: connectURL(base)}) // connectURL is valid or ""
	for _, d := range defs {
		ids = append(ids, d.Workflow.ID)
	}
	return ids
}

// workflowIDs lists the workflows a caller of tenant may start, sorted: its
// MCP tools, on a host that registers its own workflows (config.Workflows).
func workflowIDs(tenant, base string) []string {
	ids := append(fixtureIDs(base), mcpClientWorkflowID)
	if tenant == tenantAcme {
		ids = append(ids, acmeReportID)
	}
	slices.Sort(ids)
	return ids
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

func demoAgent() interop.Agent {
	return interop.Agent{
		ID:          "demo-agent",
		Persona:     "demo",
		PackVersion: "1.0.0",
		Label:       "Demo agent",
		Description: "Runs the no-op and approval conformance fixtures.",
		Workflows:   []string{memstore.FixtureNoop, memstore.FixtureApproval},
	}
}

// The conformance agent pack and the canaries its host-private parts
// carry: the suite looks for them in every card and inventory entry, where
// neither may appear (OpenWOP interop §Per-agent cards, RFC 0202 §C.5).
const (
	conformancePack = "core.conformance.agent-pack"
	promptCanary    = "OPENWOP-CONFORMANCE-CANARY-0202-PROMPT"
	handoffCanary   = "OPENWOP-CONFORMANCE-CANARY-0202-HANDOFF"
)

// conformanceAgent is the agent of the conformance agent pack: its system
// prompt and handoff schemas carry the canaries and stay in the store.
func conformanceAgent() interop.Agent {
	handoff := func(what string) map[string]any {
		return map[string]any{"type": "object", "description": handoffCanary + " " + what, "additionalProperties": true}
	}
	schemas, _ := json.Marshal(map[string]any{"task": handoff("task"), "return": handoff("return")}) // maps of strings always encode
	return interop.Agent{
		ID:             conformancePack + ".resolver",
		Persona:        "Resolver",
		Pack:           conformancePack,
		PackVersion:    "1.0.0",
		Label:          "Resolver",
		Description:    "Resolves a request by running the approval workflow the host routes to it.",
		Workflows:      []string{memstore.FixtureApproval},
		SystemPrompt:   "You are the resolver. " + promptCanary,
		HandoffSchemas: schemas,
	}
}

// globexAnalyst is the agent only globex has.
func globexAnalyst() interop.Agent {
	return interop.Agent{
		ID:          "globex-analyst",
		Persona:     "analyst",
		PackVersion: "1.0.0",
		Label:       "Globex analyst",
		Description: "Runs globex's no-op analyses.",
		Workflows:   []string{memstore.FixtureNoop},
	}
}

// acmeReportID is the workflow only acme has: acme's MCP tools/list shows
// it, globex's does not.
const acmeReportID = "acme-report"

func acmeReport() memstore.WorkflowDef {
	return memstore.WorkflowDef{
		Workflow: interop.Workflow{
			ID:          acmeReportID,
			Name:        "Acme report",
			Description: "Publishes acme's report and completes.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`),
			Tags:        []string{"acme"},
		},
		Run: func(_ context.Context, rc *memstore.RunContext) (json.RawMessage, error) {
			err := rc.PublishArtifact(interop.Artifact{
				ID: "report", Name: "report", Parts: []interop.Part{interop.TextPart("acme: all systems nominal")},
			}, false, true)
			if err != nil {
				return nil, err
			}
			return json.RawMessage(`{"report":"published"}`), nil
		},
	}
}
