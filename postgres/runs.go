package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/isolation"
)

// Refusals that must read the same whether the thing is unknown or
// belongs to someone else (OpenWOP interop.md §Isolation): their text
// never names an id.
var (
	errRunNotFound       = fmt.Errorf("postgres: run: %w", interop.ErrNotFound)
	errInterruptNotFound = fmt.Errorf("postgres: interrupt: %w", interop.ErrNotFound)
	errWorkflowNotFound  = fmt.Errorf("postgres: workflow: %w", interop.ErrNotFound)
)

// EventCancelRequested is the vendor event recording a cancelRun request:
// the run moves to cancelling and its payload {"reason": …} keeps why until
// run.cancelled follows. OpenWOP registers no event for this step, so it is
// a vendor type (RFC 0171 §A.1); the embedded memstore writes the same.
const EventCancelRequested interop.EventType = "wopinterop.cancel-requested"

// querier is what reads need of a pool or a transaction.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// runColumns reads a whole interop.Run in one row; Run.Interrupts are the
// open interrupts in the order they were raised.
const runColumns = `r.id, r.tenant, r.workspace, r.principal, r.workflow_id, r.status, r.status_at,
	r.created_at, r.transport, r.context_id, r.messages, r.artifacts, r.output, r.failure_message,
	r.failure_code, r.fault, r.cancel_reason, r.last_sequence,
	(SELECT json_agg(i.spec ORDER BY i.step) FROM wopinterop_interrupts i
	 WHERE i.run_id = r.id AND i.state = 'open')`

func scanRun(row pgx.Row) (interop.Run, error) {
	var (
		r                                     interop.Run
		messages, artifacts, output, open     []byte
		status, transport                     string
		statusAt, createdAt                   time.Time
		failureMessage, failureCode, canceled string
	)
	err := row.Scan(&r.ID, &r.Tenant, &r.Workspace, &r.Principal, &r.WorkflowID, &status, &statusAt,
		&createdAt, &transport, &r.ContextID, &messages, &artifacts, &output, &failureMessage,
		&failureCode, &r.Fault, &canceled, &r.LastSequence, &open)
	if err != nil {
		return interop.Run{}, err
	}
	r.Status, r.Transport = interop.RunStatus(status), interop.Transport(transport)
	r.StatusAt, r.CreatedAt = statusAt.UTC(), createdAt.UTC()
	r.FailureMessage, r.FailureCode, r.CancelReason = failureMessage, failureCode, canceled
	if len(output) > 0 {
		r.Output = json.RawMessage(output)
	}
	if r.Messages, err = decodeMessages(messages); err != nil {
		return interop.Run{}, err
	}
	if r.Artifacts, err = decodeArtifacts(artifacts); err != nil {
		return interop.Run{}, err
	}
	if r.Interrupts, err = decodeInterrupts(open); err != nil {
		return interop.Run{}, err
	}
	return r, nil
}

// readRun reads a run the Subject may read: in its tenant and, when the
// Subject names a workspace, in that workspace. Anything else is
// errRunNotFound, exactly like an id never minted.
func readRun(ctx context.Context, q querier, sub interop.Subject, runID string) (interop.Run, error) {
	run, err := scanRun(q.QueryRow(ctx, `SELECT `+runColumns+` FROM wopinterop_runs r
		WHERE r.id = $1 AND r.tenant = $2 AND ($3 = '' OR r.workspace = $3)`, runID, sub.Tenant, sub.Workspace))
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return interop.Run{}, errRunNotFound
	case err != nil:
		return interop.Run{}, fmt.Errorf("postgres: read run: %w", err)
	}
	return run, nil
}

// lockedRun is the part of a run row a write needs, read under the row's
// lock: every write to a run (an event, a status, an interrupt) holds it,
// so writes to one run happen one at a time, in sequence order.
type lockedRun struct {
	id, tenant, workspace string
	status                interop.RunStatus
	cancelReason          string
	lastSeq               int64
	lastEventAt           time.Time
	leaseOwner            string
	leaseEpoch            int64
	effects               int
}

// lockRun locks runID's row; it returns nil when there is no such run.
func lockRun(ctx context.Context, tx pgx.Tx, runID string) (*lockedRun, error) {
	return lockWhere(ctx, tx, `id = $1`, runID)
}

// lockReadable is lockRun for a Subject: it finds and locks only a run the
// Subject may read, starting from the Subject's tenant, so a foreign
// caller never even waits on another tenant's run. Any other run is nil.
func lockReadable(ctx context.Context, tx pgx.Tx, sub interop.Subject, runID string) (*lockedRun, error) {
	return lockWhere(ctx, tx, `id = $1 AND tenant = $2 AND ($3 = '' OR workspace = $3)`, runID, sub.Tenant, sub.Workspace)
}

func lockWhere(ctx context.Context, tx pgx.Tx, where string, args ...any) (*lockedRun, error) {
	lr := &lockedRun{id: args[0].(string)}
	var status string
	err := tx.QueryRow(ctx, `SELECT tenant, workspace, status, cancel_reason, last_sequence, last_event_at,
			coalesce(lease_owner, ''), lease_epoch, effects
		FROM wopinterop_runs WHERE `+where+` FOR UPDATE`, args...).
		Scan(&lr.tenant, &lr.workspace, &status, &lr.cancelReason, &lr.lastSeq, &lr.lastEventAt,
			&lr.leaseOwner, &lr.leaseEpoch, &lr.effects)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("postgres: lock run: %w", err)
	}
	lr.status = interop.RunStatus(status)
	return lr, nil
}

// appendEvent completes ev as a RunEventDoc — a fresh eventId, the run id,
// the next sequence, a timestamp (now, unless the caller set one) no
// earlier than the run's previous event, the schema version when unset —
// appends it to the locked run's log with
// the run now at status (its status time moves only when the status
// changes), and queues the notification that wakes readers at commit.
func (s *Store) appendEvent(ctx context.Context, tx pgx.Tx, lr *lockedRun, ev interop.RunEvent, status interop.RunStatus) (interop.RunEvent, error) {
	ev.EventID = "evt-" + isolation.NewOpaque()
	ev.RunID = lr.id
	ev.Sequence = lr.lastSeq + 1
	if ev.Timestamp.IsZero() {
		ev.Timestamp = s.now()
	}
	if ev.Timestamp.Before(lr.lastEventAt) {
		ev.Timestamp = lr.lastEventAt.UTC()
	}
	if ev.SchemaVersion == 0 {
		ev.SchemaVersion = interop.SchemaVersion
	}
	ev.Status = status
	var chunk []byte
	if ev.Chunk != nil {
		doc := chunkDoc{Artifact: artifactDocOf(ev.Chunk.Artifact), Append: ev.Chunk.Append, LastChunk: ev.Chunk.LastChunk}
		var err error
		if chunk, err = encode(doc); err != nil {
			return ev, err
		}
	}
	_, err := tx.Exec(ctx, `
		WITH appended AS (
			INSERT INTO wopinterop_run_events (run_id, sequence, event_id, type, node_id, causation_id,
				at, schema_version, payload, status, chunk)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11))
		UPDATE wopinterop_runs SET last_sequence = $2, last_event_at = $7,
			status_at = CASE WHEN status = $10 THEN status_at ELSE $7 END, status = $10
		WHERE id = $1
		RETURNING pg_notify($12, $13)`,
		lr.id, ev.Sequence, ev.EventID, string(ev.Type), ev.NodeID, ev.CausationID,
		ev.Timestamp, ev.SchemaVersion, []byte(ev.Payload), string(status), chunk,
		notifyChannel, runNotice(lr.id, string(status)))
	if err != nil {
		return ev, fmt.Errorf("postgres: append %s: %w", ev.Type, err)
	}
	lr.lastSeq, lr.lastEventAt, lr.status = ev.Sequence, ev.Timestamp, status
	return ev, nil
}

// lifecycleEvent builds one of the store's own events. The payloads are
// this package's structs over validated values, so encoding cannot fail;
// if it ever did, the event would still be appended with an empty payload
// object and the failure logged, because the log must not skip a step.
func (s *Store) lifecycleEvent(typ interop.EventType, payload any) interop.RunEvent {
	ev, err := interop.NewRunEvent(typ, payload)
	if err != nil {
		s.cfg.logger.Error("postgres: encoding an event payload failed", "type", typ, "error", err)
		ev = interop.RunEvent{Type: typ, Payload: json.RawMessage(`{}`), SchemaVersion: interop.SchemaVersion}
	}
	return ev
}

// CreateRun starts a run of req.WorkflowID in the Subject's tenant and
// workspace: the run row, its run.started event, ContextID, Transport,
// Trace and first Message are committed in one transaction, and the
// workflow then executes in this replica under a lease. A repeat of an
// IdempotencyKey by the same tenant and principal returns the first run
// with created=false and starts nothing, also when the calls race on
// different replicas (a unique index decides); if that run lives in a
// workspace the Subject cannot read, the repeat is refused with an
// *interop.InputError on "idempotencyKey". Inputs are validated against
// the workflow's schema before anything is written, so a refusal takes
// neither a run nor the key.
func (s *Store) CreateRun(ctx context.Context, sub interop.Subject, req interop.CreateRunRequest) (interop.Run, bool, error) {
	if err := ctx.Err(); err != nil {
		return interop.Run{}, false, err
	}
	wf := s.workflow(sub.Tenant, req.WorkflowID)
	if wf == nil {
		return interop.Run{}, false, errWorkflowNotFound
	}
	if req.IdempotencyKey != "" {
		run, found, err := s.runByKey(ctx, s.pool, sub, req.IdempotencyKey)
		if err != nil || found {
			return run, false, err
		}
	}
	inputs := req.Inputs
	if len(inputs) == 0 {
		inputs = json.RawMessage(`{}`)
	}
	if err := validateJSON(wf.schema, "inputs", inputs); err != nil {
		return interop.Run{}, false, err
	}
	messages := []messageDoc{}
	if req.Message != nil {
		if err := validMessage(req.Message); err != nil {
			return interop.Run{}, false, err
		}
		messages = append(messages, messageDocOf(*req.Message))
	}
	messagesJSON, err := encode(messages)
	if err != nil {
		return interop.Run{}, false, err
	}
	id, err := isolation.NewID(sub.Tenant)
	if err != nil {
		return interop.Run{}, false, fmt.Errorf("postgres: mint run id: %w", err)
	}
	if err := s.reserveExecution(); err != nil {
		return interop.Run{}, false, err
	}
	started := false
	defer func() {
		if !started {
			s.running.Done()
		}
	}()
	var key *string
	if req.IdempotencyKey != "" {
		key = &req.IdempotencyKey
	}
	var (
		run     interop.Run
		created bool
	)
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		at := s.now()
		tag, err := tx.Exec(ctx, `
			INSERT INTO wopinterop_runs (id, tenant, workspace, principal, workflow_id, status, status_at,
				created_at, last_event_at, transport, context_id, idempotency_key, inputs, trace_parent,
				trace_state, trust_boundary, messages, lease_owner, lease_epoch, lease_until)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, 1,
				now() + make_interval(secs => $17))
			ON CONFLICT (tenant, principal, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING`,
			id, sub.Tenant, sub.Workspace, sub.Principal, wf.wf.ID, string(interop.StatusRunning), at,
			string(req.Transport), req.ContextID, key, []byte(inputs), req.Trace.TraceParent,
			req.Trace.TraceState, string(req.TrustBoundary), messagesJSON, s.owner, s.cfg.leaseTTL.Seconds())
		if err != nil {
			return fmt.Errorf("postgres: create run: %w", err)
		}
		if tag.RowsAffected() == 0 {
			// The key was taken by a creation that committed meanwhile.
			created = false
			var found bool
			run, found, err = s.runByKey(ctx, tx, sub, req.IdempotencyKey)
			if err == nil && !found {
				err = errors.New("postgres: create run: idempotency key conflict without a run")
			}
			return err
		}
		created = true
		lr := &lockedRun{id: id, tenant: sub.Tenant, workspace: sub.Workspace, status: interop.StatusRunning,
			lastSeq: -1, lastEventAt: at, leaseOwner: s.owner, leaseEpoch: 1}
		ev := s.lifecycleEvent(interop.EventRunStarted, interop.RunStarted{WorkflowID: wf.wf.ID, Transport: req.Transport})
		ev.Timestamp = at // the run's creation and status time
		if _, err := s.appendEvent(ctx, tx, lr, ev, interop.StatusRunning); err != nil {
			return err
		}
		run = interop.Run{
			ID: id, Tenant: sub.Tenant, Workspace: sub.Workspace, Principal: sub.Principal,
			WorkflowID: wf.wf.ID, Status: interop.StatusRunning, StatusAt: at, CreatedAt: at,
			Transport: req.Transport, ContextID: req.ContextID, LastSequence: 0,
		}
		if req.Message != nil {
			run.Messages = []interop.Message{messages[0].message()}
		}
		return nil
	})
	if err != nil {
		return interop.Run{}, false, err
	}
	if !created {
		return run, false, nil
	}
	s.hub.wake(runKey(id))
	started = true
	s.startExecution(&execution{
		runID: id, tenant: sub.Tenant, def: wf, inputs: inputs, trace: req.Trace, epoch: 1,
	})
	return run, true, nil
}

// runByKey finds the run tenant and principal created with key.
func (s *Store) runByKey(ctx context.Context, q querier, sub interop.Subject, key string) (interop.Run, bool, error) {
	run, err := scanRun(q.QueryRow(ctx, `SELECT `+runColumns+` FROM wopinterop_runs r
		WHERE r.tenant = $1 AND r.principal = $2 AND r.idempotency_key = $3`, sub.Tenant, sub.Principal, key))
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return interop.Run{}, false, nil
	case err != nil:
		return interop.Run{}, false, fmt.Errorf("postgres: read run by idempotency key: %w", err)
	case sub.Workspace != "" && run.Workspace != sub.Workspace:
		return interop.Run{}, true, &interop.InputError{Field: "idempotencyKey", Reason: "already used for a run in another workspace"}
	}
	return run, true, nil
}

func validMessage(m *interop.Message) error {
	for _, p := range m.Parts {
		if p.Kind == interop.PartData && len(p.Data) > 0 && !json.Valid(p.Data) {
			return &interop.InputError{Field: "message", Reason: "data part is not valid JSON"}
		}
	}
	return nil
}

// GetRun reads the run, or ErrNotFound when it does not exist or the
// Subject may not read it.
func (s *Store) GetRun(ctx context.Context, sub interop.Subject, runID string) (interop.Run, error) {
	if err := ctx.Err(); err != nil {
		return interop.Run{}, err
	}
	return readRun(ctx, s.pool, sub, runID)
}

// CancelRun asks a run to stop, from any replica: it withdraws any open
// interrupt, moves the run to cancelling ([EventCancelRequested] with the
// reason) and wakes the replica executing the workflow, which cancels its
// context; run.cancelled follows when the workflow returns (or at once
// when a replica takes over a run whose executor died). A run already
// cancelling is returned unchanged. A terminal run is ErrRunTerminal and
// nothing is appended (OpenWOP interop map, a2a.operations).
func (s *Store) CancelRun(ctx context.Context, sub interop.Subject, runID, reason string) (interop.Run, error) {
	if err := ctx.Err(); err != nil {
		return interop.Run{}, err
	}
	var run interop.Run
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		lr, err := lockReadable(ctx, tx, sub, runID)
		switch {
		case err != nil:
			return err
		case lr == nil:
			return errRunNotFound
		case lr.status.Terminal():
			return fmt.Errorf("postgres: cancel: %w", interop.ErrRunTerminal)
		case lr.status != interop.StatusCancelling:
			if err := withdrawOpen(ctx, tx, runID, "cancelled"); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `UPDATE wopinterop_runs SET cancel_reason = $2 WHERE id = $1`, runID, reason); err != nil {
				return fmt.Errorf("postgres: cancel: %w", err)
			}
			ev := s.lifecycleEvent(EventCancelRequested, interop.RunCancelled{Reason: reason})
			if _, err := s.appendEvent(ctx, tx, lr, ev, interop.StatusCancelling); err != nil {
				return err
			}
		}
		run, err = readRun(ctx, tx, sub, runID)
		return err
	})
	if err != nil {
		return interop.Run{}, err
	}
	s.hub.wake(runKey(runID))
	s.cancelLocal(runID, errCancelRequested)
	return run, nil
}

// withdrawOpen closes every open interrupt of a run without resolving it;
// why is "cancelled" (the run is ending) or "workflow" (it stopped
// waiting).
func withdrawOpen(ctx context.Context, tx pgx.Tx, runID, why string) error {
	res, err := encode(resolutionDoc{Withdrawn: why})
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `UPDATE wopinterop_interrupts SET state = 'withdrawn', resolution = $2
		WHERE run_id = $1 AND state = 'open'`, runID, res); err != nil {
		return fmt.Errorf("postgres: withdraw interrupts: %w", err)
	}
	return nil
}

// suspendedStatus is the status a run's open interrupts imply: the first
// open interrupt's suspended status (OpenWOP interrupt.md §Payload), or
// running when none is open.
func suspendedStatus(ctx context.Context, tx pgx.Tx, runID string) (interop.RunStatus, error) {
	var kind string
	err := tx.QueryRow(ctx, `SELECT kind FROM wopinterop_interrupts WHERE run_id = $1 AND state = 'open'
		ORDER BY step LIMIT 1`, runID).Scan(&kind)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return interop.StatusRunning, nil
	case err != nil:
		return "", fmt.Errorf("postgres: read open interrupts: %w", err)
	}
	return interop.InterruptKind(kind).SuspendedStatus(), nil
}
