package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/wopinterop/wopinterop/interop"
)

// Ids of the conformance fixture workflows: the same ids, inputs and
// behaviour as the embedded memstore's, so a host moves between the two
// stores without its conformance setup changing.
const (
	FixtureNoop        = "conformance-noop"
	FixtureApproval    = "conformance-approval"
	FixtureFailure     = "conformance-failure"
	FixtureDelay       = "conformance-delay"
	FixtureCancellable = "conformance-cancellable"
)

// Observable constants of the fixtures.
const (
	// FixtureArtifactID is the id of the artifact conformance-noop publishes.
	FixtureArtifactID = "result"
	// FixtureFailureMessage is the FailureMessage of conformance-failure.
	FixtureFailureMessage = "conformance failure fixture failed on purpose"
	// FixtureRejectedMessage is the FailureMessage of a rejected
	// conformance-approval run.
	FixtureRejectedMessage = "request rejected"
	// MaxFixtureDelayMs bounds delayMs of conformance-delay and
	// conformance-cancellable; it is also the default of the latter.
	MaxFixtureDelayMs = 600000
)

const (
	openObjectSchema = `{"type":"object","properties":{"message":{"type":"string","description":"Free text; ignored."}}}`
	delaySchema      = `{"type":"object","properties":{"delayMs":{"type":"integer","minimum":0,"maximum":600000}},"additionalProperties":false}`
	approvalSchema   = `{"type":"object","properties":{"action":{"type":"string","enum":["accept","reject"]}},"required":["action"]}`
)

// ConformanceFixtures returns the workflows every conformance tenant has:
//
//   - conformance-noop publishes one text artifact (id "result", last chunk)
//     and completes with {"ok":true};
//   - conformance-approval suspends on an approval interrupt (key
//     "approval", node "approve", actions accept|reject, a resume schema
//     requiring that action); accept completes with {"approved":true},
//     reject or decline fails with "request rejected", the cancel outcome
//     cancels it;
//   - conformance-failure fails with a safe message;
//   - conformance-delay waits delayMs (default 0) and completes with
//     {"delayedMs":n};
//   - conformance-cancellable waits delayMs (default 600000, so it waits
//     for a cancel) and completes like conformance-delay.
//
// Both waiting fixtures stop as soon as their run is cancelled (and so end
// cancelled); delayMs is an integer in [0, 600000] and nothing else is
// accepted. Every call returns fresh values.
func ConformanceFixtures() []WorkflowDef {
	def := func(id, name, description, schema string, run WorkflowFunc) WorkflowDef {
		return WorkflowDef{
			Workflow: interop.Workflow{ID: id, Name: name, Description: description,
				InputSchema: json.RawMessage(schema), Tags: []string{"conformance"}},
			Run: run,
		}
	}
	return []WorkflowDef{
		def(FixtureNoop, "Conformance no-op", "Publishes one artifact and completes at once.", openObjectSchema, runNoop),
		def(FixtureApproval, "Conformance approval", "Waits for an approval, then completes (accept) or fails (reject).",
			openObjectSchema, ApprovalFixture("approve", nil)),
		def(FixtureFailure, "Conformance failure", "Fails with a safe message.", openObjectSchema,
			func(context.Context, *RunContext) (json.RawMessage, error) { return nil, Fail(FixtureFailureMessage) }),
		def(FixtureDelay, "Conformance delay", "Waits delayMs milliseconds (default 0), then completes.", delaySchema, waitFixture(0)),
		def(FixtureCancellable, "Conformance cancellable", "Waits delayMs milliseconds (default 600000) or until cancelled.",
			delaySchema, waitFixture(MaxFixtureDelayMs)),
	}
}

// RegisterFixtures registers ConformanceFixtures in tenant.
func (s *Store) RegisterFixtures(tenant string) error {
	for _, def := range ConformanceFixtures() {
		if err := s.Register(tenant, def); err != nil {
			return err
		}
	}
	return nil
}

func runNoop(_ context.Context, rc *RunContext) (json.RawMessage, error) {
	err := rc.PublishArtifact(interop.Artifact{
		ID:    FixtureArtifactID,
		Name:  "result",
		Parts: []interop.Part{interop.TextPart("conformance-noop completed")},
	}, false, true)
	if err != nil {
		return nil, err
	}
	return json.RawMessage(`{"ok":true}`), nil
}

// ApprovalFixture is the body of conformance-approval suspending at node;
// approvers, when set, is its approversList (interrupt.md §Approver
// enforcement).
func ApprovalFixture(node string, approvers []string) WorkflowFunc {
	return func(ctx context.Context, rc *RunContext) (json.RawMessage, error) {
		res, err := rc.Interrupt(ctx, interop.Interrupt{
			Kind:         interop.InterruptApproval,
			Key:          "approval",
			NodeID:       node,
			Message:      "Approve the request?",
			Actions:      []string{"accept", "reject"},
			ResumeSchema: json.RawMessage(approvalSchema),
			Approvers:    approvers,
		})
		if err != nil {
			return nil, err
		}
		if res.Outcome == interop.OutcomeCancel {
			return nil, Cancel("approval cancelled")
		}
		action, ok := approvalAction(res.Value)
		if !ok {
			return nil, errors.New("approval fixture: resume value has no action")
		}
		if action != "accept" {
			return nil, Fail(FixtureRejectedMessage)
		}
		return json.RawMessage(`{"approved":true}`), nil
	}
}

// waitFixture waits delayMs (or defaultMs when absent), returning early with
// ctx.Err() when the run is cancelled.
func waitFixture(defaultMs int64) WorkflowFunc {
	return func(ctx context.Context, rc *RunContext) (json.RawMessage, error) {
		var in struct {
			DelayMs *float64 `json:"delayMs"` // schema: integer (1.0 counts as one)
		}
		if err := json.Unmarshal(rc.Inputs(), &in); err != nil {
			return nil, fmt.Errorf("delay fixture: inputs: %w", err)
		}
		ms := defaultMs
		if in.DelayMs != nil {
			ms = int64(*in.DelayMs)
		}
		if ms > 0 {
			timer := time.NewTimer(time.Duration(ms) * time.Millisecond)
			defer timer.Stop()
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-timer.C:
			}
		}
		return json.RawMessage(fmt.Sprintf(`{"delayedMs":%d}`, ms)), nil
	}
}
