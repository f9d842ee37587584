package wopinterop_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
)

// cancellableWorkflow is the fixture that waits until it is cancelled.
func cancellableWorkflow() interop.Workflow {
	for _, d := range memstore.ConformanceFixtures() {
		if d.Workflow.ID == memstore.FixtureCancellable {
			return d.Workflow
		}
	}
	panic("no cancellable fixture")
}

// Host.Drain makes the A2A and MCP requests still waiting on a run answer
// in their protocol's shape — never an empty 200 — and refuses later ones
// with 503.
func TestHostDrainAnswersInFlightRequests(t *testing.T) {
	store := newStore(t)
	cfg := mcpConfig(validConfig(store))
	cfg.A2A.Routed = []interop.Workflow{cancellableWorkflow()}
	h := newHost(t, cfg)
	srv := server(t, h)

	var wg sync.WaitGroup
	var a2aReply reply
	var mcpStatus int
	var mcpBody map[string]any
	wg.Go(func() {
		a2aReply = send(t, http.MethodPost, srv.URL+"/a2a", acmeKey, strings.Replace(sendApproval, "MSG", "drain-1", 1))
	})
	wg.Go(func() {
		mcpStatus, mcpBody = mcpPost(t, srv.URL+"/mcp", acmeKey, "tools/call", map[string]any{"name": memstore.FixtureCancellable, "arguments": map[string]any{}})
	})
	// Both requests wait on a run that never ends by itself.
	deadline := time.Now().Add(5 * time.Second)
	for {
		page, err := store.ListRuns(t.Context(), interop.Subject{Tenant: "acme", Principal: "key:acme", Authenticated: true}, interop.ListRunsQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Runs) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d runs started, want 2", len(page.Runs))
		}
		time.Sleep(5 * time.Millisecond)
	}
	drained := time.Now()
	h.Drain()
	h.Drain() // idempotent
	wg.Wait()
	// Without Drain both would wait for their block timeouts (30 s).
	if took := time.Since(drained); took > 5*time.Second {
		t.Fatalf("in-flight requests answered %v after Drain", took)
	}

	if a2aReply.status != http.StatusOK {
		t.Fatalf("in-flight SendMessage answered %d %s", a2aReply.status, a2aReply.body)
	}
	var env struct {
		Result struct {
			Task struct {
				Status struct{ State string } `json:"status"`
			} `json:"task"`
		} `json:"result"`
	}
	if err := json.Unmarshal(a2aReply.body, &env); err != nil || env.Result.Task.Status.State != "TASK_STATE_WORKING" {
		t.Fatalf("in-flight SendMessage answered %s, want the task as it is (WORKING)", a2aReply.body)
	}
	errObj, _ := mcpBody["error"].(map[string]any)
	if mcpStatus != http.StatusServiceUnavailable || errObj == nil || errObj["code"] != float64(-32603) {
		t.Fatalf("in-flight tools/call answered %d %v, want 503 with a JSON-RPC -32603", mcpStatus, mcpBody)
	}

	// Later requests are refused in each protocol's shape.
	if r := send(t, http.MethodPost, srv.URL+"/a2a", acmeKey, strings.Replace(sendApproval, "MSG", "drain-2", 1)); r.status != http.StatusServiceUnavailable || !strings.Contains(string(r.body), `"jsonrpc":"2.0"`) {
		t.Fatalf("SendMessage after Drain: %d %s", r.status, r.body)
	}
	if st, body := mcpPost(t, srv.URL+"/mcp", acmeKey, "tools/list", nil); st != http.StatusServiceUnavailable || body["error"] == nil {
		t.Fatalf("tools/list after Drain: %d %v", st, body)
	}
}
