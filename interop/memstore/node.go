package memstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/wopinterop/wopinterop/interop"
)

// Node runs one node of the workflow, fn, and records its end on the
// run's log (OpenWOP run-event-payloads.schema.json): node.completed
// {nodeId, outputs} when fn returns — its output as the outputs object,
// as run.completed takes a run's (interop.OutputsOf) — and node.failed
// {nodeId, error} when fn fails, with the code and message [Fail],
// [FailWith] or [Fault] give, and internal_error "workflow failed" for any
// other error (nothing of it leaves the host). A cancellation — an error
// wrapping [ErrCancelled] or a context error while the run ends — records
// nothing: the run's own terminal event says it. Both events carry the
// node in the document's nodeId too.
//
// fn's output and error are returned unchanged: whether the node's end
// ends the run is the workflow's decision. nodeID must be in the nodeId
// grammar of ids.schema.json (1–128 of [A-Za-z0-9._~:-]); fn is not
// called otherwise.
func (rc *RunContext) Node(nodeID string, fn func() (json.RawMessage, error)) (json.RawMessage, error) {
	if !nodeIDGrammar.MatchString(nodeID) {
		return nil, fmt.Errorf("memstore: node id %q is not 1–128 characters of [A-Za-z0-9._~:-]", nodeID)
	}
	out, err := fn()
	var (
		typ     interop.EventType
		payload any
		fe      *failError
	)
	switch {
	case err == nil && len(bytes.TrimSpace(out)) > 0 && !json.Valid(out):
		// finish fails such a run as a host fault; the node says the same.
		typ, payload = interop.EventNodeFailed, interop.NodeFailed{NodeID: nodeID, Error: interop.EventError{Code: codeInternal, Message: genericFailure}}
	case err == nil:
		typ, payload = interop.EventNodeCompleted, interop.NodeCompleted{NodeID: nodeID, Outputs: interop.OutputsOf(out)}
	case errors.Is(err, ErrCancelled), errors.Is(err, context.Canceled) && rc.ctx.Err() != nil:
		return out, err
	case errors.As(err, &fe):
		typ, payload = interop.EventNodeFailed, interop.NodeFailed{NodeID: nodeID, Error: interop.EventError{Code: fe.code, Message: fe.msg}}
	default:
		typ, payload = interop.EventNodeFailed, interop.NodeFailed{NodeID: nodeID, Error: interop.EventError{Code: codeInternal, Message: genericFailure}}
	}
	rc.appendNodeEvent(typ, payload, nodeID)
	return out, err
}

// appendNodeEvent appends a node event with the run's current status;
// a run that already ended takes nothing more (its log ends with its
// terminal event).
func (rc *RunContext) appendNodeEvent(typ interop.EventType, payload any, nodeID string) {
	rec := rc.rec
	t := rec.tenant
	t.mu.Lock()
	defer t.mu.Unlock()
	if rec.run.Status.Terminal() {
		return
	}
	appendLifecycleLocked(rc.store, rec, typ, payload, &eventExtra{nodeID: nodeID}, rc.store.now())
}
