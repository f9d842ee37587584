package memstore

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/wopinterop/wopinterop/interop"
)

// TestNodeRecordsItsEnd: RunContext.Node appends node.completed {nodeId,
// outputs} for a node that returned, node.failed {nodeId, error} with the
// failure's code and message (FailWith, Fault) or internal_error
// "workflow failed" for an unclassified error, and nothing for a bad node
// id (fn not called) or a cancellation; the document's nodeId is the
// node's; the node's output and error reach the workflow unchanged.
func TestNodeRecordsItsEnd(t *testing.T) {
	cases := []struct {
		name    string
		out     json.RawMessage
		err     error
		want    interop.EventType
		payload string
	}{
		{"completed", json.RawMessage(`{"result":{"a":1}}`), nil, interop.EventNodeCompleted, `{"nodeId":"mcp-client","outputs":{"result":{"a":1}}}`},
		{"completed, no output", nil, nil, interop.EventNodeCompleted, `{"nodeId":"mcp-client","outputs":{}}`},
		{"failed with", nil, FailWith("not_found", "no such server"), interop.EventNodeFailed, `{"nodeId":"mcp-client","error":{"code":"not_found","message":"no such server"}}`},
		{"fault", nil, Fault("the host broke"), interop.EventNodeFailed, `{"nodeId":"mcp-client","error":{"code":"internal_error","message":"the host broke"}}`},
		{"unclassified", nil, errors.New("secret detail"), interop.EventNodeFailed, `{"nodeId":"mcp-client","error":{"code":"internal_error","message":"workflow failed"}}`},
		{"cancelled", nil, Cancel("stop"), "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			var gotOut json.RawMessage
			var gotErr error
			register(t, s, tenantA, "noded", func(ctx context.Context, rc *RunContext) (json.RawMessage, error) {
				gotOut, gotErr = rc.Node("mcp-client", func() (json.RawMessage, error) { return tc.out, tc.err })
				return gotOut, gotErr
			})
			sub := subject(tenantA, "alice")
			run := mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: "noded"})
			evs := events(t, s, sub, run.ID)
			checkDocs(t, evs)
			if string(gotOut) != string(tc.out) || gotErr != tc.err {
				t.Fatalf("Node returned %s, %v", gotOut, gotErr)
			}
			var nodes []interop.RunEvent
			for _, ev := range evs {
				if ev.Type == interop.EventNodeCompleted || ev.Type == interop.EventNodeFailed {
					nodes = append(nodes, ev)
				}
			}
			if tc.want == "" {
				if len(nodes) != 0 {
					t.Fatalf("node events %v", typesOf(nodes))
				}
				return
			}
			if len(nodes) != 1 || nodes[0].Type != tc.want || string(nodes[0].Payload) != tc.payload || nodes[0].NodeID != "mcp-client" {
				t.Fatalf("node events %v; first %+v", typesOf(nodes), nodes)
			}
			// The node's event comes before the run's terminal event.
			if evs[len(evs)-1].Sequence != nodes[0].Sequence+1 {
				t.Fatalf("types %v", typesOf(evs))
			}
		})
	}

	t.Run("bad node id", func(t *testing.T) {
		s := newStore(t)
		called := false
		var gotErr error
		register(t, s, tenantA, "noded", func(ctx context.Context, rc *RunContext) (json.RawMessage, error) {
			_, gotErr = rc.Node("no spaces", func() (json.RawMessage, error) { called = true; return nil, nil })
			return nil, nil
		})
		sub := subject(tenantA, "alice")
		run := mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: "noded"})
		evs := events(t, s, sub, run.ID)
		if called || gotErr == nil || len(evs) != 2 {
			t.Fatalf("called %v, err %v, events %v", called, gotErr, typesOf(evs))
		}
	})
}
