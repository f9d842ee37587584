package a2a

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/wopinterop/wopinterop/facets"
	"github.com/wopinterop/wopinterop/internal/interopmap"
	"github.com/wopinterop/wopinterop/mapping"
)

func TestGateRefusesRowsWhoseFacetIsOff(t *testing.T) {
	m := (*interopmap.Map)(mapping.Builtin())
	errs, err := newErrorTable(m)
	if err != nil {
		t.Fatal(err)
	}
	all := facets.ServedA2A{Streaming: true, DurableTasks: true, PushNotifications: true}
	cases := []struct {
		served facets.ServedA2A
		method string
		code   int // 0 = allowed
	}{
		{facets.ServedA2A{}, methodSendMessage, 0},
		{facets.ServedA2A{}, methodGetTask, 0},
		{facets.ServedA2A{}, methodListTasks, 0},
		{facets.ServedA2A{}, methodCancelTask, 0},
		{facets.ServedA2A{}, methodGetExtendedAgentCard, 0},
		{facets.ServedA2A{}, methodSendStreamingMessage, -32004},
		{facets.ServedA2A{Streaming: true}, methodSendStreamingMessage, 0},
		{facets.ServedA2A{}, methodSubscribeToTask, -32004},
		{facets.ServedA2A{Streaming: true}, methodSubscribeToTask, -32004},
		{facets.ServedA2A{Streaming: true, DurableTasks: true}, methodSubscribeToTask, 0},
		{facets.ServedA2A{}, methodCreatePushConfig, -32003},
		{facets.ServedA2A{}, methodGetPushConfig, -32003},
		{facets.ServedA2A{}, methodListPushConfigs, -32003},
		{facets.ServedA2A{}, methodDeletePushConfig, -32003},
		{facets.ServedA2A{PushNotifications: true}, methodGetPushConfig, 0},
		{all, "tasks/get", codeMethodNotFound},
	}
	for _, c := range cases {
		s := &Server{served: c.served, m: m, errs: errs}
		err := s.gate(c.method)
		got := 0
		if err != nil {
			got = asError(err).Code
		}
		if got != c.code {
			t.Errorf("%s with %+v: code %d, want %d", c.method, c.served, got, c.code)
		}
	}
}

// Every row of the operation table is a method of the interop map's
// a2a.operations, at the map's HTTP+JSON route (SubscribeToTask takes GET
// too), with a request shape, exactly one of a unary or a streaming
// operation, and a task id accessor exactly when its request names a task;
// and no route and verb pair belongs to two rows.
func TestOperationTableIsWhole(t *testing.T) {
	m := (*interopmap.Map)(mapping.Builtin())
	seen := map[string]bool{}
	for i := range operationTable {
		op := &operationTable[i]
		found := false
		for _, row := range m.A2AOperations() {
			if !slices.Contains(strings.Split(row.Upstream, " | "), op.method) {
				continue
			}
			found = true
			if verb, path, ok := strings.Cut(row.HTTP, " "); ok && !strings.Contains(row.HTTP, "|") &&
				(path != "/"+op.route || !slices.Contains(op.verbs, verb)) {
				t.Errorf("%s: routed %v /%s, the map says %s", op.method, op.verbs, op.route, row.HTTP)
			}
		}
		if !found {
			t.Errorf("%s: not an a2a.operations row", op.method)
		}
		if op.shape == shapeSkip || op.request == nil || op.fromREST == nil || op.route == "" || len(op.verbs) == 0 {
			t.Errorf("%s: incomplete row", op.method)
		}
		if (op.unary == nil) == (op.events == nil) {
			t.Errorf("%s: want exactly one of unary and events", op.method)
		}
		// The slot is zeroed, and the task id it points at is the member
		// taskField names.
		reqs := new(requests)
		reqs.send.Tenant, reqs.get.Tenant, reqs.create.URL = "stale", "stale", "stale"
		req, id := op.request(reqs)
		if id != nil {
			*id = "task-1"
		}
		raw, err := json.Marshal(req)
		var members map[string]any
		if err != nil || json.Unmarshal(raw, &members) != nil {
			t.Fatalf("%s: %v", op.method, err)
		}
		if strings.Contains(string(raw), "stale") || (op.taskField == "") != (id == nil) ||
			(id != nil && (!op.shape.known(op.taskField) || members[op.taskField] != "task-1")) {
			t.Errorf("%s: slot %s, task id member %q", op.method, raw, op.taskField)
		}
		if lookupMethod([]byte(op.method)) != op {
			t.Errorf("%s: lookupMethod finds another row", op.method)
		}
		for _, verb := range op.verbs {
			key := verb + " " + op.route
			if seen[key] {
				t.Errorf("%s: %s routed twice", op.method, key)
			}
			seen[key] = true
		}
	}
	if len(operationTable) != 11 {
		t.Errorf("%d rows, want the 11 methods of A2A 1.0.1 §9.4", len(operationTable))
	}
}
