package interopmap

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/interop"
)

// numStatuses is the size of the closed interop.RunStatus enum.
const numStatuses = 10

// statusIndex maps a run status to a dense index, or -1. A switch keeps the
// hot lookups free of maps and allocations.
func statusIndex(s interop.RunStatus) int {
	switch s {
	case interop.StatusPending:
		return 0
	case interop.StatusRunning:
		return 1
	case interop.StatusPaused:
		return 2
	case interop.StatusWaitingApproval:
		return 3
	case interop.StatusWaitingInput:
		return 4
	case interop.StatusWaitingExternal:
		return 5
	case interop.StatusCompleted:
		return 6
	case interop.StatusFailed:
		return 7
	case interop.StatusCancelling:
		return 8
	case interop.StatusCancelled:
		return 9
	}
	return -1
}

// Map is a validated, indexed interop map. It is read-only: no method
// changes it and every slice it returns is the caller's copy, so one Map
// may be shared by any number of goroutines.
type Map struct {
	doc document

	stateRows []StateRow              // a2a.taskState in file order
	forward   [numStatuses]StateRow   // default row per status
	overrides []StateRow              // rows with an interrupt kind
	reverse   []ReverseRow            // a2a.taskStateReverse
	errorRows []ErrorRow              // a2a.errors
	a2aOps    []opEntry               // a2a.operations
	mcpOps    []opEntry               // mcp.methods
	taskOps   []opEntry               // mcp.tasks.methods
	hasTasks  bool                    // mcp.tasks present
	taskRows  []TaskStatusRow         // mcp.tasks.status in file order
	taskState [numStatuses]TaskStatus // mcp.tasks.status per status
	features  []Feature               // mcp.features
}

type opEntry struct {
	op      Operation
	methods []string
}

func splitAlternatives(s string) []string {
	parts := strings.Split(s, "|")
	for i, p := range parts {
		parts[i] = strings.TrimSpace(p)
	}
	return parts
}

// build indexes a checked document.
func build(doc *document) *Map {
	m := &Map{doc: *doc}
	for _, r := range doc.A2A.TaskState {
		row := StateRow{RunStatus: r.RunStatus, InterruptKind: r.InterruptKind, Stored: r.Stored, Wire: r.Wire, Carrier: r.Carrier}
		m.stateRows = append(m.stateRows, row)
		if row.InterruptKind != "" {
			m.overrides = append(m.overrides, row)
		} else if i := statusIndex(row.RunStatus); i >= 0 {
			m.forward[i] = row
		}
	}
	for _, r := range doc.A2A.TaskStateReverse {
		m.reverse = append(m.reverse, ReverseRow(r))
	}
	for _, r := range doc.A2A.Errors {
		row := ErrorRow{
			Upstream: r.Upstream, JSONRPC: r.JSONRPC, GRPC: r.GRPC, HTTP: r.HTTP,
			Reason: r.Reason, ClientProjection: r.ClientProjection, Note: r.Note,
		}
		if r.ServerWhen != nil {
			row.ServerWhen = *r.ServerWhen
		}
		m.errorRows = append(m.errorRows, row)
	}
	m.a2aOps = buildOps(doc.A2A.Operations)
	m.mcpOps = buildOps(doc.MCP.Methods)
	for _, f := range doc.MCP.Features {
		m.features = append(m.features, Feature{ID: f.ID, RequiredFor: slices.Clone(f.RequiredFor), Meaning: f.Meaning})
	}
	if t := doc.MCP.Tasks; t != nil {
		m.hasTasks = true
		m.taskOps = buildOps(t.Methods)
		for _, r := range t.Status {
			m.taskRows = append(m.taskRows, TaskStatusRow(r))
			if i := statusIndex(r.RunStatus); i >= 0 {
				m.taskState[i] = r.TaskStatus
			}
		}
	}
	return m
}

func buildOps(rows []docOperation) []opEntry {
	out := make([]opEntry, 0, len(rows))
	for _, r := range rows {
		op := Operation{Upstream: r.Upstream, HTTP: r.HTTP, When: r.When, Requires: slices.Clone(r.Requires), Rule: r.Rule}
		if op.Requires == nil {
			op.Requires = []string{}
		}
		if r.V2Operation != nil {
			op.V2Operation = *r.V2Operation
		}
		out = append(out, opEntry{op: op, methods: splitAlternatives(r.Upstream)})
	}
	return out
}

// Version is the map format version (always 1).
func (m *Map) Version() int { return m.doc.Version }

// Updated is the map's "updated" date.
func (m *Map) Updated() string { return m.doc.Updated }

// Pins are the upstream releases the map is written against.
func (m *Map) Pins() Pins {
	p := Pins{A2A: Pin(m.doc.Pins.A2A), MCP: Pin(m.doc.Pins.MCP)}
	if t := m.doc.Pins.MCPTasks; t != nil {
		p.MCPTasks = Pin(*t)
	}
	return p
}

// TaskState projects a run onto an A2A task state (OpenWOP interop map, a2a.taskState; RFC 0199 §D.1). kind is
// the open interrupt's kind, or "" when none is open. An override row for
// (status, kind) wins, so waiting-input on a credential interrupt is
// AUTH_REQUIRED; every other combination gets the status's default row.
// It reports false only for a status outside the closed enum.
func (m *Map) TaskState(status interop.RunStatus, kind interop.InterruptKind) (StateRow, bool) {
	i := statusIndex(status)
	if i < 0 {
		return StateRow{}, false
	}
	if kind != "" {
		for _, o := range m.overrides {
			if o.RunStatus == status && o.InterruptKind == kind {
				return o, true
			}
		}
	}
	return m.forward[i], true
}

// RunTaskState is TaskState for run's status and its first open interrupt.
func (m *Map) RunTaskState(run *interop.Run) (StateRow, bool) {
	var kind interop.InterruptKind
	if it, ok := run.OpenInterrupt(); ok {
		kind = it.Kind
	}
	return m.TaskState(run.Status, kind)
}

// TaskStateRows returns every a2a.taskState row in file order.
func (m *Map) TaskStateRows() []StateRow { return slices.Clone(m.stateRows) }

// ReverseTaskState maps a remote agent's task state to a run status
// (OpenWOP interop map, a2a.taskStateReverse). Both a2a.TaskStateUnspecified and the literal
// "TASK_STATE_UNSPECIFIED" find the unspecified row.
func (m *Map) ReverseTaskState(wire a2a.TaskState) (interop.RunStatus, ReverseRow, bool) {
	if wire == "TASK_STATE_UNSPECIFIED" {
		wire = a2a.TaskStateUnspecified
	}
	for _, r := range m.reverse {
		if r.Wire == wire {
			return r.RunStatus, r, true
		}
	}
	return "", ReverseRow{}, false
}

// ReverseRows returns every a2a.taskStateReverse row in file order.
func (m *Map) ReverseRows() []ReverseRow { return slices.Clone(m.reverse) }

// A2AError returns the error row with JSON-RPC code code (OpenWOP interop map, a2a.errors).
func (m *Map) A2AError(code int) (ErrorRow, bool) {
	for _, r := range m.errorRows {
		if r.JSONRPC == code {
			return r, true
		}
	}
	return ErrorRow{}, false
}

// A2AErrorByName returns the error row named name, e.g. "TaskNotFoundError".
func (m *Map) A2AErrorByName(name string) (ErrorRow, bool) {
	for _, r := range m.errorRows {
		if r.Upstream == name {
			return r, true
		}
	}
	return ErrorRow{}, false
}

// A2AErrorByReason returns the error row whose ErrorInfo reason is reason;
// a client identifies a peer's error this way (OpenWOP RFC 0211 §F).
func (m *Map) A2AErrorByReason(reason string) (ErrorRow, bool) {
	if reason == "" {
		return ErrorRow{}, false
	}
	for _, r := range m.errorRows {
		if r.Reason == reason {
			return r, true
		}
	}
	return ErrorRow{}, false
}

// A2AErrors returns every error row in file order.
func (m *Map) A2AErrors() []ErrorRow { return slices.Clone(m.errorRows) }

// findOp returns the row serving method under qualifier when. An empty when
// selects the method's row only when exactly one row names the method.
func findOp(ops []opEntry, method, when string) (*opEntry, bool) {
	var only *opEntry
	n := 0
	for i := range ops {
		e := &ops[i]
		if !slices.Contains(e.methods, method) {
			continue
		}
		if e.op.When == when {
			return e, true
		}
		only = e
		n++
	}
	if when == "" && n == 1 {
		return only, true
	}
	return nil, false
}

func cloneOps(ops []opEntry) []Operation {
	out := make([]Operation, len(ops))
	for i, e := range ops {
		out[i] = e.op.clone()
	}
	return out
}

// A2AOperation returns the a2a.operations row for method (an A2A 1.0
// JSON-RPC method name). when selects among several rows of one method
// (see [SendMessageWhen]); "" suffices for a method with a single row.
func (m *Map) A2AOperation(method, when string) (Operation, bool) {
	return lookupOp(m.a2aOps, method, when)
}

// lookupOp is findOp returning a copy the caller may keep.
func lookupOp(ops []opEntry, method, when string) (Operation, bool) {
	e, ok := findOp(ops, method, when)
	if !ok {
		return Operation{}, false
	}
	return e.op.clone(), true
}

// A2AOperations returns every a2a.operations row in file order.
func (m *Map) A2AOperations() []Operation { return cloneOps(m.a2aOps) }

// MCPMethod returns the mcp.methods row naming method.
func (m *Map) MCPMethod(method string) (Operation, bool) {
	return lookupOp(m.mcpOps, method, "")
}

// MCPMethods returns every mcp.methods row in file order.
func (m *Map) MCPMethods() []Operation { return cloneOps(m.mcpOps) }

// MCPTaskMethod returns the mcp.tasks.methods row naming method.
func (m *Map) MCPTaskMethod(method string) (Operation, bool) {
	return lookupOp(m.taskOps, method, "")
}

// MCPTaskMethods returns every mcp.tasks.methods row in file order.
func (m *Map) MCPTaskMethods() []Operation { return cloneOps(m.taskOps) }

// HasMCPTasks reports whether the map carries the mcp.tasks rows.
func (m *Map) HasMCPTasks() bool { return m.hasTasks }

// MCPTaskStatus projects a run status onto an MCP task status
// (OpenWOP interop map, mcp.tasks.status). It reports false for a status outside the enum or a map without
// mcp.tasks.
func (m *Map) MCPTaskStatus(status interop.RunStatus) (TaskStatus, bool) {
	i := statusIndex(status)
	if i < 0 || !m.hasTasks {
		return "", false
	}
	return m.taskState[i], true
}

// MCPTaskStatusRows returns every mcp.tasks.status row in file order.
func (m *Map) MCPTaskStatusRows() []TaskStatusRow { return slices.Clone(m.taskRows) }

// Requires returns the facets an operation needs: the union, in file order,
// of the requires lists of every A2A, MCP or MCP Tasks row naming it.
func (m *Map) Requires(method string) []string {
	out := []string{}
	for _, ops := range [][]opEntry{m.a2aOps, m.mcpOps, m.taskOps} {
		for _, e := range ops {
			if !slices.Contains(e.methods, method) {
				continue
			}
			for _, f := range e.op.Requires {
				if !slices.Contains(out, f) {
					out = append(out, f)
				}
			}
		}
	}
	return out
}

// RequirementsMet reports whether advertised holds for every entry of
// requires; when not, missing is the first entry that fails.
func RequirementsMet(requires []string, advertised func(facet string) bool) (missing string, ok bool) {
	for _, f := range requires {
		if !advertised(f) {
			return f, false
		}
	}
	return "", true
}

// A2AGate decides whether an A2A operation may run given the advertised
// facets (OpenWOP interop.md §The operation mappings; interop map, a2a.operations). It returns nil, an error wrapping
// [ErrUnknownOperation], or a [*FacetOffError] whose Refusal is
// PushNotificationNotSupportedError when a2a.pushNotifications is off and
// UnsupportedOperationError for any other facet.
func (m *Map) A2AGate(method, when string, advertised func(facet string) bool) error {
	e, ok := findOp(m.a2aOps, method, when)
	if !ok {
		return fmt.Errorf("%w: %s", ErrUnknownOperation, method)
	}
	missing, ok := RequirementsMet(e.op.Requires, advertised)
	if ok {
		return nil
	}
	code := CodeUnsupportedOperation
	if missing == "a2a.pushNotifications" {
		code = CodePushNotificationNotSupported
	}
	refusal, _ := m.A2AError(code)
	return &FacetOffError{Method: method, Facet: missing, Refusal: refusal}
}

// MCPGate is A2AGate for mcp.methods and mcp.tasks.methods rows. A
// [*FacetOffError] from it has a zero Refusal: the MCP binding chooses the
// answer.
func (m *Map) MCPGate(method string, advertised func(facet string) bool) error {
	e, ok := findOp(m.mcpOps, method, "")
	if !ok {
		if e, ok = findOp(m.taskOps, method, ""); !ok {
			return fmt.Errorf("%w: %s", ErrUnknownOperation, method)
		}
	}
	if missing, ok := RequirementsMet(e.op.Requires, advertised); !ok {
		return &FacetOffError{Method: method, Facet: missing}
	}
	return nil
}

// Features returns every mcp.features entry in file order.
func (m *Map) Features() []Feature {
	out := make([]Feature, len(m.features))
	for i, f := range m.features {
		f.RequiredFor = slices.Clone(f.RequiredFor)
		out[i] = f
	}
	return out
}

// Feature returns the mcp.features entry with id.
func (m *Map) Feature(id string) (Feature, bool) {
	for _, f := range m.features {
		if f.ID == id {
			f.RequiredFor = slices.Clone(f.RequiredFor)
			return f, true
		}
	}
	return Feature{}, false
}

// RequiredFeatures returns the feature ids a host claiming profile (e.g.
// "mcp-2026-07-28") must list in mcp.features (OpenWOP interop map, mcp.features).
func (m *Map) RequiredFeatures(profile string) []string {
	out := []string{}
	for _, f := range m.features {
		if slices.Contains(f.RequiredFor, profile) {
			out = append(out, f.ID)
		}
	}
	return out
}

// Elements returns the element rows of section, or nil for an unknown
// section (or mcp.tasks.fields in a map without mcp.tasks).
func (m *Map) Elements(section Section) []Element {
	var rows []docElement
	switch section {
	case SectionA2ACard:
		rows = m.doc.A2A.Card
	case SectionA2AFields:
		rows = m.doc.A2A.Fields
	case SectionMCPHeaders:
		rows = m.doc.MCP.Headers
	case SectionMCPMeta:
		rows = m.doc.MCP.Meta
	case SectionMCPMRTR:
		rows = m.doc.MCP.MRTR
	case SectionMCPCache:
		rows = m.doc.MCP.Cache
	case SectionMCPAuthorization:
		rows = m.doc.MCP.Authorization
	case SectionMCPTaskFields:
		if m.doc.MCP.Tasks == nil {
			return nil
		}
		rows = m.doc.MCP.Tasks.Fields
	default:
		return nil
	}
	out := make([]Element, len(rows))
	for i, r := range rows {
		out[i] = Element(r)
	}
	return out
}

// JSON returns the map in canonical form: two-space indentation, members
// in schema order, no HTML escaping, a final newline: the form
// mapping/data/interopmap.json is stored in.
func (m *Map) JSON() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(&m.doc); err != nil {
		return nil, fmt.Errorf("mapping: encode: %w", err)
	}
	return buf.Bytes(), nil
}

// MarshalJSON encodes the map compactly.
func (m *Map) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(&m.doc)
	if err != nil {
		return nil, fmt.Errorf("mapping: encode: %w", err)
	}
	return b, nil
}
