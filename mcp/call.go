package mcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/wopinterop/wopinterop/internal/settle"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/isolation"
	"github.com/wopinterop/wopinterop/mcp/internal/mount"
	"github.com/wopinterop/wopinterop/mcp/sealed"
)

// callParams are the tools/call params the mount reads. Unknown members
// (including a legacy "task" hint) are ignored: the server alone decides
// whether to answer with a task.
type callParams struct {
	name string
	// args is the arguments object; "{}" when absent (MCP treats an
	// omitted arguments member as no arguments).
	args json.RawMessage
	mount.Round
}

func parseCallParams(p mount.Params) (callParams, *Error) {
	var cp callParams
	var m [4]json.RawMessage // read in one pass
	p.GetAll(m[:], "name", "arguments", "requestState", "inputResponses")
	rawName, rawArgs := m[0], m[1]
	name, ok := stringValue(rawName)
	if !ok {
		return cp, errInvalidParams("Invalid params: name must be a string")
	}
	cp.name = name
	cp.args = json.RawMessage(`{}`)
	if raw := rawArgs; raw != nil && string(raw) != "null" {
		if raw[0] != '{' {
			return cp, errInvalidParams("Invalid params: arguments must be an object")
		}
		cp.args = raw
	}
	rp, msg := mount.ParseRoundMembers(m[2], m[3])
	cp.Round = rp
	if msg != "" {
		return cp, errInvalidParams(msg)
	}
	return cp, nil
}

// invocation is one tools/call (first call or MRTR retry) after its tool
// and arguments were checked.
type invocation struct {
	c      *call
	tool   *tool
	params callParams
	// asTask: the request declared the tasks extension, the mount serves
	// it and the tool does not forbid tasks, so a run that is not terminal
	// at answer time is answered with CreateTaskResult (OpenWOP RFC 0198 §B).
	asTask bool
}

// digest is the request digest requestState is bound to.
func (inv *invocation) digest() ([32]byte, *Error) {
	d, err := sealed.RequestDigest(inv.params.name, inv.params.args)
	if err != nil {
		return d, errInvalidParams("Invalid params: arguments must not repeat a member name")
	}
	return d, nil
}

// toolsCall answers tools/call (OpenWOP interop map, mcp.methods and mcp.mrtr; RFC 0198 §B): the
// arguments are checked against the tool's input schema before any run
// exists; then a new run is created (each call is its own invocation, so
// there is no idempotency key) and awaited.
func (s *Server) toolsCall(ctx context.Context, c *call) (answer, error) {
	p, perr := parseCallParams(c.Params)
	if perr != nil {
		return answer{}, perr
	}
	t, err := s.lookupTool(ctx, c.Subject, p.name)
	if err != nil {
		return answer{}, err
	}
	if e := validateArguments(t.schema, p.args); e != nil {
		return answer{}, e
	}
	inv := &invocation{c: c, tool: t, params: p}
	inv.asTask = s.opts.Tasks && c.Caps.Tasks && t.support != interop.TaskForbidden
	if t.support == interop.TaskRequired && !inv.asTask {
		return answer{}, missingCapability(requiredTasks)
	}
	if t.native {
		return s.nativeCall(ctx, inv)
	}
	if p.HasState {
		return s.retry(ctx, inv)
	}
	if p.HasResponses {
		// Every input_required answer of this mount carries a requestState;
		// answers without one cannot be tied to a run.
		return answer{}, errInvalidParams("Invalid params: inputResponses need the requestState they answer")
	}
	run, _, err := s.deps.Store.CreateRun(context.WithoutCancel(ctx), c.Subject, interop.CreateRunRequest{
		WorkflowID:    t.workflowID,
		Inputs:        p.args,
		Transport:     interop.TransportMCP,
		Trace:         c.trace,
		TrustBoundary: interop.TrustUntrusted,
	})
	if err != nil {
		return answer{}, createRunError(err)
	}
	s.own(c, run.ID)
	return s.respond(ctx, inv, run, 0)
}

// createRunError maps a CreateRun refusal.
func createRunError(err error) error {
	var ie *interop.InputError
	switch {
	case errors.As(err, &ie):
		return errInvalidParams("Invalid params: the host refused the arguments").withData(struct {
			Field  string `json:"field"`
			Reason string `json:"reason"`
		}{strings.Replace(ie.Field, "inputs", "arguments", 1), ie.Reason})
	case errors.Is(err, interop.ErrInvalidInput):
		return errInvalidParams("Invalid params: the host refused the arguments")
	case errors.Is(err, interop.ErrNotFound):
		return errInvalidParams("Invalid params: unknown tool")
	}
	return err
}

// respond waits for the run the request owns and answers what its state
// calls for. round is the number of input_required answers this
// invocation already got. A CreateTaskResult handed to a client that
// cannot answer every input request the run may make later has the run
// guarded once the answer is out (see guardInput).
func (s *Server) respond(ctx context.Context, inv *invocation, run interop.Run, round int) (answer, error) {
	limit := s.opts.BlockTimeout
	if inv.asTask {
		limit = s.opts.TaskWait
	}
	run, err := s.settle(ctx, inv.c.Subject, run, limit)
	if ctx.Err() != nil {
		// The client is gone: the disconnect watch cancels the run.
		return answer{}, errNoAnswer
	}
	if err != nil {
		return answer{}, err
	}
	body, err := s.outcome(ctx, inv, run, round)
	if err != nil {
		return answer{}, err
	}
	if inv.asTask && !run.Status.Terminal() && !inv.c.Caps.ElicitationForm {
		inv.c.owner.handedOver = s.guardAfter(inv.c.Subject, run, inv.c.Caps)
	}
	return answer{body: body}, nil
}

// guardAfter is guardInput for run, to start once its task was handed
// over. A function of its own, so that only this path copies the run.
func (s *Server) guardAfter(sub interop.Subject, run interop.Run, caps mount.Caps) func() {
	return func() { s.guardInput(sub, run, caps) }
}

// settled reports whether a blocking call can answer: the run finished or
// asks the caller for input.
func settled(st interop.RunStatus) bool {
	return st.Terminal() || st == interop.StatusWaitingApproval || st == interop.StatusWaitingInput
}

// settle waits up to limit for run to settle (internal/settle) and
// returns its latest state. It ends early when ctx ends or the server
// drains; either way the state returned is read after the wait.
func (s *Server) settle(ctx context.Context, sub interop.Subject, run interop.Run, limit time.Duration) (interop.Run, error) {
	run, err := settle.Run(ctx, s.deps.Store, sub, run, settle.Wait{Settled: settled, Limit: limit, Stop: s.drain})
	if se, ok := errors.AsType[*settle.Error](err); ok {
		return run, se.Err
	}
	return run, err
}

// outcome encodes the answer for run's state (OpenWOP interop map, mcp.methods and mcp.mrtr; RFC 0198 §B).
// A run suspended on input the request declared no capability for is
// refused with -32021 on either path — a task would only wait for an
// answer its client cannot give — and cancelled, since the refusal hands
// it to nobody (MCP 2026-07-28 §Missing Required Capabilities; OpenWOP
// interop §MCP tasks and cancellation).
func (s *Server) outcome(ctx context.Context, inv *invocation, run interop.Run, round int) ([]byte, error) {
	f := inv.c.owner
	suspended := run.Status == interop.StatusWaitingApproval || run.Status == interop.StatusWaitingInput
	var p projection
	if suspended {
		if p = s.project(ctx, inv.c.Subject, &run, inv.c.Caps, false); p.required != "" {
			f.cancel(missingCapabilityReason(p.required))
			return nil, missingCapability(p.required)
		}
	}
	switch st := run.Status; {
	case st.Terminal():
		return s.callToolResult(&run)
	case inv.asTask:
		return s.createTaskResult(&run)
	case suspended:
		return s.inputRequired(inv, &run, p, round)
	}
	// Still working, and the caller cannot take a task: the run has no
	// other owner, so it stops here — at BlockTimeout, or now because the
	// server drains, which the caller is told as a protocol error since
	// the tool itself did nothing wrong.
	if s.draining() {
		f.cancel(ReasonRequestCancelled)
		return nil, errCallDrained
	}
	f.cancel(ReasonRequestTimeout)
	return toolError("The tool did not finish within the server's time limit and was cancelled.")
}

// content is one ContentBlock of a CallToolResult.
type content struct {
	Type     string            `json:"type"`
	Text     string            `json:"text,omitempty"`
	Resource *resourceContents `json:"resource,omitempty"`
	// resource_link members.
	URI      string `json:"uri,omitempty"`
	Name     string `json:"name,omitempty"`
	MIMEType string `json:"mimeType,omitempty"`
}

// resourceContents is an embedded resource's contents: text or blob.
type resourceContents struct {
	URI      string  `json:"uri"`
	MIMEType string  `json:"mimeType,omitempty"`
	Text     *string `json:"text,omitempty"`
	Blob     string  `json:"blob,omitempty"`
}

// callToolResultJSON is CallToolResult with the 2026-07-28 resultType.
type callToolResultJSON struct {
	ResultType        string          `json:"resultType"`
	Content           []content       `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError"`
}

// toolError is a CallToolResult with isError true and one safe text.
func toolError(text string) ([]byte, error) {
	return marshalCallToolResult(&callToolResultJSON{ResultType: "complete", Content: []content{{Type: "text", Text: text}}, IsError: true})
}

// faultText is the isError text of a run that failed in the host
// (interop.Run.Fault). Its FailureMessage describes the host's machinery,
// not the work, so the model is told only that the host failed.
const faultText = "The tool failed in the host."

// callToolResult projects a terminal run (MCP tools §Error Handling; OpenWOP
// interop map mcp tools/call): completed → isError false, the output as
// text (and as structuredContent when it is an object), each artifact part
// as an embedded resource; failed and cancelled → isError true with a safe
// text, never a JSON-RPC error. That includes a run that failed in the
// host: a tools/call answer has no protocol-level failure to report it
// with; only a task can (status failed, tasks.go).
func (s *Server) callToolResult(run *interop.Run) ([]byte, error) {
	switch run.Status {
	case interop.StatusFailed:
		if run.Fault {
			return toolError(faultText)
		}
		msg := run.FailureMessage
		if msg == "" {
			msg = "The tool failed."
		}
		return toolError(msg)
	case interop.StatusCancelled:
		return toolError("The tool call was cancelled.")
	}
	// One content block is the usual answer: it is appended in place.
	var first [1]content
	res := callToolResultJSON{ResultType: "complete", Content: first[:0]}
	text := "The tool completed."
	if out := trimJSON(run.Output); len(out) > 0 && string(out) != "null" {
		if str, ok := jsonString(out); ok {
			text = str
		} else {
			text = string(out)
		}
		if out[0] == '{' {
			res.StructuredContent = out
		}
	}
	res.Content = append(res.Content, content{Type: "text", Text: text})
	for _, a := range run.Artifacts {
		for i, p := range a.Parts {
			res.Content = append(res.Content, artifactContent(run.ID, a, i, p))
		}
	}
	return marshalCallToolResult(&res)
}

// jsonString decodes out when it is a JSON string (a function of its own,
// so that only a string output pays for the decoder's target).
func jsonString(out json.RawMessage) (string, bool) {
	var str string
	if out[0] != '"' || json.Unmarshal(out, &str) != nil {
		return "", false
	}
	return str, true
}

// trimJSON is b without surrounding white space (Unicode's, as
// strings.TrimSpace trims it), aliasing b.
func trimJSON(b json.RawMessage) json.RawMessage {
	return bytes.TrimSpace(b)
}

// artifactContent projects one artifact part: a URL part becomes a
// resource link, everything else an embedded resource addressed by an
// openwop: URI naming the run, the artifact and the part.
func artifactContent(runID string, a interop.Artifact, i int, p interop.Part) content {
	if p.Kind == interop.PartURL {
		name := p.Filename
		if name == "" {
			name = a.Name
		}
		if name == "" {
			name = a.ID
		}
		return content{Type: "resource_link", URI: p.URL, Name: name, MIMEType: p.MediaType}
	}
	uri := "openwop://runs/" + isolation.Project(runID) + "/artifacts/" + url.PathEscape(a.ID) + "/parts/" + strconv.Itoa(i)
	rc := &resourceContents{URI: uri, MIMEType: p.MediaType}
	switch p.Kind {
	case interop.PartText:
		text := p.Text
		rc.Text = &text
		if rc.MIMEType == "" {
			rc.MIMEType = "text/plain"
		}
	case interop.PartData:
		text := string(trimJSON(p.Data))
		rc.Text = &text
		if rc.MIMEType == "" {
			rc.MIMEType = "application/json"
		}
	default:
		rc.Blob = base64.StdEncoding.EncodeToString(p.Raw)
		if rc.MIMEType == "" {
			rc.MIMEType = "application/octet-stream"
		}
	}
	return content{Type: "resource", Resource: rc}
}
