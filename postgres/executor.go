package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wopinterop/wopinterop/interop"
)

// An execution is a run's workflow executing in this replica under a
// lease: the run row names this replica (lease_owner) and the claim
// (lease_epoch), and every write the workflow makes checks both under the
// row lock, so a replica that lost the lease — it stalled past the TTL and
// another took the run over — can no longer write to the run.
type execution struct {
	runID  string
	tenant string
	def    *workflowEntry
	inputs json.RawMessage
	trace  interop.TraceContext
	epoch  int64
	// replay is how many effects earlier executions recorded: the first
	// replay effect calls are answered from the record.
	replay int
	// skip ends the run without calling the workflow: it was cancelling
	// when this replica took it over.
	skip bool

	ctx    context.Context
	cancel context.CancelCauseFunc

	// effectMu serialises the workflow's effects, whose order is what a
	// replay follows; steps counts the effects performed so far.
	effectMu sync.Mutex
	steps    int
}

// errLeaseFenced reports a write by an execution whose lease is gone.
var errLeaseFenced = errors.New("postgres: this replica no longer holds the run's lease")

// fence checks that the locked run is still leased to ex.
func (s *Store) fence(lr *lockedRun, ex *execution) error {
	if lr == nil || lr.leaseOwner != s.owner || lr.leaseEpoch != ex.epoch {
		return errLeaseFenced
	}
	return nil
}

// reserveExecution accounts an execution about to start, unless the
// store is closed.
func (s *Store) reserveExecution() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	s.running.Add(1)
	return nil
}

// startExecution starts ex on its own goroutine; the caller reserved it.
// An execution of the same run left over from an earlier claim is told it
// lost the lease.
func (s *Store) startExecution(ex *execution) {
	ex.ctx, ex.cancel = context.WithCancelCause(s.runsCtx)
	s.mu.Lock()
	if old := s.local[ex.runID]; old != nil {
		old.cancel(errLeaseLost)
	}
	s.local[ex.runID] = ex
	s.mu.Unlock()
	go s.execute(ex)
}

// cancelLocal cancels the execution of runID in this replica, if any.
func (s *Store) cancelLocal(runID string, cause error) {
	s.mu.Lock()
	ex := s.local[runID]
	s.mu.Unlock()
	if ex != nil {
		ex.cancel(cause)
	}
}

func (s *Store) execute(ex *execution) {
	defer s.running.Done()
	defer func() {
		s.mu.Lock()
		if s.local[ex.runID] == ex {
			delete(s.local, ex.runID)
		}
		s.mu.Unlock()
		ex.cancel(nil)
	}()
	var (
		out json.RawMessage
		err error
	)
	if !ex.skip {
		out, err = s.invoke(ex)
	}
	s.recovering("finishing a run", func() { s.finish(ex, out, err) })
}

// invoke calls the workflow body, turning a panic into a logged failure so
// that one bad workflow cannot crash the host.
func (s *Store) invoke(ex *execution) (out json.RawMessage, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.cfg.logger.Error("postgres: workflow panicked",
				"run", ex.runID, "workflow", ex.def.wf.ID, "panic", p, "stack", string(debug.Stack()))
			out, err = nil, errWorkflowPanicked
		}
	}()
	return ex.def.run(ex.ctx, &RunContext{s: s, ex: ex})
}

// errWorkflowPanicked stands in for the result of a workflow that panicked.
var errWorkflowPanicked = errors.New("postgres: workflow panicked")

// finishTimeout bounds the attempts to record how a run ended.
const finishTimeout = 30 * time.Second

// finish appends the terminal event. A run that was asked to cancel ends
// cancelled whatever the workflow returned, unless it panicked: a panic is
// a bug and always shows as a failure. A workflow that returned because
// this replica is closing or lost the lease ends nothing: the run goes on
// in the replica that takes it over.
func (s *Store) finish(ex *execution, out json.RawMessage, werr error) {
	cause := context.Cause(ex.ctx)
	panicked := errors.Is(werr, errWorkflowPanicked)
	if errors.Is(cause, errLeaseLost) || errors.Is(cause, errStoreClosed) && werr != nil && !panicked {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), finishTimeout)
	defer cancel()
	for attempt := 1; ; attempt++ {
		err := s.inTx(ctx, func(tx pgx.Tx) error {
			lr, err := lockRun(ctx, tx, ex.runID)
			if err != nil {
				return err
			}
			if err := s.fence(lr, ex); err != nil {
				return err
			}
			return s.end(ctx, tx, lr, ex, out, werr)
		})
		switch {
		case err == nil:
			s.hub.wake(runKey(ex.runID))
			return
		case errors.Is(err, errLeaseFenced):
			return
		case attempt == 3 || !s.sleep(time.Duration(attempt)*100*time.Millisecond):
			// The lease runs out and a replica takes the run over.
			s.cfg.logger.Error("postgres: recording the end of a run failed", "run", ex.runID, "error", err)
			return
		}
	}
}

// end records the outcome in the transaction holding the run's lock.
func (s *Store) end(ctx context.Context, tx pgx.Tx, lr *lockedRun, ex *execution, out json.RawMessage, werr error) error {
	var (
		fe        *failError
		ce        *cancelError
		failure   *failError
		cancelled *string
	)
	switch {
	case errors.Is(werr, errWorkflowPanicked):
		failure = &failError{code: codeInternal, msg: genericFailure}
	case lr.status == interop.StatusCancelling:
		cancelled = &lr.cancelReason
	case werr == nil && len(out) > 0 && !json.Valid(out):
		s.cfg.logger.Error("postgres: workflow returned invalid JSON output", "run", ex.runID, "workflow", ex.def.wf.ID)
		failure = &failError{code: codeInternal, msg: genericFailure}
	case werr == nil:
	case errors.As(werr, &fe):
		failure = fe
	case errors.As(werr, &ce):
		cancelled = &ce.reason
	case errors.Is(werr, ErrCancelled):
		reason := "cancelled by workflow"
		cancelled = &reason
	default:
		s.cfg.logger.Error("postgres: workflow failed", "run", ex.runID, "workflow", ex.def.wf.ID, "error", werr)
		failure = &failError{code: codeInternal, msg: genericFailure}
	}
	var (
		status interop.RunStatus
		ev     interop.RunEvent
		output []byte
	)
	switch {
	case failure != nil:
		status = interop.StatusFailed
		ev = s.lifecycleEvent(interop.EventRunFailed, interop.RunFailed{Error: interop.EventError{Code: failure.code, Message: failure.msg}})
	case cancelled != nil:
		status = interop.StatusCancelled
		ev = s.lifecycleEvent(interop.EventRunCancelled, interop.RunCancelled{Reason: *cancelled})
	default:
		status = interop.StatusCompleted
		if len(out) > 0 {
			output = bytes.Clone(out)
		}
		ev = s.lifecycleEvent(interop.EventRunCompleted, interop.RunCompleted{Outputs: interop.OutputsOf(out)})
	}
	if err := withdrawOpen(ctx, tx, ex.runID, "cancelled"); err != nil {
		return err
	}
	var code, msg string
	fault := false
	if failure != nil {
		code, msg, fault = failure.code, failure.msg, failure.fault
	}
	_, err := tx.Exec(ctx, `UPDATE wopinterop_runs SET output = $2, failure_code = $3, failure_message = $4,
			fault = $5, lease_owner = NULL, lease_until = NULL
		WHERE id = $1`, ex.runID, output, code, msg, fault)
	if err != nil {
		return fmt.Errorf("postgres: end run: %w", err)
	}
	_, err = s.appendEvent(ctx, tx, lr, ev, status)
	return err
}

// maintain renews this replica's leases and takes over runs whose leases
// expired, every third of the lease TTL, and applies retention, until the
// store closes.
func (s *Store) maintain() {
	defer s.loops.Done()
	leases := time.NewTicker(s.cfg.leaseTTL / 3)
	defer leases.Stop()
	var purge <-chan time.Time
	if every := s.purgePeriod(); every > 0 {
		t := time.NewTicker(every)
		defer t.Stop()
		purge = t.C
	}
	s.recovering("takeover", s.takeOver)
	for {
		select {
		case <-s.runsCtx.Done():
			return
		case <-leases.C:
			s.recovering("lease renewal", s.renewLeases)
			s.recovering("takeover", s.takeOver)
		case <-purge:
			s.recovering("retention", s.purgeExpired)
		}
	}
}

// renewLeases extends the leases of the runs executing here. An
// execution whose lease is gone stops without writing; one whose run is
// cancelling (a notification that did not arrive) is cancelled.
func (s *Store) renewLeases() {
	s.mu.Lock()
	ids := make([]string, 0, len(s.local))
	epochs := make([]int64, 0, len(s.local))
	execs := make([]*execution, 0, len(s.local))
	for id, ex := range s.local {
		ids, epochs, execs = append(ids, id), append(epochs, ex.epoch), append(execs, ex)
	}
	s.mu.Unlock()
	if len(ids) == 0 {
		return
	}
	rows, err := s.pool.Query(s.runsCtx, `
		UPDATE wopinterop_runs r SET lease_until = now() + make_interval(secs => $3)
		FROM unnest($1::text[], $2::bigint[]) AS l (id, epoch)
		WHERE r.id = l.id AND r.lease_owner = $4 AND r.lease_epoch = l.epoch AND r.lease_until IS NOT NULL
		RETURNING r.id, r.status`, ids, epochs, s.cfg.leaseTTL.Seconds(), s.owner)
	if err != nil {
		s.logBackground("renewing leases failed", err)
		return
	}
	held := map[string]string{}
	var id, status string
	if _, err := pgx.ForEachRow(rows, []any{&id, &status}, func() error {
		held[id] = status
		return nil
	}); err != nil {
		s.logBackground("renewing leases failed", err)
		return
	}
	for _, ex := range execs {
		switch status, ok := held[ex.runID]; {
		case !ok:
			ex.cancel(errLeaseLost)
		case status == string(interop.StatusCancelling):
			ex.cancel(errCancelRequested)
		}
	}
}

// takeOverBatch bounds the runs one takeover claims.
const takeOverBatch = 32

// takeOver claims live runs whose lease expired — their replica died or
// closed — among the workflows registered here, and executes each again
// from the start, replaying its recorded effects. A run that was
// cancelling ends cancelled without calling the workflow.
func (s *Store) takeOver() {
	s.mu.Lock()
	var tenants, workflows []string
	for tenant, t := range s.workflows {
		for id := range t.byID {
			tenants, workflows = append(tenants, tenant), append(workflows, id)
		}
	}
	s.mu.Unlock()
	if len(tenants) == 0 {
		return
	}
	rows, err := s.pool.Query(s.runsCtx, `
		UPDATE wopinterop_runs r SET lease_owner = $1, lease_epoch = r.lease_epoch + 1,
			lease_until = now() + make_interval(secs => $2)
		FROM (SELECT id FROM wopinterop_runs
		      WHERE lease_until IS NOT NULL AND lease_until < now()
		        AND (tenant, workflow_id) IN (SELECT * FROM unnest($3::text[], $4::text[]))
		      ORDER BY lease_until LIMIT $5
		      FOR UPDATE SKIP LOCKED) expired
		WHERE r.id = expired.id
		RETURNING r.id, r.tenant, r.workflow_id, r.status, r.lease_epoch, r.effects, r.inputs,
			r.trace_parent, r.trace_state`,
		s.owner, s.cfg.leaseTTL.Seconds(), tenants, workflows, takeOverBatch)
	if err != nil {
		s.logBackground("taking runs over failed", err)
		return
	}
	var claimed []*execution
	for rows.Next() {
		ex := &execution{}
		var workflowID, status string
		var inputs []byte
		if err := rows.Scan(&ex.runID, &ex.tenant, &workflowID, &status, &ex.epoch, &ex.replay, &inputs,
			&ex.trace.TraceParent, &ex.trace.TraceState); err != nil {
			rows.Close()
			s.logBackground("taking runs over failed", err)
			return
		}
		ex.inputs = inputs
		ex.skip = status == string(interop.StatusCancelling)
		ex.def = s.workflow(ex.tenant, workflowID)
		claimed = append(claimed, ex)
	}
	if err := rows.Err(); err != nil {
		s.logBackground("taking runs over failed", err)
		return
	}
	for _, ex := range claimed {
		// The claim stands even if this replica closes now: Close releases
		// it again once the loops have stopped.
		if ex.def == nil || s.reserveExecution() != nil {
			continue
		}
		s.cfg.logger.Info("postgres: took a run over", "run", ex.runID, "effects", ex.replay)
		s.startExecution(ex)
	}
}

// logBackground logs a failure of a background task, unless it is the
// store closing.
func (s *Store) logBackground(what string, err error) {
	if s.runsCtx.Err() == nil {
		s.cfg.logger.Warn("postgres: "+what, "error", err)
	}
}
