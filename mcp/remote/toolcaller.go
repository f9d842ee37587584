package remote

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopinterop/wopinterop/interop"
)

// ToolCaller returns the client as the host contract's
// [interop.ToolCaller]: what a host hands its workflows so that a step
// calls an admitted tool (the mcp record's client facet, OpenWOP RFC
// 0204). Each CallTool is one [Client.Connect] on the call's run — its
// negotiation.decided record on that run's log — and one [Session.Call]
// continuing the run's trace, the session closed afterwards:
//
//   - the call's Input declares the elicitation modes it names (neither:
//     form only) and answers each input request of every round through
//     Input.Ask, one request at a time, a fresh decision each; without
//     Input nothing is declared and a server that needs input refuses the
//     call;
//   - a tool that ran answers with its result, IsError included, and no
//     error; the result's Raw is the server's result as received;
//   - every other end — a refused alias, tool or revision, the round
//     ceiling, an unanswered round, a timeout, a lost connection — is the
//     *outbound.Error [ProjectError] makes of it for the run (its cause
//     still reachable with errors.Is and errors.As).
func (c *Client) ToolCaller() interop.ToolCaller { return toolCaller{c} }

type toolCaller struct{ c *Client }

func (t toolCaller) CallTool(ctx context.Context, call interop.ToolCall) (interop.ToolResult, error) {
	ctx = WithTraceContext(ctx, call.Trace)
	s, err := t.c.connectRun(ctx, call.RunID, call.Server, false) // one call: no list-change stream
	if err != nil {
		return interop.ToolResult{}, ProjectError(call.RunID, err)
	}
	defer s.Close()
	req := CallRequest{Tool: call.Tool, Arguments: call.Arguments}
	if in := call.Input; in != nil && in.Ask != nil {
		req.Elicitation = elicitation(in)
		req.Decide = askEach(in.Ask)
	}
	out, err := s.Call(ctx, req)
	if out != nil && out.Result != nil && (err == nil || errors.Is(err, ErrToolError)) {
		return toolResult(out), nil
	}
	if err == nil {
		err = ErrUnexpectedResult // a success always carries its result
	}
	return interop.ToolResult{}, ProjectError(call.RunID, err)
}

// elicitation is the capability the call declares (MCP 2026-07-28
// §Elicitation): an empty object means form only.
func elicitation(in *interop.ToolInput) *mcp.ElicitationCapabilities {
	caps := &mcp.ElicitationCapabilities{}
	if in.Form {
		caps.Form = &mcp.FormElicitationCapabilities{}
	}
	if in.URL {
		caps.URL = &mcp.URLElicitationCapabilities{}
	}
	return caps
}

// askEach is the decider of a ToolCaller call: each request of a round
// asked on its own, in the round's order; the first refusal ends the
// round with nothing sent.
func askEach(ask func(context.Context, interop.ToolInputRequest) (interop.ToolInputAnswer, error)) InputDecider {
	return func(ctx context.Context, round InputRound) (map[string]*mcp.ElicitResult, error) {
		out := make(map[string]*mcp.ElicitResult, len(round.Requests))
		for _, r := range round.Requests {
			a, err := ask(ctx, interop.ToolInputRequest{
				Round: round.Round, ID: r.ID, Mode: r.Mode, Message: r.Message, Schema: r.RequestedSchema, URL: r.URL,
			})
			if err != nil {
				return nil, err
			}
			res := &mcp.ElicitResult{Action: a.Action}
			if len(a.Content) > 0 {
				if err := json.Unmarshal(a.Content, &res.Content); err != nil || res.Content == nil {
					return nil, errors.New("remote: an input answer's content is not a JSON object")
				}
			}
			out[r.ID] = res
		}
		return out, nil
	}
}

// toolResult is a call's result in the host contract's terms.
func toolResult(out *CallOutcome) interop.ToolResult {
	r := out.Result
	res := interop.ToolResult{AttemptID: out.AttemptID, IsError: r.IsError, Structured: r.Structured,
		Content: make([]interop.ToolContent, len(r.Content)), Raw: out.Raw}
	for i, c := range r.Content {
		res.Content[i] = interop.ToolContent(c)
	}
	return res
}
