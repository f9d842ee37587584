package ext

// tools/call of a native tool (Config.Tools): the mount validated the
// arguments like a workflow's (OpenWOP interop map, mcp.methods); the host
// answers with a result, an input request (input.go) or a hand-off to a
// run, and may report progress, which turns the answer into an SSE stream.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/mcp"
	"github.com/wopinterop/wopinterop/mcp/internal/mount"
)

// methodNotifyProgress is the notification a tool's progress is sent as.
const methodNotifyProgress = "notifications/progress"

// errUnknownTool answers a tool the caller cannot call.
var errUnknownTool = invalidParams("Invalid params: unknown tool")

// ListTools lists the host's native tools for the mount's tools/list.
func (x *extension) ListTools(ctx context.Context, sub interop.Subject) ([]mount.Tool, error) {
	if x.cfg.Tools == nil {
		return nil, nil
	}
	tools, err := x.cfg.Tools.ListTools(ctx, sub)
	if err != nil {
		return nil, err
	}
	out := make([]mount.Tool, len(tools))
	for i, t := range tools {
		out[i] = mount.Tool(t)
	}
	return out, nil
}

// CallTool runs one call of a native tool. A requestState that opens to a
// run grant (the tool handed its call to a run earlier, and the run asked
// for input) goes back to the mount, which resumes the run.
func (x *extension) CallTool(ctx context.Context, env mount.Env, tc *mount.ToolCall) (mount.ToolOutcome, error) {
	round, runClaims, err := hostRound(ctx, env, tc.Call, tc.Round, tc.Digest, true)
	if err != nil {
		return mount.ToolOutcome{}, err
	}
	if runClaims != nil {
		return mount.ToolOutcome{Resume: runClaims}, nil
	}
	call := &ToolCall{Name: tc.Name, Arguments: tc.Arguments, InputRound: round}
	if tok, ok := progressToken(tc.Meta); ok {
		call.progress = &progressSink{token: tok, out: tc.Notifier}
	}
	res, err := x.callTool(ctx, env, tc.Subject, call)
	if call.progress != nil {
		call.progress.finish()
	}
	if err != nil && ctx.Err() != nil {
		// The client cancelled the call or went away: like a cancelled run.
		return resultOutcome(toolError("The tool call was cancelled."))
	}
	if err != nil {
		return mount.ToolOutcome{}, hostError(err, errUnknownTool)
	}
	switch n := outcomes(&res); {
	case n != 1:
		return mount.ToolOutcome{}, fmt.Errorf("mcp/ext: native tool %q returned %d outcomes, want exactly one", tc.Name, n)
	case res.Handoff != nil:
		return mount.ToolOutcome{Handoff: &mount.Handoff{WorkflowID: res.Handoff.WorkflowID, Inputs: res.Handoff.Inputs, Round: round.Round}}, nil
	case res.Input != nil:
		return resultOutcome(inputRequired(env, tc.Call, tc.Digest, round.Round, res.Input))
	}
	return resultOutcome(encodeToolResult(&res))
}

// resultOutcome is body as the outcome of a call, or err when it is set.
func resultOutcome(body []byte, err error) (mount.ToolOutcome, error) {
	if err != nil {
		return mount.ToolOutcome{}, err
	}
	return mount.ToolOutcome{Result: body}, nil
}

// callTool calls the host's tool. A panic there is logged and answered as
// an internal error once the progress stream, if any, is closed to the
// host; http.ErrAbortHandler, net/http's deliberate abort, passes on.
func (x *extension) callTool(ctx context.Context, env mount.Env, sub interop.Subject, call *ToolCall) (res ToolResult, err error) {
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		if v == http.ErrAbortHandler {
			panic(v)
		}
		env.LogPanic(ctx, "NativeTools.CallTool", v)
		err = errPanicked
	}()
	return x.cfg.Tools.CallTool(ctx, sub, call)
}

// errPanicked answers a call whose host code panicked, logged already.
var errPanicked = &mcp.Error{Code: codeInternalError, Message: "Internal error"}

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

// progressSink sends the notifications/progress of one native call, from
// whichever goroutine the host reports on, until the call returns.
type progressSink struct {
	token  json.RawMessage
	out    mount.Notifier
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
	if b, err := mount.Marshal(params{p.token, progress, max(total, 0), message}); err == nil {
		p.out.Notify(methodNotifyProgress, b)
	}
}

// finish stops further notifications.
func (p *progressSink) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
}
