package delegate

import (
	"errors"
	"strconv"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
)

// Errors a delegation ends in. Each is matched with errors.Is; the Outcome
// returned beside it says what is known about the remote side.
var (
	// ErrStepRefused: the admission does not cover the step; nothing was
	// sent. The error is a [*StepError] naming the field.
	ErrStepRefused = errors.New("delegate: step not covered by the admission")
	// ErrArtifactRefused: an artifact failed admission (admission-boundaries
	// §18.4.2); none of its bytes reached the Outcome. The error is an
	// [*ArtifactError].
	ErrArtifactRefused = errors.New("delegate: artifact refused")
	// ErrRemoteFailed: the remote task ended failed or rejected.
	ErrRemoteFailed = errors.New("delegate: remote task failed")
	// ErrRemoteRejected: the remote agent rejected the task before executing
	// it. It also matches ErrRemoteFailed.
	ErrRemoteRejected = errors.New("delegate: remote agent rejected the task")
	// ErrRemoteCancelled: the remote task ended cancelled.
	ErrRemoteCancelled = errors.New("delegate: remote task cancelled")
	// ErrAuthRequired: the remote task waits for authentication. It is never
	// answered automatically; the remote task stays as it is.
	ErrAuthRequired = errors.New("delegate: remote task requires authentication")
	// ErrInputRefused: the remote task asked for input and no answer was
	// sent (no decider, the admission forbids input requests, or the
	// decider declined); the remote task was cancelled and reconciled.
	ErrInputRefused = errors.New("delegate: remote input request not answered")
	// ErrDeadline: Limits.Deadline passed before the remote task settled.
	// Once anything was sent it never means nothing happened: the Outcome
	// says failed-possible-effect (cancelled-before-admission only when the
	// deadline passed before the first send). It also matches
	// context.DeadlineExceeded.
	ErrDeadline = errors.New("delegate: deadline exceeded")
	// ErrDisconnected: the connection was lost while the remote task was
	// active and could not be re-attached; [Conn.Resume] re-attaches later.
	ErrDisconnected = errors.New("delegate: connection lost while the remote task was active")
	// ErrNoRemoteTask: a cancel found a send whose peer never named a task,
	// so there is nothing to cancel and the effect stays open.
	ErrNoRemoteTask = errors.New("delegate: the peer named no task")
	// ErrRemoteUnknown: a cancel was sent but the remote state after it
	// could not be read.
	ErrRemoteUnknown = errors.New("delegate: remote state after cancel unknown")
)

// StepError is a step the admission does not cover, refused before
// anything was sent.
type StepError struct {
	// Field names what was refused: "skill", "dataClass" or "inputs".
	Field string
	// Reason is a short explanation safe to show a caller.
	Reason string
}

func (e *StepError) Error() string {
	return "delegate: step " + e.Field + " refused: " + e.Reason
}

// Is makes every StepError match ErrStepRefused.
func (e *StepError) Is(target error) bool { return target == ErrStepRefused }

// ArtifactRefusal says which admission check an artifact failed
// (admission-boundaries §18.4.2).
type ArtifactRefusal string

// The artifact admission checks.
const (
	// RefusalWrongTask: the artifact belongs to another task than the one
	// the delegation created.
	RefusalWrongTask ArtifactRefusal = "wrong-task"
	// RefusalMediaType: a part's media type is not in Limits.MediaTypes.
	RefusalMediaType ArtifactRefusal = "media-type"
	// RefusalSize: the artifact's decoded size exceeds
	// Limits.MaxArtifactBytes.
	RefusalSize ArtifactRefusal = "size"
	// RefusalCount: the task returned more than Limits.MaxArtifacts
	// artifacts.
	RefusalCount ArtifactRefusal = "count"
	// RefusalIncomplete: a chunked transfer did not end with its last
	// chunk, or a chunk appended to an artifact never started.
	RefusalIncomplete ArtifactRefusal = "incomplete"
	// RefusalDigest: the artifact's sha256 does not match its content, or
	// cannot be checked.
	RefusalDigest ArtifactRefusal = "digest"
)

// ArtifactError is an artifact refused by admission. It names the check and
// where, never the artifact's content.
type ArtifactError struct {
	Refusal ArtifactRefusal
	// ArtifactID is the peer's id of the refused artifact.
	ArtifactID wire.ArtifactID
	// Part is the index of the offending part, or -1.
	Part int
}

func (e *ArtifactError) Error() string {
	msg := "delegate: artifact refused: " + string(e.Refusal)
	if e.Part >= 0 {
		msg += " (part " + strconv.Itoa(e.Part) + ")"
	}
	return msg
}

// Is makes every ArtifactError match ErrArtifactRefused.
func (e *ArtifactError) Is(target error) bool { return target == ErrArtifactRefused }
