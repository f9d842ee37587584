package delegate

import (
	"context"
	"errors"
	"fmt"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/outbound"
)

// Cancel cancels what a delegation started and reconciles its effect
// (admission-boundaries §18.9). prev is the Outcome Delegate or Resume
// returned; an Outcome the host stored may be rebuilt from its AttemptID
// and TaskID. The result is:
//
//   - cancelled-before-admission for nil or an Outcome without an attempt:
//     nothing was sent;
//   - remote-cancelled when GetTask reads the task back cancelled;
//   - completed-before-cancel when it reads it back completed (also for a
//     direct message reply, which completed the exchange);
//   - failed-no-effect or failed-possible-effect when it reads it back
//     rejected or failed;
//   - cancel-requested-remote-unknown when the cancel went out but the
//     task could not be read back settled (ErrRemoteUnknown);
//   - failed-possible-effect with ErrNoRemoteTask when the peer never
//     named a task.
//
// A state that is not a verified fact is recorded on the run's log.
func (c *Conn) Cancel(ctx context.Context, prev *Outcome) (outbound.Reconciliation, error) {
	var rec outbound.Reconciliation
	var err error
	var status interop.RunStatus
	attemptID := ""
	switch {
	case prev == nil || prev.AttemptID == "":
		rec = outbound.CancelledBeforeAdmission
	case prev.Reply != nil:
		attemptID, rec = prev.AttemptID, outbound.CompletedBeforeCancel
	case prev.TaskID == "":
		attemptID, rec, err = prev.AttemptID, outbound.FailedPossibleEffect, ErrNoRemoteTask
	default:
		attemptID = prev.AttemptID
		var task *wire.Task
		rec, task, err = c.cancelRemote(ctx, prev.TaskID)
		if task != nil {
			status, _, _ = c.project(task.Status.State)
		}
	}
	c.recordReconciliation(ctx, &Outcome{AttemptID: attemptID, Reconciliation: rec, Status: status})
	return rec, err
}

// cancelRemote sends CancelTask and reads the task back with GetTask until
// it settles or cancelReadBacks reads have passed. A cancel never counts
// as done on the peer's acknowledgement alone. A task still active after
// the read-backs is asked once more, up to cancelAttempts cancels in all:
// a cancel is idempotent (A2A 1.0 §3.3.1), and a peer may refuse one that
// races the end of an execution while the task stays active.
func (c *Conn) cancelRemote(ctx context.Context, id wire.TaskID) (outbound.Reconciliation, *wire.Task, error) {
	for attempt := 1; ; attempt++ {
		_, cerr := c.remote.CancelTask(ctx, &wire.CancelTaskRequest{Tenant: c.Tenant, ID: id})
		if errors.Is(cerr, wire.ErrTaskNotFound) {
			return outbound.CancelRequestedRemoteUnknown, nil, fmt.Errorf("%w: %w", ErrRemoteUnknown, cerr)
		}
		task, err := c.readBack(ctx, id)
		if err != nil {
			return outbound.CancelRequestedRemoteUnknown, nil, fmt.Errorf("%w: %w", ErrRemoteUnknown, errors.Join(cerr, err))
		}
		rec := afterCancel(task.Status.State)
		if rec != outbound.CancelRequestedRemoteUnknown {
			return rec, task, nil
		}
		if attempt >= cancelAttempts || ctx.Err() != nil {
			if cerr == nil {
				cerr = errors.New("the task did not settle after the cancel")
			}
			return rec, task, fmt.Errorf("%w: %w", ErrRemoteUnknown, cerr)
		}
	}
}

// readBack reads a task after a cancel, a few times with a doubling wait
// while it is still active or unreadable.
func (c *Conn) readBack(ctx context.Context, id wire.TaskID) (*wire.Task, error) {
	wait := pollMin
	for i := 1; ; i++ {
		task, err := c.remote.GetTask(ctx, getTaskRequest(c.Tenant, id))
		switch {
		case err == nil && (task == nil || task.ID != id):
			err = invalidResponse("GetTask answered about another task")
		case err == nil && (task.Status.State.Terminal() || i >= cancelReadBacks):
			return task, nil
		}
		if err != nil && i >= cancelReadBacks {
			return nil, err
		}
		if serr := sleep(ctx, wait); serr != nil {
			return nil, errors.Join(err, serr)
		}
		wait *= 2
	}
}

// afterCancel is what a task read back after a cancel says about the
// attempt's effect.
func afterCancel(s wire.TaskState) outbound.Reconciliation {
	if s == wire.TaskStateCompleted {
		return outbound.CompletedBeforeCancel
	}
	if s.Terminal() {
		return settledReconciliation(s)
	}
	return outbound.CancelRequestedRemoteUnknown
}

// settledReconciliation is what a terminal remote state says about the
// attempt's effect when nobody cancelled it: a completion needs no
// reconciliation, a rejection proves no effect (A2A 1.0: rejected tasks
// were not started), a failure may have had effects, and a cancellation
// read from the peer is verified.
func settledReconciliation(s wire.TaskState) outbound.Reconciliation {
	switch s {
	case wire.TaskStateCompleted:
		return ""
	case wire.TaskStateRejected:
		return outbound.FailedNoEffect
	case wire.TaskStateCanceled:
		return outbound.RemoteCancelled
	}
	return outbound.FailedPossibleEffect
}

// EventReconciled is the run event recording how a delegation ended when
// that is not a verified fact about the remote side: content-free, the
// attempt id, the reconciliation state and the projected remote status.
const EventReconciled = outbound.EventReconciled

type reconciledRecord struct {
	Protocol       string                  `json:"protocol"`
	AttemptID      string                  `json:"attemptId,omitempty"`
	Reconciliation outbound.Reconciliation `json:"reconciliation"`
	Status         interop.RunStatus       `json:"status,omitempty"`
}

// recordReconciliation appends EventReconciled for an outcome whose
// reconciliation is not verified.
func (c *Conn) recordReconciliation(ctx context.Context, out *Outcome) {
	if out == nil || out.Reconciliation == "" || out.Reconciliation.Verified() {
		return
	}
	c.appendEvent(ctx, EventReconciled, reconciledRecord{
		Protocol: protocolA2A, AttemptID: out.AttemptID,
		Reconciliation: out.Reconciliation, Status: out.Status,
	})
}
