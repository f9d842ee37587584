package remote

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopinterop/wopinterop/interop"
)

type greetIn struct {
	Name string `json:"name" jsonschema:"who to greet"`
}

type greetOut struct {
	Greeting string `json:"greeting"`
}

// TestGoSDKServer drives the connection side against go-sdk's own
// stateless 2026-07-28 server, as a host would: connect, list through the
// admission, check the tool, call it. Both response modes (JSON and SSE)
// and a server also listing a legacy revision.
func TestGoSDKServer(t *testing.T) {
	for name, opts := range map[string][]serverOpt{
		"sse":                 nil,
		"json":                {withJSON()},
		"with legacy listed":  {withVersions("2026-07-28", "2025-11-25")},
		"cacheable, paginate": {withCache(30_000, "private"), withPageSize(1)},
	} {
		t.Run(name, func(t *testing.T) {
			s := newServer(t, opts...)
			mcp.AddTool(s.mcp, &mcp.Tool{Name: "greet", Description: "Greets someone."}, func(_ context.Context, _ *mcp.CallToolRequest, in greetIn) (*mcp.CallToolResult, greetOut, error) {
				return nil, greetOut{Greeting: "hello " + in.Name}, nil
			})
			s.addTool(tool("echo", "text"))
			// The host reviews the server's list once and admits greet by
			// the digest of what it reviewed.
			probe := newFixture(t, s, admission(s))
			listed := probeTools(t, probe)
			f := newFixture(t, s, admission(s, listed["greet"]))
			ctx := WithTraceContext(context.Background(), interop.TraceContext{TraceParent: traceparent})
			sess := f.connect(t, ctx, runID, "echo")
			tools, err := sess.Tools(ctx)
			if err != nil || len(tools) != 1 || tools[0].Name != "greet" || tools[0].OutputSchema == nil {
				t.Fatalf("%v %v", toolNames(tools), err)
			}
			tl, err := sess.admitted(ctx, "greet")
			if err != nil {
				t.Fatal(err)
			}
			res, err := sess.call.CallTool(ctx, &mcp.CallToolParams{Name: tl.Name, Arguments: map[string]any{"name": "Ada"}})
			if err != nil || res.IsError || res.NeedsInput() {
				t.Fatalf("%+v %v", res, err)
			}
			if got, _ := res.StructuredContent.(map[string]any); got["greeting"] != "hello Ada" {
				t.Fatalf("structured content %v", res.StructuredContent)
			}
			if r, _ := f.sink.onlyRecord(t, runID); r.Outcome != "accepted" || r.Version != Revision {
				t.Fatalf("record %+v", r)
			}
		})
	}
}

// probeTools lists every tool the server offers, without admission, as the
// host's review would see it.
func probeTools(t *testing.T, f *fixture) map[string]*mcp.Tool {
	t.Helper()
	sess := f.connect(t, context.Background(), runID+"probe", "echo")
	items, err := sess.list(context.Background(), toolsList)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*mcp.Tool{}
	for _, it := range items {
		out[it.name] = it.item.(*mcp.Tool)
	}
	return out
}
