package interop

import (
	"context"
	"encoding/json"
	"iter"
	"time"
)

// RunStore is the host's run engine as the interop layer uses it. Every
// method receives the caller's Subject and applies the host's authorization
// and tenant scoping itself; see the package documentation for the
// guarantees each method must keep. A store must be safe for concurrent use.
type RunStore interface {
	// ListWorkflows returns the workflows the Subject may start, in any
	// order. They become A2A skills and MCP tools.
	ListWorkflows(ctx context.Context, s Subject) ([]Workflow, error)

	// CreateRun starts a run in the Subject's tenant (createRun). When
	// req.IdempotencyKey was already used by the same tenant and principal,
	// it returns that run with created=false and starts nothing. An unknown
	// or unreadable workflow is ErrNotFound; inputs the host refuses are
	// ErrInvalidInput. ContextID is persisted atomically with the run.
	CreateRun(ctx context.Context, s Subject, req CreateRunRequest) (run Run, created bool, err error)

	// GetRun reads one run (getRun). Unknown and unreadable are both
	// ErrNotFound.
	GetRun(ctx context.Context, s Subject, runID string) (Run, error)

	// ListRuns lists the runs getRun would return to the Subject (listRuns),
	// newest status timestamp first, run id descending as tie-breaker.
	ListRuns(ctx context.Context, s Subject, q ListRunsQuery) (RunPage, error)

	// CancelRun asks a run to stop (cancelRun). It returns the run at
	// cancelling or cancelled. A terminal run is ErrRunTerminal and nothing
	// is appended.
	CancelRun(ctx context.Context, s Subject, runID, reason string) (Run, error)

	// ResolveInterrupt resolves one open interrupt (resolveInterruptByRun)
	// with s as the resolver. It enforces approver eligibility
	// (ErrNotEligible), the resume schema and actions (ErrInvalidInput), and
	// at-most-once resolution (ErrAlreadyResolved). An interrupt that never
	// existed on the run is ErrNotFound. req.Message, when set, is appended
	// to the run's exchanged messages in the same step.
	ResolveInterrupt(ctx context.Context, s Subject, req ResolveRequest) (Run, error)

	// WatchRun follows a run's event log (streamRunEvents). The returned
	// sequence yields every event with Sequence > afterSequence in order,
	// blocking for new ones, and ends after the terminal event or when ctx is
	// done (yielding ctx.Err()). Readability is checked before WatchRun
	// returns: an unreadable run is ErrNotFound with a nil sequence.
	WatchRun(ctx context.Context, s Subject, runID string, afterSequence int64) (iter.Seq2[RunEvent, error], error)
}

// InputDeliverer is an optional RunStore extension: a declared input path
// for messages sent to a run that is running but not suspended (RULES R44).
// Without it such messages are refused, never dropped.
type InputDeliverer interface {
	DeliverInput(ctx context.Context, s Subject, runID string, msg Message) (Run, error)
}

// CreateRunRequest is the input of [RunStore.CreateRun].
type CreateRunRequest struct {
	WorkflowID string
	// Inputs is a JSON object of run inputs, already validated against the
	// workflow's input schema by the caller of the library surface.
	Inputs json.RawMessage
	// IdempotencyKey, when non-empty, dedupes creation per tenant and
	// principal.
	IdempotencyKey string
	Transport      Transport
	// ContextID is the A2A contextId to persist with the run.
	ContextID     string
	Trace         TraceContext
	TrustBoundary TrustBoundary
	// Message is the protocol message that started the run, recorded as the
	// first exchanged message.
	Message *Message
}

// ListRunsQuery filters and pages [RunStore.ListRuns].
type ListRunsQuery struct {
	// ContextID keeps runs with exactly this contextId.
	ContextID string
	// Statuses keeps runs whose status is one of these (any when empty).
	Statuses []RunStatus
	// StatusAfter keeps runs whose status timestamp is at or after it
	// (inclusive); zero means no bound.
	StatusAfter time.Time
	// WorkflowID keeps runs of one workflow.
	WorkflowID string
	// PageSize is the page length; the store may clamp it. 0 means the
	// store's default.
	PageSize int
	// Cursor continues a previous page. A cursor the store did not issue is
	// ErrInvalidInput.
	Cursor string
}

// RunPage is one page of [RunStore.ListRuns].
type RunPage struct {
	Runs []Run
	// NextCursor is empty on the last page.
	NextCursor string
	// Total is the number of runs matching the query across all pages.
	Total int
}

// ResolveOutcome is how a resolver answered an interrupt.
type ResolveOutcome string

// Resolution outcomes (MCP ElicitResult actions; A2A approval actions map
// onto them).
const (
	// OutcomeAccept resumes the run with Value.
	OutcomeAccept ResolveOutcome = "accept"
	// OutcomeDecline takes the interrupt's decline path (approval: reject).
	OutcomeDecline ResolveOutcome = "decline"
	// OutcomeCancel withdraws the interrupt; the run takes its cancel path.
	OutcomeCancel ResolveOutcome = "cancel"
)

// ResolveRequest is the input of [RunStore.ResolveInterrupt].
type ResolveRequest struct {
	RunID       string
	InterruptID string
	Outcome     ResolveOutcome
	// Value is the resumeValue (a JSON document), e.g. {"action":"accept"}.
	Value json.RawMessage
	// Message is the protocol message carrying the resolution, if any.
	Message *Message
}

// EventType names a run event.
type EventType string

// Run event types the library reads or writes.
const (
	EventRunStarted         EventType = "run.started"
	EventNodeSuspended      EventType = "node.suspended"
	EventInterruptResolved  EventType = "interrupt.resolved"
	EventArtifactPublished  EventType = "artifact.published"
	EventInputReceived      EventType = "input.received"
	EventRunCancelling      EventType = "run.cancelling"
	EventRunCompleted       EventType = "run.completed"
	EventRunFailed          EventType = "run.failed"
	EventRunCancelled       EventType = "run.cancelled"
	EventNegotiationDecided EventType = "negotiation.decided"
)

// RunEvent is one entry of a run's event log.
type RunEvent struct {
	RunID    string
	Sequence int64
	Type     EventType
	At       time.Time
	// Status is the run's status after this event.
	Status RunStatus
	// InterruptID is set on node.suspended and interrupt.resolved.
	InterruptID string
	// Artifact is set on artifact.published; Append and LastChunk describe
	// how the chunk joins earlier chunks of the same artifact id.
	Artifact  *Artifact
	Append    bool
	LastChunk bool
	// Transport is set on run.started.
	Transport Transport
	// Reason is set on run.cancelled, run.cancelling and run.failed.
	Reason string
	// Payload carries the body of audit events such as negotiation.decided.
	Payload json.RawMessage
}

// Terminal reports whether e ends the run.
func (e RunEvent) Terminal() bool {
	return e.Type == EventRunCompleted || e.Type == EventRunFailed || e.Type == EventRunCancelled
}

// Delivery is the class of a host event.
type Delivery string

// Host event delivery classes (RULES R143).
const (
	DeliveryDurable   Delivery = "durable"
	DeliveryEphemeral Delivery = "ephemeral"
)

// HostEvent is an event that belongs to no run (host-event.schema.json). Its
// JSON form is the wire form.
type HostEvent struct {
	EventID     string          `json:"eventId"`
	Type        string          `json:"type"`
	Timestamp   time.Time       `json:"timestamp"`
	Delivery    Delivery        `json:"delivery"`
	WorkspaceID string          `json:"workspaceId,omitempty"`
	Payload     json.RawMessage `json:"payload"`
}

// EventSink receives the records the library produces: negotiation.decided
// audits and push dead letters. The host owns where they are kept.
type EventSink interface {
	// AppendRunEvent appends an audit event to a run's log. The library
	// calls it only for runs the caller could read. Type and Payload are set;
	// the sink assigns Sequence and keeps the run's status. A sink whose log
	// ends at the terminal event returns ErrRunTerminal for a finished run;
	// the library then records the event as a host event of the run's
	// tenant instead.
	AppendRunEvent(ctx context.Context, runID string, ev RunEvent) error
	// PublishHostEvent records a host event for tenant (and ev.WorkspaceID).
	// An empty tenant is an unauthenticated exchange: the event is kept but
	// delivered to no subscriber (RULES R26).
	PublishHostEvent(ctx context.Context, tenant string, ev HostEvent) error
}

// AgentInventory is optionally implemented by hosts that have agents.
type AgentInventory interface {
	// ListAgents returns the agents visible to the Subject.
	ListAgents(ctx context.Context, s Subject) ([]Agent, error)
}
