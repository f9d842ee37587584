// Package mount is the contract between the MCP mount (package mcp) and
// its optional extension points (package mcp/ext): what the mount knows
// about a guarded request, what it lends an extension while serving one,
// and the methods an extension serves. Only those two packages use it; a
// host sees it as the mcp.Extension that mcp/ext builds.
package mount

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/mcp/sealed"
)

// Caps are the client capabilities a request declared in _meta
// io.modelcontextprotocol/clientCapabilities, as far as the mount acts on
// them; everything else in that object is opaque (OpenWOP interop.md §The
// operation mappings).
type Caps struct {
	// Elicitation is declared at all; ElicitationForm and ElicitationURL
	// are its modes (an empty elicitation object means form only).
	Elicitation, ElicitationForm, ElicitationURL bool
	// Sampling is declared; SamplingTools and SamplingContext are its
	// sub-capabilities.
	Sampling, SamplingTools, SamplingContext bool
	// Roots is declared.
	Roots bool
	// Tasks: extensions["io.modelcontextprotocol/tasks"] is declared.
	Tasks bool
}

// Call is one request the mount's guard let through: authenticated,
// negotiated, its headers checked against its body. Nothing of the Subject
// comes from the body (OpenWOP interop.md §Isolation).
type Call struct {
	// Params are the members of the request's params object.
	Params  Params
	Subject interop.Subject
	Caps    Caps
	// Meta is the request's _meta object.
	Meta map[string]json.RawMessage
}

// Env is what the mount lends an extension while it serves a request.
type Env interface {
	// OpenState opens a requestState presented with a request whose digest
	// is digest: a host grant, or with runs also a run grant (a native
	// tool that handed its call to a run). Every refusal — forged,
	// expired, replayed, foreign, another request, a run grant where runs
	// is false — is the mount's one -32602, and past the round ceiling its
	// rounds-exceeded -32602 (OpenWOP interop map, mcp.mrtr).
	OpenState(ctx context.Context, sub interop.Subject, state string, digest [32]byte, runs bool) (sealed.Claims, error)
	// Seal seals a host grant as a requestState.
	Seal(sub interop.Subject, g sealed.Grant) (string, error)
	// ListTTLMs is the ttlMs of a list result.
	ListTTLMs() int64
	// Logger receives what the extension logs (never secrets or request
	// content).
	Logger() *slog.Logger
	// LogPanic logs a recovered panic once, at error level, as the mount
	// logs its own.
	LogPanic(ctx context.Context, where string, v any)
}

// Methods of an extension's capabilities.
const (
	MethodPromptsList       = "prompts/list"
	MethodPromptsGet        = "prompts/get"
	MethodResourcesList     = "resources/list"
	MethodResourceTemplates = "resources/templates/list"
	MethodResourcesRead     = "resources/read"
	MethodComplete          = "completion/complete"
)

// Capabilities are the server capabilities an extension adds to
// server/discover, each with its methods.
type Capabilities struct {
	// Prompts: prompts/list and prompts/get.
	Prompts bool
	// Resources: resources/list, resources/templates/list, resources/read.
	Resources bool
	// Completions: completion/complete.
	Completions bool
}

// Extension serves what a host offers beside its workflows: tools that are
// not workflows, prompts, resources and completions. The mount guards
// every request and writes every answer; an extension answers with a
// result object or an error (an *mcp.Error, or any other error for a
// fault the mount logs and answers -32603).
type Extension interface {
	// Capabilities are the capabilities it serves, fixed for its life.
	Capabilities() Capabilities
	// Serve answers one method of its Capabilities with a result object.
	Serve(ctx context.Context, env Env, method string, c *Call) ([]byte, error)
	// ListTools lists the native tools the Subject may call, beside its
	// workflows; the mount compiles their schemas and caches the list.
	ListTools(ctx context.Context, sub interop.Subject) ([]Tool, error)
	// CallTool runs one call of a native tool whose arguments the mount
	// validated. ctx ends when the client goes away or cancels the call.
	CallTool(ctx context.Context, env Env, tc *ToolCall) (ToolOutcome, error)
}

// Tool describes a native tool for tools/list, as mcp/ext's Tool does.
type Tool struct {
	Name, Title, Description string
	InputSchema              json.RawMessage
	TaskSupport              string
}

// ToolCall is one tools/call of a native tool.
type ToolCall struct {
	*Call
	Name string
	// Arguments is the arguments object ({} when absent).
	Arguments json.RawMessage
	// Digest is the request digest a requestState of this call binds to.
	Digest [32]byte
	Round  Round
	// Notifier sends the call's notifications ahead of its answer (its
	// progress); the first one makes the answer an SSE stream.
	Notifier Notifier
}

// Notifier sends a request's notifications ahead of its answer. Calls
// must not overlap, and must stop before the request is answered.
type Notifier interface {
	Notify(method string, params []byte)
}

// ToolOutcome is how a native tool call ends: exactly one of Result,
// Handoff or Resume.
type ToolOutcome struct {
	// Result is the result object to answer with (a CallToolResult or an
	// InputRequiredResult).
	Result []byte
	// Handoff continues the call as a run of one of the caller's
	// workflows, answered as a call of that workflow is.
	Handoff *Handoff
	// Resume is the run grant the request's requestState opened to: the
	// call handed off earlier and the run then asked for input, which this
	// request answers.
	Resume *sealed.Claims
}

// Handoff names the run a native tool call continues as.
type Handoff struct {
	WorkflowID string
	// Inputs are the run inputs (a JSON object; empty means {}).
	Inputs json.RawMessage
	// Round is the number of input rounds the call already had.
	Round int
}

// Round are the MRTR members of a request's params (SEP-2322).
type Round struct {
	// State is the requestState, when HasState.
	State    string
	HasState bool
	// Responses are the inputResponses, each a JSON object, when
	// HasResponses.
	Responses    map[string]json.RawMessage
	HasResponses bool
}

// Refusals of ParseRound, each a -32602 message.
const (
	BadRequestState    = "Invalid params: requestState must be a string"
	MalformedResponses = "Invalid params: inputResponses must map each key to a result object"
)

// unmarshalAs decodes raw into a T of its own, so that a caller that
// decodes nothing (most requests carry no MRTR members) allocates nothing.
func unmarshalAs[T any](raw json.RawMessage) (T, error) {
	var v T
	err := json.Unmarshal(raw, &v)
	return v, err
}

// ParseRound reads requestState and inputResponses; an explicit null
// counts as absent. A refusal is reported as its -32602 message.
func ParseRound(p Params) (Round, string) {
	var v [2]json.RawMessage
	p.GetAll(v[:], "requestState", "inputResponses")
	return ParseRoundMembers(v[0], v[1])
}

// ParseRoundMembers is ParseRound over the raw requestState and
// inputResponses members (nil when absent), for a caller that read them
// with others in one pass (Params.GetAll).
func ParseRoundMembers(state, responses json.RawMessage) (Round, string) {
	var rp Round
	if raw := state; raw != nil && string(raw) != "null" {
		state, err := unmarshalAs[string](raw)
		if err != nil {
			return rp, BadRequestState
		}
		rp.State, rp.HasState = state, true
	}
	if raw := responses; raw != nil && string(raw) != "null" {
		if raw[0] != '{' {
			return rp, MalformedResponses
		}
		responses, err := unmarshalAs[map[string]json.RawMessage](raw)
		rp.Responses = responses
		if err != nil {
			return rp, MalformedResponses
		}
		for _, v := range rp.Responses {
			if len(v) == 0 || v[0] != '{' {
				return rp, MalformedResponses
			}
		}
		rp.HasResponses = true
	}
	return rp, ""
}
