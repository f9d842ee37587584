package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/isolation"
)

// RunContext is a workflow's handle on its own run. It is valid for the
// life of the workflow call; after the run ended its writes fail with
// ErrRunTerminal.
type RunContext struct {
	s  *Store
	ex *execution
}

// RunID is the run's tenant-bound id.
func (rc *RunContext) RunID() string { return rc.ex.runID }

// Inputs returns a copy of the validated run inputs (a JSON object; {} when
// the caller sent none).
func (rc *RunContext) Inputs() json.RawMessage { return bytes.Clone(rc.ex.inputs) }

// Trace is the W3C trace context the run was started with.
func (rc *RunContext) Trace() interop.TraceContext { return rc.ex.trace }

// Resolution is how an interrupt was answered.
type Resolution struct {
	// Outcome is accept, decline or cancel (an empty request outcome is
	// accept).
	Outcome interop.ResolveOutcome
	// Value is the validated resume value. For a declined approval it is
	// {"action":"reject"}; for other declines and for cancel it is nil.
	Value json.RawMessage
	// Resolver is the Subject that resolved the interrupt.
	Resolver interop.Subject
}

// ErrNondeterministic reports a workflow that, executed again after a
// takeover, made a different effect call than the one recorded at the same
// step (another kind, interrupt key or artifact id). See [WorkflowFunc].
var ErrNondeterministic = errors.New("postgres: workflow made a different effect than the recorded one")

// errWithdrawnBefore answers a replayed Interrupt that an earlier execution
// stopped waiting for.
var errWithdrawnBefore = fmt.Errorf("postgres: interrupt was withdrawn when the workflow stopped waiting: %w", context.DeadlineExceeded)

// nodeIDGrammar is the nodeId grammar of ids.schema.json: node.suspended
// and interrupt.resolved carry the node that suspended.
var nodeIDGrammar = regexp.MustCompile(`^[A-Za-z0-9._~:-]{1,128}$`)

// writeTimeout bounds one effect's transaction. Effects use their own
// context, not the workflow's: a run being cancelled may still publish.
const writeTimeout = 30 * time.Second

// Interrupt suspends the run on a new interrupt and blocks until it is
// resolved — on any replica — or ctx is done. The store mints spec.ID
// (tenant-bound) and sets spec.CreatedAt; the run moves to
// spec.Kind.SuspendedStatus() with a node.suspended event. spec.Kind must
// be one that suspends (OpenWOP interrupt.md §Payload) and spec.Key must be
// set and not yet used in this run.
//
// When ctx is done first, Interrupt returns ctx.Err(). If the run itself
// is still live (the workflow gave up waiting on its own deadline), the
// interrupt is withdrawn: it leaves Run.Interrupts, the run goes back to
// running and an interrupt.resolved event with reason "withdrawn" records
// it; later resolve attempts get ErrAlreadyResolved.
//
// After a takeover, an Interrupt that the run already raised is not raised
// again: its recorded resolution is returned, or awaited if it is still
// open.
func (rc *RunContext) Interrupt(ctx context.Context, spec interop.Interrupt) (Resolution, error) {
	if err := ctx.Err(); err != nil {
		return Resolution{}, err
	}
	if spec.Kind.SuspendedStatus() == "" {
		return Resolution{}, fmt.Errorf("postgres: interrupt kind %q does not suspend a run", spec.Kind)
	}
	if spec.Key == "" {
		return Resolution{}, errors.New("postgres: interrupt key is empty")
	}
	if spec.NodeID == "" {
		spec.NodeID = spec.Key
	}
	if !nodeIDGrammar.MatchString(spec.NodeID) {
		return Resolution{}, fmt.Errorf("postgres: interrupt %q: node id %q is not 1–128 characters of [A-Za-z0-9._~:-] (set Interrupt.NodeID)", spec.Key, spec.NodeID)
	}
	if len(spec.ResumeSchema) > 0 {
		if _, err := rc.s.schemas.Compile(spec.ResumeSchema); err != nil {
			return Resolution{}, fmt.Errorf("postgres: interrupt %q: resume schema: %w", spec.Key, err)
		}
	}
	id, err := rc.raise(spec)
	if err != nil {
		return Resolution{}, err
	}
	return rc.await(ctx, id)
}

// raise records the interrupt as the workflow's next effect, or finds the
// one a replay step recorded, and returns its id.
func (rc *RunContext) raise(spec interop.Interrupt) (string, error) {
	s, ex := rc.s, rc.ex
	ex.effectMu.Lock()
	defer ex.effectMu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	step := ex.steps
	if step < ex.replay {
		var id string
		err := s.pool.QueryRow(ctx, `SELECT i.id FROM wopinterop_run_effects e
			JOIN wopinterop_interrupts i ON i.run_id = e.run_id AND i.key = e.key
			WHERE e.run_id = $1 AND e.step = $2 AND e.kind = 'interrupt' AND e.key = $3`,
			ex.runID, step, spec.Key).Scan(&id)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return "", fmt.Errorf("%w: step %d is not interrupt %q", ErrNondeterministic, step, spec.Key)
		case err != nil:
			return "", fmt.Errorf("postgres: replay interrupt: %w", err)
		}
		ex.steps++
		return id, nil
	}
	var id string
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		lr, err := lockRun(ctx, tx, ex.runID)
		if err != nil {
			return err
		}
		if err := s.fence(lr, ex); err != nil {
			return err
		}
		switch {
		case lr.status.Terminal():
			return fmt.Errorf("postgres: interrupt: %w", interop.ErrRunTerminal)
		case lr.status == interop.StatusCancelling:
			return fmt.Errorf("postgres: interrupt: %w", ErrCancelled)
		}
		var used bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM wopinterop_interrupts WHERE run_id = $1 AND key = $2)`,
			ex.runID, spec.Key).Scan(&used); err != nil {
			return fmt.Errorf("postgres: interrupt: %w", err)
		}
		if used {
			return fmt.Errorf("postgres: interrupt key %q was already invoked in this run", spec.Key)
		}
		if id, err = isolation.NewID(ex.tenant); err != nil {
			return fmt.Errorf("postgres: mint interrupt id: %w", err)
		}
		status, err := suspendedStatus(ctx, tx, ex.runID)
		if err != nil {
			return err
		}
		if status == interop.StatusRunning {
			status = spec.Kind.SuspendedStatus()
		}
		ev := s.lifecycleEvent(interop.EventNodeSuspended, interop.NodeSuspended{NodeID: spec.NodeID, InterruptID: id, Kind: spec.Kind, Key: spec.Key})
		ev.NodeID = spec.NodeID
		if ev, err = s.appendEvent(ctx, tx, lr, ev, status); err != nil {
			return err
		}
		in := spec
		in.ID, in.CreatedAt = id, ev.Timestamp
		doc, err := encode(interruptDocOf(in))
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `
			WITH raised AS (
				INSERT INTO wopinterop_interrupts (run_id, id, step, key, kind, spec)
				VALUES ($1, $2, $3, $4, $5, $6)),
			effect AS (
				INSERT INTO wopinterop_run_effects (run_id, step, kind, key) VALUES ($1, $3, 'interrupt', $4))
			UPDATE wopinterop_runs SET effects = $3 + 1 WHERE id = $1`,
			ex.runID, id, step, spec.Key, string(spec.Kind), doc)
		if err != nil {
			return fmt.Errorf("postgres: record interrupt: %w", err)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	ex.steps++
	s.hub.wake(runKey(ex.runID))
	return id, nil
}

// await waits for interrupt id to be resolved: woken by the notification
// of the resolving replica, or by the poll.
func (rc *RunContext) await(ctx context.Context, id string) (Resolution, error) {
	s, ex := rc.s, rc.ex
	w := s.hub.join(runKey(ex.runID))
	defer w.leave()
	for {
		ch := w.C()
		state, res, err := s.interruptState(ctx, s.pool, ex.runID, id)
		switch {
		case err != nil && ctx.Err() == nil:
			s.cfg.logger.Warn("postgres: reading an interrupt failed; retrying", "run", ex.runID, "error", err)
		case state == "resolved":
			return res.resolution(), nil
		case state == "withdrawn" && res.Withdrawn == "workflow":
			return Resolution{}, errWithdrawnBefore
		}
		// Open, or withdrawn by a cancel whose context cancellation is on
		// its way: wait.
		if err := s.wait(ctx, ch); err != nil {
			return rc.stopWaiting(ctx, id)
		}
	}
}

func (d *resolutionDoc) resolution() Resolution {
	return Resolution{Outcome: d.Outcome, Value: d.Value, Resolver: d.Resolver.subject()}
}

// interruptState reads an interrupt's state and resolution.
func (s *Store) interruptState(ctx context.Context, q querier, runID, id string) (string, *resolutionDoc, error) {
	var (
		state string
		raw   []byte
	)
	err := q.QueryRow(ctx, `SELECT state, resolution FROM wopinterop_interrupts WHERE run_id = $1 AND id = $2`, runID, id).Scan(&state, &raw)
	if err != nil {
		return "", nil, fmt.Errorf("postgres: read interrupt: %w", err)
	}
	res := &resolutionDoc{}
	if raw != nil {
		if err := decode(raw, res); err != nil {
			return "", nil, err
		}
	}
	return state, res, nil
}

// stopWaiting handles an Interrupt whose ctx is done. A resolution that won
// the race is still returned: it was committed to the log.
func (rc *RunContext) stopWaiting(ctx context.Context, id string) (Resolution, error) {
	s, ex := rc.s, rc.ex
	wctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	var won *Resolution
	err := s.inTx(wctx, func(tx pgx.Tx) error {
		won = nil
		lr, err := lockRun(wctx, tx, ex.runID)
		if err != nil {
			return err
		}
		if err := s.fence(lr, ex); err != nil {
			return err
		}
		state, res, err := s.interruptState(wctx, tx, ex.runID, id)
		if err != nil {
			return err
		}
		if state == "resolved" {
			r := res.resolution()
			won = &r
			return nil
		}
		// When the run's own context is done, a cancel or this replica's
		// end is stopping the run, which withdraws its interrupts itself.
		if state != "open" || ex.ctx.Err() != nil || lr.status.Terminal() || lr.status == interop.StatusCancelling {
			return nil
		}
		doc, err := encode(resolutionDoc{Withdrawn: "workflow"})
		if err != nil {
			return err
		}
		var spec []byte
		if err := tx.QueryRow(wctx, `UPDATE wopinterop_interrupts SET state = 'withdrawn', resolution = $3
			WHERE run_id = $1 AND id = $2 RETURNING spec`, ex.runID, id, doc).Scan(&spec); err != nil {
			return fmt.Errorf("postgres: withdraw interrupt: %w", err)
		}
		var in interruptDoc
		if err := decode(spec, &in); err != nil {
			return err
		}
		status, err := suspendedStatus(wctx, tx, ex.runID)
		if err != nil {
			return err
		}
		ev := s.lifecycleEvent(interop.EventInterruptResolved, interop.InterruptResolved{
			NodeID: in.NodeID, InterruptID: id, Kind: in.Kind, Reason: "withdrawn",
		})
		ev.NodeID = in.NodeID
		_, err = s.appendEvent(wctx, tx, lr, ev, status)
		return err
	})
	if err != nil && !errors.Is(err, errLeaseFenced) {
		s.cfg.logger.Warn("postgres: withdrawing an interrupt failed", "run", ex.runID, "error", err)
	}
	if won != nil {
		return *won, nil
	}
	s.hub.wake(runKey(ex.runID))
	return Resolution{}, ctx.Err()
}

// PublishArtifact appends an artifact chunk to the run with an
// artifact.created event; the status does not change. With
// appendChunk=false the artifact a.ID is created (or replaced, when it
// exists); with appendChunk=true a's parts extend the existing artifact
// a.ID, which must exist and must not have received its last chunk. Name,
// Description and Metadata of an appended chunk replace the stored ones
// when set. The artifact id stays stable across reads (OpenWOP interop
// map, a2a.fields). After a takeover, a chunk the run already published is
// not published again.
func (rc *RunContext) PublishArtifact(a interop.Artifact, appendChunk, lastChunk bool) error {
	if a.ID == "" {
		return errors.New("postgres: artifact id is empty")
	}
	for _, p := range a.Parts {
		if p.Kind == interop.PartData && len(p.Data) > 0 && !json.Valid(p.Data) {
			return fmt.Errorf("postgres: artifact %q: data part is not valid JSON", a.ID)
		}
	}
	s, ex := rc.s, rc.ex
	ex.effectMu.Lock()
	defer ex.effectMu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	step := ex.steps
	if step < ex.replay {
		var recorded bool
		err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM wopinterop_run_effects
			WHERE run_id = $1 AND step = $2 AND kind = 'artifact' AND key = $3)`, ex.runID, step, a.ID).Scan(&recorded)
		switch {
		case err != nil:
			return fmt.Errorf("postgres: replay artifact: %w", err)
		case !recorded:
			return fmt.Errorf("%w: step %d is not artifact %q", ErrNondeterministic, step, a.ID)
		}
		ex.steps++
		return nil
	}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		lr, err := lockRun(ctx, tx, ex.runID)
		if err != nil {
			return err
		}
		if err := s.fence(lr, ex); err != nil {
			return err
		}
		if lr.status.Terminal() {
			return fmt.Errorf("postgres: publish artifact: %w", interop.ErrRunTerminal)
		}
		var raw []byte
		if err := tx.QueryRow(ctx, `SELECT artifacts FROM wopinterop_runs WHERE id = $1`, ex.runID).Scan(&raw); err != nil {
			return fmt.Errorf("postgres: publish artifact: %w", err)
		}
		var docs []artifactDoc
		if err := decode(raw, &docs); err != nil {
			return err
		}
		if docs, err = mergeArtifact(docs, a, appendChunk, lastChunk); err != nil {
			return err
		}
		merged, err := encode(docs)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `
			WITH effect AS (
				INSERT INTO wopinterop_run_effects (run_id, step, kind, key) VALUES ($1, $2, 'artifact', $3))
			UPDATE wopinterop_runs SET artifacts = $4, effects = $2 + 1 WHERE id = $1`,
			ex.runID, step, a.ID, merged)
		if err != nil {
			return fmt.Errorf("postgres: publish artifact: %w", err)
		}
		unregistered := false
		ev := s.lifecycleEvent(interop.EventArtifactCreated, interop.ArtifactCreated{
			ArtifactID: a.ID, ArtifactType: artifactType, Summary: a.Name, Registered: &unregistered,
		})
		ev.Chunk = &interop.ArtifactChunk{Artifact: a, Append: appendChunk, LastChunk: lastChunk}
		_, err = s.appendEvent(ctx, tx, lr, ev, lr.status)
		return err
	})
	if err != nil {
		return err
	}
	ex.steps++
	s.hub.wake(runKey(ex.runID))
	return nil
}

// artifactType is the artifact.created artifactType of every artifact the
// store publishes: a host-local type, so the payload says registered:
// false (RFC 0071).
const artifactType = "artifact"

// mergeArtifact applies one chunk to a run's artifacts.
func mergeArtifact(docs []artifactDoc, a interop.Artifact, appendChunk, lastChunk bool) ([]artifactDoc, error) {
	i := -1
	for j := range docs {
		if docs[j].ID == a.ID {
			i = j
			break
		}
	}
	chunk := artifactDocOf(a)
	switch {
	case appendChunk && i < 0:
		return nil, fmt.Errorf("postgres: append to unknown artifact %q", a.ID)
	case appendChunk && docs[i].Closed:
		return nil, fmt.Errorf("postgres: artifact %q already received its last chunk", a.ID)
	case appendChunk:
		d := &docs[i]
		d.Parts = append(d.Parts, chunk.Parts...)
		if chunk.Name != "" {
			d.Name = chunk.Name
		}
		if chunk.Description != "" {
			d.Description = chunk.Description
		}
		if chunk.Metadata != nil {
			d.Metadata = chunk.Metadata
		}
	case i >= 0:
		docs[i] = chunk
	default:
		i = len(docs)
		docs = append(docs, chunk)
	}
	docs[i].Closed = lastChunk
	return docs, nil
}
