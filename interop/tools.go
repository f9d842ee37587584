package interop

import (
	"context"
	"encoding/json"
)

// ToolCaller is how a workflow step calls a tool on an MCP server its host
// admitted: the host's MCP client exposed to workflow code (the mcp
// discovery record's client facet, OpenWOP RFC 0204). It is the one piece
// of the host contract a host consumes rather than implements: package
// mcp/remote provides it over its admitted servers, and a workflow engine
// hands it to its steps (memstore: [WorkflowDef]-level, see
// memstore.RunContext.CallTool).
//
// The server is named by the host's alias for an admission, never by a
// URL: what a step may reach is the host's configuration, not content
// (admission-boundaries §18.3). The call belongs to the run named in
// [ToolCall].RunID; its negotiation and call records go on that run's log.
//
// CallTool returns a result whenever the tool ran to a result, its
// IsError included (the tool reported a failure: that is a result, not an
// error). An error means there is no result: the call was refused before
// it was sent, the server did not answer, or the exchange failed; the
// error is the implementation's own (mcp/remote returns the OpenWOP error
// envelope it projects to, an *outbound.Error naming the run).
// Implementations must be safe for concurrent use.
type ToolCaller interface {
	CallTool(ctx context.Context, call ToolCall) (ToolResult, error)
}

// ToolCall is one call of an admitted tool on behalf of a run.
type ToolCall struct {
	// RunID is the run the call belongs to. Required.
	RunID string
	// Server is the host's alias of the admitted MCP server.
	Server string
	// Tool is the admitted tool's name.
	Tool string
	// Arguments is the tool's arguments: a JSON object, or empty for {}.
	Arguments json.RawMessage
	// Trace is the run's W3C trace context; the call continues it.
	Trace TraceContext
	// Input answers the server's requests for input during the call (MCP
	// elicitation in a multi-round tool call). Nil declares no elicitation
	// capability: a server that needs input then refuses the call.
	Input *ToolInput
}

// ToolInput is how a call answers the server's input requests: the
// elicitation modes it declares and the host decision that answers each
// request. Every request is a fresh decision; nothing a previous round was
// answered is reused (admission-boundaries §18.4).
type ToolInput struct {
	// Form and URL are the elicitation modes declared (MCP 2026-07-28
	// §Elicitation): form collects the answer from the user; URL sends
	// the user to a page of the server and collects nothing. Neither set
	// means form only.
	Form bool
	URL  bool
	// Ask decides one request. An error answers nothing: the call ends
	// without sending the round.
	Ask func(ctx context.Context, req ToolInputRequest) (ToolInputAnswer, error)
}

// ToolInputRequest is one input request of the server. Everything in it
// comes from the server: untrusted content that confers no authority, and
// a URL nobody fetches on the server's say-so.
type ToolInputRequest struct {
	// Round counts the call's input rounds, from 1.
	Round int
	// ID is the server's key for the request, unique within its round.
	ID string
	// Mode is "form" or "url".
	Mode string
	// Message is the server's text for the user.
	Message string
	// Schema is the form's JSON Schema (form mode).
	Schema json.RawMessage
	// URL is where the user completes the request (URL mode).
	URL string
}

// Answer actions of a [ToolInputAnswer] (MCP 2026-07-28 §Elicitation).
const (
	InputAccept  = "accept"
	InputDecline = "decline"
	InputCancel  = "cancel"
)

// ToolInputAnswer is the host's answer to one input request.
type ToolInputAnswer struct {
	// Action is InputAccept, InputDecline or InputCancel.
	Action string
	// Content is the accepted form's values, a JSON object; empty for
	// every other answer and for a URL-mode request.
	Content json.RawMessage
}

// ToolResult is a tool's result as a run takes it: the content blocks
// without their annotations and metadata, and the structured content.
// Everything in it is the server's untrusted content.
type ToolResult struct {
	// AttemptID is the local id of the call (admission-boundaries §18.9):
	// the initial request and every input round are one attempt.
	AttemptID string `json:"attemptId"`
	// IsError: the tool ran and reported a failure.
	IsError bool `json:"isError"`
	// Content is the result's content blocks, in order.
	Content []ToolContent `json:"content"`
	// Structured is the result's structuredContent; absent when the
	// server sent none.
	Structured json.RawMessage `json:"structuredContent,omitempty"`
	// Raw is the server's JSON-RPC result for the call exactly as it was
	// received — content, structuredContent, isError and _meta unaltered
	// (OpenWOP RFC 0204: ctx.mcp.callTool resolves with the server's
	// result); empty when the implementation did not capture it. It is
	// the server's untrusted content; the fields above are its projection.
	Raw json.RawMessage `json:"-"`
}

// ToolContent is one content block of a [ToolResult] (MCP 2026-07-28
// §Tool result): Type is "text", "image", "audio", "resource" (an embedded
// resource) or "resource_link".
type ToolContent struct {
	Type string `json:"type"`
	// Text is a text block's text, or an embedded text resource's.
	Text string `json:"text,omitempty"`
	// Data is an image's or audio's bytes, or an embedded blob resource's.
	Data []byte `json:"data,omitempty"`
	// MIMEType is the media type the server declared.
	MIMEType string `json:"mimeType,omitempty"`
	// URI names an embedded resource or a resource link; nobody fetches it
	// on the server's say-so.
	URI string `json:"uri,omitempty"`
	// Name is a resource link's name.
	Name string `json:"name,omitempty"`
}

// Text is the text of the result's text blocks, joined by newlines.
func (r ToolResult) Text() string {
	var out []byte
	for _, c := range r.Content {
		if c.Type != "text" {
			continue
		}
		if len(out) > 0 {
			out = append(out, '\n')
		}
		out = append(out, c.Text...)
	}
	return string(out)
}
