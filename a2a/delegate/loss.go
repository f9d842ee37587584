package delegate

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/outbound"
)

// EventTranslationLoss is the run event recording what the reverse mapping
// of one exchange dropped or coerced (admission-boundaries §18.10): one
// per attempt that lost anything, content-free — counts by kind, never a
// key, a value or a peer string. It is a vendor type under the library's
// own org (OpenWOP RFC 0171 §A.1).
//
// Its payload: protocol ("a2a"), attemptId, and
//
//   - dropped.metadataKeys: metadata keys on the task, on status and
//     artifact-update events, and on the input request and its parts,
//     which the Outcome and the InputRequest do not carry;
//   - dropped.historyMessages: Task.history messages (never surfaced);
//   - dropped.messages: status messages and stray messages not relayed
//     (a peer's messages are never relayed verbatim);
//   - dropped.extensions, dropped.referenceTaskIds: extension URIs and
//     task references on those messages;
//   - dropped.artifacts: artifacts of a task that did not complete;
//   - coerced.unspecifiedStates, coerced.unknownStates: task states read
//     as pending (OpenWOP interop map, a2a.taskStateReverse).
//
// A count that stays zero is left out.
const EventTranslationLoss = outbound.EventTranslationLoss

const protocolA2A = "a2a"

// eventGrace bounds appending a record after the caller's context ended.
const eventGrace = 5 * time.Second

// lossTracker counts, for one attempt, what the reverse mapping drops or
// coerces. Re-reads of the same thing (a polled task) count once.
type lossTracker struct {
	taskMetadata    int // most metadata keys on one task snapshot
	eventMetadata   int
	messageMetadata int
	history         int // most history messages on one snapshot
	messages        int
	extensions      int
	referenceTasks  int
	artifacts       int
	unspecified     int
	unknown         int
	lastStatusID    string
}

type lossRecord struct {
	Protocol  string        `json:"protocol"`
	AttemptID string        `json:"attemptId"`
	Dropped   droppedCounts `json:"dropped,omitzero"`
	Coerced   coercedCounts `json:"coerced,omitzero"`
}

type droppedCounts struct {
	MetadataKeys     int `json:"metadataKeys,omitempty"`
	HistoryMessages  int `json:"historyMessages,omitempty"`
	Messages         int `json:"messages,omitempty"`
	Extensions       int `json:"extensions,omitempty"`
	ReferenceTaskIDs int `json:"referenceTaskIds,omitempty"`
	Artifacts        int `json:"artifacts,omitempty"`
}

type coercedCounts struct {
	UnspecifiedStates int `json:"unspecifiedStates,omitempty"`
	UnknownStates     int `json:"unknownStates,omitempty"`
}

func (t *lossTracker) task(task *wire.Task) {
	t.taskMetadata = max(t.taskMetadata, len(task.Metadata))
	t.history = max(t.history, len(task.History))
}

func (t *lossTracker) event(m map[string]any) { t.eventMetadata += len(m) }

func (t *lossTracker) coerced(w Warning) {
	switch w {
	case WarningUnspecifiedState:
		t.unspecified++
	case WarningUnknownState:
		t.unknown++
	}
}

func (t *lossTracker) droppedArtifacts(n int) { t.artifacts += n }

// droppedMessage counts a message the peer sent that reaches nobody.
func (t *lossTracker) droppedMessage(m *wire.Message) {
	t.messages++
	t.extensions += len(m.Extensions)
	t.referenceTasks += len(m.ReferenceTasks)
}

// statusMessage counts a status message read with a state: relayed (an
// input request's parts go to the decider) or dropped. The same message
// read again without a state change counts once.
func (t *lossTracker) statusMessage(m *wire.Message, stateChanged, relayed bool) {
	if m == nil || (!stateChanged && m.ID == t.lastStatusID) {
		return
	}
	t.lastStatusID = m.ID
	if !relayed {
		t.droppedMessage(m)
		return
	}
	t.messageMetadata += len(m.Metadata)
	t.extensions += len(m.Extensions)
	t.referenceTasks += len(m.ReferenceTasks)
}

// requestView copies an input request's parts for the decider, without
// their metadata, so nothing the host is shown aliases the peer's message.
func (t *lossTracker) requestView(m *wire.Message) []*wire.Part {
	if m == nil {
		return nil
	}
	parts := make([]*wire.Part, 0, len(m.Parts))
	for _, p := range m.Parts {
		if p == nil || p.Content == nil {
			continue
		}
		t.messageMetadata += len(p.Metadata)
		parts = append(parts, &wire.Part{Content: copyContent(p.Content), Filename: p.Filename, MediaType: p.MediaType})
	}
	return parts
}

// copyContent deep-copies a part's content.
func copyContent(c wire.PartContent) wire.PartContent {
	switch c := c.(type) {
	case wire.Raw:
		return wire.Raw(slices.Clone(c))
	case wire.Data:
		var v any
		if b, err := json.Marshal(c.Value); err == nil && json.Unmarshal(b, &v) == nil {
			return wire.Data{Value: v}
		}
		return wire.Data{}
	}
	return c // text and url are immutable strings
}

func (t *lossTracker) record(attemptID string) lossRecord {
	return lossRecord{
		Protocol:  protocolA2A,
		AttemptID: attemptID,
		Dropped: droppedCounts{
			MetadataKeys:     t.taskMetadata + t.eventMetadata + t.messageMetadata,
			HistoryMessages:  t.history,
			Messages:         t.messages,
			Extensions:       t.extensions,
			ReferenceTaskIDs: t.referenceTasks,
			Artifacts:        t.artifacts,
		},
		Coerced: coercedCounts{UnspecifiedStates: t.unspecified, UnknownStates: t.unknown},
	}
}

// recordLoss appends the attempt's EventTranslationLoss when it lost
// anything.
func (c *Conn) recordLoss(ctx context.Context, d *delegation) {
	rec := d.loss.record(d.attemptID)
	if rec.Dropped == (droppedCounts{}) && rec.Coerced == (coercedCounts{}) {
		return
	}
	c.appendEvent(ctx, EventTranslationLoss, rec)
}

// appendEvent appends one content-free record to the run's log. A record
// the sink refuses is logged by type, and the delegation goes on: its
// outcome is the host's to act on either way.
func (c *Conn) appendEvent(ctx context.Context, typ interop.EventType, payload any) {
	if c.deps == nil || c.deps.events == nil {
		return
	}
	b, err := json.Marshal(payload)
	if err != nil {
		c.logger().LogAttrs(ctx, slog.LevelWarn, "delegate: run event not encoded", slog.String("type", string(typ)), slog.String("error", err.Error()))
		return
	}
	now := time.Now
	if c.deps.now != nil {
		now = c.deps.now
	}
	ev := interop.RunEvent{Type: typ, Timestamp: now().UTC(), SchemaVersion: interop.SchemaVersion, Payload: b}
	actx, stop := context.WithTimeout(context.WithoutCancel(ctx), eventGrace)
	defer stop()
	if err := c.deps.events.AppendRunEvent(actx, c.RunID, ev); err != nil {
		c.logger().LogAttrs(ctx, slog.LevelWarn, "delegate: run event not recorded", slog.String("type", string(typ)), slog.String("error", err.Error()))
	}
}
