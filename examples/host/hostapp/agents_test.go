package hostapp

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/wopinterop/wopinterop/interop"
)

// inventoryEntry is a decoded GET /agents entry.
type inventoryEntry struct {
	AgentID           string `json:"agentId"`
	Persona           string `json:"persona"`
	PackName          string `json:"packName"`
	HasHandoffSchemas bool   `json:"hasHandoffSchemas"`
	A2ATenant         string `json:"a2aTenant"`
}

func (h *testHost) inventory(key string) ([]inventoryEntry, []byte) {
	h.t.Helper()
	r := h.get("/agents", key)
	wantStatus(h.t, r, http.StatusOK)
	return decode[struct {
		Agents []inventoryEntry `json:"agents"`
	}](h.t, r).Agents, r.Body
}

// wantNoCanary fails when body carries either canary of the conformance
// agent pack.
func wantNoCanary(t *testing.T, where string, body []byte) {
	t.Helper()
	for _, c := range []string{promptCanary, handoffCanary} {
		if bytes.Contains(body, []byte(c)) {
			t.Errorf("%s carries %s: %s", where, c, body)
		}
	}
}

// The conformance agent's system prompt and handoff schemas are in the
// store, and appear on no card — public, extended or per-agent, on both
// bindings — and in no inventory (OpenWOP interop §Per-agent cards, RFC
// 0202 §C.5).
func TestConformanceAgentCanariesNeverPublished(t *testing.T) {
	h := newTestHost(t)
	// The canaries are there to leak: the store holds them.
	agents, err := h.store.ListAgents(t.Context(), interop.Subject{Tenant: tenantAcme, Principal: "key:acme", Authenticated: true})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(agents, func(a interop.Agent) bool { return a.Pack == conformancePack })
	if i < 0 || !strings.Contains(agents[i].SystemPrompt, promptCanary) || !bytes.Contains(agents[i].HandoffSchemas, []byte(handoffCanary)) {
		t.Fatalf("the conformance agent does not carry the canaries: %+v", agents)
	}

	for _, v := range []string{"1.0", ""} {
		r := h.do(req{Method: "GET", Path: a2aCardPath, Headers: map[string]string{"A2A-Version": v}})
		wantStatus(t, r, http.StatusOK)
		wantNoCanary(t, "the public card (A2A-Version "+v+")", r.Body)
	}
	r := h.rpc(acmeKey, "1.0", `{"jsonrpc":"2.0","id":1,"method":"GetExtendedAgentCard","params":{}}`)
	wantStatus(t, r, http.StatusOK)
	wantNoCanary(t, "the extended card (JSON-RPC)", r.Body)
	r = h.do(req{Method: "GET", Path: a2aRESTPath + "/extendedAgentCard", Key: acmeKey, Headers: map[string]string{"A2A-Version": "1.0"}})
	wantStatus(t, r, http.StatusOK)
	wantNoCanary(t, "the extended card (HTTP+JSON)", r.Body)

	cards := 0
	for _, key := range []string{acmeKey, globexKey} {
		entries, body := h.inventory(key)
		wantNoCanary(t, "GET /agents", body)
		i := slices.IndexFunc(entries, func(e inventoryEntry) bool { return e.PackName == conformancePack })
		if i < 0 || !entries[i].HasHandoffSchemas || entries[i].A2ATenant == "" {
			t.Fatalf("%s inventory lacks the conformance agent: %s", key, body)
		}
		for _, e := range entries {
			if e.A2ATenant == "" {
				continue
			}
			r := h.rpc(key, "1.0", `{"jsonrpc":"2.0","id":1,"method":"GetExtendedAgentCard","params":{"tenant":"`+e.A2ATenant+`"}}`)
			var card struct {
				Result struct {
					Name string `json:"name"`
				} `json:"result"`
			}
			if err := json.Unmarshal(r.Body, &card); err != nil || card.Result.Name != e.Persona {
				t.Fatalf("per-agent card of %s (JSON-RPC): %s", e.AgentID, r.Body)
			}
			wantNoCanary(t, e.AgentID+"'s card (JSON-RPC)", r.Body)
			r = h.do(req{Method: "GET", Path: a2aRESTPath + "/" + e.A2ATenant + "/extendedAgentCard", Key: key, Headers: map[string]string{"A2A-Version": "1.0"}})
			if r.Status != http.StatusOK || !bytes.Contains(r.Body, []byte(`"name":"`+e.Persona+`"`)) {
				t.Fatalf("per-agent card of %s (HTTP+JSON): %d %s", e.AgentID, r.Status, r.Body)
			}
			wantNoCanary(t, e.AgentID+"'s card (HTTP+JSON)", r.Body)
			cards++
		}
	}
	if cards != 5 { // demo and conformance agents in both tenants, globex's analyst
		t.Errorf("%d per-agent cards read, want 5", cards)
	}
}

// What a caller sees is its tenant's: globex alone has the analyst agent,
// whose routing value acme cannot tell from a never-minted one (OpenWOP
// interop §Per-agent cards, non-disclosure), and acme alone has acme-report, so the two tenants' MCP tool
// lists differ by exactly that tool.
func TestTenantSpecificAgentsAndTools(t *testing.T) {
	h := newTestHost(t)
	acme, _ := h.inventory(acmeKey)
	globex, _ := h.inventory(globexKey)
	has := func(es []inventoryEntry, id string) int {
		return slices.IndexFunc(es, func(e inventoryEntry) bool { return e.AgentID == id })
	}
	if has(acme, "globex-analyst") >= 0 || has(globex, "globex-analyst") < 0 {
		t.Fatalf("acme %+v, globex %+v", acme, globex)
	}
	r := globex[has(globex, "globex-analyst")].A2ATenant
	foreign := h.rpc(acmeKey, "1.0", `{"jsonrpc":"2.0","id":1,"method":"GetExtendedAgentCard","params":{"tenant":"`+r+`"}}`)
	never := h.rpc(acmeKey, "1.0", `{"jsonrpc":"2.0","id":1,"method":"GetExtendedAgentCard","params":{"tenant":"never-minted-value-000"}}`)
	if foreign.Status != never.Status || !bytes.Equal(foreign.Body, never.Body) || !bytes.Contains(foreign.Body, []byte(`"code":-32007`)) {
		t.Errorf("globex's agent for acme %d %s; never minted %d %s", foreign.Status, foreign.Body, never.Status, never.Body)
	}
	if own := h.rpc(globexKey, "1.0", `{"jsonrpc":"2.0","id":1,"method":"GetExtendedAgentCard","params":{"tenant":"`+r+`"}}`); !bytes.Contains(own.Body, []byte(`"name":"analyst"`)) {
		t.Errorf("globex's own analyst card: %s", own.Body)
	}

	_, a := h.mcp(mcpReq{Key: acmeKey, Method: "tools/list"})
	_, g := h.mcp(mcpReq{Key: globexKey, Method: "tools/list"})
	acmeTools, globexTools := mcpTools(a.Result), mcpTools(g.Result)
	extra := slices.DeleteFunc(slices.Clone(acmeTools), func(n string) bool { return slices.Contains(globexTools, n) })
	if !slices.Equal(extra, []string{acmeReportID}) || len(acmeTools) != len(globexTools)+1 {
		t.Errorf("acme tools %v, globex tools %v", acmeTools, globexTools)
	}
	if !slices.Equal(acmeTools, workflowIDs(tenantAcme, h.url)) || !slices.Equal(globexTools, workflowIDs(tenantGlobex, h.url)) {
		t.Errorf("tools %v / %v, want %v / %v", acmeTools, globexTools, workflowIDs(tenantAcme, h.url), workflowIDs(tenantGlobex, h.url))
	}
	// globex cannot start it by any name either.
	wantError(t, h.post("/runs", globexKey, `{"workflowId":"`+acmeReportID+`"}`), http.StatusNotFound, codeNotFound)
	c := h.start(acmeKey, acmeReportID, "")
	h.waitStatus(acmeKey, strings.TrimPrefix(c.StatusURL, h.url), "completed")
}
