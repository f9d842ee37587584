package hostapp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/internal/sharedspec"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
)

// TestEveryEventValidatesUpstream drives runs through every surface the
// host serves — REST, A2A, MCP (a completed call, a failed one, and one
// whose client went away) — then reads each run's log on GET
// /runs/{id}/events/poll and holds every event to the upstream
// RunEventDoc envelope and registered payloads, and to the values the
// OpenWOP suite reads: run.started.payload.transport,
// node.suspended.payload.interruptId and nodeId,
// run.cancelled.payload.reason, run.failed.payload.error, run.completed
// .payload.outputs.
func TestEveryEventValidatesUpstream(t *testing.T) {
	validate := sharedspec.RunEventValidator(t)
	h := newTestHost(t)
	transports := map[string]string{} // runId → the surface that started it

	// REST: every fixture, an approval accepted and one rejected, a cancel.
	for _, wf := range []string{memstore.FixtureNoop, memstore.FixtureFailure, memstore.FixtureDelay} {
		c := h.start(acmeKey, wf, "")
		h.waitStatus(acmeKey, projected(c.RunID), "completed", "failed")
		transports[c.RunID] = "rest"
	}
	for _, action := range []string{"accept", "reject"} {
		c := h.start(acmeKey, memstore.FixtureApproval, "")
		h.waitStatus(acmeKey, projected(c.RunID), "waiting-approval")
		s := decode[snapshot](t, h.get(projected(c.RunID), acmeKey))
		wantStatus(t, h.post(strings.TrimPrefix(s.Interrupts[0].ResolveURL, h.url), acmeKey, `{"resumeValue":{"action":"`+action+`"}}`), http.StatusOK)
		h.waitStatus(acmeKey, projected(c.RunID), "completed", "failed")
		transports[c.RunID] = "rest"
	}
	c := h.start(acmeKey, memstore.FixtureCancellable, "")
	wantStatus(t, h.post(projected(c.RunID)+"/cancel", acmeKey, `{"reason":"walkthrough"}`), http.StatusOK)
	h.waitStatus(acmeKey, projected(c.RunID), "cancelled")
	transports[c.RunID] = "rest"

	// A2A: a task that waits for approval, then is accepted by a reply.
	task := rpcTask(t, h.rpc(acmeKey, "1.0", sendMessage(1, "events-"+t.Name(), "")))
	accept := `{"jsonrpc":"2.0","id":2,"method":"SendMessage","params":{"message":{"messageId":"events-accept-` + t.Name() +
		`","taskId":"` + string(task.ID) + `","role":"ROLE_USER","parts":[{"data":{"action":"accept"}}]}}}`
	rpcTask(t, h.rpc(acmeKey, "1.0", accept))
	h.waitStatus(acmeKey, projected(string(task.ID)), "completed")
	transports[string(task.ID)] = "a2a"

	// MCP: a completed call, a failed one, and a call whose client goes
	// away before the answer (the run is cancelled, reason
	// mcp-request-cancelled).
	for _, tool := range []string{memstore.FixtureNoop, memstore.FixtureFailure} {
		_, res := h.mcp(mcpReq{Key: acmeKey, Method: "tools/call", Name: tool, Params: map[string]any{"name": tool, "arguments": map[string]any{}}})
		if res.Result == nil {
			t.Fatalf("tools/call %s: no result", tool)
		}
	}
	h.mcpAbandoned(memstore.FixtureCancellable)

	runs := decode[struct {
		Runs []snapshot `json:"runs"`
	}](t, h.get("/runs?limit=100", acmeKey))
	var sawAbandoned bool
	for _, run := range runs.Runs {
		if run.Status != "completed" && run.Status != "failed" {
			p := h.waitStatus(acmeKey, projected(run.RunID), "completed", "failed", "cancelled")
			run.Status = p.Status
		}
		p := decode[poll](t, h.get(projected(run.RunID)+"/events/poll?timeout=0", acmeKey))
		raw := decode[struct {
			Events []json.RawMessage `json:"events"`
		}](t, h.get(projected(run.RunID)+"/events/poll?timeout=0", acmeKey))
		if len(raw.Events) != len(p.Events) || len(p.Events) < 2 {
			t.Fatalf("run %s: %d events", run.RunID, len(p.Events))
		}
		for i, doc := range raw.Events {
			if err := validate(doc); err != nil {
				t.Errorf("run %s event %d: %v\n%s", run.RunID, i, err, doc)
			}
			var ev interop.RunEvent
			if err := json.Unmarshal(doc, &ev); err != nil {
				t.Fatal(err)
			}
			if err := ev.Validate(); err != nil {
				t.Errorf("run %s event %d: %v", run.RunID, i, err)
			}
			if !ev.Type.Registered() && ev.Type != memstore.EventCancelRequested {
				t.Errorf("run %s event %d has unexpected vendor type %q", run.RunID, i, ev.Type)
			}
		}
		first, last := p.Events[0], p.Events[len(p.Events)-1]
		want, known := transports[run.RunID]
		if !known {
			want = "mcp"
		}
		if first.Type != "run.started" || first.Sequence != 0 || first.str("transport") != want || first.str("workflowId") != run.WorkflowID {
			t.Errorf("run %s (%s) starts with %s %s, want run.started at 0 over %s", run.RunID, run.WorkflowID, first.Type, first.Payload, want)
		}
		for _, e := range p.Events {
			if e.Type == "node.suspended" && (e.str("interruptId") == "" || e.str("nodeId") != "approve" || e.NodeID != "approve") {
				t.Errorf("run %s node.suspended %s (nodeId %q)", run.RunID, e.Payload, e.NodeID)
			}
		}
		switch run.Status {
		case "completed":
			if last.Type != "run.completed" || !bytes.HasPrefix(last.Payload, []byte(`{"outputs":{`)) {
				t.Errorf("run %s ends with %s %s", run.RunID, last.Type, last.Payload)
			}
		case "failed":
			if last.Type != "run.failed" || last.str("error.code") == "" || last.str("error.message") == "" {
				t.Errorf("run %s ends with %s %s", run.RunID, last.Type, last.Payload)
			}
		case "cancelled":
			if last.Type != "run.cancelled" {
				t.Errorf("run %s ends with %s", run.RunID, last.Type)
			}
			if want == "mcp" {
				sawAbandoned = true
				if got := last.str("reason"); got != "mcp-request-cancelled" {
					t.Errorf("run %s abandoned by its MCP client is cancelled with reason %q, want mcp-request-cancelled", run.RunID, got)
				}
			} else if got := last.str("reason"); got != "walkthrough" {
				t.Errorf("run %s cancelled over REST has reason %q", run.RunID, got)
			}
		}
	}
	if len(runs.Runs) != len(transports)+3 || !sawAbandoned {
		t.Fatalf("%d runs listed (%d started over REST and A2A, 3 over MCP), abandoned MCP run seen: %v", len(runs.Runs), len(transports), sawAbandoned)
	}
	types := map[string]bool{}
	for _, run := range runs.Runs {
		for _, e := range decode[poll](t, h.get(projected(run.RunID)+"/events/poll?timeout=0", acmeKey)).Events {
			types[e.Type] = true
		}
	}
	for _, want := range []string{"run.started", "node.suspended", "interrupt.resolved", "artifact.created", "run.completed", "run.failed", "run.cancelled"} {
		if !types[want] {
			t.Errorf("no run produced a %s event; the test no longer covers it", want)
		}
	}
	for typ := range types {
		if typ == "run.cancelling" || typ == "artifact.published" {
			t.Errorf("a log holds the unregistered type %s", typ)
		}
	}
	if t.Failed() {
		keys := make([]string, 0, len(types))
		for k := range types {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		t.Logf("event types seen: %v", keys)
	}
}

// mcpAbandoned calls tool (which waits for a cancel) over MCP and goes away
// before the answer, as a client that disconnects does.
func (h *testHost) mcpAbandoned(tool string) {
	h.t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": map[string]any{
		"name": tool, "arguments": map[string]any{},
		"_meta": map[string]any{metaVersion: mcpRevision, metaCaps: map[string]any{}},
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url+mcpPath, bytes.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json, text/event-stream")
	hr.Header.Set("MCP-Protocol-Version", mcpRevision)
	hr.Header.Set("Mcp-Method", "tools/call")
	hr.Header.Set("Mcp-Name", tool)
	hr.Header.Set("Authorization", "Bearer "+acmeKey)
	res, err := h.client.Do(hr)
	if err == nil {
		res.Body.Close()
		h.t.Fatalf("tools/call %s answered %d before its client went away", tool, res.StatusCode)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		h.t.Fatalf("tools/call %s: %v", tool, err)
	}
}
