package delegate

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net"
	"slices"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/outbound"
)

// Timing of following a remote task.
const (
	// pollMin is the first wait before a GetTask poll or a re-attach; each
	// further wait doubles up to pollMax.
	pollMin = 50 * time.Millisecond
	pollMax = 2 * time.Second
	// maxReadFailures is how many reads in a row may fail before a task
	// that was last seen active is given up as disconnected.
	maxReadFailures = 5
	// cancelReadBacks is how many GetTask reads a cancel makes to see the
	// task settle after the cancel.
	cancelReadBacks = 3
	// cancelAttempts is how many CancelTask requests a cancel sends to a
	// task that stays active.
	cancelAttempts = 2
	// cancelGrace bounds a cancel sent after the caller's context ended.
	cancelGrace = 10 * time.Second
	// drainGrace bounds reading a stream to its end after the task settled.
	drainGrace = 100 * time.Millisecond
)

// delegation is one attempt: one first send and everything that follows it
// on the remote task the peer names.
type delegation struct {
	c         *Conn
	step      Step
	limits    Limits
	attemptID string

	taskID    wire.TaskID
	contextID string
	state     wire.TaskState
	haveState bool
	// status is the last status read.
	status wire.TaskStatus
	// answered is the input request an answer went out for, until a read
	// shows the task moved on: a poll may still return that request before
	// the peer has taken the answer in, and it must not be answered twice.
	answered *wire.TaskStatus
	// answerFailed: sending the answer failed with an unknown outcome. A
	// read that still shows the same request then goes back to the host
	// for a fresh decision (InputRequest.PreviousAnswerFailed); the failed
	// answer itself is never re-sent.
	answerFailed bool
	rounds       int
	reply        *wire.Message

	artifacts artifactSet
	loss      lossTracker
	warnings  []Warning
	// echo is what the responses activated, for a step with a unit.
	echo unitEcho

	// retry is the verdict on a failed first send.
	retry struct{ again, sameAttempt bool }
}

func (c *Conn) newDelegation(step Step, limits Limits, attemptID string) *delegation {
	return &delegation{
		c: c, step: step, limits: limits, attemptID: attemptID,
		artifacts: newArtifactSet(limits),
	}
}

// streams reports whether the attempt follows by stream.
func (d *delegation) streams() bool { return d.c.Streaming && !d.step.Poll }

// start sends the attempt's message and follows what it started.
func (d *delegation) start(ctx context.Context) (*Outcome, error) {
	if ctx.Err() != nil {
		return d.cancelledBeforeAdmission(ctx)
	}
	req := &wire.SendMessageRequest{Tenant: d.c.Tenant, Message: d.message(ctx)}
	if d.streams() {
		n, serr, ferr := d.consume(ctx, func(ctx context.Context) iter.Seq2[wire.Event, error] {
			return d.c.remote.SendStreamingMessage(ctx, req)
		})
		switch {
		case ferr != nil:
			return d.abandon(ctx, ferr)
		case d.taskID == "" && d.reply == nil && serr != nil:
			return d.sendFailed(ctx, serr)
		case d.taskID == "" && d.reply == nil:
			return d.sendFailed(ctx, invalidResponse(fmt.Sprintf("the stream ended after %d events without naming a task", n)))
		}
		// A stream lost after the peer named its task is re-attached by
		// drive; the message is never sent again.
	} else {
		req.Config = &wire.SendMessageConfig{ReturnImmediately: true}
		res, err := d.c.remote.SendMessage(ctx, req)
		if err != nil {
			return d.sendFailed(ctx, err)
		}
		if err := d.apply(res); err != nil {
			if d.taskID == "" {
				return d.sendFailed(ctx, err)
			}
			return d.abandon(ctx, err)
		}
	}
	return d.drive(ctx)
}

// drive follows the remote task until it ends, is interrupted for
// authentication, or the delegation stops; it answers input requests on
// the way.
func (d *delegation) drive(ctx context.Context) (*Outcome, error) {
	for {
		if d.reply != nil {
			return d.finishReply()
		}
		if err := d.follow(ctx); err != nil {
			return d.stopped(ctx, err)
		}
		switch {
		case d.state.Terminal():
			return d.finish()
		case d.state == wire.TaskStateAuthRequired:
			// Never answered automatically (admission-boundaries §18.4):
			// the host obtains the credential and resumes, or cancels.
			return d.outcome(), ErrAuthRequired
		}
		ans, err := d.decide(ctx)
		if err == nil {
			err = d.answer(ctx, ans)
		}
		switch {
		case err != nil && ctx.Err() != nil:
			// The deadline or the host's cancel came while deciding or
			// answering: the same ending as anywhere else.
			return d.stopped(ctx, err)
		case err != nil:
			return d.abandon(ctx, err)
		}
	}
}

// settled reports whether the task reached a state following stops at.
func (d *delegation) settled() bool {
	if d.reply != nil {
		return true
	}
	if !d.haveState {
		return false
	}
	switch d.state {
	case wire.TaskStateInputRequired, wire.TaskStateAuthRequired:
		return d.answered == nil
	}
	return d.state.Terminal()
}

// follow reads the task until it settles: by re-subscribing when the
// connection streams, else by polling GetTask, with a doubling wait. It
// never sends a message. A task that cannot be read maxReadFailures times
// in a row is a *lostError.
func (d *delegation) follow(ctx context.Context) error {
	wait := pollMin
	failures := 0
	for !d.settled() {
		if err := sleep(ctx, wait); err != nil {
			return err
		}
		wait = min(2*wait, pollMax)
		var err error
		if d.streams() {
			var n int
			var ferr error
			n, err, ferr = d.consume(ctx, func(ctx context.Context) iter.Seq2[wire.Event, error] {
				return d.c.remote.SubscribeToTask(ctx, &wire.SubscribeToTaskRequest{Tenant: d.c.Tenant, ID: d.taskID})
			})
			switch {
			case ferr != nil:
				return ferr
			case err != nil && ctx.Err() == nil && !d.settled():
				// A peer refuses to subscribe to a task that settled
				// meanwhile (A2A 1.0 §3.1.6: UnsupportedOperationError);
				// one read tells.
				err = d.read(ctx)
			case err == nil && n == 0 && !d.settled():
				err = errStreamEnded
			}
		} else {
			err = d.read(ctx)
		}
		var fatal *fatalError
		switch {
		case d.settled():
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.As(err, &fatal):
			return err
		case err != nil:
			failures++
			if failures >= maxReadFailures {
				return &lostError{cause: err}
			}
		default:
			failures = 0
		}
	}
	return nil
}

// read applies one GetTask read of the task.
func (d *delegation) read(ctx context.Context) error {
	task, err := d.c.remote.GetTask(ctx, d.getRequest())
	if err != nil {
		return err
	}
	if task == nil {
		return &fatalError{invalidResponse("GetTask returned no task")}
	}
	if err := d.apply(task); err != nil {
		return &fatalError{err}
	}
	return nil
}

func (d *delegation) getRequest() *wire.GetTaskRequest {
	return getTaskRequest(d.c.Tenant, d.taskID)
}

// getTaskRequest reads a task without its history, which a delegation
// never surfaces.
func getTaskRequest(tenant string, id wire.TaskID) *wire.GetTaskRequest {
	noHistory := 0
	return &wire.GetTaskRequest{Tenant: tenant, ID: id, HistoryLength: &noHistory}
}

// consume opens a stream and applies its events until the task settles or
// the stream ends. It returns how many events it applied, the stream's own
// error, and the error of an event the delegation cannot accept (fatal).
//
// Once the task settled, the peer closes the stream (A2A 1.0 §3.1.2);
// reading on to that end, for at most drainGrace, lets the HTTP connection
// be reused instead of torn down. What arrives meanwhile is not applied.
func (d *delegation) consume(ctx context.Context, open func(context.Context) iter.Seq2[wire.Event, error]) (n int, streamErr, fatal error) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var drain *time.Timer
	defer func() {
		if drain != nil {
			drain.Stop()
		}
	}()
	for ev, err := range open(sctx) {
		switch {
		case drain != nil:
			continue
		case err != nil:
			return n, err, nil
		}
		if err := d.apply(ev); err != nil {
			return n, nil, err
		}
		n++
		if d.settled() {
			drain = time.AfterFunc(drainGrace, cancel)
		}
	}
	return n, nil, nil
}

// apply takes in one event or result read from the peer.
func (d *delegation) apply(ev wire.Event) error {
	switch ev := ev.(type) {
	case *wire.Task:
		if ev == nil {
			break
		}
		if err := d.adopt(ev.ID, ev.ContextID); err != nil {
			return err
		}
		d.loss.task(ev)
		d.setState(ev.Status)
		return d.artifacts.snapshot(ev.Artifacts)
	case *wire.TaskStatusUpdateEvent:
		if ev == nil {
			break
		}
		if err := d.adopt(ev.TaskID, ev.ContextID); err != nil {
			return err
		}
		d.loss.event(ev.Metadata)
		d.setState(ev.Status)
		return nil
	case *wire.TaskArtifactUpdateEvent:
		if ev == nil {
			break
		}
		if d.taskID != "" && ev.TaskID != d.taskID {
			return d.artifacts.refuse(RefusalWrongTask, artifactID(ev.Artifact), -1)
		}
		if err := d.adopt(ev.TaskID, ev.ContextID); err != nil {
			return err
		}
		d.loss.event(ev.Metadata)
		return d.artifacts.chunk(ev)
	case *wire.Message:
		if ev == nil {
			break
		}
		if d.taskID == "" && d.reply == nil {
			// A direct answer without a task (A2A 1.0 §3.1.1); finishReply
			// hands it over only if its parts pass admission.
			d.reply = ev
			_ = d.artifacts.reply(ev)
			return nil
		}
		d.loss.droppedMessage(ev)
		return nil
	}
	return invalidResponse("an event of no known kind")
}

// adopt takes the task and context ids from the first event that names
// them and refuses any later event about another task or context.
func (d *delegation) adopt(taskID wire.TaskID, contextID string) error {
	switch {
	case taskID == "":
		return invalidResponse("an event without a task id")
	case d.taskID == "":
		d.taskID, d.contextID = taskID, contextID
		d.artifacts.taskID = taskID
		return nil
	case taskID != d.taskID:
		return invalidResponse("an event about another task")
	case contextID != "" && d.contextID != "" && contextID != d.contextID:
		return invalidResponse("an event in another context")
	}
	if d.contextID == "" {
		d.contextID = contextID
	}
	return nil
}

// setState records a status read, and the warning a state outside the
// projection earns.
func (d *delegation) setState(st wire.TaskStatus) {
	s, msg := st.State, st.Message
	changed := !d.haveState || s != d.state
	d.state, d.haveState, d.status = s, true, st
	if d.answered != nil {
		same := s == wire.TaskStateInputRequired && sameRequest(*d.answered, st)
		switch {
		case !same:
			// The task moved on: the answer arrived.
			d.answered, d.answerFailed = nil, false
		case d.answerFailed:
			// Still the same request after an answer that failed: the
			// host decides again.
			d.answered = nil
		}
	}
	if changed {
		if w := d.c.warning(s); w != "" {
			d.loss.coerced(w)
			if !slices.Contains(d.warnings, w) {
				d.warnings = append(d.warnings, w)
			}
			d.c.logger().Warn("delegate: remote task state read as pending", "warning", string(w))
		}
	}
	d.loss.statusMessage(msg, changed, s == wire.TaskStateInputRequired)
}

// decide asks the host's decider for a fresh answer to the input request
// the task is waiting on.
func (d *delegation) decide(ctx context.Context) (InputAnswer, error) {
	d.rounds++
	if !d.c.Admission.MayRequestInput {
		return InputAnswer{}, fmt.Errorf("%w: the admission does not let this agent request input", ErrInputRefused)
	}
	if d.step.Decide == nil {
		return InputAnswer{}, fmt.Errorf("%w: the step has no input decider", ErrInputRefused)
	}
	req := InputRequest{
		AttemptID: d.attemptID, TaskID: d.taskID, ContextID: d.contextID, Round: d.rounds,
		Parts:                d.loss.requestView(d.status.Message),
		PreviousAnswerFailed: d.answerFailed,
	}
	d.answerFailed = false
	ans, err := d.step.Decide(ctx, req)
	switch {
	case err != nil:
		return InputAnswer{}, fmt.Errorf("%w: the decider failed: %w", ErrInputRefused, err)
	case ans.Decline || len(ans.Parts) == 0:
		return InputAnswer{}, fmt.Errorf("%w: the decider declined", ErrInputRefused)
	}
	return ans, nil
}

// answer sends the host's answer. An answer the peer refuses ends the
// delegation; one whose fate is unknown is never sent again: follow reads
// what became of it, and a task still on the same request goes back to
// the host.
func (d *delegation) answer(ctx context.Context, ans InputAnswer) error {
	req := &wire.SendMessageRequest{Tenant: d.c.Tenant, Message: d.answerMessage(ctx, d.rounds, ans.Parts)}
	answered := d.status
	d.answered = &answered
	var err error
	if d.streams() {
		var ferr error
		_, err, ferr = d.consume(ctx, func(ctx context.Context) iter.Seq2[wire.Event, error] {
			return d.c.remote.SendStreamingMessage(ctx, req)
		})
		if ferr != nil {
			return ferr
		}
	} else {
		req.Config = &wire.SendMessageConfig{ReturnImmediately: true}
		var res wire.SendMessageResult
		if res, err = d.c.remote.SendMessage(ctx, req); err == nil {
			return d.apply(res)
		}
	}
	switch {
	case err == nil || d.answered == nil:
		// Delivered, or the task already moved on.
		return nil
	case refusedBeforeExecution(err):
		return fmt.Errorf("delegate: input answer refused: %w", err)
	}
	d.answerFailed = true
	return nil
}

// outcome is what the attempt knows now.
func (d *delegation) outcome() *Outcome {
	o := &Outcome{AttemptID: d.attemptID, TaskID: d.taskID, ContextID: d.contextID, Warnings: slices.Clone(d.warnings)}
	if d.haveState {
		o.State = d.state
		o.Status, o.Subkind, o.Reason = d.c.project(d.state)
	}
	return o
}

// finish ends an attempt whose task reached a terminal state.
func (d *delegation) finish() (*Outcome, error) {
	out := d.outcome()
	switch d.state {
	case wire.TaskStateCompleted:
		arts, err := d.artifacts.admit()
		if err != nil {
			out.Status, out.Reason = interop.StatusFailed, ReasonArtifactRefused
			return out, err
		}
		out.Artifacts, out.Acceptance = arts, AcceptancePendingVerification
		if d.step.Unit != nil {
			results := make([][]*wire.Part, len(arts))
			for i, a := range arts {
				results[i] = a.Parts
			}
			d.verifyUnit(out, results)
		}
		return out, nil
	}
	// The artifacts of a task that did not complete never reach the host.
	d.loss.droppedArtifacts(d.artifacts.len())
	out.Reconciliation = settledReconciliation(d.state)
	switch d.state {
	case wire.TaskStateRejected:
		return out, errRejected
	case wire.TaskStateCanceled:
		return out, ErrRemoteCancelled
	}
	return out, ErrRemoteFailed
}

// finishReply ends an attempt the peer answered with a message.
func (d *delegation) finishReply() (*Outcome, error) {
	out := d.outcome()
	if err := d.artifacts.admitted(); err != nil {
		out.Status, out.Reason = interop.StatusFailed, ReasonArtifactRefused
		return out, err
	}
	out.Status, out.Reply, out.Acceptance = interop.StatusCompleted, d.reply, AcceptancePendingVerification
	if d.step.Unit != nil {
		d.verifyUnit(out, [][]*wire.Part{d.reply.Parts})
	}
	return out, nil
}

// cancelledBeforeAdmission: the step was cancelled before anything was
// sent; the peer never saw it.
func (d *delegation) cancelledBeforeAdmission(ctx context.Context) (*Outcome, error) {
	return &Outcome{Status: interop.StatusCancelled, Reconciliation: outbound.CancelledBeforeAdmission}, ctxError(ctx)
}

// sendFailed ends an attempt whose first send failed before the peer named
// a task, and decides whether the attempt may be retried.
func (d *delegation) sendFailed(ctx context.Context, err error) (*Outcome, error) {
	out := d.outcome()
	out.Status = interop.StatusFailed
	switch {
	case sentNothing(err):
		out.Reconciliation = outbound.FailedNoEffect
		d.retry.again = true
	case refusedBeforeExecution(err):
		out.Reconciliation = outbound.FailedNoEffect
	default:
		out.Reconciliation = outbound.FailedPossibleEffect
		d.retry.again, d.retry.sameAttempt = d.c.Admission.IdempotentSends, true
	}
	if ctx.Err() != nil && out.Reconciliation == outbound.FailedPossibleEffect {
		return out, ctxError(ctx)
	}
	return out, fmt.Errorf("delegate: send: %w", err)
}

// stopped ends an attempt whose following stopped before the task
// settled.
func (d *delegation) stopped(ctx context.Context, err error) (*Outcome, error) {
	if ctx.Err() != nil {
		if errors.Is(context.Cause(ctx), ErrDeadline) {
			// A local timeout never becomes "nothing happened"
			// (admission-boundaries §18.9).
			out := d.outcome()
			out.Reconciliation = outbound.FailedPossibleEffect
			return out, ctxError(ctx)
		}
		// The host gave up on the step: the remote task is cancelled.
		return d.abandon(ctx, ctxError(ctx))
	}
	var lost *lostError
	if errors.As(err, &lost) {
		out := d.outcome()
		out.Reconciliation = outbound.DisconnectedStillActive
		return out, fmt.Errorf("%w: %w", ErrDisconnected, lost.cause)
	}
	var fatal *fatalError
	if errors.As(err, &fatal) {
		err = fatal.err
	}
	return d.abandon(ctx, err)
}

// abandon stops following a task the delegation will not finish: a task
// still active is cancelled and reconciled. A task the cancel finds
// completed keeps its result, unless the cause was a refusal of that
// result.
func (d *delegation) abandon(ctx context.Context, cause error) (*Outcome, error) {
	if d.taskID == "" {
		out := d.outcome()
		out.Status, out.Reconciliation = interop.StatusFailed, outbound.FailedPossibleEffect
		return out, cause
	}
	refusedResult := errors.Is(cause, ErrArtifactRefused) || errors.Is(cause, wire.ErrInvalidAgentResponse)
	var rec outbound.Reconciliation
	if d.haveState && d.state.Terminal() {
		rec = settledReconciliation(d.state)
	} else {
		cctx := ctx
		if ctx.Err() != nil {
			var stop context.CancelFunc
			cctx, stop = context.WithTimeout(context.WithoutCancel(ctx), cancelGrace)
			defer stop()
		}
		var task *wire.Task
		var err error
		rec, task, err = d.c.cancelRemote(cctx, d.taskID)
		switch {
		case task != nil && refusedResult:
			// Only the state of the read-back counts; the content the
			// delegation refused stays refused.
			d.setState(wire.TaskStatus{State: task.Status.State})
		case task != nil:
			if aerr := d.apply(task); aerr != nil {
				refusedResult, cause = true, errors.Join(cause, aerr)
			}
		}
		if err != nil {
			cause = errors.Join(cause, err)
		}
	}
	if rec == outbound.CompletedBeforeCancel && !refusedResult {
		// The result stands (admission-boundaries §18.9).
		out, err := d.finish()
		out.Reconciliation = rec
		return out, err
	}
	out := d.outcome()
	out.Reconciliation = rec
	if refusedResult {
		out.Status, out.Reason = interop.StatusFailed, ReasonArtifactRefused
		if !errors.Is(cause, ErrArtifactRefused) {
			out.Reason = ""
		}
	}
	return out, cause
}

// ctxError is the error of a delegation whose context ended: ErrDeadline
// when Limits.Deadline passed, else the context's own error.
func ctxError(ctx context.Context) error {
	if errors.Is(context.Cause(ctx), ErrDeadline) {
		return fmt.Errorf("%w: %w", ErrDeadline, context.DeadlineExceeded)
	}
	return fmt.Errorf("delegate: step cancelled: %w", ctx.Err())
}

// sentNothing reports whether err proves the request never left this
// host: the connection was never established.
func sentNothing(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns)
}

// refusedBeforeExecution reports whether err is a peer refusal that, by
// its A2A 1.0 meaning (§3.3.2), comes before any execution: the
// request was malformed, unsupported or unauthorised.
func refusedBeforeExecution(err error) bool {
	return errorsIsAny(err,
		wire.ErrParseError, wire.ErrInvalidRequest, wire.ErrMethodNotFound, wire.ErrInvalidParams,
		wire.ErrUnsupportedContentType, wire.ErrVersionNotSupported, wire.ErrExtensionSupportRequired,
		wire.ErrUnsupportedOperation, wire.ErrPushNotificationNotSupported, wire.ErrTaskNotFound,
		wire.ErrUnauthenticated, wire.ErrUnauthorized)
}

// invalidResponse is a peer answer the delegation cannot accept: A2A
// InvalidAgentResponseError (-32006). It names what was wrong, never the
// peer's bytes.
func invalidResponse(what string) error {
	return fmt.Errorf("delegate: %w: %s", wire.ErrInvalidAgentResponse, what)
}

// fatalError marks a read whose content the delegation refuses, as opposed
// to a read that failed.
type fatalError struct{ err error }

func (e *fatalError) Error() string { return e.err.Error() }
func (e *fatalError) Unwrap() error { return e.err }

// lostError: the task could not be read again after the connection was
// lost.
type lostError struct{ cause error }

func (e *lostError) Error() string { return "delegate: task lost: " + e.cause.Error() }
func (e *lostError) Unwrap() error { return e.cause }

var errStreamEnded = errors.New("delegate: the stream ended before the task settled")

// errRejected matches both ErrRemoteRejected and ErrRemoteFailed.
var errRejected error = rejectedError{}

type rejectedError struct{}

func (rejectedError) Error() string { return ErrRemoteRejected.Error() }
func (rejectedError) Is(target error) bool {
	return target == ErrRemoteRejected || target == ErrRemoteFailed
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// sameRequest reports whether st is still the input request prev was
// answered for: the same status message, else the same status timestamp.
// A request that carries neither cannot be told from a new one, so it
// counts as the same until the task reads in another state.
func sameRequest(prev, st wire.TaskStatus) bool {
	if prev.Message != nil && st.Message != nil && prev.Message.ID != "" && st.Message.ID != "" {
		return prev.Message.ID == st.Message.ID
	}
	if prev.Timestamp != nil && st.Timestamp != nil {
		return !st.Timestamp.After(*prev.Timestamp)
	}
	return true
}

// artifactID is a's id, or "" for a missing artifact.
func artifactID(a *wire.Artifact) wire.ArtifactID {
	if a == nil {
		return ""
	}
	return a.ID
}
