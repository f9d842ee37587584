package remote_test

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopinterop/wopinterop/egress"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/mcp/remote"
	"github.com/wopinterop/wopinterop/negotiate"
)

// ExampleClient_Connect admits an MCP server once, with the tool the
// operator reviewed pinned by its digest, then connects on the run a step
// belongs to and lists what the step may call. (It needs a live server, so
// it has no output to check; it is compiled with the tests.)
func ExampleClient_Connect() {
	ctx := context.Background()
	store := memstore.New()
	defer store.Close()
	// A host of the library takes its policy and its round ceiling from
	// its mcp record: m := host.Advertisement().MCP(); m.Policy(false, nil)
	// and m.MRTR.MaxRounds.
	policy, _ := negotiate.NewPolicy(negotiate.Config{Protocol: negotiate.MCP, Offered: []string{remote.Revision}, Preferred: remote.Revision, Floor: remote.Revision})
	guard, _ := egress.NewGuard(egress.GuardOptions{}) // https to public addresses only
	client, _ := remote.New(remote.Deps{Policy: policy, Events: store, Guard: guard, MaxRounds: 5}, remote.Options{})

	// The tool as the operator reviewed it in the server's tools/list.
	reviewed := &mcp.Tool{Name: "search", Description: "Searches the catalogue.", InputSchema: map[string]any{"type": "object"}}
	_ = client.Admit(remote.Admission{
		Alias:     "catalogue",
		Endpoint:  "https://mcp.example/mcp",
		Tools:     []remote.AdmittedTool{{Name: reviewed.Name, Digest: remote.ToolDigest(reviewed)}},
		Tenant:    "acme",
		Principal: "svc-workflows",
	})

	runID := "acme/run-1" // the local run the step belongs to
	ctx = remote.WithTraceContext(ctx, interop.TraceContext{TraceParent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"})
	session, err := client.Connect(ctx, runID, "catalogue")
	if err != nil {
		// Render this (e.g. 400 interop_version_unsupported naming the run).
		_ = remote.ProjectError(runID, err)
		return
	}
	defer session.Close()
	tools, err := session.Tools(ctx) // only "search", and only as reviewed
	if err != nil {
		_ = remote.ProjectError(runID, err)
		return
	}
	_ = tools
}
