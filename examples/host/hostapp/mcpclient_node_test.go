package hostapp

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/wopinterop/wopinterop/internal/mcppeers"
	"github.com/wopinterop/wopinterop/mcp/remote"
)

// TestMCPClientNode runs the host's MCP client legs against the TypeScript
// SDK's 2026-07-28 server (@modelcontextprotocol/server; skipped without
// Node, required in CI): the mcp seam accepted, an elicitation round
// answered with the state echoed, the round ceiling refused after 5
// calls; conformance-mcp-client completing with the tool's result and
// answering the server's question through the run's interrupt.
func TestMCPClientNode(t *testing.T) {
	p := mcppeers.StartNode(t, mcppeers.Script{Revisions: suiteRevisions})
	h := newTestHost(t, withSeams, withMCPServer("node", p))

	r := h.invokeMCP(`{"serverUrl":"` + p.URL + `"}`)
	wantStatus(t, r, http.StatusOK)
	got := decode[mcpInvokedView](t, r)
	_, records := h.runLog(got.RunID, hostOf(p.Base))
	if rec := onlyMCPRecord(t, records); got.NegotiatedVersion != remote.Revision || rec.Outcome != "accepted" {
		t.Fatalf("seam answered %s, record %+v", r.Body, rec)
	}

	r = h.invokeMCP(`{"serverUrl":"` + p.URL + `","tool":"needs_input","clientCapabilities":{"elicitation":{}},"elicitationAnswer":{"name":"Ada"}}`)
	wantStatus(t, r, http.StatusOK)
	if got := decode[mcpInvokedView](t, r); got.MRTR == nil || !got.MRTR.InputRequiredSeen || !got.MRTR.RequestStateEchoed {
		t.Fatalf("seam answered %s", r.Body)
	}

	before := len(p.Calls("tools/call"))
	r = h.invokeMCP(`{"serverUrl":"` + p.URL + `","tool":"needs_input_loop","clientCapabilities":{"elicitation":{}},"elicitationAnswer":{"name":"Ada"}}`)
	wantError(t, r, http.StatusUnprocessableEntity, "mcp_mrtr_rounds_exceeded")
	if n := len(p.Calls("tools/call")) - before; n != mcpMaxRounds+1 {
		t.Fatalf("the server saw %d calls, want %d", n, mcpMaxRounds+1)
	}

	out := h.completedCall(h.mcpClientRun(`{"method":"callTool","serverId":"node","name":"echo","arguments":{"text":"hi"}}`), p)
	if out.Result.IsError || string(out.Result.Structured) != `{"text":"hi"}` {
		t.Fatalf("result %+v", out.Result)
	}
	runID := h.mcpClientRun(`{"method":"callTool","serverId":"node","name":"needs_input"}`)
	h.waitStatus(acmeKey, projected(runID), "waiting-input")
	snap := decode[snapshot](t, h.get(projected(runID), acmeKey))
	if len(snap.Interrupts) != 1 {
		t.Fatalf("interrupts %+v", snap.Interrupts)
	}
	wantStatus(t, h.post(strings.TrimPrefix(snap.Interrupts[0].ResolveURL, h.url), acmeKey, `{"resumeValue":{"name":"Ada"}}`), http.StatusOK)
	if out := h.completedCall(runID, p); out.Result.Text() != fmt.Sprintf(mcppeers.GreetingFormat, "Ada") {
		t.Fatalf("result %+v", out.Result)
	}
}
