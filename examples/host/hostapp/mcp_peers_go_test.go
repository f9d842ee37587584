package hostapp

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopinterop/wopinterop/interop/memstore"
)

// The Go MCP peer: go-sdk v1.8.0's own mcp.Client over its
// StreamableClientTransport drives the demo host's /mcp over real HTTP,
// with the demo bearer keys on an http.RoundTripper: connect (server/discover),
// list tools, call a tool, a tool error, an approval round through the
// client's ElicitationHandler, and a task. go-sdk v1.8.0 decodes a
// CreateTaskResult into a CallToolResult and loses taskId and status
// (research notes mcp-go-sdk.md §9), so the task is followed with raw
// JSON-RPC POSTs carrying what a 2026-07-28 client sends.

// mcpWireLog records the Mcp-Method, MCP-Protocol-Version and credential of
// every request the SDK put on the wire, and adds the bearer key.
type mcpWireLog struct {
	key  string
	next http.RoundTripper

	mu       sync.Mutex
	methods  []string
	versions []string
}

func (l *mcpWireLog) RoundTrip(r *http.Request) (*http.Response, error) {
	l.mu.Lock()
	l.methods = append(l.methods, r.Header.Get("Mcp-Method"))
	l.versions = append(l.versions, r.Header.Get("MCP-Protocol-Version"))
	l.mu.Unlock()
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+l.key)
	return l.next.RoundTrip(r)
}

func (l *mcpWireLog) snapshot() (methods, versions []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.methods), slices.Clone(l.versions)
}

// connectGoSDK connects a go-sdk client to h's /mcp as the holder of key.
func connectGoSDK(t *testing.T, ctx context.Context, h *testHost, key string, opts *sdk.ClientOptions) (*sdk.ClientSession, *mcpWireLog) {
	t.Helper()
	log := &mcpWireLog{key: key, next: h.client.Transport}
	client := sdk.NewClient(&sdk.Implementation{Name: "wopinterop-go-peer", Version: "1.0.0"}, opts)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{
		Endpoint:             h.url + mcpPath,
		HTTPClient:           &http.Client{Transport: log},
		DisableStandaloneSSE: true, // stateless: there is no session stream to open
		MaxRetries:           -1,
	}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs, log
}

func TestGoMCPPeer(t *testing.T) {
	h := newTestHost(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	var asked []*sdk.ElicitParams
	cs, log := connectGoSDK(t, ctx, h, acmeKey, &sdk.ClientOptions{
		Capabilities: &sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{Form: &sdk.FormElicitationCapabilities{}}},
		ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			asked = append(asked, req.Params)
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"action": "accept"}}, nil
		},
	})

	// Step: connect. The client discovers the server (no initialize, no
	// session) and settles on 2026-07-28.
	init := cs.InitializeResult()
	if init == nil || init.ProtocolVersion != mcpRevision || init.ServerInfo == nil ||
		init.ServerInfo.Name != implementationName || init.ServerInfo.Version != defaultVersion {
		t.Fatalf("connect: %+v", init)
	}
	if _, ok := init.Capabilities.Extensions[tasksExtID]; !ok || init.Capabilities.Tools == nil {
		t.Fatalf("connect: capabilities %+v", init.Capabilities)
	}
	if methods, _ := log.snapshot(); !slices.Equal(methods, []string{"server/discover"}) {
		t.Fatalf("connect sent %v, want server/discover alone", methods)
	}
	if cs.ID() != "" {
		t.Errorf("the connection has session id %q; the mount is stateless", cs.ID())
	}
	t.Logf("connect: %s %s/%s", init.ProtocolVersion, init.ServerInfo.Name, init.ServerInfo.Version)

	// Step: list tools. The caller's five workflows, sorted by name, cached
	// per caller (cacheScope private).
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("list tools: %v", err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	if !slices.Equal(names, sortedFixtures()) || list.CacheScope != "private" || list.TTLMs != 60000 || list.NextCursor != "" {
		t.Fatalf("list tools: %v cacheScope %q ttlMs %d cursor %q", names, list.CacheScope, list.TTLMs, list.NextCursor)
	}
	t.Logf("list tools: %v", names)

	// Step: call conformance-noop: the run's output as text and
	// structuredContent, its artifact as an embedded resource.
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: memstore.FixtureNoop, Arguments: map[string]any{"message": "hi"}})
	if err != nil {
		t.Fatalf("call noop: %v", err)
	}
	text, _ := res.Content[0].(*sdk.TextContent)
	if res.IsError || text == nil || text.Text != `{"ok":true}` || len(res.Content) != 2 {
		t.Fatalf("call noop: %+v", res)
	}
	if sc, _ := json.Marshal(res.StructuredContent); string(sc) != `{"ok":true}` {
		t.Errorf("call noop: structuredContent %s", sc)
	}
	artifact, _ := res.Content[1].(*sdk.EmbeddedResource)
	if artifact == nil || artifact.Resource == nil || !strings.HasPrefix(artifact.Resource.URI, "openwop://runs/acme~2F") ||
		artifact.Resource.Text != "conformance-noop completed" {
		t.Errorf("call noop: artifact %+v", res.Content[1])
	}

	// Step: a failed run is a tool error, never a JSON-RPC error.
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: memstore.FixtureFailure})
	if err != nil {
		t.Fatalf("call failure: %v", err)
	}
	text, _ = res.Content[0].(*sdk.TextContent)
	if !res.IsError || text == nil || text.Text != memstore.FixtureFailureMessage {
		t.Fatalf("call failure: %+v", res)
	}

	// Step: approval. The run suspends; the mount answers input_required
	// with a form elicitation; the client's multi-round loop asks the
	// ElicitationHandler, retries with the sealed requestState, and gets the
	// completed result.
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: memstore.FixtureApproval})
	if err != nil {
		t.Fatalf("approval: %v", err)
	}
	text, _ = res.Content[0].(*sdk.TextContent)
	if res.IsError || text == nil || text.Text != `{"approved":true}` {
		t.Fatalf("approval: %+v", res)
	}
	if len(asked) != 1 || asked[0].Message != "Approve the request?" || asked[0].Mode != "form" {
		t.Fatalf("approval: elicitations %+v", asked)
	}
	if schema, _ := json.Marshal(asked[0].RequestedSchema); !strings.Contains(string(schema), `"required":["action"]`) {
		t.Errorf("approval: requestedSchema %s", schema)
	}
	methods, versions := log.snapshot()
	if want := []string{"server/discover", "tools/list", "tools/call", "tools/call", "tools/call", "tools/call"}; !slices.Equal(methods, want) {
		t.Errorf("wire methods %v, want %v", methods, want)
	}
	for i, v := range versions {
		if v != mcpRevision {
			t.Errorf("request %d (%s) sent MCP-Protocol-Version %q", i, methods[i], v)
		}
	}
	// The calls are the host's runs, created over the mcp transport.
	runs := decode[struct {
		Runs []snapshot `json:"runs"`
	}](t, h.get("/runs?workflowId="+memstore.FixtureApproval, acmeKey))
	if len(runs.Runs) != 1 || runs.Runs[0].Status != "completed" {
		t.Fatalf("approval run: %+v", runs.Runs)
	}
	events := decode[poll](t, h.get("/runs/"+strings.Replace(runs.Runs[0].RunID, "/", "~2F", 1)+"/events/poll?timeout=0", acmeKey))
	if len(events.Events) == 0 || events.Events[0].Type != "run.started" || events.Events[0].str("transport") != "mcp" {
		t.Errorf("approval run events: %+v", events.Events)
	}
	t.Logf("approval: %d elicitation, %s", len(asked), text.Text)

	// Step: task, by raw JSON-RPC (see the top of the file).
	followTask(t, h)
}

// followTask drives conformance-approval as a task: tools/call with the
// Tasks extension declared → CreateTaskResult; tasks/get until
// input_required; tasks/update with the acceptance; tasks/get until
// completed, whose result is the CallToolResult. The other tenant's
// tasks/get is the same -32602 as for a task that never existed.
func followTask(t *testing.T, h *testHost) {
	t.Helper()
	r, dec := h.mcp(mcpReq{Key: acmeKey, Method: "tools/call", Name: memstore.FixtureApproval, Caps: withTasks,
		Params: map[string]any{"name": memstore.FixtureApproval, "arguments": map[string]any{}}})
	wantStatus(t, r, http.StatusOK)
	taskID, _ := dec.Result["taskId"].(string)
	if dec.Result["resultType"] != "task" || !strings.HasPrefix(taskID, "acme~2F") ||
		(dec.Result["status"] != "working" && dec.Result["status"] != "input_required") {
		t.Fatalf("task: tools/call answered %s", r.Body)
	}
	first := dec.Result["status"]
	get := func(key string) (response, mcpResult) {
		return h.mcp(mcpReq{Key: key, Method: "tasks/get", Name: taskID, Caps: withTasks, Params: map[string]any{"taskId": taskID}})
	}
	until := func(status string) map[string]any {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			r, dec := get(acmeKey)
			wantStatus(t, r, http.StatusOK)
			if dec.Result["resultType"] != "complete" || dec.Result["taskId"] != taskID {
				t.Fatalf("tasks/get: %s", r.Body)
			}
			if dec.Result["status"] == status {
				return dec.Result
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("task %s never reached %s", taskID, status)
		return nil
	}
	waiting := until("input_required")
	requests, _ := waiting["inputRequests"].(map[string]any)
	if len(requests) != 1 || waiting["requestState"] != nil {
		t.Fatalf("input_required task: %v", waiting)
	}
	var interrupt string
	for id, raw := range requests {
		interrupt = id
		req, _ := raw.(map[string]any)
		params, _ := req["params"].(map[string]any)
		if req["method"] != "elicitation/create" || params["mode"] != "form" || params["message"] != "Approve the request?" {
			t.Fatalf("input request %s: %v", id, raw)
		}
	}

	r, dec = h.mcp(mcpReq{Key: acmeKey, Method: "tasks/update", Name: taskID, Caps: withTasks, Params: map[string]any{"taskId": taskID,
		"inputResponses": map[string]any{interrupt: map[string]any{"action": "accept", "content": map[string]any{"action": "accept"}}}}})
	wantStatus(t, r, http.StatusOK)
	if dec.Result["resultType"] != "complete" {
		t.Fatalf("tasks/update: %s", r.Body)
	}

	done := until("completed")
	result, _ := done["result"].(map[string]any)
	if sc, _ := json.Marshal(result["structuredContent"]); result["isError"] != false || string(sc) != `{"approved":true}` {
		t.Fatalf("completed task result: %v", done["result"])
	}

	// Another tenant cannot tell the task from one that never existed.
	foreign, fdec := get(globexKey)
	wantRPCError(t, foreign, fdec, http.StatusBadRequest, -32602)
	unknown := "globex~2F" + strings.TrimPrefix(taskID, "acme~2F")
	never, ndec := h.mcp(mcpReq{Key: globexKey, Method: "tasks/get", Name: unknown, Caps: withTasks, Params: map[string]any{"taskId": unknown}})
	wantRPCError(t, never, ndec, http.StatusBadRequest, -32602)
	if string(foreign.Body) != string(never.Body) {
		t.Errorf("a foreign task %s and an unknown one %s answer differently", foreign.Body, never.Body)
	}
	t.Logf("task: %s %v → input_required → completed", taskID, first)
}
