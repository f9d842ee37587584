package interopmap

import (
	"errors"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"

	"github.com/wopinterop/wopinterop/interop"
)

// OpenWOP interop map, a2a.taskState: the default forward projection.
var wantForward = []struct {
	status interop.RunStatus
	stored StoredState
	wire   a2a.TaskState
}{
	{interop.StatusPending, StoredSubmitted, a2a.TaskStateSubmitted},
	{interop.StatusRunning, StoredWorking, a2a.TaskStateWorking},
	{interop.StatusPaused, StoredWorking, a2a.TaskStateWorking},
	{interop.StatusCancelling, StoredWorking, a2a.TaskStateWorking},
	{interop.StatusWaitingApproval, StoredInputRequired, a2a.TaskStateInputRequired},
	{interop.StatusWaitingInput, StoredInputRequired, a2a.TaskStateInputRequired},
	{interop.StatusWaitingExternal, StoredInputRequired, a2a.TaskStateInputRequired},
	{interop.StatusCompleted, StoredCompleted, a2a.TaskStateCompleted},
	{interop.StatusFailed, StoredFailed, a2a.TaskStateFailed},
	{interop.StatusCancelled, StoredCanceled, a2a.TaskStateCanceled},
}

func TestTaskStateForwardIsTotal(t *testing.T) {
	m := builtin()
	if len(wantForward) != len(interop.AllStatuses()) {
		t.Fatalf("table covers %d statuses, enum has %d", len(wantForward), len(interop.AllStatuses()))
	}
	for _, tc := range wantForward {
		t.Run(string(tc.status), func(t *testing.T) {
			got, ok := m.TaskState(tc.status, "")
			if !ok {
				t.Fatal("no row")
			}
			if got.RunStatus != tc.status || got.Stored != tc.stored || got.Wire != tc.wire || got.InterruptKind != "" {
				t.Errorf("TaskState(%s) = %+v, want stored %s wire %s", tc.status, got, tc.stored, tc.wire)
			}
			wantCarrier := ""
			if tc.status.Suspended() {
				wantCarrier = "metadata.openwop.interrupt.kind"
			}
			if got.Carrier != wantCarrier {
				t.Errorf("carrier = %q, want %q", got.Carrier, wantCarrier)
			}
		})
	}
}

// OpenWOP RFC 0199 §D.1: only waiting-input on a credential interrupt is AUTH_REQUIRED;
// every other (status, kind) pair keeps its default row.
func TestTaskStateOverride(t *testing.T) {
	m := builtin()
	kinds := []interop.InterruptKind{"", interop.InterruptApproval, interop.InterruptClarification,
		interop.InterruptExternalEvent, interop.InterruptCredential, "unheard-of"}
	for _, tc := range wantForward {
		for _, k := range kinds {
			got, ok := m.TaskState(tc.status, k)
			if !ok {
				t.Fatalf("TaskState(%s, %q): no row", tc.status, k)
			}
			if tc.status == interop.StatusWaitingInput && k == interop.InterruptCredential {
				want := StateRow{RunStatus: interop.StatusWaitingInput, InterruptKind: interop.InterruptCredential,
					Stored: StoredAuthRequired, Wire: a2a.TaskStateAuthRequired}
				if got != want {
					t.Errorf("credential override = %+v, want %+v", got, want)
				}
				continue
			}
			if got.Wire != tc.wire || got.Stored != tc.stored || got.InterruptKind != "" {
				t.Errorf("TaskState(%s, %q) = %+v, want the default row", tc.status, k, got)
			}
			if got.Wire == a2a.TaskStateAuthRequired {
				t.Errorf("TaskState(%s, %q) emits AUTH_REQUIRED", tc.status, k)
			}
		}
	}
}

func TestTaskStateRefusesUnknownStatus(t *testing.T) {
	m := builtin()
	for _, s := range []interop.RunStatus{"", "sleeping", "Pending"} {
		if got, ok := m.TaskState(s, ""); ok || got != (StateRow{}) {
			t.Errorf("TaskState(%q) = %+v, %v; want zero, false", s, got, ok)
		}
	}
}

func TestRunTaskState(t *testing.T) {
	m := builtin()
	tests := []struct {
		name string
		run  interop.Run
		want a2a.TaskState
	}{
		{"credential interrupt", interop.Run{Status: interop.StatusWaitingInput,
			Interrupts: []interop.Interrupt{{Kind: interop.InterruptCredential}}}, a2a.TaskStateAuthRequired},
		{"clarification interrupt", interop.Run{Status: interop.StatusWaitingInput,
			Interrupts: []interop.Interrupt{{Kind: interop.InterruptClarification}}}, a2a.TaskStateInputRequired},
		{"no interrupt", interop.Run{Status: interop.StatusWaitingInput}, a2a.TaskStateInputRequired},
		{"first interrupt decides", interop.Run{Status: interop.StatusWaitingInput, Interrupts: []interop.Interrupt{
			{Kind: interop.InterruptClarification}, {Kind: interop.InterruptCredential}}}, a2a.TaskStateInputRequired},
		{"running", interop.Run{Status: interop.StatusRunning}, a2a.TaskStateWorking},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := m.RunTaskState(&tc.run)
			if !ok || got.Wire != tc.want {
				t.Errorf("RunTaskState = %+v, %v; want wire %s", got, ok, tc.want)
			}
		})
	}
}

// OpenWOP interop map, a2a.taskStateReverse.
func TestReverseTaskState(t *testing.T) {
	m := builtin()
	tests := []struct {
		wire     a2a.TaskState
		want     interop.RunStatus
		wantNote bool
	}{
		{a2a.TaskStateSubmitted, interop.StatusPending, false},
		{a2a.TaskStateWorking, interop.StatusRunning, false},
		{a2a.TaskStateInputRequired, interop.StatusWaitingInput, false},
		{a2a.TaskStateAuthRequired, interop.StatusWaitingInput, true},
		{a2a.TaskStateCompleted, interop.StatusCompleted, false},
		{a2a.TaskStateFailed, interop.StatusFailed, false},
		{a2a.TaskStateCanceled, interop.StatusCancelled, false},
		{a2a.TaskStateRejected, interop.StatusFailed, true},
		{a2a.TaskStateUnspecified, interop.StatusPending, true},
		{"TASK_STATE_UNSPECIFIED", interop.StatusPending, true},
	}
	if n := len(m.ReverseRows()); n != 9 {
		t.Errorf("reverse rows = %d, want 9", n)
	}
	for _, tc := range tests {
		t.Run(tc.wire.String(), func(t *testing.T) {
			got, row, ok := m.ReverseTaskState(tc.wire)
			if !ok || got != tc.want || row.RunStatus != tc.want {
				t.Fatalf("ReverseTaskState(%q) = %s, %+v, %v; want %s", tc.wire, got, row, ok, tc.want)
			}
			if (row.Note != "") != tc.wantNote {
				t.Errorf("note = %q, want present=%v", row.Note, tc.wantNote)
			}
		})
	}
	for _, w := range []a2a.TaskState{"TASK_STATE_NAPPING", "working", "task_state_working"} {
		if got, row, ok := m.ReverseTaskState(w); ok || got != "" || row != (ReverseRow{}) {
			t.Errorf("ReverseTaskState(%q) = %s, %+v, %v; want nothing", w, got, row, ok)
		}
	}
}

// Every forward wire state reads back to a status that projects forward to
// the same wire state (the host reading its own tasks).
func TestForwardReverseRoundTrip(t *testing.T) {
	m := builtin()
	for _, row := range m.TaskStateRows() {
		back, _, ok := m.ReverseTaskState(row.Wire)
		if !ok {
			t.Fatalf("%s has no reverse row", row.Wire)
		}
		kind := interop.InterruptKind("")
		if row.Wire == a2a.TaskStateAuthRequired {
			kind = interop.InterruptCredential
		}
		again, _ := m.TaskState(back, kind)
		if again.Wire != row.Wire {
			t.Errorf("%s -> %s -> %s", row.Wire, back, again.Wire)
		}
	}
}

// OpenWOP interop map, a2a.errors: all five columns of each row.
var wantErrors = []ErrorRow{
	{Upstream: "TaskNotFoundError", JSONRPC: -32001, GRPC: "NOT_FOUND", HTTP: 404, Reason: "TASK_NOT_FOUND", ClientProjection: "not_found"},
	{Upstream: "TaskNotCancelableError", JSONRPC: -32002, GRPC: "FAILED_PRECONDITION", HTTP: 400, Reason: "TASK_NOT_CANCELABLE", ClientProjection: "run_terminal"},
	{Upstream: "PushNotificationNotSupportedError", JSONRPC: -32003, GRPC: "FAILED_PRECONDITION", HTTP: 400, Reason: "PUSH_NOTIFICATION_NOT_SUPPORTED", ClientProjection: "capability_required"},
	{Upstream: "UnsupportedOperationError", JSONRPC: -32004, GRPC: "FAILED_PRECONDITION", HTTP: 400, Reason: "UNSUPPORTED_OPERATION", ClientProjection: "capability_required"},
	{Upstream: "ContentTypeNotSupportedError", JSONRPC: -32005, GRPC: "INVALID_ARGUMENT", HTTP: 400, Reason: "CONTENT_TYPE_NOT_SUPPORTED", ClientProjection: "validation_error"},
	{Upstream: "InvalidAgentResponseError", JSONRPC: -32006, GRPC: "INTERNAL", HTTP: 500, Reason: "INVALID_AGENT_RESPONSE", ClientProjection: "validation_error"},
	{Upstream: "ExtendedAgentCardNotConfiguredError", JSONRPC: -32007, GRPC: "FAILED_PRECONDITION", HTTP: 400, Reason: "EXTENDED_AGENT_CARD_NOT_CONFIGURED", ClientProjection: "not_found"},
	{Upstream: "ExtensionSupportRequiredError", JSONRPC: -32008, GRPC: "FAILED_PRECONDITION", HTTP: 400, Reason: "EXTENSION_SUPPORT_REQUIRED", ClientProjection: "validation_error"},
	{Upstream: "VersionNotSupportedError", JSONRPC: -32009, GRPC: "FAILED_PRECONDITION", HTTP: 400, Reason: "VERSION_NOT_SUPPORTED", ClientProjection: "interop_version_unsupported"},
	{Upstream: "(invalid parameters)", JSONRPC: -32602, GRPC: "INVALID_ARGUMENT", HTTP: 400, Reason: "", ClientProjection: "validation_error"},
}

// errorColumns drops the prose columns.
func errorColumns(r ErrorRow) ErrorRow {
	r.ServerWhen, r.Note = "", ""
	return r
}

func TestA2AErrors(t *testing.T) {
	m := builtin()
	if n := len(m.A2AErrors()); n != len(wantErrors) {
		t.Errorf("error rows = %d, want %d", n, len(wantErrors))
	}
	for _, want := range wantErrors {
		t.Run(want.Upstream, func(t *testing.T) {
			byCode, ok := m.A2AError(want.JSONRPC)
			if !ok {
				t.Fatal("A2AError: no row")
			}
			if d := cmp.Diff(want, errorColumns(byCode)); d != "" {
				t.Errorf("A2AError(%d) (-want +got):\n%s", want.JSONRPC, d)
			}
			byName, ok := m.A2AErrorByName(want.Upstream)
			if !ok || byName != byCode {
				t.Errorf("A2AErrorByName = %+v, %v; want %+v", byName, ok, byCode)
			}
			byReason, ok := m.A2AErrorByReason(want.Reason)
			if want.Reason == "" {
				if ok {
					t.Errorf("A2AErrorByReason(\"\") found %+v", byReason)
				}
			} else if !ok || byReason != byCode {
				t.Errorf("A2AErrorByReason = %+v, %v; want %+v", byReason, ok, byCode)
			}
		})
	}
	// The host never raises InvalidAgentResponseError as a server.
	if r, _ := m.A2AError(CodeInvalidAgentResponse); r.ServerWhen != "" || r.Note == "" {
		t.Errorf("-32006 serverWhen %q note %q; want empty serverWhen and a note", r.ServerWhen, r.Note)
	}
	for _, code := range []int{0, -32000, -32010, -32601, 404} {
		if r, ok := m.A2AError(code); ok {
			t.Errorf("A2AError(%d) = %+v", code, r)
		}
	}
	if _, ok := m.A2AErrorByName("TaskNotFound"); ok {
		t.Error("A2AErrorByName matched a name without the Error suffix")
	}
	if _, ok := m.A2AErrorByReason("UNKNOWN_ERROR"); ok {
		t.Error("A2AErrorByReason matched UNKNOWN_ERROR")
	}
}

// The Code constants name the rows they claim to.
func TestCodeConstants(t *testing.T) {
	m := builtin()
	codes := map[int]string{
		CodeTaskNotFound: "TaskNotFoundError", CodeTaskNotCancelable: "TaskNotCancelableError",
		CodePushNotificationNotSupported:   "PushNotificationNotSupportedError",
		CodeUnsupportedOperation:           "UnsupportedOperationError",
		CodeContentTypeNotSupported:        "ContentTypeNotSupportedError",
		CodeInvalidAgentResponse:           "InvalidAgentResponseError",
		CodeExtendedAgentCardNotConfigured: "ExtendedAgentCardNotConfiguredError",
		CodeExtensionSupportRequired:       "ExtensionSupportRequiredError",
		CodeVersionNotSupported:            "VersionNotSupportedError",
		CodeInvalidParams:                  "(invalid parameters)",
	}
	for code, name := range codes {
		if r, ok := m.A2AError(code); !ok || r.Upstream != name {
			t.Errorf("A2AError(%d) = %q, want %q", code, r.Upstream, name)
		}
	}
}

// A2A 1.0.1 §5.3, §9.4 and the OpenWOP interop map's `requires` column.
func TestA2AOperations(t *testing.T) {
	m := builtin()
	tests := []struct {
		method, when string
		http, v2     string
		requires     []string
	}{
		{"SendMessage", WhenNewTask, "POST /message:send", "createRun", []string{}},
		{"SendMessage", WhenSuspended, "POST /message:send", "resolveInterruptByRun", []string{}},
		{"SendMessage", WhenLive, "POST /message:send", "", []string{}},
		{"SendMessage", WhenTerminal, "POST /message:send", "", []string{}},
		{"SendStreamingMessage", "", "POST /message:stream", "streamRunEvents", []string{"a2a.streaming"}},
		{"SendStreamingMessage", WhenAsSendMessage, "POST /message:stream", "streamRunEvents", []string{"a2a.streaming"}},
		{"GetTask", "", "GET /tasks/{id}", "getRun", []string{}},
		{"ListTasks", "", "GET /tasks", "listRuns", []string{}},
		{"CancelTask", "", "POST /tasks/{id}:cancel", "cancelRun", []string{}},
		{"SubscribeToTask", "", "POST /tasks/{id}:subscribe", "streamRunEvents", []string{"a2a.streaming", "a2a.durableTasks"}},
		{"CreateTaskPushNotificationConfig", "", "POST /tasks/{id}/pushNotificationConfigs", "", []string{"a2a.pushNotifications"}},
		{"GetTaskPushNotificationConfig", "", "GET | GET | DELETE /tasks/{id}/pushNotificationConfigs[/{configId}]", "", []string{"a2a.pushNotifications"}},
		{"ListTaskPushNotificationConfigs", "", "GET | GET | DELETE /tasks/{id}/pushNotificationConfigs[/{configId}]", "", []string{"a2a.pushNotifications"}},
		{"DeleteTaskPushNotificationConfig", "", "GET | GET | DELETE /tasks/{id}/pushNotificationConfigs[/{configId}]", "", []string{"a2a.pushNotifications"}},
		{"GetExtendedAgentCard", "", "GET /extendedAgentCard", "", []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.method+"/"+tc.when, func(t *testing.T) {
			op, ok := m.A2AOperation(tc.method, tc.when)
			if !ok {
				t.Fatal("no row")
			}
			if op.HTTP != tc.http || op.V2Operation != tc.v2 || op.Rule == "" {
				t.Errorf("row = %+v; want http %q v2 %q", op, tc.http, tc.v2)
			}
			if d := cmp.Diff(tc.requires, op.Requires); d != "" {
				t.Errorf("requires (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.requires, m.Requires(tc.method)); d != "" && tc.method != "SendMessage" {
				t.Errorf("Requires(%s) (-want +got):\n%s", tc.method, d)
			}
		})
	}
	if n := len(m.A2AOperations()); n != 12 {
		t.Errorf("A2A operation rows = %d, want 12", n)
	}
	refused := []struct{ method, when string }{
		{"SendMessage", ""}, // four rows: a qualifier is needed
		{"SendMessage", WhenAsSendMessage},
		{"GetTask", WhenNewTask},
		{"message/send", ""}, // 0.3 names are not 1.0 names
		{"tasks/get", ""},
		{"sendmessage", WhenNewTask},
	}
	for _, tc := range refused {
		if op, ok := m.A2AOperation(tc.method, tc.when); ok {
			t.Errorf("A2AOperation(%q, %q) = %+v; want no row", tc.method, tc.when, op)
		}
	}
}

func TestSendMessageWhen(t *testing.T) {
	m := builtin()
	tests := []struct {
		hasTask bool
		status  interop.RunStatus
		want    string
		v2      string
	}{
		{false, "", WhenNewTask, "createRun"},
		{false, interop.StatusCompleted, WhenNewTask, "createRun"},
		{true, interop.StatusWaitingApproval, WhenSuspended, "resolveInterruptByRun"},
		{true, interop.StatusWaitingInput, WhenSuspended, "resolveInterruptByRun"},
		{true, interop.StatusWaitingExternal, WhenSuspended, "resolveInterruptByRun"},
		{true, interop.StatusPending, WhenLive, ""},
		{true, interop.StatusRunning, WhenLive, ""},
		{true, interop.StatusPaused, WhenLive, ""},
		{true, interop.StatusCancelling, WhenLive, ""},
		{true, interop.StatusCompleted, WhenTerminal, ""},
		{true, interop.StatusFailed, WhenTerminal, ""},
		{true, interop.StatusCancelled, WhenTerminal, ""},
	}
	for _, tc := range tests {
		got := SendMessageWhen(tc.hasTask, tc.status)
		if got != tc.want {
			t.Errorf("SendMessageWhen(%v, %s) = %q, want %q", tc.hasTask, tc.status, got, tc.want)
		}
		op, ok := m.A2AOperation("SendMessage", got)
		if !ok || op.V2Operation != tc.v2 {
			t.Errorf("row for %q = %+v, %v; want v2 %q", got, op, ok, tc.v2)
		}
	}
}

func TestRequires(t *testing.T) {
	m := builtin()
	tests := []struct {
		method string
		want   []string
	}{
		{"SendMessage", []string{}},
		{"SubscribeToTask", []string{"a2a.streaming", "a2a.durableTasks"}},
		{"DeleteTaskPushNotificationConfig", []string{"a2a.pushNotifications"}},
		{"server/discover", []string{}},
		{"tools/call", []string{"mcp.serverMount"}},
		{"resources/read", []string{"mcp.serverMount"}},
		{"tasks/update", []string{"mcp.serverMount"}},
		{"notifications/tasks", []string{"mcp.serverMount"}},
		{"no/such", []string{}},
	}
	for _, tc := range tests {
		if d := cmp.Diff(tc.want, m.Requires(tc.method)); d != "" {
			t.Errorf("Requires(%s) (-want +got):\n%s", tc.method, d)
		}
	}
}

func TestRequirementsMet(t *testing.T) {
	tests := []struct {
		name     string
		requires []string
		off      []string
		missing  string
		ok       bool
	}{
		{"nothing required", nil, []string{"a2a.streaming"}, "", true},
		{"all on", []string{"a2a.streaming", "a2a.durableTasks"}, nil, "", true},
		{"second off", []string{"a2a.streaming", "a2a.durableTasks"}, []string{"a2a.durableTasks"}, "a2a.durableTasks", false},
		{"both off, first reported", []string{"a2a.streaming", "a2a.durableTasks"}, []string{"a2a.durableTasks", "a2a.streaming"}, "a2a.streaming", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			missing, ok := RequirementsMet(tc.requires, facetsExcept(tc.off...))
			if missing != tc.missing || ok != tc.ok {
				t.Errorf("RequirementsMet = %q, %v; want %q, %v", missing, ok, tc.missing, tc.ok)
			}
		})
	}
}

// OpenWOP interop.md §The operation mappings: a row whose facet is off is refused with the row's error.
func TestA2AGate(t *testing.T) {
	m := builtin()
	tests := []struct {
		method, when string
		off          []string
		facet        string // "" when the gate passes
		code         int
	}{
		{"SendMessage", WhenNewTask, []string{"a2a.streaming", "a2a.durableTasks", "a2a.pushNotifications"}, "", 0},
		{"SendStreamingMessage", "", nil, "", 0},
		{"SendStreamingMessage", "", []string{"a2a.streaming"}, "a2a.streaming", CodeUnsupportedOperation},
		{"SubscribeToTask", "", []string{"a2a.streaming"}, "a2a.streaming", CodeUnsupportedOperation},
		{"SubscribeToTask", "", []string{"a2a.durableTasks"}, "a2a.durableTasks", CodeUnsupportedOperation},
		{"CreateTaskPushNotificationConfig", "", []string{"a2a.pushNotifications"}, "a2a.pushNotifications", CodePushNotificationNotSupported},
		{"GetTaskPushNotificationConfig", "", []string{"a2a.pushNotifications"}, "a2a.pushNotifications", CodePushNotificationNotSupported},
		{"ListTaskPushNotificationConfigs", "", []string{"a2a.pushNotifications"}, "a2a.pushNotifications", CodePushNotificationNotSupported},
		{"DeleteTaskPushNotificationConfig", "", []string{"a2a.pushNotifications"}, "a2a.pushNotifications", CodePushNotificationNotSupported},
		{"DeleteTaskPushNotificationConfig", "", nil, "", 0},
	}
	for _, tc := range tests {
		t.Run(tc.method+"/"+tc.facet, func(t *testing.T) {
			err := m.A2AGate(tc.method, tc.when, facetsExcept(tc.off...))
			if tc.facet == "" {
				if err != nil {
					t.Fatalf("A2AGate = %v, want nil", err)
				}
				return
			}
			var fe *FacetOffError
			if !errors.As(err, &fe) {
				t.Fatalf("A2AGate = %v, want *FacetOffError", err)
			}
			want, _ := m.A2AError(tc.code)
			if fe.Method != tc.method || fe.Facet != tc.facet || fe.Refusal != want {
				t.Errorf("FacetOffError = %+v, want method %s facet %s refusal %d", fe, tc.method, tc.facet, tc.code)
			}
		})
	}
	err := m.A2AGate("message/send", "", allFacets)
	if !errors.Is(err, ErrUnknownOperation) {
		t.Errorf("A2AGate(message/send) = %v, want ErrUnknownOperation", err)
	}
}

func TestMCPGate(t *testing.T) {
	m := builtin()
	tests := []struct {
		method string
		off    []string
		facet  string
	}{
		{"server/discover", []string{"mcp.serverMount"}, ""},
		{"tools/call", nil, ""},
		{"tools/call", []string{"mcp.serverMount"}, "mcp.serverMount"},
		{"prompts/get", []string{"mcp.serverMount"}, "mcp.serverMount"},
		{"tasks/get", []string{"mcp.serverMount"}, "mcp.serverMount"},
		{"tasks/cancel", nil, ""},
	}
	for _, tc := range tests {
		err := m.MCPGate(tc.method, facetsExcept(tc.off...))
		if tc.facet == "" {
			if err != nil {
				t.Errorf("MCPGate(%s) = %v, want nil", tc.method, err)
			}
			continue
		}
		var fe *FacetOffError
		if !errors.As(err, &fe) || fe.Method != tc.method || fe.Facet != tc.facet || fe.Refusal != (ErrorRow{}) {
			t.Errorf("MCPGate(%s) = %#v, want FacetOffError{%s, %s}", tc.method, err, tc.method, tc.facet)
		}
	}
	if err := m.MCPGate("tools/destroy", allFacets); !errors.Is(err, ErrUnknownOperation) {
		t.Errorf("MCPGate(tools/destroy) = %v, want ErrUnknownOperation", err)
	}
}

// OpenWOP interop map, mcp.tasks.status.
func TestMCPTaskStatus(t *testing.T) {
	m := builtin()
	want := map[interop.RunStatus]TaskStatus{
		interop.StatusPending: TaskWorking, interop.StatusRunning: TaskWorking,
		interop.StatusPaused: TaskWorking, interop.StatusCancelling: TaskWorking,
		interop.StatusWaitingExternal: TaskWorking,
		interop.StatusWaitingApproval: TaskInputRequired, interop.StatusWaitingInput: TaskInputRequired,
		interop.StatusCompleted: TaskCompleted, interop.StatusFailed: TaskCompleted,
		interop.StatusCancelled: TaskCancelled,
	}
	if !m.HasMCPTasks() {
		t.Fatal("builtin map has no mcp.tasks")
	}
	for _, s := range interop.AllStatuses() {
		got, ok := m.MCPTaskStatus(s)
		if !ok || got != want[s] {
			t.Errorf("MCPTaskStatus(%s) = %q, %v; want %q", s, got, ok, want[s])
		}
	}
	if got, ok := m.MCPTaskStatus("sleeping"); ok || got != "" {
		t.Errorf("MCPTaskStatus(sleeping) = %q, %v", got, ok)
	}
	// Task status failed is reserved for host JSON-RPC errors: no run maps to it.
	for _, r := range m.MCPTaskStatusRows() {
		if r.TaskStatus == TaskFailed {
			t.Errorf("run status %s projects to failed", r.RunStatus)
		}
	}
}

func TestMCPMethods(t *testing.T) {
	m := builtin()
	tests := []struct {
		method string
		tasks  bool
		v2     string
		req    []string
	}{
		{"server/discover", false, "getCapabilities", []string{}},
		{"tools/list", false, "", []string{"mcp.serverMount"}},
		{"tools/call", false, "createRun", []string{"mcp.serverMount"}},
		{"prompts/get", false, "", []string{"mcp.serverMount"}},
		{"resources/read", false, "", []string{"mcp.serverMount"}},
		{"initialize", false, "", []string{}},
		{"Mcp-Session-Id", false, "", []string{}},
		{"tasks/get", true, "getRun", []string{"mcp.serverMount"}},
		{"tasks/update", true, "resolveInterruptByRun", []string{"mcp.serverMount"}},
		{"tasks/cancel", true, "cancelRun", []string{"mcp.serverMount"}},
		{"notifications/tasks", true, "", []string{"mcp.serverMount"}},
		{"subscriptions/listen taskIds", true, "", []string{"mcp.serverMount"}},
	}
	for _, tc := range tests {
		lookup, other := m.MCPMethod, m.MCPTaskMethod
		if tc.tasks {
			lookup, other = m.MCPTaskMethod, m.MCPMethod
		}
		op, ok := lookup(tc.method)
		if !ok || op.V2Operation != tc.v2 || !cmp.Equal(op.Requires, tc.req) {
			t.Errorf("%s = %+v, %v; want v2 %q requires %v", tc.method, op, ok, tc.v2, tc.req)
		}
		if _, ok := other(tc.method); ok {
			t.Errorf("%s found in the wrong table", tc.method)
		}
	}
	if len(m.MCPMethods()) != 5 || len(m.MCPTaskMethods()) != 4 {
		t.Errorf("rows: methods %d, tasks %d; want 5, 4", len(m.MCPMethods()), len(m.MCPTaskMethods()))
	}
	if op, ok := m.MCPMethod("prompts/get | resources/read"); ok {
		t.Errorf("the joined upstream text matched as a method: %+v", op)
	}
}

// OpenWOP interop map, mcp.features.
func TestFeatures(t *testing.T) {
	m := builtin()
	want := []string{"server-discover", "mrtr", "cacheable-lists"}
	if d := cmp.Diff(want, m.RequiredFeatures("mcp-2026-07-28")); d != "" {
		t.Errorf("RequiredFeatures (-want +got):\n%s", d)
	}
	if got := m.RequiredFeatures("mcp-2025-11-25"); len(got) != 0 {
		t.Errorf("RequiredFeatures(2025-11-25) = %v", got)
	}
	ids := []string{}
	for _, f := range m.Features() {
		ids = append(ids, f.ID)
	}
	if d := cmp.Diff([]string{"server-discover", "mrtr", "cacheable-lists", "extensions"}, ids); d != "" {
		t.Errorf("feature ids (-want +got):\n%s", d)
	}
	ext, ok := m.Feature("extensions")
	if !ok || len(ext.RequiredFor) != 0 || ext.Meaning == "" {
		t.Errorf("Feature(extensions) = %+v, %v", ext, ok)
	}
	if _, ok := m.Feature("tasks"); ok {
		t.Error("Feature(tasks) found")
	}
}

func TestElementsAndPins(t *testing.T) {
	m := builtin()
	counts := map[Section]int{
		SectionA2ACard: 7, SectionA2AFields: 10, SectionMCPHeaders: 3, SectionMCPMeta: 4,
		SectionMCPMRTR: 5, SectionMCPCache: 2, SectionMCPAuthorization: 1, SectionMCPTaskFields: 4,
	}
	for s, n := range counts {
		rows := m.Elements(s)
		if len(rows) != n {
			t.Errorf("Elements(%s) = %d rows, want %d", s, len(rows), n)
		}
		for _, r := range rows {
			if r.Element == "" || r.Rule == "" {
				t.Errorf("%s: empty row %+v", s, r)
			}
		}
	}
	if got := m.Elements("a2a.nothing"); got != nil {
		t.Errorf("Elements(unknown) = %v", got)
	}
	want := Pins{
		A2A: Pin{Release: "1.0.1", Negotiated: "1.0",
			Spec:  "https://github.com/a2aproject/A2A/blob/v1.0.1/docs/specification.md",
			Proto: "https://github.com/a2aproject/A2A/blob/v1.0.1/specification/a2a.proto"},
		MCP: Pin{Revision: "2026-07-28", Spec: "https://modelcontextprotocol.io/specification/2026-07-28",
			Schema: "https://github.com/modelcontextprotocol/modelcontextprotocol/blob/main/schema/2026-07-28/schema.ts"},
		MCPTasks: Pin{Extension: "io.modelcontextprotocol/tasks", Revision: "2026-07-28",
			Spec:   "https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/2026-07-28/tasks.md",
			Schema: "https://github.com/modelcontextprotocol/ext-tasks/blob/main/schema/2026-07-28/schema.ts"},
	}
	if d := cmp.Diff(want, m.Pins()); d != "" {
		t.Errorf("Pins (-want +got):\n%s", d)
	}
	if m.Version() != 1 || m.Updated() == "" {
		t.Errorf("Version %d Updated %q", m.Version(), m.Updated())
	}
}

// A Map is read-only: changing what it hands out changes nothing inside.
func TestReturnedSlicesAreCopies(t *testing.T) {
	m := builtin()
	before, err := m.JSON()
	if err != nil {
		t.Fatal(err)
	}
	op, _ := m.A2AOperation("SubscribeToTask", "")
	op.Requires[0] = "a2a.nothing"
	for _, o := range m.A2AOperations() {
		if len(o.Requires) > 0 {
			o.Requires[0] = "x.y"
		}
	}
	m.MCPMethods()[1].Requires[0] = "x.y"
	m.MCPTaskMethods()[0].Requires[0] = "x.y"
	m.Requires("tools/call")[0] = "x.y"
	f := m.Features()
	f[0].RequiredFor[0] = "mcp-1999-01-01"
	g, _ := m.Feature("mrtr")
	g.RequiredFor[0] = "mcp-1999-01-01"
	m.TaskStateRows()[0].Wire = a2a.TaskStateRejected
	m.ReverseRows()[0].RunStatus = interop.StatusFailed
	m.A2AErrors()[0].JSONRPC = 1
	m.MCPTaskStatusRows()[0].TaskStatus = TaskFailed
	m.Elements(SectionA2ACard)[0].Rule = "changed"

	after, err := m.JSON()
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(string(before), string(after)); d != "" {
		t.Errorf("map changed through a returned value (-before +after):\n%s", d)
	}
	if got := m.Requires("SubscribeToTask"); got[0] != "a2a.streaming" {
		t.Errorf("index changed: Requires = %v", got)
	}
	if err := m.A2AGate("SubscribeToTask", "", facetsExcept("a2a.nothing")); err != nil {
		t.Errorf("gate changed: %v", err)
	}
	if got := m.RequiredFeatures("mcp-2026-07-28"); len(got) != 3 {
		t.Errorf("features changed: %v", got)
	}
}

func TestKnownFacet(t *testing.T) {
	known := []string{
		"a2a.versions", "a2a.preferredVersion", "a2a.minimumVersion", "a2a.refreshedAt", "a2a.profiles",
		"a2a.agentCardUrl", "a2a.streaming", "a2a.pushNotifications", "a2a.durableTasks", "a2a.agentCards",
		"mcp.revisions", "mcp.preferredVersion", "mcp.minimumRevision", "mcp.refreshedAt", "mcp.profiles",
		"mcp.features", "mcp.serverUrls", "mcp.serverMount", "mcp.mrtr", "mcp.client",
	}
	for _, f := range known {
		if !KnownFacet(f) {
			t.Errorf("KnownFacet(%q) = false", f)
		}
	}
	unknown := []string{"", "a2a", "a2a.", ".streaming", "a2a.minimumRevision", "mcp.minimumVersion",
		"mcp.streaming", "a2a.serverMount", "rest.streaming", "A2A.streaming", "a2a.streaming.x", "a2a.Streaming"}
	for _, f := range unknown {
		if KnownFacet(f) {
			t.Errorf("KnownFacet(%q) = true", f)
		}
	}
}
