package delegate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/outbound"
	"github.com/wopinterop/wopinterop/workunit"
)

// Step is one unit of work the host delegates to the admitted agent.
type Step struct {
	// Skill is the admitted skill the step asks for. It travels as
	// message.metadata.skillId, the key the library's own A2A server reads
	// (A2A 1.0 names no skill field on a message). A skill outside
	// Admission.Skills is refused before anything is sent.
	Skill string
	// DataClass is the data-release class of everything the step sends:
	// its inputs, its parts and every input answer. A class outside
	// Admission.DataClasses is refused before anything is sent.
	DataClass string
	// Inputs are the step's structured inputs, a JSON value sent as the
	// message's first part, a data part. Empty: none.
	Inputs json.RawMessage
	// Parts follow the inputs in the message. The library neither keeps
	// nor modifies them.
	Parts []*wire.Part
	// Decide answers the remote agent's input requests. Nil: an input
	// request cancels the remote task.
	Decide InputDecider
	// Poll follows the remote task with GetTask even when the connection
	// can stream.
	Poll bool
	// Unit is a work unit to send (package workunit, the canonical payload
	// envelope): its part (Envelope.A2APart) follows Parts, the message
	// lists workunit.ExtensionURI in its extensions, and every request of
	// the delegation activates the extension with A2A-Extensions (A2A 1.0
	// §3.2.6). A card that does not declare the extension refuses the step
	// before anything is sent: the agent would ignore it (A2A extensions
	// §Extension Activation). When the task completes, Outcome.Unit
	// records the completion, accepted only through a verified result unit.
	Unit *workunit.Envelope
}

// InputDecider is the host's decision on one remote input request. It is
// called afresh for every request (admission-boundaries §18.4): only its
// answer is ever sent, with a new messageId on the same task and context.
// An error, Decline or an answer without parts sends nothing and cancels
// the remote task.
type InputDecider func(ctx context.Context, req InputRequest) (InputAnswer, error)

// InputRequest is the host's view of a remote input request.
type InputRequest struct {
	AttemptID string
	TaskID    wire.TaskID
	ContextID string
	// Round counts the delegation's input requests, from 1.
	Round int
	// Parts are the agent's request (its status message), copied without
	// their metadata. They are untrusted content that confers no authority
	// (OpenWOP interop map, a2a.fields: Message.role); a url part is a
	// reference the library never fetches.
	Parts []*wire.Part
	// PreviousAnswerFailed: the answer to this same request failed to send
	// with an unknown outcome, and the peer still shows the request. The
	// failed answer is never re-sent; answering again may give the peer a
	// second answer if the first did arrive.
	PreviousAnswerFailed bool
}

// InputAnswer is the host's answer to an input request.
type InputAnswer struct {
	// Parts are sent as the answer, under the step's data class.
	Parts []*wire.Part
	// Decline refuses to answer: the remote task is cancelled.
	Decline bool
}

// Acceptance is what a remote completion means for the host. A remote
// agent reporting success is execution, not acceptance: the result is
// verified before it is accepted (admission-boundaries §18.4). The
// library reports a result as accepted only when it verified it itself —
// a result unit matching its digest and naming the unit sent — and
// otherwise leaves the verification to the host.
type Acceptance string

// AcceptancePendingVerification: the remote task completed and its
// artifacts passed admission; the host has yet to verify them.
const AcceptancePendingVerification Acceptance = "execution-succeeded-acceptance-pending-verification"

// AcceptanceAccepted: the step sent a work unit (Step.Unit) and the
// remote task returned a result unit that opened with a matching digest,
// under the activated extension, and names the unit sent as the unit it
// is the result of (workunit.Completion.Verify). It is set there and only
// there: a digest match is the one verification the library can make.
const AcceptanceAccepted Acceptance = "accepted"

// Warning is a content-free note about what a delegation read.
type Warning string

// Warnings of the reverse projection (OpenWOP interop map,
// a2a.taskStateReverse).
const (
	// WarningUnspecifiedState: the peer sent TASK_STATE_UNSPECIFIED, which
	// is never emitted; it was read as pending.
	WarningUnspecifiedState Warning = "unspecified-remote-state"
	// WarningUnknownState: the peer sent a state A2A 1.0 does not define;
	// it was read as pending, never as completed.
	WarningUnknownState Warning = "unknown-remote-state"
	// WarningResultUnitRefused: a result carried a work unit that was not
	// accepted — the extension not echoed on every response, its bytes
	// not matching its digest, not the result of the unit sent, or more
	// than one result carrying a unit. The completion stays pending
	// verification.
	WarningResultUnitRefused Warning = "result-unit-refused"
)

// Reasons an Outcome gives for a failed status.
const (
	// ReasonRejectedByRemote: the remote task ended TASK_STATE_REJECTED
	// (OpenWOP interop map, a2a.taskStateReverse).
	ReasonRejectedByRemote = "rejected_by_remote"
	// ReasonArtifactRefused: the remote task completed but an artifact
	// failed admission.
	ReasonArtifactRefused = "artifact_refused"
)

// SubkindAuth marks a waiting-input status projected from
// TASK_STATE_AUTH_REQUIRED (OpenWOP interop map, a2a.taskStateReverse).
const SubkindAuth = "auth"

// Outcome is what a delegation knows when it returns: the local and remote
// identities, the remote state and its projection, and the admitted
// results. Delegate returns one whenever it got as far as deciding to
// send, beside any error.
type Outcome struct {
	// AttemptID is the local id of the attempt that produced the outcome
	// and the messageId of its first message; "" when nothing was sent.
	AttemptID string
	// Attempts is how many sends the delegation made, retries included.
	Attempts int
	// TaskID and ContextID are the remote task's ids, once the peer named
	// them.
	TaskID    wire.TaskID
	ContextID string
	// State is the remote task state as last read; "" when none was read.
	State wire.TaskState
	// Status is the run status State projects to (OpenWOP interop map,
	// a2a.taskStateReverse), or, when no state was read, the local verdict:
	// failed for a failed send, cancelled for a step cancelled before it
	// was sent, completed for a direct message reply. A result the
	// delegation refused (an artifact that failed admission, an invalid
	// peer response) makes it failed whatever the remote state.
	Status interop.RunStatus
	// Subkind is SubkindAuth when the remote task waits on authentication.
	Subkind string
	// Reason explains a failed Status: ReasonRejectedByRemote or
	// ReasonArtifactRefused.
	Reason string
	// Warnings are content-free notes about what was read.
	Warnings []Warning
	// Artifacts are the remote task's artifacts, every one admitted
	// (admission-boundaries §18.4.2). Set only for a completed task.
	Artifacts []*wire.Artifact
	// Reply is the peer's direct answer when it answered with a message
	// instead of a task; its parts passed the same admission as an
	// artifact. Untrusted content.
	Reply *wire.Message
	// Acceptance is AcceptancePendingVerification when the remote side
	// completed and its results were admitted — AcceptanceAccepted when,
	// moreover, the step sent a unit and a result unit verified — else "".
	Acceptance Acceptance
	// Unit records the completion of the unit the step sent (Step.Unit),
	// once the remote side completed: pending verification, or accepted
	// with ResultUnit. Nil when no unit was sent or the task did not
	// complete.
	Unit *workunit.Completion
	// ResultUnit is the result unit the completion was accepted with; nil
	// unless Acceptance is AcceptanceAccepted.
	ResultUnit *workunit.Envelope
	// Reconciliation is what is known of the attempt's effect when it
	// ended without a completion (admission-boundaries §18.9); "" for a
	// completion and for a task still waiting on authentication.
	Reconciliation outbound.Reconciliation
}

// Delegate runs step on the remote agent: it checks the step against the
// admission, sends one message, follows the remote task by stream or
// polling until it settles, answers input requests only through
// step.Decide, and admits the artifacts of a completed task. The whole
// delegation is bounded by Limits.Deadline.
//
// A send that failed in a way that proves the peer did nothing (it never
// reached the peer) is retried within Limits.Attempts with a new attempt
// id; a send whose effect is unknown is retried only when
// Admission.IdempotentSends says the peer deduplicates by messageId, and
// then with the same attempt id. Once the peer named a task, nothing is
// ever sent again: a lost stream is re-attached with SubscribeToTask or
// GetTask.
//
// The error is nil only for a completion whose results were admitted.
// Otherwise it matches one of the Err* values of this package, or is the
// peer's error from the send (match it with the a2a error sentinels).
func (c *Conn) Delegate(ctx context.Context, step Step) (*Outcome, error) {
	if err := c.admitStep(step); err != nil {
		return nil, err
	}
	limits := c.Admission.Limits.withDefaults()
	ctx, stop := context.WithTimeoutCause(ctx, limits.Deadline, ErrDeadline)
	defer stop()

	attemptID := outbound.NewAttemptID()
	for n := 1; ; n++ {
		d := c.newDelegation(step, limits, attemptID)
		out, err := d.start(d.unitContext(ctx))
		if out.AttemptID != "" {
			out.Attempts = n
		}
		c.recordLoss(ctx, d)
		if !d.retry.again || n >= limits.Attempts || ctx.Err() != nil {
			c.recordReconciliation(ctx, out)
			return out, err
		}
		if !d.retry.sameAttempt {
			attemptID = outbound.NewAttemptID()
		}
	}
}

// Resume follows a delegation again after Delegate (or Resume) returned it
// unsettled: disconnected while the remote task was active, or waiting on
// authentication. It re-attaches with SubscribeToTask or GetTask and never
// re-sends the step's message; an input request is answered through
// step.Decide as in Delegate. step is checked against the admission again,
// because an answer releases data under its class.
func (c *Conn) Resume(ctx context.Context, prev *Outcome, step Step) (*Outcome, error) {
	if err := c.admitStep(step); err != nil {
		return nil, err
	}
	if prev == nil || prev.TaskID == "" {
		return nil, ErrNoRemoteTask
	}
	limits := c.Admission.Limits.withDefaults()
	ctx, stop := context.WithTimeoutCause(ctx, limits.Deadline, ErrDeadline)
	defer stop()

	d := c.newDelegation(step, limits, prev.AttemptID)
	d.taskID, d.contextID = prev.TaskID, prev.ContextID
	d.artifacts.taskID = prev.TaskID
	out, err := d.drive(d.unitContext(ctx))
	out.Attempts = prev.Attempts
	c.recordLoss(ctx, d)
	c.recordReconciliation(ctx, out)
	return out, err
}

// admitStep refuses a step the admission does not cover, before anything
// is sent (admission-boundaries §18.3).
func (c *Conn) admitStep(step Step) error {
	if !slices.ContainsFunc(c.Admission.Skills, func(s AdmittedSkill) bool { return s.ID == step.Skill }) {
		return &StepError{Field: "skill", Reason: "not an admitted skill of this agent"}
	}
	if step.DataClass == "" || !slices.Contains(c.Admission.DataClasses, step.DataClass) {
		return &StepError{Field: "dataClass", Reason: "data-release class not admitted for this agent"}
	}
	if len(step.Inputs) > 0 && !json.Valid(step.Inputs) {
		return &StepError{Field: "inputs", Reason: "not a JSON value"}
	}
	if step.Unit != nil {
		switch {
		case step.Unit.Digest() == "":
			return &StepError{Field: "unit", Reason: "holds no sealed unit"}
		case !workunit.Declared(c.Card):
			// Fail closed: an agent ignores an extension it does not
			// support, and the unit would travel as an unread part.
			return &StepError{Field: "unit", Reason: "the agent's card does not declare the work-unit extension"}
		}
	}
	return nil
}

// message is the attempt's first message: attempt id as messageId, the
// inputs as a data part, then the step's parts and its unit's part, the
// skill and the run's trace context in its metadata (OpenWOP interop.md
// §Trace context), and the work-unit extension in its extensions when it
// carries a unit.
func (d *delegation) message(ctx context.Context) *wire.Message {
	parts := make([]*wire.Part, 0, len(d.step.Parts)+2)
	if len(d.step.Inputs) > 0 {
		parts = append(parts, &wire.Part{Content: wire.Data{Value: d.step.Inputs}})
	}
	parts = append(parts, d.step.Parts...)
	meta := map[string]any{metadataSkillID: d.step.Skill}
	if tc := traceMetadata(ctx); tc != nil {
		meta[metadataOpenWOP] = tc
	}
	m := &wire.Message{ID: d.attemptID, Role: wire.MessageRoleUser, Metadata: meta}
	if d.step.Unit != nil {
		parts = append(parts, d.step.Unit.A2APart())
		workunit.Activate(m)
	}
	m.Parts = parts
	return m
}

// answerMessage carries the host's answer to input request number round:
// same task and context, a new messageId scoped to the attempt.
func (d *delegation) answerMessage(ctx context.Context, round int, parts []*wire.Part) *wire.Message {
	m := &wire.Message{
		ID:        fmt.Sprintf("%s-input-%d", d.attemptID, round),
		Role:      wire.MessageRoleUser,
		TaskID:    d.taskID,
		ContextID: d.contextID,
		Parts:     slices.Clone(parts),
	}
	if tc := traceMetadata(ctx); tc != nil {
		m.Metadata = map[string]any{metadataOpenWOP: tc}
	}
	return m
}

// Message metadata keys the library sends.
const (
	metadataSkillID = "skillId"
	metadataOpenWOP = "openwop"
)

// errorsIsAny reports whether err matches any of targets.
func errorsIsAny(err error, targets ...error) bool {
	for _, t := range targets {
		if errors.Is(err, t) {
			return true
		}
	}
	return false
}
