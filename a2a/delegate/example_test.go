package delegate_test

import (
	"context"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/a2a/delegate"
	"github.com/wopinterop/wopinterop/egress"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/negotiate"
)

// ExampleClient_Connect is the README's recipe for delegating a step to a
// remote agent: admit the agent once, then connect on the run the step
// belongs to and delegate. (It needs a live agent, so it has no output to
// check; it is compiled with the tests.)
func ExampleClient_Connect() {
	ctx := context.Background()
	store := memstore.New()
	defer store.Close()
	// A host of the library takes its policy from its a2a record:
	// host.Advertisement().A2A().Policy(false, nil).
	policy, _ := negotiate.NewPolicy(negotiate.Config{Protocol: negotiate.A2A, Offered: []string{"1.0"}, Preferred: "1.0", Floor: "1.0"})
	guard, _ := egress.NewGuard(egress.GuardOptions{}) // https to public addresses only
	client, _ := delegate.New(delegate.Deps{Policy: policy, Events: store, Guard: guard}, delegate.Options{})

	// The skill as the operator reviewed it on the agent's card.
	skill := wire.AgentSkill{ID: "summarize", Name: "Summarize", Description: "Summarizes a document.", Tags: []string{"text"}}
	_ = client.Admit(delegate.Admission{
		Alias:       "summarizer",
		CardURL:     "https://agent.example/.well-known/agent-card.json",
		Skills:      []delegate.AdmittedSkill{{ID: skill.ID, Digest: delegate.SkillDigest(&skill)}},
		DataClasses: []string{"public"}, MayRequestInput: true,
	})

	runID := "acme/run-1" // the local run the step belongs to
	conn, err := client.Connect(ctx, runID, "summarizer")
	if err != nil {
		// Render this (e.g. 400 interop_version_unsupported naming the run).
		_ = delegate.ProjectError(runID, err)
		return
	}
	out, err := conn.Delegate(delegate.WithTraceContext(ctx, interop.TraceContext{}), delegate.Step{
		Skill: skill.ID, DataClass: "public", Parts: []*wire.Part{wire.NewTextPart("summarize this")},
		Decide: func(ctx context.Context, req delegate.InputRequest) (delegate.InputAnswer, error) {
			// A fresh host decision for each remote input request: ask the
			// user, never answer automatically.
			return delegate.InputAnswer{Decline: true}, nil
		},
	})
	if err != nil {
		_ = delegate.ProjectError(runID, err)
		return
	}
	_ = out.Artifacts // admitted; out.Acceptance is pending verification, never accepted
}
