package memstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/isolation"
)

// runRecord is one run. Everything but the immutable fields is guarded by
// tenant.mu. It stays in memory for the life of the store (or its
// retention), so it keeps nothing a settled run no longer needs: what only
// the workflow reads (its context, inputs, trace) lives in its RunContext,
// and the cancel function is dropped once the run settles.
type runRecord struct {
	// Immutable after creation. The run's id is run.ID.
	tenant *tenantState
	def    *workflowEntry
	// idemKey is the creating IdempotencyKey, "" when none was given;
	// with run.Principal it is the run's key in tenant.idempotency.
	idemKey string

	// cancel cancels the workflow's context; nil once the run settled.
	cancel context.CancelCauseFunc

	run interop.Run // the canonical state; reads return clones
	log eventLog    // append-only; its entry i has Sequence i
	// changed is made by the first watcher that has to wait (waitChannel)
	// and closed and cleared by the next append, so an event nobody waits
	// for costs no channel.
	changed    chan struct{}       // guarded by wakeMu
	wakeMu     sync.Mutex          // taken under tenant.mu (read or write)
	interrupts map[string]*pending // every interrupt ever raised, by id; nil until the first
	usedKeys   map[string]bool     // interrupt keys already invoked (OpenWOP interrupt.md §Payload)
	// closed[i] is set once run.Artifacts[i] received its last chunk. A
	// run has few artifacts, so they are found by a scan of run.Artifacts
	// rather than through a map of their own.
	closed []bool
	entry  listEntry // the run's position in tenant.index
}

// artifactIndexLocked is the index of artifact id in run.Artifacts, or
// -1.
func (rec *runRecord) artifactIndexLocked(id string) int {
	for i := range rec.run.Artifacts {
		if rec.run.Artifacts[i].ID == id {
			return i
		}
	}
	return -1
}

// waitChannel returns the channel the next append closes. The caller
// holds tenant.mu, at least for reading: appends hold it for writing, so
// none can slip between the caller's look at the log and the wait.
func (rec *runRecord) waitChannel() <-chan struct{} {
	rec.wakeMu.Lock()
	defer rec.wakeMu.Unlock()
	if rec.changed == nil {
		rec.changed = make(chan struct{})
	}
	return rec.changed
}

// lifecycleEvent builds one of the store's own events. The payloads are
// this package's structs over validated JSON, so encoding cannot fail; if
// it ever did, the event would still be appended with an empty payload
// object and the failure logged, because the log must not skip a step.
func (s *Store) lifecycleEvent(typ interop.EventType, payload any) interop.RunEvent {
	if b := appendPayload(nil, payload); b != nil {
		return interop.RunEvent{Type: typ, Payload: b, SchemaVersion: interop.SchemaVersion}
	}
	ev, err := interop.NewRunEvent(typ, payload)
	if err != nil {
		s.cfg.logger.Error("memstore: encoding an event payload failed", "type", typ, "error", err)
		ev = interop.RunEvent{Type: typ, Payload: json.RawMessage(`{}`), SchemaVersion: interop.SchemaVersion}
	}
	return ev
}

// setStatusLocked moves the run to st, re-indexing it for ListRuns when
// the status (and so the status timestamp) changes.
func (rec *runRecord) setStatusLocked(st interop.RunStatus, at time.Time) {
	if rec.run.Status == st {
		return
	}
	rec.tenant.index.move(&rec.entry, st, at.UnixNano())
	rec.run.StatusAt = at
}

// addRunLocked files a new run in the tenant's run map and list index.
func (t *tenantState) addRunLocked(rec *runRecord) {
	rec.entry = listEntry{key: listKey{at: rec.run.StatusAt.UnixNano(), id: rec.run.ID}, rec: rec}
	t.runs[rec.run.ID] = rec
	t.index.insert(&rec.entry)
}

// dropRunLocked removes a run from the tenant's maps and list index.
func (t *tenantState) dropRunLocked(rec *runRecord) {
	t.index.remove(&rec.entry)
	delete(t.runs, rec.run.ID)
	if rec.idemKey != "" {
		if idem := (idempotencyKey{principal: rec.run.Principal, key: rec.idemKey}); t.idempotency[idem] == rec {
			delete(t.idempotency, idem)
		}
	}
}

// CreateRun starts a run of req.WorkflowID in the Subject's tenant and
// workspace. The run, its run.started event, ContextID, Transport, Trace
// and first Message are created in one step. A repeat of an
// IdempotencyKey by the same tenant and principal returns the first run
// with created=false and starts nothing, also when the calls race; if that
// run lives in a workspace the Subject cannot read, the repeat is refused
// with an *interop.InputError on "idempotencyKey". The body of an inline
// workflow (WorkflowDef.Inline) has run when CreateRun returns; the run
// returned is still the run as created.
func (s *Store) CreateRun(ctx context.Context, sub interop.Subject, req interop.CreateRunRequest) (interop.Run, bool, error) {
	if err := ctx.Err(); err != nil {
		return interop.Run{}, false, err
	}
	t := s.tenant(sub.Tenant)
	if t == nil {
		return interop.Run{}, false, s.notFound.workflow
	}
	if s.cfg.runRetention > 0 {
		s.startPurge()
	}
	idem := idempotencyKey{principal: sub.Principal, key: req.IdempotencyKey}

	t.mu.RLock()
	wf := t.workflows[req.WorkflowID]
	var prior *runRecord
	if req.IdempotencyKey != "" {
		prior = t.idempotency[idem]
	}
	if wf == nil {
		t.mu.RUnlock()
		return interop.Run{}, false, s.notFound.workflow
	}
	if prior != nil {
		run, err := repeatLocked(sub, prior)
		t.mu.RUnlock()
		return run, false, err
	}
	t.mu.RUnlock()

	// Validation is pure: do it outside the lock. No inputs and {} (what
	// the A2A binding sends for a message without a data part) have the
	// verdict Register took.
	noInputs := len(req.Inputs) == 0 || string(req.Inputs) == `{}`
	if noInputs {
		if e := wf.emptyInputsErr; e != nil {
			refusal := *e // the caller's own copy
			return interop.Run{}, false, &refusal
		}
	} else if err := validateJSON(wf.schema, "inputs", req.Inputs); err != nil {
		return interop.Run{}, false, err
	}
	if req.Message != nil {
		if err := validMessage(req.Message); err != nil {
			return interop.Run{}, false, err
		}
	}

	t.mu.Lock()
	locked := true
	defer func() {
		if locked {
			t.mu.Unlock()
		}
	}()
	if req.IdempotencyKey != "" {
		if prior := t.idempotency[idem]; prior != nil {
			run, err := repeatLocked(sub, prior)
			return run, false, err
		}
	}
	id, err := isolation.NewID(t.name)
	if err != nil {
		return interop.Run{}, false, fmt.Errorf("memstore: mint run id: %w", err)
	}
	if err := s.reserveRunSlot(); err != nil {
		return interop.Run{}, false, err
	}
	runCtx, cancel := context.WithCancelCause(s.runsCtx)
	at := s.now()
	rec := &runRecord{
		tenant: t,
		def:    wf,
		cancel: cancel,
		log:    newEventLog(wf.logHint),
		run: interop.Run{
			ID:           id,
			Tenant:       t.name,
			Workspace:    sub.Workspace,
			Principal:    sub.Principal,
			WorkflowID:   wf.wf.ID,
			Status:       interop.StatusRunning,
			StatusAt:     at,
			CreatedAt:    at,
			Transport:    req.Transport,
			ContextID:    req.ContextID,
			LastSequence: -1,
		},
	}
	rc := &RunContext{store: s, rec: rec, ctx: runCtx, inputs: emptyInputs, trace: req.Trace}
	if !noInputs {
		rc.inputs = bytes.Clone(req.Inputs)
	}
	if req.Message != nil {
		rec.run.Messages = []interop.Message{t.storedMessageLocked(req.Message)}
	}
	t.addRunLocked(rec)
	if req.IdempotencyKey != "" {
		t.idempotency[idem] = rec
		rec.idemKey = req.IdempotencyKey
	}
	appendLifecycleLocked(s, rec, interop.EventRunStarted, interop.RunStarted{WorkflowID: wf.wf.ID, Transport: req.Transport}, nil, at)
	snapshot := cloneRun(&rec.run)
	if !wf.inline {
		go s.execute(rc)
		return snapshot, true, nil
	}
	// The run is filed and its snapshot taken, as for a run on its own
	// goroutine; the body's steps take the lock themselves.
	locked = false
	t.mu.Unlock()
	s.execute(rc)
	return snapshot, true, nil
}

// emptyInputs are the inputs of a run started without any. Shared by such
// runs: RunContext.Inputs hands out copies only.
var emptyInputs = json.RawMessage(`{}`)

// storedMessageLocked is the store's copy of a run's first message. Its
// metadata map is shared with the previous run's when the two are equal
// and flat (the skillId an A2A client sends with every message): the
// store never changes or hands out a stored map, reads copy it, so one
// map can serve every run — a map is the largest object a run would
// otherwise keep. The caller holds t.mu for writing.
func (t *tenantState) storedMessageLocked(m *interop.Message) interop.Message {
	meta := m.Metadata
	if meta != nil && flatEqual(meta, t.lastMetadata) {
		c := *m
		c.Metadata = nil
		c = cloneMessage(c)
		c.Metadata = t.lastMetadata
		return c
	}
	c := cloneMessage(*m)
	if meta != nil {
		t.lastMetadata = c.Metadata
	}
	return c
}

// flatEqual reports whether a and b are both non-nil and hold the same
// keys with equal scalar JSON values (strings, numbers, booleans, null).
// Anything nested makes them unequal, which only costs a copy.
func flatEqual(a, b map[string]any) bool {
	if a == nil || b == nil || len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok {
			return false
		}
		switch v := v.(type) {
		case nil:
			if w != nil {
				return false
			}
		case string:
			if w, ok := w.(string); !ok || w != v {
				return false
			}
		case float64:
			if w, ok := w.(float64); !ok || w != v {
				return false
			}
		case bool:
			if w, ok := w.(bool); !ok || w != v {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// repeatLocked answers an idempotent repeat with the first run.
func repeatLocked(sub interop.Subject, prior *runRecord) (interop.Run, error) {
	if !canRead(sub, prior) {
		return interop.Run{}, &interop.InputError{Field: "idempotencyKey", Reason: "already used for a run in another workspace"}
	}
	return cloneRun(&prior.run), nil
}

func validMessage(m *interop.Message) error {
	for _, p := range m.Parts {
		if p.Kind == interop.PartData && len(p.Data) > 0 && !json.Valid(p.Data) {
			return &interop.InputError{Field: "message", Reason: "data part is not valid JSON"}
		}
	}
	return nil
}

// GetRun returns a copy of the run, or ErrNotFound when it does not exist
// or the Subject may not read it.
func (s *Store) GetRun(ctx context.Context, sub interop.Subject, runID string) (interop.Run, error) {
	if err := ctx.Err(); err != nil {
		return interop.Run{}, err
	}
	t := s.tenant(sub.Tenant)
	if t == nil {
		return interop.Run{}, s.notFound.run
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	rec := t.readableLocked(sub, runID)
	if rec == nil {
		return interop.Run{}, s.notFound.run
	}
	return cloneRun(&rec.run), nil
}

// EventCancelRequested is the store's vendor event recording a cancelRun
// request: the run moves to cancelling, and its payload {"reason": …} keeps
// who-asked-why in the log until run.cancelled follows. OpenWOP registers
// no event for this step, so it is a vendor type (RFC 0171 §A.1).
const EventCancelRequested interop.EventType = "wopinterop.cancel-requested"

// CancelRun asks a run to stop: it withdraws any open interrupt, moves the
// run to cancelling ([EventCancelRequested] with the reason) and cancels
// the workflow's context; run.cancelled follows when the workflow returns.
// A run already
// cancelling is returned unchanged. A terminal run is ErrRunTerminal and
// nothing is appended (OpenWOP interop map, a2a.operations).
func (s *Store) CancelRun(ctx context.Context, sub interop.Subject, runID, reason string) (interop.Run, error) {
	if err := ctx.Err(); err != nil {
		return interop.Run{}, err
	}
	t := s.tenant(sub.Tenant)
	if t == nil {
		return interop.Run{}, s.notFound.run
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	rec := t.readableLocked(sub, runID)
	if rec == nil {
		return interop.Run{}, s.notFound.run
	}
	switch {
	case rec.run.Status.Terminal():
		return interop.Run{}, fmt.Errorf("memstore: cancel: %w", interop.ErrRunTerminal)
	case rec.run.Status == interop.StatusCancelling:
		return cloneRun(&rec.run), nil
	}
	at := s.now()
	rec.withdrawOpenInterruptsLocked()
	rec.run.CancelReason = reason
	rec.setStatusLocked(interop.StatusCancelling, at)
	appendLifecycleLocked(s, rec, EventCancelRequested, interop.RunCancelled{Reason: reason}, nil, at)
	rec.cancel(errCancelRequested)
	return cloneRun(&rec.run), nil
}

// withdrawOpenInterruptsLocked closes every open interrupt without
// resolving it.
func (rec *runRecord) withdrawOpenInterruptsLocked() {
	for _, in := range rec.run.Interrupts {
		rec.interrupts[in.ID].state = interruptWithdrawn
	}
	rec.run.Interrupts = nil
}

// execute runs the workflow on the calling goroutine (started by
// CreateRun, or CreateRun's own for an inline workflow) and records how it
// ended.
func (s *Store) execute(rc *RunContext) {
	defer s.running.Done()
	out, err := s.invoke(rc)
	s.finish(rc, out, err)
}

// invoke calls the workflow body, turning a panic into a logged failure so
// that one bad workflow cannot crash the host.
func (s *Store) invoke(rc *RunContext) (out json.RawMessage, err error) {
	rec := rc.rec
	defer func() {
		if p := recover(); p != nil {
			s.cfg.logger.Error("memstore: workflow panicked",
				"run", rec.run.ID, "workflow", rec.def.wf.ID, "panic", p, "stack", string(debug.Stack()))
			out, err = nil, errWorkflowPanicked
		}
	}()
	return rec.def.run(rc.ctx, rc)
}

// isErr reports whether err's tree holds an E (errors.AsType, whose
// target, unlike errors.As's, does not escape: a run that succeeds
// allocates nothing for the cases it never reaches).
func isErr[E error](err error) bool {
	_, ok := errors.AsType[E](err)
	return ok
}

// errWorkflowPanicked stands in for the result of a workflow that panicked.
var errWorkflowPanicked = errors.New("memstore: workflow panicked")

// finish appends the terminal event. A run that was asked to cancel ends
// cancelled whatever the workflow returned, unless it panicked: a panic is
// a bug and always shows as a failure.
func (s *Store) finish(rc *RunContext, out json.RawMessage, err error) {
	rec := rc.rec
	t := rec.tenant
	t.mu.Lock()
	defer t.mu.Unlock()

	// failure, when set, fails the run; cancelled, when set, cancels it.
	var (
		failure   *failError
		cancelled *string
	)
	switch {
	case errors.Is(err, errWorkflowPanicked):
		failure = &failError{code: codeInternal, msg: genericFailure}
	case rec.run.Status == interop.StatusCancelling:
		cancelled = &rec.run.CancelReason
	case err == nil && len(out) > 0 && !json.Valid(out):
		s.cfg.logger.Error("memstore: workflow returned invalid JSON output", "run", rec.run.ID, "workflow", rec.def.wf.ID)
		failure = &failError{code: codeInternal, msg: genericFailure}
	case err == nil:
	case isErr[*failError](err):
		failure, _ = errors.AsType[*failError](err)
	case isErr[*cancelError](err):
		ce, _ := errors.AsType[*cancelError](err)
		cancelled = &ce.reason
	case errors.Is(err, ErrCancelled):
		reason := "cancelled by workflow"
		cancelled = &reason
	case rc.ctx.Err() != nil:
		// Only Close cancels a run that is not cancelling.
		reason := "store closed"
		cancelled = &reason
	default:
		s.cfg.logger.Error("memstore: workflow failed", "run", rec.run.ID, "workflow", rec.def.wf.ID, "error", err)
		failure = &failError{code: codeInternal, msg: genericFailure}
	}
	at := s.now()
	rec.withdrawOpenInterruptsLocked()
	// Each payload is passed as its own type: appendLifecycleLocked boxes
	// none of them.
	switch {
	case failure != nil:
		rec.run.FailureMessage, rec.run.FailureCode, rec.run.Fault = failure.msg, failure.code, failure.fault
		rec.setStatusLocked(interop.StatusFailed, at)
		appendLifecycleLocked(s, rec, interop.EventRunFailed, interop.RunFailed{Error: interop.EventError{Code: failure.code, Message: failure.msg}}, nil, at)
	case cancelled != nil:
		rec.setStatusLocked(interop.StatusCancelled, at)
		appendLifecycleLocked(s, rec, interop.EventRunCancelled, interop.RunCancelled{Reason: *cancelled}, nil, at)
	default:
		rec.run.Output = bytes.Clone(out)
		rec.setStatusLocked(interop.StatusCompleted, at)
		appendLifecycleLocked(s, rec, interop.EventRunCompleted, interop.RunCompleted{Outputs: interop.OutputsOf(out)}, nil, at)
	}
	rec.settleLocked()
}

// settleLocked lets go of what a terminal run no longer needs: its
// context (cancelled, which also releases it from the store's), the
// artifacts' chunk state (no chunk follows) and the log's spare capacity.
// The run's log size becomes the hint for the workflow's next run.
func (rec *runRecord) settleLocked() {
	rec.cancel(nil)
	rec.cancel = nil
	rec.closed = nil
	rec.log.compact()
	rec.def.logHint = logHint{events: len(rec.log.events), payloadBytes: len(rec.log.payloads)}
}
