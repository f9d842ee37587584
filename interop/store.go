package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
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
// for messages sent to a run that is running but not suspended (OpenWOP interop map, a2a.operations).
// Without it such messages are refused, never dropped.
type InputDeliverer interface {
	DeliverInput(ctx context.Context, s Subject, runID string, msg Message) (Run, error)
}

// RunWaiter is an optional RunStore extension: a wait for a run's status
// alone, for the blocking calls that answer a run once it settles (A2A's
// blocking SendMessage, MCP's tools/call; OpenWOP interop map,
// a2a.operations and mcp.methods). Without it the library follows
// WatchRun, which copies out every event although only the status is
// read.
type RunWaiter interface {
	// WaitRun returns the run, as GetRun would, once settled reports true
	// for its status or the run is terminal (a terminal run never changes,
	// so it is returned whatever settled says). It checks at once, then
	// after each change of the run. settled is a pure predicate; the
	// store may call it while it holds its own locks. Readability is
	// GetRun's: unknown and unreadable are both ErrNotFound. When ctx is
	// done first it returns ctx.Err() and no run.
	WaitRun(ctx context.Context, s Subject, runID string, settled func(RunStatus) bool) (Run, error)
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

// EventType names a run event: a type registered by OpenWOP (RFC 0171 §A.1,
// run-event.schema.json) or a vendor type "<org>.<name>". See
// [EventType.Registered] and [EventType.Valid].
type EventType string

// Registered run event types the library and the embedded host read or
// write. Each has a registered payload (run-event-payloads.schema.json);
// the payload types below mirror the members the library uses.
const (
	EventRunStarted         EventType = "run.started"        // payload [RunStarted]
	EventNodeSuspended      EventType = "node.suspended"     // payload [NodeSuspended]
	EventInterruptResolved  EventType = "interrupt.resolved" // payload [InterruptResolved]
	EventArtifactCreated    EventType = "artifact.created"   // payload [ArtifactCreated]
	EventRunCompleted       EventType = "run.completed"      // payload [RunCompleted]
	EventRunFailed          EventType = "run.failed"         // payload [RunFailed]
	EventRunCancelled       EventType = "run.cancelled"      // payload [RunCancelled]
	EventNegotiationDecided EventType = "negotiation.decided"
	EventNodeCompleted      EventType = "node.completed" // payload [NodeCompleted]
	EventNodeFailed         EventType = "node.failed"    // payload [NodeFailed]
)

// SchemaVersion is the RunEventDoc schemaVersion of the payload shapes in
// this package.
const SchemaVersion = 1

// RunEvent is one entry of a run's event log: the OpenWOP RunEventDoc
// (run-event.schema.json, RFC 0171 §A). Its JSON form is exactly the
// document — eventId, runId, sequence (the first event is 0), type,
// timestamp, schemaVersion, the type-specific payload, and nodeId /
// causationId when set — so a host can store and serve it as is.
//
// Status and Chunk are not part of the document: they are what the library
// needs alongside it, and the store fills them on every event it yields.
type RunEvent struct {
	// EventID is unique per event, 16–128 characters of [A-Za-z0-9._~-];
	// the store mints it.
	EventID string `json:"eventId"`
	// RunID is the tenant-bound id of the run the event belongs to.
	RunID string `json:"runId"`
	// Sequence orders a run's events: 0, 1, 2, … without gaps.
	Sequence int64 `json:"sequence"`
	// Type is a registered type or a vendor type (see [EventType.Valid]).
	Type EventType `json:"type"`
	// NodeID is set on node-scoped events (node.suspended,
	// interrupt.resolved, artifact.created of a node).
	NodeID string `json:"nodeId,omitempty"`
	// Timestamp is when the event was appended.
	Timestamp time.Time `json:"timestamp"`
	// SchemaVersion is the payload's schema version, at least 1.
	SchemaVersion int `json:"schemaVersion"`
	// CausationID optionally names the event that caused this one.
	CausationID string `json:"causationId,omitempty"`
	// Payload is the type's payload: a JSON object for every registered
	// type the library writes. Build it with [NewRunEvent].
	Payload json.RawMessage `json:"payload"`

	// Status is the run's status after this event. Not part of the
	// document: the library follows a run's status through its watch.
	Status RunStatus `json:"-"`
	// Chunk is the content an artifact.created event adds (the A2A
	// artifactUpdate of a stream or a push). Not part of the document,
	// whose artifact.created payload names the artifact but not its parts.
	Chunk *ArtifactChunk `json:"-"`
}

// ArtifactChunk is the content an artifact.created event adds to a run's
// artifact: the whole artifact, or with Append one more chunk of it.
type ArtifactChunk struct {
	Artifact Artifact
	// Append adds Artifact.Parts to the artifact of the same id instead of
	// replacing it; LastChunk says no chunk of it follows.
	Append    bool
	LastChunk bool
}

// Terminal reports whether e ends the run.
func (e RunEvent) Terminal() bool {
	return e.Type == EventRunCompleted || e.Type == EventRunFailed || e.Type == EventRunCancelled
}

// DecodePayload decodes e.Payload into v, one of the payload types of this
// package (or the host's own for a vendor type).
func (e RunEvent) DecodePayload(v any) error {
	if err := json.Unmarshal(e.Payload, v); err != nil {
		return fmt.Errorf("interop: %s payload: %w", e.Type, err)
	}
	return nil
}

// NewRunEvent returns an event of type typ whose payload is the JSON
// encoding of payload, at SchemaVersion. The store assigns EventID, RunID,
// Sequence, Timestamp and Status when it appends it.
func NewRunEvent(typ EventType, payload any) (RunEvent, error) {
	b, err := json.Marshal(payload)
	if err != nil {
		return RunEvent{}, fmt.Errorf("interop: %s payload: %w", typ, err)
	}
	return RunEvent{Type: typ, Payload: b, SchemaVersion: SchemaVersion}, nil
}

// Payloads of the registered types the library writes or reads
// (run-event-payloads.schema.json). Members the library has no use for are
// left out; a host may write them, and the payload objects are closed
// upstream, so keys outside a type's registered members must use the
// "x-" / "vendor." / "openwop-" extension prefixes (RFC 0185 §B).

// RunStarted is the payload of run.started.
type RunStarted struct {
	WorkflowID string `json:"workflowId"`
	// Inputs are the caller's run inputs (a JSON object), when recorded.
	Inputs    json.RawMessage `json:"inputs,omitempty"`
	Transport Transport       `json:"transport,omitempty"`
}

// RunCompleted is the payload of run.completed. Outputs is required: {}
// when the run produced none.
type RunCompleted struct {
	Outputs json.RawMessage `json:"outputs"`
}

// RunFailed is the payload of run.failed.
type RunFailed struct {
	Error EventError `json:"error"`
}

// EventError is the error object of run.failed (and RunSnapshot.error): a
// registered OpenWOP error code (errors.json) or a vendor code
// "<org>.<name>", and a safe, non-empty message.
type EventError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// RunCancelled is the payload of run.cancelled. Reason is e.g.
// "mcp-request-cancelled" when the MCP request that owned the run went
// away before its answer (RFC 0198).
type RunCancelled struct {
	Reason string `json:"reason,omitempty"`
}

// NodeSuspended is the payload of node.suspended: the node and the
// interrupt it opened. InterruptID is the key of MCP inputRequests.
type NodeSuspended struct {
	NodeID      string        `json:"nodeId"`
	InterruptID string        `json:"interruptId"`
	Kind        InterruptKind `json:"kind,omitempty"`
	Key         string        `json:"key,omitempty"`
}

// NodeCompleted is the payload of node.completed: the node that completed
// and its outputs, a JSON object (run-event-payloads.schema.json
// $defs.nodeCompleted).
type NodeCompleted struct {
	NodeID  string          `json:"nodeId"`
	Outputs json.RawMessage `json:"outputs,omitempty"`
}

// NodeFailed is the payload of node.failed: the node and its terminal
// error (run-event-payloads.schema.json $defs.nodeFailed).
type NodeFailed struct {
	NodeID string     `json:"nodeId"`
	Error  EventError `json:"error"`
}

// InterruptResolved is the payload of interrupt.resolved. Reason (1–64
// characters) says why it closed without an answer, e.g. "withdrawn";
// Action is the approval action applied, when there was one.
type InterruptResolved struct {
	NodeID      string        `json:"nodeId"`
	InterruptID string        `json:"interruptId"`
	Kind        InterruptKind `json:"kind,omitempty"`
	Reason      string        `json:"reason,omitempty"`
	Action      string        `json:"action,omitempty"`
}

// ArtifactCreated is the payload of artifact.created: the artifact's id and
// type, and its name as the summary. Registered says whether the type is a
// registered artifact type whose schema validated the payload (RFC 0071);
// absent means registered.
type ArtifactCreated struct {
	ArtifactID   string `json:"artifactId"`
	ArtifactType string `json:"artifactType"`
	NodeID       string `json:"nodeId,omitempty"`
	Summary      string `json:"summary,omitempty"`
	Registered   *bool  `json:"registered,omitempty"`
}

// OutputsOf is a run's output as the outputs object of run.completed and
// RunSnapshot.outputs, which upstream types as an object of named output
// ports: output itself when it is a JSON object, {} when there is none,
// and {"result": output} for any other JSON value.
func OutputsOf(output json.RawMessage) json.RawMessage {
	p := bytes.TrimSpace(output)
	switch {
	case len(p) == 0:
		return json.RawMessage(`{}`)
	case p[0] == '{':
		return p
	}
	out := make([]byte, 0, len(p)+len(`{"result":}`))
	out = append(out, `{"result":`...)
	out = append(out, p...)
	return append(out, '}')
}

// Delivery is the class of a host event.
type Delivery string

// Host event delivery classes (OpenWOP host-event.schema.json).
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
	// calls it only for runs the caller could read. Type, Payload,
	// SchemaVersion and Timestamp are set; the sink assigns EventID, RunID
	// and Sequence, and keeps the run's status. A sink whose log
	// ends at the terminal event returns ErrRunTerminal for a finished run;
	// the library then records the event as a host event of the run's
	// tenant instead.
	AppendRunEvent(ctx context.Context, runID string, ev RunEvent) error
	// PublishHostEvent records a host event for tenant (and ev.WorkspaceID).
	// An empty tenant is an unauthenticated exchange: the event is kept but
	// delivered to no subscriber (OpenWOP RFC 0242 §B.4).
	PublishHostEvent(ctx context.Context, tenant string, ev HostEvent) error
}

// HostEventFeed is the subscription side of a host's events (GET
// /host/events), optional for the library, which only publishes through
// [EventSink]; the conformance kit checks a store that implements it.
// Delivery is tenant-isolated and an event naming a workspace goes only to
// subscribers of that workspace: a tenant-wide subscriber (workspace "")
// receives only the tenant's events that name no workspace (events.md
// §Host events, invariant host-event-tenant-isolation).
type HostEventFeed interface {
	// SubscribeHostEvents starts a subscription for tenant and workspace
	// ("" = tenant-wide) that lasts until ctx is done. The sequence yields
	// the retained durable events after lastEventID ("" = none), then
	// every new durable and ephemeral event the subscriber may see, in
	// publication order, until ctx is done.
	SubscribeHostEvents(ctx context.Context, tenant, workspace, lastEventID string) iter.Seq[HostEvent]
}

// AgentInventory is optionally implemented by hosts that have agents.
type AgentInventory interface {
	// ListAgents returns the agents visible to the Subject.
	ListAgents(ctx context.Context, s Subject) ([]Agent, error)
}
