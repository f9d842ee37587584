package memstore

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/wopinterop/wopinterop/interop"
)

// ResolveInterrupt resolves one open interrupt of a run with sub as the
// resolver (OpenWOP interrupt.md §Resolve surfaces, §Approver enforcement). The checks, in order, each refusing with
// nothing changed:
//
//   - the run is readable by sub, else ErrNotFound;
//   - req.InterruptID was raised on this run, else ErrNotFound;
//   - sub.Principal is in the interrupt's Approvers when that list is
//     non-empty, else ErrNotEligible;
//   - the interrupt was not resolved before, else ErrAlreadyResolved;
//   - the run is not terminal or cancelling, else ErrRunTerminal (a cancel
//     withdraws the open interrupts);
//   - the interrupt was not withdrawn by its workflow, else
//     ErrAlreadyResolved;
//   - the outcome and resume value are valid, else *interop.InputError.
//
// The resume value rules: an empty outcome means accept. For an approval
// interrupt that offers Actions, the value must be an object whose
// "action" is one of them; decline is the action "reject". A ResumeSchema,
// when set, must accept the value. Cancel carries no value.
//
// On success the interrupt is closed, the run returns to running (or to the
// status of its next open interrupt) with an interrupt.resolved event,
// req.Message joins Run.Messages in the same step, and the workflow
// receives the Resolution. Concurrent attempts on one interrupt serialise
// on the tenant lock, so exactly one succeeds.
func (s *Store) ResolveInterrupt(ctx context.Context, sub interop.Subject, req interop.ResolveRequest) (interop.Run, error) {
	if err := ctx.Err(); err != nil {
		return interop.Run{}, err
	}
	t := s.tenant(sub.Tenant)
	if t == nil {
		return interop.Run{}, s.notFound.run
	}
	var msg interop.Message
	if req.Message != nil {
		if err := validMessage(req.Message); err != nil {
			return interop.Run{}, err
		}
		msg = cloneMessage(*req.Message)
	}

	t.mu.Lock()
	defer t.mu.Unlock()
	rec := t.readableLocked(sub, req.RunID)
	if rec == nil {
		return interop.Run{}, s.notFound.run
	}
	p := rec.interrupts[req.InterruptID]
	if p == nil {
		return interop.Run{}, s.notFound.interrupt
	}
	if len(p.spec.Approvers) > 0 && !slices.Contains(p.spec.Approvers, sub.Principal) {
		return interop.Run{}, fmt.Errorf("memstore: resolve: %w", interop.ErrNotEligible)
	}
	if p.state == interruptResolved {
		return interop.Run{}, fmt.Errorf("memstore: resolve: %w", interop.ErrAlreadyResolved)
	}
	if st := rec.run.Status; st.Terminal() || st == interop.StatusCancelling {
		return interop.Run{}, fmt.Errorf("memstore: resolve: %w", interop.ErrRunTerminal)
	}
	if p.state == interruptWithdrawn {
		return interop.Run{}, fmt.Errorf("memstore: resolve: %w", interop.ErrAlreadyResolved)
	}
	outcome, value, err := p.resumeValue(req.Outcome, req.Value)
	if err != nil {
		return interop.Run{}, err
	}

	at := s.now()
	p.state = interruptResolved
	rec.removeOpenInterruptLocked(p.spec.ID)
	if req.Message != nil {
		rec.run.Messages = append(rec.run.Messages, msg)
	}
	rec.setStatusLocked(rec.suspendedStatusLocked(), at)
	resolved := interop.InterruptResolved{NodeID: p.spec.NodeID, InterruptID: p.spec.ID, Kind: p.spec.Kind}
	if p.spec.Kind == interop.InterruptApproval {
		resolved.Action, _ = approvalAction(value)
	}
	appendLifecycleLocked(s, rec, interop.EventInterruptResolved, resolved, &eventExtra{nodeID: p.spec.NodeID}, at)
	p.delivery <- Resolution{Outcome: outcome, Value: value, Resolver: cloneSubject(sub)}
	return cloneRun(&rec.run), nil
}

// resumeValue validates an answer to p and returns the normalised outcome
// and the value the workflow receives.
func (p *pending) resumeValue(outcome interop.ResolveOutcome, value json.RawMessage) (interop.ResolveOutcome, json.RawMessage, error) {
	switch outcome {
	case "":
		outcome = interop.OutcomeAccept
	case interop.OutcomeAccept, interop.OutcomeDecline:
	case interop.OutcomeCancel:
		return outcome, nil, nil
	default:
		return "", nil, &interop.InputError{Field: "outcome", Reason: "must be accept, decline or cancel"}
	}
	approval := p.spec.Kind == interop.InterruptApproval
	if outcome == interop.OutcomeDecline {
		if !approval {
			return outcome, nil, nil
		}
		value = json.RawMessage(`{"action":"reject"}`)
	}
	if len(value) > 0 && !json.Valid(value) {
		return "", nil, &interop.InputError{Field: "resumeValue", Reason: "not a valid JSON document"}
	}
	if approval && len(p.spec.Actions) > 0 {
		action, ok := approvalAction(value)
		if !ok {
			return "", nil, &interop.InputError{Field: "resumeValue", Reason: `must be an object with a string "action"`}
		}
		if !slices.Contains(p.spec.Actions, action) {
			return "", nil, &interop.InputError{Field: "resumeValue", Reason: "action must be one of " + strings.Join(p.spec.Actions, ", ")}
		}
	}
	if p.schema != nil {
		if len(value) == 0 {
			return "", nil, &interop.InputError{Field: "resumeValue", Reason: "a value is required"}
		}
		if err := validateJSON(p.schema, "resumeValue", value); err != nil {
			return "", nil, err
		}
	}
	return outcome, bytes.Clone(value), nil
}

// approvalAction extracts the "action" member of an approval resume value.
func approvalAction(value json.RawMessage) (string, bool) {
	var obj map[string]json.RawMessage
	if len(bytes.TrimSpace(value)) == 0 || bytes.TrimSpace(value)[0] != '{' || json.Unmarshal(value, &obj) != nil {
		return "", false
	}
	raw, ok := obj["action"]
	if !ok {
		return "", false
	}
	var action string
	if json.Unmarshal(raw, &action) != nil {
		return "", false
	}
	return action, true
}
