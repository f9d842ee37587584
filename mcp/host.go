package mcp

// Optional host extension points. A workflow host's product is its
// workflows, and the mount serves them as tools with no help; a host that
// also has things that are not workflows — quick synchronous tools,
// prompts, readable resources, argument completion — plugs them in here.
// Each is off unless configured: an unset extension point serves nothing
// and advertises nothing (its methods stay -32601, server/discover does
// not list its capability), so the OpenWOP surface is unchanged
// (OpenWOP interop map, mcp.methods; interop.md §MCP tasks and cancellation).
//
// Every method receives the request's context (cancelled when the client
// goes away or cancels the request) and the authenticated Subject, and
// does its own authorization: unreadable is unknown (OpenWOP interop.md §Isolation), so a
// name or URI the Subject may not see is interop.ErrNotFound like one that
// does not exist. An *interop.InputError or interop.ErrInvalidInput
// refuses the caller's input (-32602); any other error is a server fault
// answered with a generic -32603 and logged, never sent.

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/mcp/internal/mount"
)

// NativeTools serves tools that are not workflows, beside the caller's
// workflows in tools/list. Names must not collide with workflow ids: a
// workflow wins and the native tool is left out (and logged).
type NativeTools interface {
	// ListTools returns the tools the Subject may call, in any order. The
	// mount caches the list per authorization context like the workflows
	// (Config.ListTTL, Server.InvalidateTools).
	ListTools(ctx context.Context, s interop.Subject) ([]Tool, error)
	// CallTool runs one call. Its arguments were already validated
	// against the tool's InputSchema.
	CallTool(ctx context.Context, s interop.Subject, call *ToolCall) (ToolResult, error)
}

// Tool describes a native tool.
type Tool struct {
	Name        string
	Title       string
	Description string
	// InputSchema is the JSON Schema of the arguments (an object schema),
	// sent verbatim; nil means {"type":"object"}. It must be
	// self-contained.
	InputSchema json.RawMessage
	// TaskSupport is the tool's execution.taskSupport when the tasks
	// extension is served: "" or interop.TaskForbidden for a tool that
	// always answers at once; interop.TaskOptional or TaskRequired for a
	// tool whose [Handoff] may run long. A call of a TaskRequired tool
	// that did not declare the extension is -32021 before CallTool.
	TaskSupport string
}

// ToolCall is one call of a native tool.
type ToolCall struct {
	Name string
	// Arguments is the arguments object ({} when absent), valid against
	// the tool's InputSchema.
	Arguments json.RawMessage
	InputRound

	progress *progressSink
}

// Progress reports progress of the call (notifications/progress): when
// the request carried _meta progressToken, the call is then answered as an
// SSE stream carrying the notifications and finally the result. It is a
// no-op without a token and after CallTool returned. total ≤ 0 means
// unknown; progress should grow with every call.
func (c *ToolCall) Progress(progress, total float64, message string) {
	if c.progress != nil {
		c.progress.send(progress, total, message)
	}
}

// ToolResult is how a native tool call ends: exactly one of a result
// (Content, StructuredContent, IsError), Input or Handoff.
type ToolResult struct {
	// Content is the result's content (CallToolResult.content).
	Content []Content
	// StructuredContent, when set, is a JSON object sent as
	// structuredContent.
	StructuredContent json.RawMessage
	// IsError reports a tool error the model should see (never a
	// JSON-RPC error).
	IsError bool
	// Input asks the caller for input first (InputRequiredResult).
	Input *InputRequired
	// Handoff continues the call as a run of one of the caller's
	// workflows, answered exactly as a call of that workflow would be: a
	// CreateTaskResult when the request declared the tasks extension and
	// the tool's TaskSupport allows tasks, else the run is awaited and
	// projected (input rounds included). It lets a tool gather input
	// synchronously and then run long (MRTR then tasks).
	Handoff *Handoff
}

// Handoff names the run a native tool call continues as.
type Handoff struct {
	WorkflowID string
	// Inputs are the run inputs (a JSON object), validated by the store.
	Inputs json.RawMessage
}

// Prompts serves prompts/list and prompts/get.
type Prompts interface {
	// ListPrompts returns the prompts the Subject may get, in any order.
	ListPrompts(ctx context.Context, s interop.Subject) ([]Prompt, error)
	// GetPrompt renders one prompt. The mount found req.Name in ListPrompts
	// and checked that every required argument is present; arguments are
	// plain strings, to be rendered as text, never evaluated as a
	// template (OpenWOP interop map, mcp.methods).
	GetPrompt(ctx context.Context, s interop.Subject, req *PromptRequest) (PromptResult, error)
}

// PromptRequest is one prompts/get.
type PromptRequest struct {
	Name      string
	Arguments map[string]string
	InputRound
}

// PromptResult is a rendered prompt, or Input asking for more first.
type PromptResult struct {
	Description string
	Messages    []PromptMessage
	Input       *InputRequired
}

// Resources serves resources/list, resources/templates/list and
// resources/read.
type Resources interface {
	ListResources(ctx context.Context, s interop.Subject) ([]Resource, error)
	ListResourceTemplates(ctx context.Context, s interop.Subject) ([]ResourceTemplate, error)
	// ReadResource reads one resource. req.URI is normalized and its
	// scheme is one of Config.ResourceSchemes (OpenWOP interop map, mcp.methods); a URI the
	// host does not know (or the Subject may not read) is
	// interop.ErrNotFound.
	ReadResource(ctx context.Context, s interop.Subject, req *ResourceRequest) (ResourceResult, error)
}

// ResourceRequest is one resources/read.
type ResourceRequest struct {
	URI string
	InputRound
}

// ResourceResult is what a read returns: the contents (at least one), or
// Input asking for more first.
type ResourceResult struct {
	Contents []ResourceContents
	Input    *InputRequired
	// TTL is the result's ttlMs: how long the client may reuse it; 0 means
	// not at all.
	TTL time.Duration
	// Public marks contents that are byte-identical for every caller
	// (cacheScope public); otherwise the result is private (OpenWOP interop map, mcp.cache).
	Public bool
}

// Completions serves completion/complete.
type Completions interface {
	Complete(ctx context.Context, s interop.Subject, req CompletionRequest) (Completion, error)
}

// Completion reference types.
const (
	RefPrompt   = "ref/prompt"
	RefResource = "ref/resource"
)

// CompletionRequest asks for values of one argument of a prompt
// (Ref = RefPrompt, Name) or of a resource template (Ref = RefResource,
// URI is the template).
type CompletionRequest struct {
	Ref  string
	Name string
	URI  string
	// Argument is the argument's name and Value what the user typed so far.
	Argument string
	Value    string
	// Context are arguments already resolved.
	Context map[string]string
}

// Completion is the answer: at most 100 values are sent (the mount cuts a
// longer list and sets HasMore).
type Completion struct {
	Values []string
	// Total is the number of values available, when known (0 omits it).
	Total   int
	HasMore bool
}

// progressSink sends the notifications/progress of one native call.
type progressSink struct {
	token  json.RawMessage
	out    notifier
	mu     sync.Mutex
	closed bool
}

func (p *progressSink) send(progress, total float64, message string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	type params struct {
		ProgressToken json.RawMessage `json:"progressToken"`
		Progress      float64         `json:"progress"`
		Total         float64         `json:"total,omitempty"`
		Message       string          `json:"message,omitempty"`
	}
	b, err := mount.Marshal(params{p.token, progress, max(total, 0), message})
	if err == nil {
		p.out.Notify(methodNotifyProgress, b)
	}
}

// finish stops further notifications.
func (p *progressSink) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
}
