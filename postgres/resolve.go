package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/wopinterop/wopinterop/interop"
)

// ResolveInterrupt resolves one open interrupt of a run with sub as the
// resolver, from any replica (OpenWOP interrupt.md §Resolve surfaces,
// §Approver enforcement); the replica executing the workflow is woken and
// hands it the Resolution. The checks, in order, each refusing with
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
// status of its next open interrupt) with an interrupt.resolved event, and
// req.Message joins Run.Messages, in one transaction. Concurrent attempts
// on one interrupt, on any replicas, serialise on the run's row lock, so
// exactly one succeeds.
func (s *Store) ResolveInterrupt(ctx context.Context, sub interop.Subject, req interop.ResolveRequest) (interop.Run, error) {
	if err := ctx.Err(); err != nil {
		return interop.Run{}, err
	}
	if req.Message != nil {
		if err := validMessage(req.Message); err != nil {
			return interop.Run{}, err
		}
	}
	var run interop.Run
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		lr, err := lockReadable(ctx, tx, sub, req.RunID)
		switch {
		case err != nil:
			return err
		case lr == nil:
			return errRunNotFound
		}
		var (
			state    string
			specJSON []byte
		)
		err = tx.QueryRow(ctx, `SELECT state, spec FROM wopinterop_interrupts WHERE run_id = $1 AND id = $2`,
			req.RunID, req.InterruptID).Scan(&state, &specJSON)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return errInterruptNotFound
		case err != nil:
			return fmt.Errorf("postgres: resolve: %w", err)
		}
		var spec interruptDoc
		if err := decode(specJSON, &spec); err != nil {
			return err
		}
		switch st := lr.status; {
		case len(spec.Approvers) > 0 && !slices.Contains(spec.Approvers, sub.Principal):
			return fmt.Errorf("postgres: resolve: %w", interop.ErrNotEligible)
		case state == "resolved":
			return fmt.Errorf("postgres: resolve: %w", interop.ErrAlreadyResolved)
		case st.Terminal() || st == interop.StatusCancelling:
			return fmt.Errorf("postgres: resolve: %w", interop.ErrRunTerminal)
		case state == "withdrawn":
			return fmt.Errorf("postgres: resolve: %w", interop.ErrAlreadyResolved)
		}
		outcome, value, err := s.resumeValue(spec, req.Outcome, req.Value)
		if err != nil {
			return err
		}
		res, err := encode(resolutionDoc{Outcome: outcome, Value: value, Resolver: subjectDocOf(sub)})
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE wopinterop_interrupts SET state = 'resolved', resolution = $3
			WHERE run_id = $1 AND id = $2`, req.RunID, req.InterruptID, res); err != nil {
			return fmt.Errorf("postgres: resolve: %w", err)
		}
		if req.Message != nil {
			if err := appendMessage(ctx, tx, req.RunID, *req.Message); err != nil {
				return err
			}
		}
		status, err := suspendedStatus(ctx, tx, req.RunID)
		if err != nil {
			return err
		}
		resolved := interop.InterruptResolved{NodeID: spec.NodeID, InterruptID: spec.ID, Kind: spec.Kind}
		if spec.Kind == interop.InterruptApproval {
			resolved.Action, _ = approvalAction(value)
		}
		ev := s.lifecycleEvent(interop.EventInterruptResolved, resolved)
		ev.NodeID = spec.NodeID
		if _, err := s.appendEvent(ctx, tx, lr, ev, status); err != nil {
			return err
		}
		run, err = readRun(ctx, tx, sub, req.RunID)
		return err
	})
	if err != nil {
		return interop.Run{}, err
	}
	s.hub.wake(runKey(req.RunID))
	return run, nil
}

// appendMessage adds m to a locked run's exchanged messages.
func appendMessage(ctx context.Context, tx pgx.Tx, runID string, m interop.Message) error {
	var raw []byte
	if err := tx.QueryRow(ctx, `SELECT messages FROM wopinterop_runs WHERE id = $1`, runID).Scan(&raw); err != nil {
		return fmt.Errorf("postgres: append message: %w", err)
	}
	var docs []messageDoc
	if err := decode(raw, &docs); err != nil {
		return err
	}
	out, err := encode(append(docs, messageDocOf(m)))
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `UPDATE wopinterop_runs SET messages = $2 WHERE id = $1`, runID, out); err != nil {
		return fmt.Errorf("postgres: append message: %w", err)
	}
	return nil
}

// resumeValue validates an answer to the interrupt spec and returns the
// normalised outcome and the value the workflow receives.
func (s *Store) resumeValue(spec interruptDoc, outcome interop.ResolveOutcome, value json.RawMessage) (interop.ResolveOutcome, json.RawMessage, error) {
	switch outcome {
	case "":
		outcome = interop.OutcomeAccept
	case interop.OutcomeAccept, interop.OutcomeDecline:
	case interop.OutcomeCancel:
		return outcome, nil, nil
	default:
		return "", nil, &interop.InputError{Field: "outcome", Reason: "must be accept, decline or cancel"}
	}
	approval := spec.Kind == interop.InterruptApproval
	if outcome == interop.OutcomeDecline {
		if !approval {
			return outcome, nil, nil
		}
		value = json.RawMessage(`{"action":"reject"}`)
	}
	if len(value) > 0 && !json.Valid(value) {
		return "", nil, &interop.InputError{Field: "resumeValue", Reason: "not a valid JSON document"}
	}
	if approval && len(spec.Actions) > 0 {
		action, ok := approvalAction(value)
		if !ok {
			return "", nil, &interop.InputError{Field: "resumeValue", Reason: `must be an object with a string "action"`}
		}
		if !slices.Contains(spec.Actions, action) {
			return "", nil, &interop.InputError{Field: "resumeValue", Reason: "action must be one of " + strings.Join(spec.Actions, ", ")}
		}
	}
	if len(spec.ResumeSchema) > 0 {
		schema, err := s.schemas.Compile(spec.ResumeSchema)
		if err != nil {
			return "", nil, fmt.Errorf("postgres: resume schema of interrupt %s: %w", spec.ID, err)
		}
		if len(value) == 0 {
			return "", nil, &interop.InputError{Field: "resumeValue", Reason: "a value is required"}
		}
		if err := validateJSON(schema, "resumeValue", value); err != nil {
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
