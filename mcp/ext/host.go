package ext

// The host's extension points and what the mount calls on them (the
// contract of mcp/internal/mount).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/mcp"
	"github.com/wopinterop/wopinterop/mcp/internal/mount"
)

// Config holds a host's extension points. Each nil one serves and
// advertises nothing: its methods stay -32601 and server/discover does not
// list its capability, so the OpenWOP surface is unchanged (OpenWOP
// interop map, mcp.methods).
type Config struct {
	// Tools are tools that are not workflows, listed beside the caller's
	// workflows.
	Tools NativeTools
	// Prompts serves prompts/list and prompts/get.
	Prompts Prompts
	// Resources serves resources/list, resources/templates/list and
	// resources/read.
	Resources Resources
	// ResourceSchemes is the URI scheme allowlist of resources/read
	// ("https", "file", "test"): a URI with any other scheme is refused
	// before the host sees it (OpenWOP interop map, mcp.methods). Required
	// with Resources.
	ResourceSchemes []string
	// Completions serves completion/complete.
	Completions Completions
}

// New validates cfg and returns its extension points as the
// mcp.Extension a mount serves (mcp.Options.Extension). Every problem is
// reported at once.
func New(cfg Config) (mcp.Extension, error) {
	var problems []error
	x := &extension{cfg: cfg, schemes: map[string]bool{}}
	for _, sc := range cfg.ResourceSchemes {
		if !validScheme(sc) {
			problems = append(problems, fmt.Errorf("ResourceSchemes has an invalid scheme %q", sc))
			continue
		}
		x.schemes[strings.ToLower(sc)] = true
	}
	if cfg.Resources != nil && len(x.schemes) == 0 {
		problems = append(problems, errors.New("Resources needs ResourceSchemes, the schemes resources/read may serve"))
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("mcp/ext: invalid config: %w", errors.Join(problems...))
	}
	return x, nil
}

// NativeTools serves tools that are not workflows, beside the caller's
// workflows in tools/list. Names must not collide with workflow ids: a
// workflow wins and the native tool is left out (and logged).
type NativeTools interface {
	// ListTools returns the tools the Subject may call, in any order. The
	// mount caches the list per authorization context like the workflows
	// (mcp.Options.ListTTL, mcp.Server.InvalidateTools).
	ListTools(ctx context.Context, s interop.Subject) ([]Tool, error)
	// CallTool runs one call. Its arguments were already validated
	// against the tool's InputSchema.
	CallTool(ctx context.Context, s interop.Subject, call *ToolCall) (ToolResult, error)
}

// Tool describes a native tool. It is not go-sdk's Tool: v1.8.0's has no
// execution.taskSupport (the 2026-07-28 Tasks extension's member) and
// takes any value as its schema, where the mount needs the raw schema it
// validates arguments against.
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
	// Content is the result's content (CallToolResult.content): text,
	// image, audio, embedded resources and resource links.
	Content []sdk.Content
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
	ListPrompts(ctx context.Context, s interop.Subject) ([]*sdk.Prompt, error)
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
	// Messages are the prompt's messages: role user or assistant, content
	// text, image, audio, an embedded resource or a resource link.
	Messages []*sdk.PromptMessage
	Input    *InputRequired
}

// Resources serves resources/list, resources/templates/list and
// resources/read.
type Resources interface {
	ListResources(ctx context.Context, s interop.Subject) ([]*sdk.Resource, error)
	ListResourceTemplates(ctx context.Context, s interop.Subject) ([]*sdk.ResourceTemplate, error)
	// ReadResource reads one resource. req.URI is normalized and its
	// scheme is one of Config.ResourceSchemes (OpenWOP interop map,
	// mcp.methods); a URI the host does not know (or the Subject may not
	// read) is interop.ErrNotFound.
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
	// Contents are text contents, or binary ones when Blob is non-nil.
	Contents []*sdk.ResourceContents
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
	// Complete returns values for one argument of a prompt (ref/prompt,
	// req.Ref.Name) or of a resource template (ref/resource, req.Ref.URI
	// is the template); req.Context, when set, holds arguments already
	// resolved. At most 100 values are sent: the mount cuts a longer list
	// and sets HasMore.
	Complete(ctx context.Context, s interop.Subject, req *sdk.CompleteParams) (*sdk.CompletionResultDetails, error)
}

// extension is a host's extension points as the mount serves them.
type extension struct {
	cfg Config
	// schemes is the lowercased ResourceSchemes.
	schemes map[string]bool
}

var _ mcp.Extension = (*extension)(nil)

func (x *extension) Capabilities() mount.Capabilities {
	return mount.Capabilities{Prompts: x.cfg.Prompts != nil, Resources: x.cfg.Resources != nil, Completions: x.cfg.Completions != nil}
}

// Serve answers the prompts, resources and completion methods; the mount
// routes only the ones Capabilities names.
func (x *extension) Serve(ctx context.Context, env mount.Env, method string, c *mount.Call) ([]byte, error) {
	switch method {
	case mount.MethodPromptsList:
		return x.promptsList(ctx, env, c)
	case mount.MethodPromptsGet:
		return x.promptsGet(ctx, env, c)
	case mount.MethodResourcesList:
		return x.resourcesList(ctx, env, c)
	case mount.MethodResourceTemplates:
		return x.resourceTemplatesList(ctx, env, c)
	case mount.MethodResourcesRead:
		return x.resourcesRead(ctx, env, c)
	case mount.MethodComplete:
		return x.complete(ctx, c)
	}
	return nil, fmt.Errorf("mcp/ext: no method %q", method)
}
