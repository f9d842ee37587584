package a2a

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/isolation"
)

// TestRPCUnreadableIsUnknown: through every task-addressed method, globex
// addressing acme's real task gets exactly the bytes (status, headers that
// matter, body) of a task that never existed, of a malformed id, of the
// conformance suite's foreign-looking id, and of a routing value outside
// its inventory (OpenWOP interop.md §Per-agent cards, §Isolation; RFC 0211 §D). The JSON-RPC id is the same in every
// request, so the bodies must be byte-identical.
func TestRPCUnreadableIsUnknown(t *testing.T) {
	e := newRPCEnv(t)
	target := setupApproval(t, e)["task"]
	before := e.runOf(t, rpcKeyAcme, target)

	_, opaque, _ := strings.Cut(target, "/")
	ids := map[string]string{
		"acme's real task":         target,
		"acme's task, projected":   isolation.Project(target),
		"acme's task, %2F-encoded": "acme%2F" + opaque,
		"never minted, own tenant": "globex/" + opaque,
		"suite's foreign id":       "zz-conformance-foreign/" + opaque,
		"malformed":                "not-a-task",
		"bare opaque":              opaque,
	}
	agentR := e.agentR["agent-ada"] // acme's agent: not in globex's inventory
	methods := []struct {
		name   string
		params func(id string) map[string]any
	}{
		{methodGetTask, func(id string) map[string]any { return map[string]any{"id": id} }},
		{methodCancelTask, func(id string) map[string]any { return map[string]any{"id": id} }},
		{methodSubscribeToTask, func(id string) map[string]any { return map[string]any{"id": id} }},
		{methodSendMessage, func(id string) map[string]any {
			return map[string]any{"message": acceptMessage("m-probe", id)}
		}},
		{methodSendStreamingMessage, func(id string) map[string]any {
			return map[string]any{"message": acceptMessage("m-probe", id)}
		}},
	}
	for _, m := range methods {
		t.Run(m.name, func(t *testing.T) {
			var want rpcReply
			first := true
			check := func(what string, params map[string]any) {
				t.Helper()
				res := e.do(t, rpcCall{key: rpcKeyGlobex, body: rpcBody(1, m.name, params)})
				if first {
					wantRPCError(t, res, 200, -32001, "TASK_NOT_FOUND")
					want, first = res, false
					return
				}
				if res.status != want.status || !bytes.Equal(res.body, want.body) ||
					res.header.Get("Content-Type") != want.header.Get("Content-Type") {
					t.Errorf("%s: HTTP %d %s\nwant HTTP %d %s", what, res.status, res.body, want.status, want.body)
				}
			}
			for what, id := range ids {
				check(what, m.params(id))
			}
			// A routing value from another tenant's inventory, on globex's
			// own never-minted id and on acme's real one.
			withR := m.params("globex/" + opaque)
			withR["tenant"] = agentR
			check("foreign routing value", withR)
			withR = m.params(target)
			withR["tenant"] = "never-minted-value-0123"
			check("never-minted routing value", withR)
		})
	}
	// Nothing globex did reached acme's run: same status, same log.
	after := e.runOf(t, rpcKeyAcme, target)
	if after.Status != before.Status || after.LastSequence != before.LastSequence {
		t.Fatalf("acme's run moved: %s/%d -> %s/%d", before.Status, before.LastSequence, after.Status, after.LastSequence)
	}
}

// TestRPCListTasksIsScoped: globex's ListTasks never shows acme's tasks, by
// contextId or with acme's tenant as a routing hint (OpenWOP interop.md
// §Isolation); a
// hint that is none of globex's routing values is ignored: the answer is
// byte for byte the one without it.
func TestRPCListTasksIsScoped(t *testing.T) {
	e := newRPCEnv(t)
	a := setupApproval(t, e)
	list := func(key string, params map[string]any) rpcReply {
		return e.do(t, rpcCall{key: key, body: rpcBody(1, methodListTasks, params)})
	}
	tasks := func(res rpcReply) []*wire.Task {
		t.Helper()
		var out wire.ListTasksResponse
		if err := json.Unmarshal(decodeRPC(t, res).Result, &out); err != nil {
			t.Fatalf("%v: %s", err, res.body)
		}
		return out.Tasks
	}
	if got := tasks(list(rpcKeyAcme, map[string]any{"contextId": a["context"]})); len(got) != 1 || string(got[0].ID) != a["task"] {
		t.Fatalf("acme's own list: %v", got)
	}
	for _, params := range []map[string]any{
		{},
		{"contextId": a["context"]},
		{"tenant": e.agentR["agent-gus"], "contextId": a["context"]}, // globex's own agent
	} {
		if got := tasks(list(rpcKeyGlobex, params)); len(got) != 0 {
			t.Fatalf("globex listed %v with %v", got, params)
		}
	}
	plain := list(rpcKeyGlobex, map[string]any{"contextId": a["context"]})
	for _, hint := range []string{"never-minted-value-0123", "acme", e.agentR["agent-ada"]} {
		res := list(rpcKeyGlobex, map[string]any{"tenant": hint, "contextId": a["context"]})
		if res.status != plain.status || !bytes.Equal(res.body, plain.body) {
			t.Errorf("tenant %q: %s\nwant %s", hint, res.body, plain.body)
		}
	}
}

// TestRPCConformanceProbesNeverOpenWOPEnvelope: the suite's three probes on
// the JSON-RPC URL answer in JSON-RPC shape, never {error, message}.
func TestRPCConformanceProbesNeverOpenWOPEnvelope(t *testing.T) {
	e := newRPCEnv(t)
	probes := map[string]rpcCall{
		"truncated body": {key: rpcKeyAcme, body: `{"jsonrpc":"2.0","id":1,"method":"GetTa`},
		"no credential":  {body: rpcBody(1, methodGetTask, map[string]any{"id": "acme/AAAAAAAAAAAAAAAAAAAAAAAAAA"})},
		"unknown method": {key: rpcKeyAcme, body: rpcBody(1, "openwop.conformance.NoSuchMethod", map[string]any{})},
	}
	for name, c := range probes {
		res := e.do(t, c)
		var generic map[string]any
		if err := json.Unmarshal(res.body, &generic); err != nil {
			t.Fatalf("%s: not JSON: %s", name, res.body)
		}
		if _, isString := generic["error"].(string); isString {
			t.Fatalf("%s: the OpenWOP envelope: %s", name, res.body)
		}
		if _, ok := generic["message"]; ok {
			t.Fatalf("%s: a top-level message member: %s", name, res.body)
		}
		out := decodeRPC(t, res)
		if out.Error == nil || len(out.Error.Data) != 1 || out.Error.Data[0]["@type"] == nil {
			t.Fatalf("%s: %s", name, res.body)
		}
	}
}

// TestRPCRefusalsAppendNothing: a contextId mismatch and a message to a
// completed task leave the run's event log as it was (OpenWOP interop map, a2a.operations; interop.md §A2A multi-turn).
func TestRPCRefusalsAppendNothing(t *testing.T) {
	e := newRPCEnv(t)
	waiting := setupApproval(t, e)["task"]
	done := setupCompleted(t, e)["task"]
	for _, tc := range []struct {
		task string
		msg  map[string]any
		code int
	}{
		{waiting, func() map[string]any {
			m := acceptMessage("m-x", waiting)
			m["contextId"] = "ctx-other"
			return m
		}(), -32602},
		{done, acceptMessage("m-y", done), -32004},
	} {
		before := e.runOf(t, rpcKeyAcme, tc.task)
		res := e.do(t, acme(rpcBody(1, methodSendMessage, map[string]any{"message": tc.msg})))
		wantRPCError(t, res, 200, tc.code, map[int]string{-32602: "", -32004: "UNSUPPORTED_OPERATION"}[tc.code])
		after := e.runOf(t, rpcKeyAcme, tc.task)
		if after.Status != before.Status || after.LastSequence != before.LastSequence {
			t.Fatalf("refused message changed the run: %s/%d -> %s/%d", before.Status, before.LastSequence, after.Status, after.LastSequence)
		}
	}
}

// TestRPCReplyWithoutContextAnswersTheTasksContext (OpenWOP interop.md §A2A multi-turn).
func TestRPCReplyWithoutContextAnswersTheTasksContext(t *testing.T) {
	e := newRPCEnv(t)
	v := setupApproval(t, e)
	res := e.do(t, acme(rpcBody(2, methodSendMessage, map[string]any{"message": acceptMessage("m-2", v["task"])})))
	if task := rpcTask(t, res, true); task.ContextID != v["context"] || string(task.ID) != v["task"] {
		t.Fatalf("task %s in %s, want %s in %s", task.ID, task.ContextID, v["task"], v["context"])
	}
}

// TestRPCIdempotentSend: the same messageId from the same principal
// answers the same task (OpenWOP interop map, a2a.operations), through the binding.
func TestRPCIdempotentSend(t *testing.T) {
	e := newRPCEnv(t)
	one := e.sendNew(t, rpcKeyAcme, "m-same", memstore.FixtureNoop)
	two := e.sendNew(t, rpcKeyAcme, "m-same", memstore.FixtureNoop)
	if one.ID != two.ID {
		t.Fatalf("two tasks %s and %s for one messageId", one.ID, two.ID)
	}
}

// runOf reads a run as the owner of key sees it.
func (e *rpcEnv) runOf(t testing.TB, key, id string) interop.Run {
	t.Helper()
	run, err := e.store.GetRun(context.Background(), rpcSubjects()[key], id)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// TestRPCBatchElementsResolveTheirOwnRoutingValue: one batch element's
// routing value never leaks into the next element's call.
func TestRPCBatchElementsResolveTheirOwnRoutingValue(t *testing.T) {
	e := newRPCEnv(t)
	body := `[` + rpcBody(1, methodGetExtendedAgentCard, map[string]any{"tenant": e.agentR["agent-ada"]}) + `,` +
		rpcBody(2, methodGetExtendedAgentCard, nil) + `]`
	res := e.do(t, acme(body))
	var out []rpcResponse
	if err := json.Unmarshal(res.body, &out); err != nil || len(out) != 2 {
		t.Fatalf("%v: %s", err, res.body)
	}
	if out[0].Error != nil {
		t.Fatalf("first element: %s", res.body)
	}
	if out[1].Error == nil || out[1].Error.Code != -32007 {
		t.Fatalf("second element inherited the first one's agent: %s", res.body)
	}
	if res.status != http.StatusOK {
		t.Fatalf("HTTP %d", res.status)
	}
}
