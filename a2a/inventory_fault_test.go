package a2a

import (
	"net/http"
	"strings"
	"testing"

	"github.com/wopinterop/wopinterop/interop/memstore"
)

// TestInventoryOutageIsAServerFault: when AgentInventory.ListAgents fails,
// every request that resolves a routing value — GetExtendedAgentCard,
// SendMessage to a new task, ListTasks narrowed by an agent — answers an
// internal error (JSON-RPC -32603, HTTP+JSON 500) and logs the failure,
// instead of the never-minted answer that would tell the client its value
// is wrong; nothing is created. With a working inventory a value that
// resolves to no agent keeps its never-minted answer.
func TestInventoryOutageIsAServerFault(t *testing.T) {
	down := newHardEnv(t, func(c *testConfig) { c.Inventory = failInventory{} })
	up := newHardEnv(t)
	downSrv, upSrv := down.serve(t, nil, nil, nil), up.serve(t, nil, nil, nil)
	neverMinted := strings.Repeat("A", 24)

	send := hardSend("m-routed", memstore.FixtureNoop)
	for _, tc := range []struct {
		name string
		call func(r string) hardCall
		// rpcCode/rest*/reason are the never-minted answers of a working
		// inventory.
		rpcCode    int
		restStatus int
		restGRPC   string
		reason     string
	}{
		{"GetExtendedAgentCard", func(r string) hardCall {
			return hardCall{path: rpcPath, key: "key-acme", body: rpcBody(1, methodGetExtendedAgentCard, map[string]any{"tenant": r})}
		}, -32007, 0, "", "EXTENDED_AGENT_CARD_NOT_CONFIGURED"},
		{"GetExtendedAgentCard/HTTP+JSON", func(r string) hardCall {
			return hardCall{method: http.MethodGet, path: restEnvPrefix + "/" + r + "/extendedAgentCard", key: "key-acme"}
		}, 0, http.StatusBadRequest, "FAILED_PRECONDITION", "EXTENDED_AGENT_CARD_NOT_CONFIGURED"},
		{"SendMessage", func(r string) hardCall {
			p := map[string]any{"message": send["message"], "tenant": r}
			return hardCall{path: rpcPath, key: "key-acme", body: rpcBody(2, methodSendMessage, p)}
		}, codeInvalidParams, 0, "", ""},
		{"SendMessage/HTTP+JSON", func(r string) hardCall {
			return hardCall{path: restEnvPrefix + "/" + r + "/message:send", key: "key-acme", body: restHardSend("m-routed-2", memstore.FixtureNoop)}
		}, 0, http.StatusBadRequest, "INVALID_ARGUMENT", ""},
		{"ListTasks", func(r string) hardCall {
			return hardCall{path: rpcPath, key: "key-acme", body: rpcBody(3, methodListTasks, map[string]any{"tenant": r})}
		}, 0, 0, "", ""},
		{"ListTasks/HTTP+JSON", func(r string) hardCall {
			return hardCall{method: http.MethodGet, path: restEnvPrefix + "/" + r + "/tasks", key: "key-acme"}
		}, 0, 0, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			isRPC := !strings.Contains(tc.name, "HTTP+JSON")
			for _, r := range []string{down.agentR, neverMinted} {
				res := tc.call(r).do(t, downSrv)
				if isRPC {
					wantRPCError(t, res.rpc(t), http.StatusOK, codeInternal, "INTERNAL_ERROR")
				} else {
					restWantStatus(t, res.rest(t), http.StatusInternalServerError, "INTERNAL", "INTERNAL_ERROR")
				}
			}
			logged := down.logs.records(t, "ERROR")
			if len(logged) == 0 || logged[len(logged)-1]["msg"] != "a2a: agent inventory failed" {
				t.Fatalf("the outage was not logged: %v", logged)
			}
			if n := down.runsOf(t, "key-acme"); n != 0 {
				t.Fatalf("%d runs during the outage", n)
			}

			// A working inventory: a never-minted value keeps its answer.
			res := tc.call(neverMinted).do(t, upSrv)
			switch {
			case tc.rpcCode != 0:
				wantRPCError(t, res.rpc(t), http.StatusOK, tc.rpcCode, tc.reason)
			case tc.restStatus != 0:
				restWantStatus(t, res.rest(t), tc.restStatus, tc.restGRPC, tc.reason)
			default: // ListTasks ignores it
				if res.err != nil || res.status != http.StatusOK {
					t.Fatalf("HTTP %d (%v): %s", res.status, res.err, res.body)
				}
			}
			if errs := up.logs.records(t, "ERROR"); len(errs) != 0 {
				t.Fatalf("a never-minted value logged %v", errs)
			}
		})
	}
}
