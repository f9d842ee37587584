package mcp

// Multi-round tool results (OpenWOP interop map, mcp.mrtr; RFC 0199 §D.2;
// interop.md §The MCP round ceiling). A run that suspends on an
// approval or an input interrupt answers the in-flight tools/call with an
// InputRequiredResult: one elicitation/create per open interrupt, keyed by
// the tenant-bound interruptId, plus a requestState sealed by mcp/sealed
// and bound to the principal, a TTL, the request digest, the run, the
// interrupt ids and the round. The client retries the same call with that
// state and inputResponses; each answered interrupt is resolved with the
// retrying Subject as resolver (the store enforces eligibility), and the
// retry waits again like the first call.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/mcp/internal/mount"
	"github.com/wopinterop/wopinterop/mcp/sealed"
)

// inputRequest is one entry of inputRequests: an elicitation/create.
type inputRequest struct {
	Method string       `json:"method"`
	Params elicitParams `json:"params"`
}

// elicitParams are ElicitRequestFormParams or ElicitRequestURLParams.
type elicitParams struct {
	Mode            string          `json:"mode"`
	Message         string          `json:"message"`
	RequestedSchema json.RawMessage `json:"requestedSchema,omitempty"`
	URL             string          `json:"url,omitempty"`
}

// projection is how the open interrupts of a run can be asked.
type projection struct {
	requests map[string]inputRequest
	ids      []string
	// required, when set, is the mount.Caps object the request
	// lacks (-32021).
	required string
	// outOfBand, when set, is the safe text of an isError result: the
	// input cannot be asked over MCP with what the request declared.
	outOfBand string
}

// project builds the inputRequests of run's open interrupts
// (OpenWOP interop map, mcp.mrtr; RFC 0199 §D.2). forTask projects for tasks/get, where the capabilities of the
// original call are not known: every mode that can be offered is offered,
// and an interrupt that cannot be asked at all is left out.
func (s *Server) project(ctx context.Context, sub interop.Subject, run *interop.Run, caps mount.Caps, forTask bool) projection {
	var p projection
	if !forTask && !caps.Elicitation {
		p.required = requiredElicitation
		return p
	}
	for _, in := range run.Interrupts {
		if in.Kind != interop.InterruptApproval && in.Kind != interop.InterruptClarification && in.Kind != interop.InterruptCredential {
			continue // nothing the client can answer (e.g. external events)
		}
		ir, required, outOfBand := s.projectInterrupt(ctx, sub, run, in, caps, forTask)
		switch {
		case required != "":
			p.required = required
			return p
		case outOfBand != "":
			if p.outOfBand == "" {
				p.outOfBand = outOfBand
			}
			continue
		}
		if p.requests == nil {
			p.requests = map[string]inputRequest{}
		}
		p.requests[in.ID] = ir
		p.ids = append(p.ids, in.ID)
	}
	if !forTask && p.outOfBand == "" && len(p.ids) == 0 {
		p.outOfBand = "The tool is waiting for input that cannot be requested over MCP."
	}
	return p
}

// projectInterrupt projects one interrupt: form mode for a flat,
// non-secret schema; URL mode for a credential (its connectUrl) or any
// other schema when a host page exists and the request declared URL mode;
// otherwise the input is needed out of band. Never form mode for secrets.
func (s *Server) projectInterrupt(ctx context.Context, sub interop.Subject, run *interop.Run, in interop.Interrupt, caps mount.Caps, forTask bool) (ir inputRequest, required, outOfBand string) {
	ir.Method = "elicitation/create"
	ir.Params.Message = in.Message
	if in.Kind == interop.InterruptCredential {
		provider, connect := credentialOf(in)
		if ir.Params.Message == "" {
			ir.Params.Message = "Authorization with " + provider + " is required to continue."
		}
		if connect != "" && (forTask || caps.ElicitationURL) {
			ir.Params.Mode, ir.Params.URL = "url", connect
			return ir, "", ""
		}
		return ir, "", "Authorization with " + provider + " is needed; complete it out of band, then call the tool again."
	}
	if ir.Params.Message == "" {
		ir.Params.Message = "Input is required to continue."
	}
	if schema, ok := formSchema(in); ok {
		if forTask || caps.ElicitationForm {
			ir.Params.Mode, ir.Params.RequestedSchema = "form", schema
			return ir, "", ""
		}
		if u := s.interruptURL(ctx, sub, run, in); u != "" && caps.ElicitationURL {
			ir.Params.Mode, ir.Params.URL = "url", u
			return ir, "", ""
		}
		return ir, requiredElicitationForm, ""
	}
	if u := s.interruptURL(ctx, sub, run, in); u != "" && (forTask || caps.ElicitationURL) {
		ir.Params.Mode, ir.Params.URL = "url", u
		return ir, "", ""
	}
	return ir, "", "This step needs input that cannot be requested over MCP; provide it out of band, then call the tool again."
}

func (s *Server) interruptURL(ctx context.Context, sub interop.Subject, run *interop.Run, in interop.Interrupt) string {
	if s.opts.InterruptURL == nil {
		return ""
	}
	return s.opts.InterruptURL(ctx, sub, *run, in)
}

// credentialOf returns a credential interrupt's provider and connectUrl,
// from Credential or else from Data.
func credentialOf(in interop.Interrupt) (provider, connectURL string) {
	cd := in.Credential
	if cd == nil {
		var parsed interop.CredentialData
		if json.Unmarshal(in.Data, &parsed) == nil {
			cd = &parsed
		}
	}
	if cd == nil || cd.Provider == "" {
		return "the provider", connectURLOf(cd)
	}
	return cd.Provider, connectURLOf(cd)
}

func connectURLOf(cd *interop.CredentialData) string {
	if cd == nil {
		return ""
	}
	return cd.ConnectURL
}

// formSchema returns the requestedSchema of a form-mode elicitation for
// in, or false when in cannot be asked in form mode: its resume schema is
// not a flat object of primitive properties, or a property is a secret
// (writeOnly, format password) (OpenWOP RFC 0199 §C.6, §D.2; interop map, mcp.mrtr). An approval without a
// schema asks for one of its actions; any other interrupt without a schema
// asks for nothing but accept or decline.
func formSchema(in interop.Interrupt) (json.RawMessage, bool) {
	if len(bytes.TrimSpace(in.ResumeSchema)) == 0 {
		if in.Kind == interop.InterruptApproval && len(in.Actions) > 0 {
			b, err := mount.Marshal(map[string]any{
				"type":       "object",
				"properties": map[string]any{"action": map[string]any{"type": "string", "enum": in.Actions}},
				"required":   []string{"action"},
			})
			return b, err == nil
		}
		return json.RawMessage(`{"type":"object","properties":{}}`), true
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(in.ResumeSchema, &top) != nil {
		return nil, false
	}
	for k := range top {
		switch k {
		case "type", "properties", "required", "$schema", "title", "description", "additionalProperties":
		default:
			return nil, false
		}
	}
	if string(top["type"]) != `"object"` {
		return nil, false
	}
	var props map[string]map[string]json.RawMessage
	if raw, ok := top["properties"]; ok && json.Unmarshal(raw, &props) != nil {
		return nil, false
	}
	for _, prop := range props {
		if !primitiveProperty(prop) {
			return nil, false
		}
	}
	var required []string
	if raw, ok := top["required"]; ok && json.Unmarshal(raw, &required) != nil {
		return nil, false
	}
	out := struct {
		Type       string                                `json:"type"`
		Properties map[string]map[string]json.RawMessage `json:"properties"`
		Required   []string                              `json:"required,omitempty"`
	}{"object", props, required}
	if out.Properties == nil {
		out.Properties = map[string]map[string]json.RawMessage{}
	}
	b, err := mount.Marshal(out)
	return b, err == nil
}

// primitiveProperty reports whether a property schema is one of the
// elicitation primitives: a string (optionally an enum or a non-secret
// format), a number, an integer or a boolean, with only annotation and
// range keywords.
func primitiveProperty(prop map[string]json.RawMessage) bool {
	var typ string
	if json.Unmarshal(prop["type"], &typ) != nil {
		return false
	}
	switch typ {
	case "string", "number", "integer", "boolean":
	default:
		return false
	}
	for k, v := range prop {
		switch k {
		case "type", "title", "description", "default", "minLength", "maxLength", "minimum", "maximum", "enum", "enumNames":
		case "format":
			var f string
			if json.Unmarshal(v, &f) != nil {
				return false
			}
			switch f {
			case "email", "uri", "date", "date-time":
			default: // "password" and anything unknown
				return false
			}
		case "writeOnly":
			if string(v) != "false" {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// inputRequired answers a suspended run without the tasks extension, with
// p, the projection of its interrupts for the request (outcome refused it
// already when a capability is missing).
func (s *Server) inputRequired(inv *invocation, run *interop.Run, p projection, round int) ([]byte, error) {
	if p.outOfBand != "" {
		return toolError(p.outOfBand)
	}
	digest, derr := inv.digest()
	if derr != nil {
		return nil, derr
	}
	state, err := s.deps.Sealer.Seal(inv.c.Subject, sealed.Grant{RunID: run.ID, InterruptIDs: p.ids, Round: round + 1, RequestDigest: digest})
	if err != nil {
		return nil, err
	}
	return mount.Marshal(struct {
		ResultType    string                  `json:"resultType"`
		InputRequests map[string]inputRequest `json:"inputRequests"`
		RequestState  string                  `json:"requestState"`
	}{"input_required", p.requests, state})
}

// errInvalidState answers every requestState that does not open: forged,
// expired, replayed, bound to another principal or another request. One
// answer for all, so a caller learns nothing about which check failed.
var errInvalidState = errInvalidParams("Invalid params: requestState is not valid for this request")

// elicitResult is one inputResponses entry as the mount reads it.
type elicitResult struct {
	action  string
	content json.RawMessage
}

func parseElicitResult(raw json.RawMessage) (elicitResult, bool) {
	var m map[string]json.RawMessage
	var er elicitResult
	if json.Unmarshal(raw, &m) != nil || json.Unmarshal(m["action"], &er.action) != nil {
		return er, false
	}
	switch er.action {
	case "accept", "decline", "cancel":
	default:
		return er, false
	}
	if c, ok := m["content"]; ok && string(c) != "null" {
		if c[0] != '{' {
			return er, false
		}
		er.content = c
	}
	return er, true
}

// retry serves a tools/call of a workflow that carries a requestState
// (OpenWOP interop map, mcp.mrtr; RFC 0199 §D.2; interop.md §The MCP round ceiling). Every refusal leaves the run as it was.
func (s *Server) retry(ctx context.Context, inv *invocation) (answer, error) {
	digest, derr := inv.digest()
	if derr != nil {
		return answer{}, derr
	}
	claims, err := s.openState(ctx, inv.c.Subject, inv.params.State, digest)
	if err == nil && claims.RunID == "" {
		err = errInvalidState // a host grant never resumes a run
	}
	if err != nil {
		return answer{}, err
	}
	return s.resumeRun(ctx, inv, claims)
}

// resumeRun resolves the interrupts a valid run grant names with the
// retry's inputResponses and answers the run's next state.
func (s *Server) resumeRun(ctx context.Context, inv *invocation, claims sealed.Claims) (answer, error) {
	c := inv.c
	answers := make(map[string]elicitResult, len(claims.InterruptIDs))
	for _, id := range claims.InterruptIDs {
		raw, ok := inv.params.Responses[id]
		if !ok {
			continue // asked again below, not an error
		}
		er, ok := parseElicitResult(raw)
		if !ok {
			return answer{}, errMalformedResponses
		}
		answers[id] = er
	}
	run, err := s.deps.Store.GetRun(ctx, c.Subject, claims.RunID)
	if err != nil {
		if errors.Is(err, interop.ErrNotFound) {
			err = errInvalidState
		}
		return answer{}, err
	}
	s.own(c, run.ID)
	for _, id := range claims.InterruptIDs {
		er, ok := answers[id]
		if !ok {
			continue
		}
		in, open := openInterrupt(&run, id)
		if !open {
			continue // answered elsewhere or withdrawn: nothing to resolve
		}
		outcome, value := resolution(in, er)
		updated, err := s.deps.Store.ResolveInterrupt(ctx, c.Subject, interop.ResolveRequest{RunID: run.ID, InterruptID: id, Outcome: outcome, Value: value})
		if err == nil {
			run = updated
			continue
		}
		if e := resolveError(in, err); e != nil {
			return answer{}, e
		}
	}
	latest, err := s.deps.Store.GetRun(ctx, c.Subject, run.ID)
	if err != nil {
		return answer{}, err
	}
	return s.respond(ctx, inv, latest, claims.Round)
}

// openInterrupt finds an open interrupt of run.
func openInterrupt(run *interop.Run, id string) (interop.Interrupt, bool) {
	for _, in := range run.Interrupts {
		if in.ID == id {
			return in, true
		}
	}
	return interop.Interrupt{}, false
}

// resolution maps an ElicitResult onto a resolve outcome and resume value
// (OpenWOP interop map, mcp.mrtr; RFC 0199 §D.2): accept resumes with the content (an approval's
// accept without an action is {"action":"accept"}; a credential's accept
// asks the host to re-check with {"outcome":"authorized"}), decline takes
// the decline path, cancel cancels the interrupt. The content never
// becomes authority: the store decides eligibility and validity.
func resolution(in interop.Interrupt, er elicitResult) (interop.ResolveOutcome, json.RawMessage) {
	switch er.action {
	case "decline":
		if in.Kind == interop.InterruptCredential {
			return interop.OutcomeDecline, json.RawMessage(`{"outcome":"declined"}`)
		}
		return interop.OutcomeDecline, nil
	case "cancel":
		return interop.OutcomeCancel, nil
	}
	switch in.Kind {
	case interop.InterruptCredential:
		return interop.OutcomeAccept, json.RawMessage(`{"outcome":"authorized"}`)
	case interop.InterruptApproval:
		var m map[string]json.RawMessage
		if er.content != nil && json.Unmarshal(er.content, &m) == nil {
			if _, ok := m["action"]; ok {
				return interop.OutcomeAccept, er.content
			}
		}
		return interop.OutcomeAccept, json.RawMessage(`{"action":"accept"}`)
	}
	if er.content == nil {
		return interop.OutcomeAccept, json.RawMessage(`{}`)
	}
	return interop.OutcomeAccept, er.content
}

// resolveError maps a ResolveInterrupt refusal; nil means "carry on": the
// interrupt was resolved meanwhile, the run ended, or a credential is still
// missing (the call then asks again with the same URL; OpenWOP RFC 0199 §D.2).
func resolveError(in interop.Interrupt, err error) error {
	switch {
	case errors.Is(err, interop.ErrAlreadyResolved), errors.Is(err, interop.ErrRunTerminal), errors.Is(err, interop.ErrNotFound):
		return nil
	case errors.Is(err, interop.ErrNotEligible):
		return errInvalidParams("Invalid params: the caller may not answer this input request").withData(struct {
			Reason string `json:"reason"`
		}{"not_eligible"})
	case errors.Is(err, interop.ErrInvalidInput):
		if in.Kind == interop.InterruptCredential {
			return nil
		}
		var ie *interop.InputError
		if errors.As(err, &ie) {
			return errInvalidParams("Invalid params: the input response was refused").withData(struct {
				Field  string `json:"field"`
				Reason string `json:"reason"`
			}{ie.Field, ie.Reason})
		}
		return errInvalidParams("Invalid params: the input response was refused")
	}
	return err
}

var errMalformedResponses = errInvalidParams(mount.MalformedResponses)

// errRoundsExceeded answers a retry past MaxRounds (OpenWOP interop.md §The MCP round ceiling).
func (s *Server) errRoundsExceeded() *Error {
	return errInvalidParams("Invalid params: this call used every input round the server allows").withData(struct {
		Reason    string `json:"reason"`
		MaxRounds int    `json:"maxRounds"`
	}{"mcp_mrtr_rounds_exceeded", s.opts.MaxRounds})
}

// openState opens a requestState presented with a request whose digest is
// digest. Every refusal of the state is the one errInvalidState; a state
// past MaxRounds is errRoundsExceeded. Either way the state is spent.
func (s *Server) openState(ctx context.Context, sub interop.Subject, state string, digest [32]byte) (sealed.Claims, error) {
	claims, err := s.deps.Sealer.Open(ctx, state, sealed.Expectation{Subject: sub, RequestDigest: digest})
	switch {
	case errors.Is(err, sealed.ErrInvalidState):
		return claims, errInvalidState
	case err != nil:
		return claims, err
	case claims.Round > s.opts.MaxRounds:
		return claims, s.errRoundsExceeded()
	}
	return claims, nil
}
