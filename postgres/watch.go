package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/isolation"
)

// watchBatch bounds the events one read of a watch returns.
const watchBatch = 256

// WatchRun follows a run's event log, whichever replica appends to it.
// Readability is checked now; the returned sequence then yields every
// event with Sequence > afterSequence in order and without gaps (a
// negative afterSequence starts at the first event), waits for new ones,
// and ends right after the terminal event. If ctx is done first it yields
// (zero event, ctx.Err()) once and ends.
//
// The log is read by sequence: a notification only says when to read
// again, and the poll interval bounds the wait when one is lost, so no
// event is ever skipped. Sequences are assigned under the run's row lock,
// so they commit in order and a read never sees a later event without the
// earlier ones.
func (s *Store) WatchRun(ctx context.Context, sub interop.Subject, runID string, afterSequence int64) (iter.Seq2[interop.RunEvent, error], error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var exists bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM wopinterop_runs
		WHERE id = $1 AND tenant = $2 AND ($3 = '' OR workspace = $3))`, runID, sub.Tenant, sub.Workspace).Scan(&exists)
	switch {
	case err != nil:
		return nil, fmt.Errorf("postgres: watch: %w", err)
	case !exists:
		return nil, errRunNotFound
	}
	after := max(afterSequence, -1)
	return func(yield func(interop.RunEvent, error) bool) {
		w := s.hub.join(runKey(runID))
		defer w.leave()
		for {
			if err := ctx.Err(); err != nil {
				yield(interop.RunEvent{}, err)
				return
			}
			ch := w.C()
			batch, err := s.eventsAfter(ctx, runID, after)
			if err != nil {
				if ctx.Err() == nil {
					yield(interop.RunEvent{}, err)
				} else {
					yield(interop.RunEvent{}, ctx.Err())
				}
				return
			}
			for _, ev := range batch {
				if !yield(ev, nil) {
					return
				}
				after = ev.Sequence
				if ev.Terminal() {
					return
				}
			}
			if len(batch) > 0 {
				continue
			}
			ended, err := s.logEnded(ctx, runID, after)
			switch {
			case err != nil && ctx.Err() == nil:
				yield(interop.RunEvent{}, err)
				return
			case ended:
				return
			}
			_ = s.wait(ctx, ch) // a done ctx is reported at the top
		}
	}, nil
}

// eventsAfter reads up to watchBatch events of runID with Sequence > after.
func (s *Store) eventsAfter(ctx context.Context, runID string, after int64) ([]interop.RunEvent, error) {
	rows, err := s.pool.Query(ctx, `SELECT sequence, event_id, type, node_id, causation_id, at, schema_version,
			payload, status, chunk
		FROM wopinterop_run_events WHERE run_id = $1 AND sequence > $2
		ORDER BY sequence LIMIT $3`, runID, after, watchBatch)
	if err != nil {
		return nil, fmt.Errorf("postgres: read events: %w", err)
	}
	var out []interop.RunEvent
	for rows.Next() {
		ev := interop.RunEvent{RunID: runID}
		var (
			typ, status    string
			at             time.Time
			payload, chunk []byte
		)
		if err := rows.Scan(&ev.Sequence, &ev.EventID, &typ, &ev.NodeID, &ev.CausationID, &at,
			&ev.SchemaVersion, &payload, &status, &chunk); err != nil {
			rows.Close()
			return nil, fmt.Errorf("postgres: read events: %w", err)
		}
		ev.Type, ev.Status, ev.Timestamp, ev.Payload = interop.EventType(typ), interop.RunStatus(status), at.UTC(), payload
		if chunk != nil {
			var doc chunkDoc
			if err := decode(chunk, &doc); err != nil {
				rows.Close()
				return nil, err
			}
			ev.Chunk = &interop.ArtifactChunk{Artifact: doc.Artifact.artifact(), Append: doc.Append, LastChunk: doc.LastChunk}
		}
		out = append(out, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: read events: %w", err)
	}
	return out, nil
}

// logEnded reports whether runID is terminal with no event after `after`.
// A run that retention deleted meanwhile is errRunNotFound.
func (s *Store) logEnded(ctx context.Context, runID string, after int64) (bool, error) {
	var (
		status string
		last   int64
	)
	err := s.pool.QueryRow(ctx, `SELECT status, last_sequence FROM wopinterop_runs WHERE id = $1`, runID).Scan(&status, &last)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return false, errRunNotFound
	case err != nil:
		return false, fmt.Errorf("postgres: watch: %w", err)
	}
	return interop.RunStatus(status).Terminal() && last <= after, nil
}

// AppendRunEvent appends an audit event (negotiation.decided and the like)
// to a run's log with the run's current status; the status does not
// change. EventID, RunID, Sequence and Timestamp are assigned here, and
// SchemaVersion when zero. The type must be valid ([interop.EventType.Valid])
// and the payload a JSON object; the lifecycle types the store writes
// itself (run.*, node.suspended, interrupt.resolved, artifact.created,
// [EventCancelRequested]) are refused with an *interop.InputError, as are
// events for a terminal run (interop.ErrRunTerminal): the log ends with its
// terminal event, and watchers rely on it. An unknown run is ErrNotFound.
func (s *Store) AppendRunEvent(ctx context.Context, runID string, ev interop.RunEvent) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	switch ev.Type {
	case interop.EventRunStarted, interop.EventNodeSuspended, interop.EventInterruptResolved,
		interop.EventArtifactCreated, EventCancelRequested, interop.EventRunCompleted,
		interop.EventRunFailed, interop.EventRunCancelled:
		return &interop.InputError{Field: "type", Reason: fmt.Sprintf("%s is written by the run store", ev.Type)}
	}
	if !ev.Type.Valid() {
		return &interop.InputError{Field: "type", Reason: "not a registered or vendor event type"}
	}
	p := bytes.TrimSpace(ev.Payload)
	if len(p) == 0 || p[0] != '{' || !json.Valid(p) {
		return &interop.InputError{Field: "payload", Reason: "must be a JSON object"}
	}
	// The library calls the sink only for runs its caller could read; the
	// id's own tenant segment locates the run.
	tenant := isolation.TenantOf(runID)
	audit := interop.RunEvent{Type: ev.Type, Payload: bytes.Clone(p), SchemaVersion: ev.SchemaVersion}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		lr, err := lockRun(ctx, tx, runID)
		switch {
		case err != nil:
			return err
		case lr == nil || lr.tenant != tenant:
			return errRunNotFound
		case lr.status.Terminal():
			return fmt.Errorf("postgres: append %s: %w", ev.Type, interop.ErrRunTerminal)
		}
		_, err = s.appendEvent(ctx, tx, lr, audit, lr.status)
		return err
	})
	if err != nil {
		return err
	}
	s.hub.wake(runKey(runID))
	return nil
}
