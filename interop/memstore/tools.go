package memstore

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/wopinterop/wopinterop/interop"
)

// ErrNoToolCaller is returned by [RunContext.CallTool] for a workflow
// registered without a [WorkflowDef].ToolCaller.
var ErrNoToolCaller = errors.New("memstore: this workflow calls no MCP tools (WorkflowDef.ToolCaller is nil)")

// Interrupts raised for a tool's input requests.
const (
	// ToolInputNodeID is the node id of every interrupt a tool's input
	// request raises.
	ToolInputNodeID = "mcp-tool-call"
	// ToolInputKeyPrefix prefixes their keys: ToolInputKeyPrefix + n, n
	// counting the run's input requests from 1.
	ToolInputKeyPrefix = "mcp-input-"
	// maxQuoted bounds how much of a server's message an interrupt quotes.
	maxQuoted = 1000
)

// CallTool calls tool on the MCP server the host admitted as server (the
// host's alias, never a URL), with args (a JSON object; empty for {}),
// through the workflow's [WorkflowDef].ToolCaller, on behalf of this run
// and continuing its trace.
//
// Every input request the server makes during the call suspends the run
// on a clarification interrupt (waiting-input) quoting the server's
// message — and, for a URL-mode request, the URL the user completes it at
// — and only the resolution a user gives there is sent back: a fresh
// decision per request, never an automatic one (admission-boundaries
// §18.4). A form request's schema is the interrupt's resume schema, so the
// store validates the answer before the server sees it. Resolved with
// accept, the resume value is the answer (a URL-mode request is accepted
// without content); decline and cancel are sent as such. Form and URL
// modes are declared. When ctx ends while the run waits, the interrupt is
// withdrawn and the call ends without answering.
//
// The result and error are the ToolCaller's (see [interop.ToolCaller]); a
// workflow registered without one gets [ErrNoToolCaller].
func (rc *RunContext) CallTool(ctx context.Context, server, tool string, args json.RawMessage) (interop.ToolResult, error) {
	tc := rc.rec.def.tools
	if tc == nil {
		return interop.ToolResult{}, ErrNoToolCaller
	}
	return tc.CallTool(ctx, interop.ToolCall{
		RunID:     rc.RunID(),
		Server:    server,
		Tool:      tool,
		Arguments: args,
		Trace:     rc.Trace(),
		Input:     &interop.ToolInput{Form: true, URL: true, Ask: rc.askToolInput},
	})
}

// askToolInput raises one interrupt for req and turns its resolution into
// the answer.
func (rc *RunContext) askToolInput(ctx context.Context, req interop.ToolInputRequest) (interop.ToolInputAnswer, error) {
	spec := interop.Interrupt{
		Kind:    interop.InterruptClarification,
		Key:     ToolInputKeyPrefix + strconv.FormatInt(rc.toolInputs.Add(1), 10),
		NodeID:  ToolInputNodeID,
		Message: "The MCP server asks: " + quote(req.Message),
	}
	switch req.Mode {
	case "url":
		spec.Message += " Complete it at " + quote(req.URL) + ", then accept."
	default:
		spec.ResumeSchema = req.Schema
		if len(spec.ResumeSchema) == 0 {
			spec.ResumeSchema = json.RawMessage(`{"type":"object"}`)
		}
	}
	res, err := rc.Interrupt(ctx, spec)
	if err != nil {
		return interop.ToolInputAnswer{}, err
	}
	switch res.Outcome {
	case interop.OutcomeDecline:
		return interop.ToolInputAnswer{Action: interop.InputDecline}, nil
	case interop.OutcomeCancel:
		return interop.ToolInputAnswer{Action: interop.InputCancel}, nil
	}
	if req.Mode == "url" {
		// The user acted at the URL; nothing collected here goes back
		// (MCP 2026-07-28 §Elicitation, URL mode).
		return interop.ToolInputAnswer{Action: interop.InputAccept}, nil
	}
	return interop.ToolInputAnswer{Action: interop.InputAccept, Content: res.Value}, nil
}

// quote is a server's text bounded: untrusted content, shown to the user
// as the server's words and nothing more.
func quote(s string) string {
	s = strings.ToValidUTF8(s, "")
	if s == "" {
		return "(no text)"
	}
	if len(s) > maxQuoted {
		s = strings.ToValidUTF8(s[:maxQuoted], "") + "…"
	}
	return s
}
