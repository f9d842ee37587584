package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
)

// What the example host's store holds besides the conformance fixtures.

// benchAgent is the agent the bench's messages go to. The example host's
// own A2A interface routes only conformance-approval (the OpenWOP suite
// wants exactly that skill there), so the no-op and the held workflow are
// reached as this agent's skills, through its per-agent routing value
// (OpenWOP interop.md §Per-agent cards), as any multi-skill host does.
func benchAgent() interop.Agent {
	return interop.Agent{
		ID: benchAgentID, Persona: "bench", PackVersion: "1.0.0", Label: "Bench",
		Description: "runs the load bench's workflows",
		Workflows:   []string{memstore.FixtureNoop, holdSkill},
	}
}

const benchAgentID = "bench-agent"

// seedRuns gives the list tenant n completed no-op runs.
func seedRuns(ctx context.Context, store *memstore.Store, n int) error {
	sub := interop.Subject{Tenant: listTenant, Principal: "key:" + listTenant, Authenticated: true}
	for i := range n {
		_, _, err := store.CreateRun(ctx, sub, interop.CreateRunRequest{WorkflowID: memstore.FixtureNoop, Inputs: json.RawMessage(`{}`)})
		if err != nil {
			return fmt.Errorf("seed run %d: %w", i, err)
		}
	}
	return nil
}

// holdWorkflow is the held task's workflow: it publishes one artifact per
// update the holder asks for and completes when the holder lets go. Every
// update replaces the one artifact, so the task keeps its size however
// many updates a run makes.
func holdWorkflow(h *holder) memstore.WorkflowDef {
	return memstore.WorkflowDef{
		Workflow: interop.Workflow{ID: holdSkill, Name: "Held", Description: "publishes an artifact per bench update",
			InputSchema: json.RawMessage(`{"type":"object"}`)},
		Run: func(ctx context.Context, rc *memstore.RunContext) (json.RawMessage, error) {
			tick := interop.Artifact{ID: tickArtifact, Parts: []interop.Part{interop.TextPart("tick")}}
			updates := h.take()
			n := 0
			for {
				select {
				case k, ok := <-updates:
					if !ok {
						return json.RawMessage(fmt.Sprintf(`{"updates":%d}`, n)), nil
					}
					for range k {
						n++
						if err := rc.PublishArtifact(tick, false, true); err != nil {
							return nil, err
						}
					}
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
		},
	}
}
