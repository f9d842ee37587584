package mcp

// tools/call of a native tool (Config.Tools): the arguments were validated
// like a workflow's (OpenWOP interop map, mcp.methods); the host answers with a result, an input
// request (input.go) or a hand-off to a run (host.go Handoff), and may
// report progress, which turns the answer into an SSE stream.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/mcp/internal/mount"
)

// errUnknownTool answers a tool the caller cannot call.
var errUnknownTool = errInvalidParams("Invalid params: unknown tool")

// nativeCall serves tools/call of a native tool.
func (s *Server) nativeCall(ctx context.Context, inv *invocation) (answer, error) {
	c := inv.c
	digest, derr := inv.digest()
	if derr != nil {
		return answer{}, derr
	}
	round, runClaims, err := s.hostRound(ctx, c, inv.params.roundParams, digest)
	if err != nil {
		return answer{}, err
	}
	if runClaims != nil {
		// The tool handed the call to a run, which then asked for input.
		return s.resumeRun(ctx, inv, *runClaims)
	}
	callCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer s.inflight.addCall(flightKey(c.r, c.subject, c.msg.id), cancel)()

	tc := &ToolCall{Name: inv.tool.name, Arguments: inv.params.args, InputRound: round}
	if tok, ok := progressToken(c.meta); ok {
		tc.progress = &progressSink{token: tok, out: c.notifier}
	}
	res, err := s.callTool(callCtx, c.subject, tc)
	if tc.progress != nil {
		tc.progress.finish()
	}
	if ctx.Err() != nil {
		return answer{}, errNoAnswer // the client is gone; nobody reads an answer
	}
	if err != nil && callCtx.Err() != nil {
		// notifications/cancelled stopped the call: like a cancelled run.
		return bodyAnswer(toolError("The tool call was cancelled."))
	}
	if err != nil {
		return answer{}, hostError(err, errUnknownTool)
	}
	switch n := outcomes(&res); {
	case n != 1:
		return answer{}, fmt.Errorf("mcp: native tool %q returned %d outcomes, want exactly one", inv.tool.name, n)
	case res.Handoff != nil:
		return s.handoff(ctx, inv, res.Handoff, round.Round)
	case res.Input != nil:
		return bodyAnswer(s.hostInputRequired(c, digest, round.Round, res.Input))
	}
	return bodyAnswer(encodeToolResult(&res))
}

// bodyAnswer is body as a result, or err when it is set.
func bodyAnswer(body []byte, err error) (answer, error) {
	if err != nil {
		return answer{}, err
	}
	return answer{body: body}, nil
}

// callTool calls the host's tool. A panic there answers as an internal
// error once the progress stream, if any, is closed to the host
// (recover.go).
func (s *Server) callTool(ctx context.Context, sub interop.Subject, tc *ToolCall) (res ToolResult, err error) {
	defer s.catchToolPanic(ctx, &err)
	return s.opts.Tools.CallTool(ctx, sub, tc)
}

// outcomes counts how many of a ToolResult's exclusive outcomes are set.
func outcomes(res *ToolResult) int {
	n := 0
	if res.Input != nil {
		n++
	}
	if res.Handoff != nil {
		n++
	}
	if res.Input == nil && res.Handoff == nil || len(res.Content) > 0 || len(res.StructuredContent) > 0 || res.IsError {
		n++
	}
	return n
}

// encodeToolResult encodes a native tool's CallToolResult.
func encodeToolResult(res *ToolResult) ([]byte, error) {
	if sc := trimJSON(res.StructuredContent); len(sc) > 0 && (sc[0] != '{' || !json.Valid(sc)) {
		return nil, errors.New("mcp: structuredContent is not a JSON object")
	}
	content := res.Content
	if content == nil {
		content = []Content{}
	}
	return mount.Marshal(struct {
		ResultType        string          `json:"resultType"`
		Content           []Content       `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
		IsError           bool            `json:"isError"`
	}{"complete", content, trimJSON(res.StructuredContent), res.IsError})
}

// handoff continues a native call as a run of one of the caller's
// workflows and answers it as a call of that workflow would be answered,
// with the native tool's task support (host.go Handoff).
func (s *Server) handoff(ctx context.Context, inv *invocation, h *Handoff, round int) (answer, error) {
	c := inv.c
	run, _, err := s.deps.Store.CreateRun(context.WithoutCancel(ctx), c.subject, interop.CreateRunRequest{
		WorkflowID:    h.WorkflowID,
		Inputs:        rawObject(h.Inputs),
		Transport:     interop.TransportMCP,
		Trace:         c.trace,
		TrustBoundary: interop.TrustUntrusted,
	})
	if err != nil {
		if errors.Is(err, interop.ErrNotFound) {
			// The host named a workflow the caller cannot run: its bug.
			return answer{}, fmt.Errorf("mcp: native tool %q handed off to an unknown workflow: %w", inv.tool.name, err)
		}
		return answer{}, createRunError(err)
	}
	s.own(c, run.ID)
	return s.respond(ctx, inv, run, round)
}

// progressToken returns _meta progressToken when it is a string or an
// integer.
func progressToken(meta map[string]json.RawMessage) (json.RawMessage, bool) {
	raw, ok := meta["progressToken"]
	if !ok || len(raw) == 0 {
		return nil, false
	}
	if raw[0] == '"' {
		var s string
		return raw, json.Unmarshal(raw, &s) == nil
	}
	if raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') {
		return nil, false // null, objects, arrays, booleans
	}
	var n int64
	return raw, json.Unmarshal(raw, &n) == nil
}
