package memstore

import (
	"strconv"
	"time"

	"github.com/wopinterop/wopinterop/interop"
)

// A run's event log is kept lean, because every run a host ever created
// stays in memory and the garbage collector marks it on every cycle. An
// entry stores only what differs between events, with no pointer but its
// type (a constant for every event the store writes) and, for the few
// events that have one, a node id or artifact chunk. What a read returns
// is rebuilt from it, value for value:
//
//   - EventID is the tenant's event prefix and the entry's count in base
//     36, built on read instead of kept as a string per event;
//   - RunID is the run's id, Sequence the entry's index;
//   - the payloads of all of a run's events are one byte array (append-
//     only: a read outside the lock keeps the array it saw, whose bytes
//     below its length never change), each entry ending at an offset;
//   - the status is a small index, the timestamp seconds and nanoseconds.
type eventLog struct {
	events   []storedEvent
	payloads []byte
}

// storedEvent is one entry of an eventLog.
type storedEvent struct {
	typ     interop.EventType
	extra   *eventExtra // nil unless the event has a node id or a chunk
	count   uint64      // the tenant's event count: the EventID's suffix
	sec     int64       // Timestamp: Unix seconds …
	version int         // SchemaVersion
	end     int         // the payload is payloads[previous end:end]
	nsec    int32       // … and nanoseconds (UTC)
	// status is the statusIndex of the run's status after the event; a
	// run only ever has one of the statuses AllStatuses lists.
	status uint8
}

// eventExtra is what few events carry: a node id, an artifact chunk.
type eventExtra struct {
	nodeID   string
	chunk    interop.ArtifactChunk
	hasChunk bool
}

// logHint sizes a new run's log after the last run of its workflow that
// settled, so that a workflow whose runs write the same events allocates
// its log once, at the right size.
type logHint struct{ events, payloadBytes int }

func newEventLog(h logHint) eventLog {
	if h.events == 0 {
		// The workflow's first run: run.started, a step and the terminal
		// event.
		h = logHint{events: 3, payloadBytes: 128}
	}
	return eventLog{
		events:   make([]storedEvent, 0, h.events),
		payloads: make([]byte, 0, h.payloadBytes),
	}
}

// compact trims the spare capacity of a settled run's log, which takes no
// more events: what stays in memory for the life of the store is what the
// log holds. A log within a quarter of its size is left as it is — runs
// of one workflow vary a little, and a copy per run would cost more than
// those few bytes.
func (l *eventLog) compact() {
	if cap(l.events)-len(l.events) > len(l.events)/4 {
		l.events = append([]storedEvent(nil), l.events...)
	}
	if cap(l.payloads)-len(l.payloads) > len(l.payloads)/4 {
		l.payloads = append([]byte(nil), l.payloads...)
	}
}

// statusByIndex inverts statusIndex.
var statusByIndex = [numStatuses]interop.RunStatus{
	interop.StatusPending, interop.StatusRunning, interop.StatusPaused,
	interop.StatusWaitingApproval, interop.StatusWaitingInput, interop.StatusWaitingExternal,
	interop.StatusCompleted, interop.StatusFailed, interop.StatusCancelling, interop.StatusCancelled,
}

// terminal reports whether the entry is a terminal event.
func (e *storedEvent) terminal() bool { return interop.RunEvent{Type: e.typ}.Terminal() }

// commitEventLocked files an event whose payload the caller has just
// appended to rec.log.payloads: it takes the tenant's next event count and
// the next sequence, stamps the run's current status and wakes every
// watcher. The caller holds tenant.mu for writing.
func (rec *runRecord) commitEventLocked(typ interop.EventType, version int, x *eventExtra, at time.Time) {
	t := rec.tenant
	t.eventCount++
	if version == 0 {
		version = interop.SchemaVersion
	}
	rec.log.events = append(rec.log.events, storedEvent{
		typ:     typ,
		extra:   x,
		count:   t.eventCount,
		sec:     at.Unix(),
		nsec:    int32(at.Nanosecond()),
		version: version,
		end:     len(rec.log.payloads),
		status:  uint8(statusIndex(rec.run.Status)),
	})
	rec.run.LastSequence = int64(len(rec.log.events) - 1)
	rec.wakeMu.Lock()
	if rec.changed != nil {
		close(rec.changed)
		rec.changed = nil
	}
	rec.wakeMu.Unlock()
}

// appendEventLocked appends ev — its type, schema version (when unset the
// current one), payload (copied), node id and chunk — completed as a
// RunEventDoc: a fresh eventId, the run id, the next sequence, the
// timestamp and the run's current status.
func (rec *runRecord) appendEventLocked(ev interop.RunEvent, at time.Time) {
	rec.log.payloads = append(rec.log.payloads, ev.Payload...)
	var x *eventExtra
	if ev.NodeID != "" || ev.Chunk != nil {
		x = &eventExtra{nodeID: ev.NodeID}
		if ev.Chunk != nil {
			x.chunk, x.hasChunk = *ev.Chunk, true
		}
	}
	rec.commitEventLocked(ev.Type, ev.SchemaVersion, x, at)
}

// appendLifecycleLocked appends one of the store's own events. Its
// payload is encoded in the tenant's scratch buffer and then copied, so
// that the log grows by exactly the payload (appendPayload reserves more
// than it writes) and a log sized by its workflow's hint is never
// reallocated.
//
// It is generic so that the payload is boxed only on the rare path that
// needs json.Marshal: appendPayload keeps nothing of it.
func appendLifecycleLocked[P any](s *Store, rec *runRecord, typ interop.EventType, payload P, x *eventExtra, at time.Time) {
	t := rec.tenant
	b := appendPayload(t.scratch[:0], payload)
	if b == nil {
		b = append(t.scratch[:0], s.lifecycleEvent(typ, payload).Payload...)
	}
	t.scratch = b
	rec.log.payloads = append(rec.log.payloads, b...)
	rec.commitEventLocked(typ, interop.SchemaVersion, x, at)
}

// eventAt rebuilds the event at sequence i of a log read as events and
// payloads (under the lock, or later from the slices read under it). It is
// a copy: the payload and chunk share no memory with the store.
func (rec *runRecord) eventAt(events []storedEvent, payloads []byte, i int) interop.RunEvent {
	e := &events[i]
	start := 0
	if i > 0 {
		start = events[i-1].end
	}
	ev := interop.RunEvent{
		EventID:       rec.tenant.eventID(e.count),
		RunID:         rec.run.ID,
		Sequence:      int64(i),
		Type:          e.typ,
		Timestamp:     time.Unix(e.sec, int64(e.nsec)).UTC(),
		SchemaVersion: e.version,
		Status:        statusByIndex[e.status],
	}
	if start < e.end {
		ev.Payload = append([]byte(nil), payloads[start:e.end]...)
	}
	if x := e.extra; x != nil {
		ev.NodeID = x.nodeID
		if x.hasChunk {
			c := x.chunk
			c.Artifact = cloneArtifact(c.Artifact)
			ev.Chunk = &c
		}
	}
	return ev
}

// eventID is the EventID of the tenant's count-th event.
func (t *tenantState) eventID(count uint64) string {
	var buf [64]byte
	return string(strconv.AppendUint(append(buf[:0], t.eventPrefix...), count, 36))
}
