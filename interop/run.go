package interop

import (
	"encoding/json"
	"time"
)

// RunStatus is the closed set of OpenWOP v2 run statuses (RunSnapshot.status).
type RunStatus string

// The ten run statuses.
const (
	StatusPending         RunStatus = "pending"
	StatusRunning         RunStatus = "running"
	StatusPaused          RunStatus = "paused"
	StatusWaitingApproval RunStatus = "waiting-approval"
	StatusWaitingInput    RunStatus = "waiting-input"
	StatusWaitingExternal RunStatus = "waiting-external"
	StatusCompleted       RunStatus = "completed"
	StatusFailed          RunStatus = "failed"
	StatusCancelling      RunStatus = "cancelling"
	StatusCancelled       RunStatus = "cancelled"
)

// AllStatuses lists the ten statuses in the upstream enum order.
func AllStatuses() []RunStatus {
	return []RunStatus{
		StatusPending, StatusRunning, StatusPaused,
		StatusWaitingApproval, StatusWaitingInput, StatusWaitingExternal,
		StatusCompleted, StatusFailed, StatusCancelling, StatusCancelled,
	}
}

// Valid reports whether s is one of the ten statuses.
func (s RunStatus) Valid() bool {
	switch s {
	case StatusPending, StatusRunning, StatusPaused,
		StatusWaitingApproval, StatusWaitingInput, StatusWaitingExternal,
		StatusCompleted, StatusFailed, StatusCancelling, StatusCancelled:
		return true
	}
	return false
}

// Terminal reports whether s is completed, failed or cancelled.
func (s RunStatus) Terminal() bool {
	return s == StatusCompleted || s == StatusFailed || s == StatusCancelled
}

// Suspended reports whether s waits on an open interrupt.
func (s RunStatus) Suspended() bool {
	return s == StatusWaitingApproval || s == StatusWaitingInput || s == StatusWaitingExternal
}

// Transport names the surface a run was started through
// (run.started.transport).
type Transport string

// Transports a run can be started through.
const (
	TransportA2A  Transport = "a2a"
	TransportMCP  Transport = "mcp"
	TransportREST Transport = "rest"
)

// TrustBoundary is the content trust a run's inputs enter with. Everything
// arriving through A2A or MCP is untrusted (OpenWOP interop map, a2a.fields and mcp.methods).
type TrustBoundary string

// TrustUntrusted is the only boundary the library ever requests.
const TrustUntrusted TrustBoundary = "untrusted"

// InterruptKind is the kind of an open interrupt (interrupt.md §Payload).
type InterruptKind string

// Interrupt kinds the interop layer projects.
const (
	InterruptApproval      InterruptKind = "approval"
	InterruptClarification InterruptKind = "clarification"
	InterruptExternalEvent InterruptKind = "external-event"
	InterruptCredential    InterruptKind = "credential"
)

// SuspendedStatus is the run status an interrupt of kind k produces
// (OpenWOP interrupt.md §Payload), or "" for a kind that does not suspend through interop.
func (k InterruptKind) SuspendedStatus() RunStatus {
	switch k {
	case InterruptApproval:
		return StatusWaitingApproval
	case InterruptClarification, InterruptCredential:
		return StatusWaitingInput
	case InterruptExternalEvent:
		return StatusWaitingExternal
	}
	return ""
}

// Interrupt is an open interrupt of a run.
type Interrupt struct {
	// ID is the tenant-bound interruptId ("tenant/opaque"). It is the key of
	// MCP inputRequests (OpenWOP interop map, mcp.mrtr).
	ID string
	// Kind decides the projection (approval, clarification, credential, ...).
	Kind InterruptKind
	// Key is the workflow's key for the interrupt; one key is invoked at most
	// once per run.
	Key string
	// NodeID is the node that suspended.
	NodeID string
	// Message is a short human-readable prompt, safe to show to the caller.
	Message string
	// Data is the kind-specific payload (interrupt.md). For a credential
	// interrupt it is a [CredentialData] document.
	Data json.RawMessage
	// ResumeSchema is the JSON Schema the resume value must satisfy; it
	// becomes the MCP form-mode requestedSchema when it is a flat object of
	// primitive, non-secret properties.
	ResumeSchema json.RawMessage
	// Actions lists the approval actions offered (accept, reject, refine,
	// edit-accept, ask). Empty for other kinds.
	Actions []string
	// Approvers, when non-empty, is the approversList: the only principals
	// that may resolve the interrupt. The RunStore enforces it.
	Approvers []string
	// Credential is set for a credential interrupt.
	Credential *CredentialData
	// CreatedAt is when the run suspended on it.
	CreatedAt time.Time
}

// CredentialData is the closed payload of a credential interrupt (RFC 0199).
type CredentialData struct {
	Provider      string   `json:"provider"`
	Scopes        []string `json:"scopes"`
	Reason        string   `json:"reason"`
	ConnectURL    string   `json:"connectUrl"`
	CredentialRef string   `json:"credentialRef,omitempty"`
}

// PartKind discriminates a [Part].
type PartKind string

// Part kinds, mirroring the A2A Part members.
const (
	PartText PartKind = "text"
	PartData PartKind = "data"
	PartURL  PartKind = "url"
	PartRaw  PartKind = "raw"
)

// Part is one piece of message or artifact content. Exactly the field named
// by Kind is meaningful.
type Part struct {
	Kind      PartKind
	Text      string
	Data      json.RawMessage
	URL       string
	Raw       []byte
	MediaType string
	Filename  string
	Metadata  map[string]any
}

// TextPart returns a text part.
func TextPart(s string) Part { return Part{Kind: PartText, Text: s} }

// DataPart returns a structured-data part holding the JSON value v.
func DataPart(v json.RawMessage) Part { return Part{Kind: PartData, Data: v} }

// Artifact is an output a run published. ID is stable across reads and
// across the chunks of one artifact (OpenWOP interop map, a2a.fields).
type Artifact struct {
	ID          string
	Name        string
	Description string
	Parts       []Part
	Metadata    map[string]any
}

// MessageRole is who sent an exchanged message. Roles confer no authority.
type MessageRole string

// Message roles.
const (
	RoleUser  MessageRole = "user"
	RoleAgent MessageRole = "agent"
)

// Message is a protocol message exchanged on a run (the A2A Task.history).
// The host stores it with the run and returns it unchanged; it never holds
// run-internal transcripts or tool I/O.
type Message struct {
	ID       string
	Role     MessageRole
	Parts    []Part
	Metadata map[string]any
	// ReferenceTaskIDs are the task ids the sender referred to (A2A
	// Message.referenceTaskIds), kept exactly as sent. They are hints: the
	// library never reads the runs they name, and a host must not treat
	// them as access to those runs (OpenWOP interop §What stays opaque).
	ReferenceTaskIDs []string
	// Extensions are the extension URIs the sender declared for this
	// message (A2A Message.extensions), opaque and kept exactly as sent.
	Extensions []string
	// ActivatedExtensions are the extensions the request that carried the
	// message activated: the URIs of its A2A-Extensions service parameter
	// (A2A 1.0 §3.2.6) that the server declares in its card's
	// capabilities.extensions, in the declared order. Unlike Extensions
	// they are the receiver's decision, not the sender's claim; the
	// library fills them and never projects them back onto the wire.
	ActivatedExtensions []string
}

// TraceContext is a W3C trace context passed to a run. It is propagated,
// never used for authorization.
type TraceContext struct {
	TraceParent string
	TraceState  string
}

// Run is the host's view of one workflow execution, as the library reads it.
type Run struct {
	// ID is the tenant-bound runId ("tenant/opaque"); the A2A Task.id.
	ID string
	// Tenant and Workspace own the run.
	Tenant    string
	Workspace string
	// Principal created the run.
	Principal string
	// WorkflowID is the workflow the run executes.
	WorkflowID string
	// Status is the current status; StatusAt is when it last changed.
	Status   RunStatus
	StatusAt time.Time
	// CreatedAt is when the run was created.
	CreatedAt time.Time
	// Transport is the surface that started the run.
	Transport Transport
	// ContextID is the A2A contextId, persisted atomically with the run.
	ContextID string
	// Interrupts are the open interrupts; empty unless Status is suspended.
	Interrupts []Interrupt
	// Artifacts are the published outputs, in publication order.
	Artifacts []Artifact
	// Messages are the protocol messages exchanged on the run, in order.
	Messages []Message
	// Output is the run's structured result once completed (may be nil).
	Output json.RawMessage
	// FailureMessage is a short, safe explanation of a failed run. It never
	// carries stack traces, provider bodies or credentials.
	FailureMessage string
	// FailureCode classifies a failed run: a registered OpenWOP error code
	// (errors.json, e.g. "internal_error") or a vendor code "<org>.<name>".
	// It is run.failed's error.code and RunSnapshot.error.code.
	FailureCode string
	// Fault marks a failed run whose failure lies in the host rather than
	// in the work: the engine or its infrastructure could not carry the
	// run out (a lost worker, a storage fault), as opposed to a workflow
	// that ran and reported a failure. It is meaningful only with
	// StatusFailed. The MCP Tasks extension reports such a task as status
	// "failed" with an error object (a protocol-level error, SEP-2663)
	// where an ordinary failed run is a completed task whose result has
	// isError true; every other surface sees a failed run either way.
	Fault bool
	// CancelReason is the reason given to cancelRun, once cancelling.
	CancelReason string
	// LastSequence is the sequence of the newest event on the run's log, or
	// -1 when the log is empty.
	LastSequence int64
}

// OpenInterrupt returns the first open interrupt, if any.
func (r *Run) OpenInterrupt() (Interrupt, bool) {
	if len(r.Interrupts) == 0 {
		return Interrupt{}, false
	}
	return r.Interrupts[0], true
}

// Workflow is a workflow a caller may run: an A2A skill and an MCP tool.
type Workflow struct {
	ID          string
	Name        string
	Description string
	// InputSchema is the JSON Schema of the run inputs (an object schema).
	InputSchema json.RawMessage
	Tags        []string
	// InputModes are the media types the workflow accepts in the parts of
	// a message that starts or continues it (an A2A skill's inputModes).
	// Empty means the surface's defaults.
	InputModes []string
	// OutputModes are the media types the workflow's artifacts and output
	// come in (an A2A skill's outputModes). A peer whose accepted output
	// modes exclude all of them is refused before any run exists. Empty
	// means the surface's defaults.
	OutputModes []string
	// TaskSupport says whether an MCP tools/call of the workflow may or must
	// be answered with a task of the io.modelcontextprotocol/tasks
	// extension (the tool's execution.taskSupport): "" or [TaskOptional]
	// lets the mount decide, [TaskRequired] refuses a call that did not
	// declare the extension (-32021), [TaskForbidden] never answers with a
	// task. Other surfaces ignore it.
	TaskSupport string
}

// Values of [Workflow.TaskSupport].
const (
	TaskOptional  = "optional"
	TaskRequired  = "required"
	TaskForbidden = "forbidden"
)

// Agent is an inventory entry (GET /agents): a persona with the workflows
// routed to it.
type Agent struct {
	ID          string
	Persona     string
	PackVersion string
	Label       string
	Description string
	// Workflows are the ids of the workflows routed to the agent. The
	// first is the agent's default: a per-agent A2A message that names no
	// skill starts it.
	Workflows []string
	// Pack is the id of the agent pack the persona comes from, e.g.
	// "core.conformance.agent-pack". It may be shown to the caller.
	Pack string
	// SystemPrompt and HandoffSchemas are host-private parts of the agent
	// definition. The library never publishes them: no card, skill or
	// response carries them (OpenWOP interop §Per-agent cards).
	SystemPrompt   string
	HandoffSchemas json.RawMessage
}
