package hostapp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopinterop/wopinterop/internal/version"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/mcp/remote"
)

// The mcp invoke seam (-conformance-seams): the OpenWOP suite's way to
// make the host act as an MCP client toward a server it runs, and read
// the negotiation record the exchange leaves on a run's log (OpenWOP
// interop.md §Negotiation is a protocol, §The floor, §The audit event,
// §The MCP round ceiling).
//
//	POST /conformance/seams/sample/mcp/invoke
//	{"serverUrl": URL, "authenticated"?: bool, "requestVersion"?: "YYYY-MM-DD",
//	 "tool"?: name, "arguments"?: {…}, "clientCapabilities"?: {"elicitation"?: {…}},
//	 "elicitationAnswer"?: {…}}
//	→ 200 {"negotiatedVersion", "runId", "mrtr"?: {"inputRequiredSeen", "retried", "requestStateEchoed"}},
//	  or the error envelope with details.runId
//
// One call is one run of a hidden workflow in the caller's tenant, on the
// host's MCP client (the library's, with the mcp record's policy and
// mrtr.maxRounds): the run admits the server for this call alone, under an
// alias no one else uses — pinned to requestVersion when given, presenting
// the seam's credential unless authenticated is false — and connects: the
// one negotiation.decided record goes on the run's log. Without a tool,
// that is all. With one, the server's tools are admitted as it lists them
// now, each pinned by its current digest (a server that declares no tools
// capability has no list: the named tool alone is admitted, by name), and
// the tool is called once: an input round is answered from
// elicitationAnswer, for the modes clientCapabilities declared (none
// declared, none is answered), and mrtr reports the rounds. The run
// completes with the tool's result and fails with the projected error
// otherwise: a refused call still creates its run, because that is where
// the audit record lives.
const mcpInvokePath = "/conformance/seams/sample/mcp/invoke"

// mcpSeamWorkflowID is the mcp seam's hidden workflow.
const mcpSeamWorkflowID = "conformance-seam-mcp-invoke"

// mcpInvokeMembers are the members of the seam's body.
var mcpInvokeMembers = []string{"serverUrl", "authenticated", "requestVersion", "tool", "arguments", "clientCapabilities", "elicitationAnswer"}

// mcpInvoke is a decoded mcp seam call.
type mcpInvoke struct {
	// Endpoint is the server's MCP endpoint (serverUrl).
	Endpoint string
	// Authenticated: the host presents its outbound credential (default
	// true).
	Authenticated bool
	// Revision pins the revision the host asks for (requestVersion); empty:
	// the policy's preferred.
	Revision string
	// Tool is the tool to call; empty: connect only.
	Tool      string
	Arguments json.RawMessage
	// Elicitation is what clientCapabilities.elicitation declares; nil:
	// nothing.
	Elicitation *mcp.ElicitationCapabilities
	// Answer is elicitationAnswer, the content of an accepted form; nil:
	// every input request is declined.
	Answer map[string]any
}

// parseMCPInvoke reads the seam's body, whose members decodeObject already
// held to mcpInvokeMembers: serverUrl an absolute http(s) URL without
// userinfo or fragment, authenticated a boolean, requestVersion an MCP
// revision (YYYY-MM-DD), tool a string, arguments, clientCapabilities
// (and its elicitation) and elicitationAnswer objects. Every refusal is a
// 400 validation_error naming the member.
func parseMCPInvoke(members map[string]json.RawMessage) (mcpInvoke, error) {
	server, err := stringMember(members, "serverUrl")
	if err != nil {
		return mcpInvoke{}, err
	}
	u, perr := url.Parse(server)
	if server == "" || perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" ||
		u.User != nil || u.Fragment != "" || u.RawFragment != "" {
		return mcpInvoke{}, invalid("serverUrl", "must be an absolute http(s) URL without userinfo or fragment")
	}
	out := mcpInvoke{Endpoint: server, Authenticated: true}
	if raw, ok := members["authenticated"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &out.Authenticated); err != nil {
			return mcpInvoke{}, invalid("authenticated", "must be a boolean")
		}
	}
	if out.Revision, err = stringMember(members, "requestVersion"); err != nil {
		return mcpInvoke{}, err
	}
	if out.Revision != "" && !version.Date(out.Revision) {
		return mcpInvoke{}, invalid("requestVersion", "must be an MCP revision (YYYY-MM-DD)")
	}
	if out.Tool, err = stringMember(members, "tool"); err != nil {
		return mcpInvoke{}, err
	}
	if out.Arguments, _, err = objectMember(members, "arguments"); err != nil {
		return mcpInvoke{}, err
	}
	caps, ok, err := objectMember(members, "clientCapabilities")
	if err != nil {
		return mcpInvoke{}, err
	}
	if ok {
		var c struct {
			Elicitation *mcp.ElicitationCapabilities `json:"elicitation"`
		}
		if err := json.Unmarshal(caps, &c); err != nil {
			return mcpInvoke{}, invalid("clientCapabilities", "elicitation must be an object of the modes declared (form, url)")
		}
		out.Elicitation = c.Elicitation
	}
	answer, ok, err := objectMember(members, "elicitationAnswer")
	if err != nil {
		return mcpInvoke{}, err
	}
	if ok {
		_ = json.Unmarshal(answer, &out.Answer) // an object always decodes into a map
	}
	return out, nil
}

// mrtrView reports the input rounds of the seam's call.
type mrtrView struct {
	InputRequiredSeen  bool `json:"inputRequiredSeen"`
	Retried            bool `json:"retried"`
	RequestStateEchoed bool `json:"requestStateEchoed"`
}

// mcpInvokedView is the seam's success answer; mrtr only when the server
// asked for input.
type mcpInvokedView struct {
	NegotiatedVersion string    `json:"negotiatedVersion"`
	RunID             string    `json:"runId"`
	MRTR              *mrtrView `json:"mrtr,omitempty"`
}

// mcpSeamCall is one mcp seam call waiting for its run.
type mcpSeamCall struct {
	mcpInvoke
	done chan mcpSeamResult // buffered 1: the run never blocks on it
}

// mcpSeamResult is what the seam run's exchange ended in.
type mcpSeamResult struct {
	version string
	mrtr    *mrtrView
	err     error
}

// invokeMCP serves the seam: it decodes the body (refusing bad input
// before any run exists), starts the seam run in the caller's tenant and
// answers with what the run's exchange ended in.
func (s *server) invokeMCP(w http.ResponseWriter, r *http.Request, sub interop.Subject) {
	members, err := s.readJSONBody(w, r, false, mcpInvokeMembers...)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	call, err := parseMCPInvoke(members)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), seamRunGrace)
	defer cancel()
	job := &mcpSeamCall{mcpInvoke: call, done: make(chan mcpSeamResult, 1)}
	token := s.tools.seamOps.put(job)
	defer s.tools.seamOps.take(token)
	run, err := s.startSeamRun(ctx, r, sub, mcpSeamWorkflowID, token)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var res mcpSeamResult
	select {
	case res = <-job.done:
	case <-ctx.Done():
		s.writeError(w, r, remote.ProjectError(run.ID, ctx.Err()))
		return
	}
	// The run ends right after its exchange reported: wait for that, so the
	// log a caller reads next already says how it ended.
	s.awaitEnd(ctx, sub, run.ID)
	if res.err != nil {
		s.writeError(w, r, remote.ProjectError(run.ID, res.err))
		return
	}
	s.respond(w, r, http.StatusOK, mcpInvokedView{NegotiatedVersion: res.version, RunID: run.ID, MRTR: res.mrtr})
}

// seamWorkflow is the hidden workflow of the mcp seam's runs.
func (tc *toolCalls) seamWorkflow() memstore.WorkflowDef {
	return memstore.WorkflowDef{
		Workflow: interop.Workflow{
			ID:          mcpSeamWorkflowID,
			Name:        "Conformance seam: MCP invoke",
			Description: "One tool call to an MCP server the OpenWOP conformance suite names (test only).",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"call":{"type":"string"}},"required":["call"],"additionalProperties":false}`),
		},
		Run: tc.runSeam,
	}
}

// mcpSeamOutputs are the outputs of a seam run whose exchange succeeded.
type mcpSeamOutputs struct {
	NegotiatedVersion string         `json:"negotiatedVersion"`
	Result            *remote.Result `json:"result,omitempty"`
	MRTR              *mrtrView      `json:"mrtr,omitempty"`
}

func (tc *toolCalls) runSeam(ctx context.Context, rc *memstore.RunContext) (json.RawMessage, error) {
	var in struct {
		Call string `json:"call"`
	}
	_ = json.Unmarshal(rc.Inputs(), &in) // validated against the schema
	call, ok := tc.seamOps.take(in.Call)
	if !ok {
		return nil, memstore.Fail("this run was not started by the mcp seam")
	}
	ctx = remote.WithTraceContext(ctx, rc.Trace())
	out, err := tc.invokeOnce(ctx, rc.RunID(), call.mcpInvoke)
	call.done <- mcpSeamResult{version: out.NegotiatedVersion, mrtr: out.MRTR, err: err}
	if err != nil {
		return nil, failMCP(rc.RunID(), err)
	}
	return json.Marshal(out)
}

// invokeOnce admits the server for this call, connects on runID and, when
// the call names a tool, admits the server's tools and calls it once.
func (tc *toolCalls) invokeOnce(ctx context.Context, runID string, call mcpInvoke) (mcpSeamOutputs, error) {
	a := remote.Admission{
		Alias: randomAlias("seam-"), Endpoint: call.Endpoint, Revision: call.Revision,
		Limits: remote.Limits{Timeout: seamSendTimeout},
	}
	if call.Authenticated {
		a.Credential = remote.CredentialRef{Name: credentialSeam}
	}
	if err := tc.client.Admit(a); err != nil {
		return mcpSeamOutputs{}, err // the edge checked what Admit checks
	}
	defer tc.client.Revoke(a.Alias)
	sess, err := tc.client.Connect(ctx, runID, a.Alias)
	if err != nil {
		return mcpSeamOutputs{}, err
	}
	defer sess.Close()
	out := mcpSeamOutputs{NegotiatedVersion: sess.Version}
	if call.Tool == "" {
		return out, nil
	}
	if sess.DeclaresTools() {
		listed, err := sess.Listed(ctx)
		if err != nil {
			return out, err
		}
		err = sess.AdmitTools(pinAll(listed))
	} else {
		err = sess.AdmitUnlisted(call.Tool)
	}
	if err != nil {
		return out, err
	}
	req := remote.CallRequest{Tool: call.Tool, Arguments: call.Arguments}
	if call.Elicitation != nil {
		req.Elicitation, req.Decide = call.Elicitation, answerFrom(call.Answer)
	}
	res, err := sess.Call(ctx, req)
	if res != nil && res.Rounds > 0 {
		out.MRTR = &mrtrView{InputRequiredSeen: true, Retried: true, RequestStateEchoed: res.StateEchoed}
	}
	if res != nil && errors.Is(err, remote.ErrToolError) {
		err = nil // the tool ran and reported a failure: a result
	}
	if err != nil {
		return out, err
	}
	out.Result = res.Result
	return out, nil
}

// answerFrom answers every input request of a round: a form accepted with
// answer, when there is one; a form without one, and every URL-mode
// request (nothing here can complete one), declined.
func answerFrom(answer map[string]any) remote.InputDecider {
	return func(_ context.Context, round remote.InputRound) (map[string]*mcp.ElicitResult, error) {
		out := make(map[string]*mcp.ElicitResult, len(round.Requests))
		for _, r := range round.Requests {
			if r.Mode == "form" && answer != nil {
				out[r.ID] = &mcp.ElicitResult{Action: interop.InputAccept, Content: answer}
			} else {
				out[r.ID] = &mcp.ElicitResult{Action: interop.InputDecline}
			}
		}
		return out, nil
	}
}
