package hostapp

import (
	"strconv"
	"strings"
	"testing"
)

// TestNodeMCPPeer runs the TypeScript SDK's 2026-07-28 client
// (@modelcontextprotocol/client, testpeers/mcp-peer.mjs) against the demo
// host's /mcp on 127.0.0.1:0: connect by server/discover, list tools, call
// a tool and a failing one, an approval round through its elicitation
// handler, and a task followed to completion (tools/call by fetch, since
// the client refuses a CreateTaskResult; tasks/get and tasks/update through
// the client), with tenant globex unable to tell acme's task from a
// missing one. It skips without Node 22 or the installed packages, unless
// WOPINTEROP_REQUIRE_PEERS=1.
func TestNodeMCPPeer(t *testing.T) {
	node, root := nodePeer(t, "@modelcontextprotocol/client")
	h := newTestHost(t)
	out := runNodePeer(t, node, root, "mcp-peer.mjs", h.url, acmeKey, globexKey)
	tools := workflowIDs(tenantAcme, h.url)
	wantInOrder(t, out, []string{
		"ok connect: 2026-07-28 (modern), wopinterop example host/0.0.0-dev, extensions io.modelcontextprotocol/tasks",
		"ok list: " + strconv.Itoa(len(tools)) + " tools " + strings.Join(tools, ",") + "; cacheScope private, ttlMs 60000",
		`ok call: conformance-noop {"ok":true} + openwop://runs/acme~2F`,
		`ok tool error: conformance-failure isError, "conformance failure fixture failed on purpose"`,
		`ok approval: 1 elicitation (form) → {"approved":true} in 2 requests`,
		"ok task: acme~2F",
		`ok task input: input_required, 1 elicitation/create (form) "Approve the request?"`,
		"ok task update: accepted",
		`ok task done: completed, result {"approved":true}`,
		`ok isolation: tenant B: "-32602 `,
		"ok wire: ",
		"PASS",
	})
}
