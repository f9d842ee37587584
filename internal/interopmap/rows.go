package interopmap

import (
	"slices"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/interop"
)

// StoredState is the A2ATaskState.state value a host persists for a run
// (schemas/v2 a2a-task-state, the map's "stored" column).
type StoredState string

// The stored A2A task states.
const (
	StoredSubmitted     StoredState = "submitted"
	StoredWorking       StoredState = "working"
	StoredInputRequired StoredState = "input-required"
	StoredAuthRequired  StoredState = "auth-required"
	StoredCompleted     StoredState = "completed"
	StoredFailed        StoredState = "failed"
	StoredCanceled      StoredState = "canceled"
	StoredRejected      StoredState = "rejected"
)

// TaskStatus is an MCP Tasks extension task status (io.modelcontextprotocol/tasks).
type TaskStatus string

// The MCP task statuses.
const (
	TaskWorking       TaskStatus = "working"
	TaskInputRequired TaskStatus = "input_required"
	TaskCompleted     TaskStatus = "completed"
	TaskFailed        TaskStatus = "failed"
	TaskCancelled     TaskStatus = "cancelled"
)

// JSON-RPC codes of the A2A error rows (OpenWOP interop map, a2a.errors), for [Map.A2AError].
const (
	CodeTaskNotFound                   = -32001
	CodeTaskNotCancelable              = -32002
	CodePushNotificationNotSupported   = -32003
	CodeUnsupportedOperation           = -32004
	CodeContentTypeNotSupported        = -32005
	CodeInvalidAgentResponse           = -32006
	CodeExtendedAgentCardNotConfigured = -32007
	CodeExtensionSupportRequired       = -32008
	CodeVersionNotSupported            = -32009
	CodeInvalidParams                  = -32602
)

// The `when` qualifiers of the A2A operation rows. SendMessage has four rows
// told apart by the state of the addressed run; [SendMessageWhen] picks one.
const (
	WhenNewTask       = "no taskId"
	WhenSuspended     = "taskId, run waiting-approval | waiting-input | waiting-external"
	WhenLive          = "taskId, run not suspended and not terminal"
	WhenTerminal      = "taskId, run terminal and retained"
	WhenAsSendMessage = "as SendMessage"
)

// SendMessageWhen names the SendMessage row that serves a message
// (OpenWOP interop map, a2a.operations; interop.md §A2A multi-turn): no taskId starts a run; otherwise the addressed run's status
// decides. SendStreamingMessage uses the same rows' semantics.
func SendMessageWhen(hasTaskID bool, status interop.RunStatus) string {
	switch {
	case !hasTaskID:
		return WhenNewTask
	case status.Suspended():
		return WhenSuspended
	case status.Terminal():
		return WhenTerminal
	default:
		return WhenLive
	}
}

// StateRow is one row of the forward A2A projection (map a2a.taskState).
// A row with an InterruptKind overrides the default row of its RunStatus
// when the open interrupt has that kind.
type StateRow struct {
	RunStatus     interop.RunStatus
	InterruptKind interop.InterruptKind // "" on a default row
	Stored        StoredState
	Wire          a2a.TaskState
	Carrier       string // where the interrupt kind travels, if anywhere
}

// ReverseRow is one row of the reverse A2A projection (map
// a2a.taskStateReverse), used when the host consumes a remote agent.
type ReverseRow struct {
	Wire      a2a.TaskState
	RunStatus interop.RunStatus
	Note      string
}

// ErrorRow is one row of the A2A error table (OpenWOP interop map, a2a.errors).
type ErrorRow struct {
	Upstream string // A2A error name, e.g. "TaskNotFoundError"
	JSONRPC  int
	GRPC     string
	HTTP     int
	// Reason is the google.rpc.ErrorInfo reason (RFC 0211); empty for the
	// invalid-parameters row, which carries no A2A reason.
	Reason string
	// ClientProjection is the OpenWOP error code a host acting as client
	// reports for this error.
	ClientProjection string
	ServerWhen       string // empty when the host never raises it as server
	Note             string
}

// Operation is one operation row (map a2a.operations, mcp.methods,
// mcp.tasks.methods). Upstream may name several methods joined by " | ".
type Operation struct {
	Upstream    string
	HTTP        string
	When        string
	V2Operation string // "" when no v2 operation serves the row
	// Requires lists the facets ("family.facet") the row needs. It is the
	// caller's copy.
	Requires []string
	Rule     string
}

// Methods returns the method names the row serves.
func (o Operation) Methods() []string { return splitAlternatives(o.Upstream) }

func (o Operation) clone() Operation {
	o.Requires = slices.Clone(o.Requires)
	return o
}

// Feature is an mcp.features entry.
type Feature struct {
	ID          string
	RequiredFor []string // profiles that need the feature advertised
	Meaning     string
}

// TaskStatusRow is one row of mcp.tasks.status.
type TaskStatusRow struct {
	RunStatus  interop.RunStatus
	TaskStatus TaskStatus
	Note       string
}

// Element is a rule attached to a wire element (card, fields, headers, ...).
type Element struct {
	Element string
	Rule    string
}

// Section names a list of element rows.
type Section string

// The element sections of the map.
const (
	SectionA2ACard          Section = "a2a.card"
	SectionA2AFields        Section = "a2a.fields"
	SectionMCPHeaders       Section = "mcp.headers"
	SectionMCPMeta          Section = "mcp.meta"
	SectionMCPMRTR          Section = "mcp.mrtr"
	SectionMCPCache         Section = "mcp.cache"
	SectionMCPAuthorization Section = "mcp.authorization"
	SectionMCPTaskFields    Section = "mcp.tasks.fields"
)

// Pin is a pinned upstream release (map pins).
type Pin struct {
	Release    string // A2A release, e.g. "1.0.1"
	Negotiated string // A2A version negotiated, e.g. "1.0"
	Extension  string // MCP extension id
	Revision   string // MCP revision date
	Spec       string
	Proto      string
	Schema     string
}

// Pins are the upstream releases the map is written against. MCPTasks is
// the zero Pin when the map has no Tasks pin.
type Pins struct {
	A2A      Pin
	MCP      Pin
	MCPTasks Pin
}
