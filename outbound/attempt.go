package outbound

import (
	"crypto/rand"
	"encoding/hex"

	"github.com/wopinterop/wopinterop/interop"
)

// NewAttemptID returns a fresh local attempt id ("att_" and 32 hex digits).
// Every send is one attempt; a retry gets a new id unless the peer's
// idempotency contract covers the retry (admission-boundaries §18.9).
func NewAttemptID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return "att_" + hex.EncodeToString(b[:])
}

// Reconciliation is what the host knows about an attempt's effect on the
// remote side when it stops following it: after a cancel, a timeout, a
// failure or a lost connection (admission-boundaries §18.9). Only
// RemoteCancelled and CompletedBeforeCancel are verified facts about the
// remote side; every other state leaves the effect open, and none of them
// means "nothing happened" unless it says so.
type Reconciliation string

const (
	// CancelledBeforeAdmission: cancelled before anything was sent; the
	// peer never saw the attempt.
	CancelledBeforeAdmission Reconciliation = "cancelled-before-admission"
	// CancelRequestedRemoteUnknown: a cancel was sent, but the remote state
	// after it could not be read.
	CancelRequestedRemoteUnknown Reconciliation = "cancel-requested-remote-unknown"
	// RemoteCancelled: the remote task was read back cancelled.
	RemoteCancelled Reconciliation = "remote-cancelled"
	// CompletedBeforeCancel: the remote task completed before the cancel
	// took effect; its result stands.
	CompletedBeforeCancel Reconciliation = "completed-before-cancel"
	// FailedNoEffect: the attempt failed in a way that proves the peer
	// performed nothing (refused before execution).
	FailedNoEffect Reconciliation = "failed-no-effect"
	// FailedPossibleEffect: the attempt failed after the peer may have
	// acted (a timeout, a failure mid-execution).
	FailedPossibleEffect Reconciliation = "failed-possible-effect"
	// DisconnectedStillActive: the connection was lost while the remote
	// task was last known to be active.
	DisconnectedStillActive Reconciliation = "disconnected-still-active"
)

// Verified reports whether r states a fact read back from the peer rather
// than what the host could not find out.
func (r Reconciliation) Verified() bool {
	return r == RemoteCancelled || r == CompletedBeforeCancel
}

// The content-free run events both client directions append to the run's
// log (vendor event types under the library's own org, OpenWOP RFC 0171
// §A.1): what projecting a peer's answer into the run dropped or coerced
// (admission-boundaries §18.10), and an exchange that ended without a
// verified remote state (§18.9). Their payloads name the protocol.
const (
	EventTranslationLoss interop.EventType = "wopinterop.translation.loss"
	EventReconciled      interop.EventType = "wopinterop.delegation.reconciled"
)
