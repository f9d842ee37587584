package mcp

// Input requests of requests the host serves itself (host.go): a native
// tool, a prompt or a resource read may answer input_required with any of
// the three requests an InputRequiredResult can carry — elicitation/create
// (form or URL mode), sampling/createMessage and roots/list — keyed by
// keys the host chooses (OpenWOP interop map, mcp.mrtr, as it applies to requests
// that are not runs). The mount checks each request against the capabilities
// the request declared (never assumed, else -32021; OpenWOP interop map, mcp.meta), seals the
// host's state into requestState with mcp/sealed (bound to the principal,
// the request digest, a TTL and the round; single use; a tampered state is
// -32602; OpenWOP interop map, mcp.mrtr) and on the retry hands the host the responses to exactly
// the keys it asked.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/mcp/internal/mount"
	"github.com/wopinterop/wopinterop/mcp/sealed"
)

// Methods an [InputRequest] may name.
const (
	MethodElicit        = "elicitation/create"
	MethodCreateMessage = "sampling/createMessage"
	MethodListRoots     = "roots/list"
)

// InputRequest is one entry of an InputRequiredResult's inputRequests: a
// request the client answers on the host's behalf. Build it with
// [ElicitForm], [ElicitURL], [CreateMessage] or [ListRoots].
type InputRequest struct {
	// Method is one of the Method* constants.
	Method string
	// Params are the request's params, encoded with encoding/json (nil is
	// {}).
	Params any
}

// ElicitForm asks the user to fill a flat form (elicitation form mode).
// requestedSchema is an object schema of primitive properties; never use
// form mode for a secret (OpenWOP RFC 0199 §C.6, §D.2; interop map, mcp.mrtr): use [ElicitURL].
func ElicitForm(message string, requestedSchema json.RawMessage) InputRequest {
	return InputRequest{Method: MethodElicit, Params: elicitParams{Mode: "form", Message: message, RequestedSchema: requestedSchema}}
}

// ElicitURL sends the user to a page (elicitation URL mode), e.g. to
// authorize or to enter something sensitive.
func ElicitURL(message, url string) InputRequest {
	return InputRequest{Method: MethodElicit, Params: elicitParams{Mode: "url", Message: message, URL: url}}
}

// CreateMessage asks the client's model for a completion
// (sampling/createMessage).
func CreateMessage(p SamplingRequest) InputRequest {
	return InputRequest{Method: MethodCreateMessage, Params: p}
}

// ListRoots asks the client for its roots (roots/list).
func ListRoots() InputRequest { return InputRequest{Method: MethodListRoots} }

// SamplingRequest are the params of sampling/createMessage.
type SamplingRequest struct {
	Messages         []SamplingMessage `json:"messages"`
	MaxTokens        int               `json:"maxTokens"`
	SystemPrompt     string            `json:"systemPrompt,omitempty"`
	Temperature      *float64          `json:"temperature,omitempty"`
	StopSequences    []string          `json:"stopSequences,omitempty"`
	ModelPreferences json.RawMessage   `json:"modelPreferences,omitempty"`
	Metadata         json.RawMessage   `json:"metadata,omitempty"`
}

// SamplingMessage is one message of a sampling request: text, image or
// audio content.
type SamplingMessage struct {
	Role    string  `json:"role"`
	Content Content `json:"content"`
}

// InputRequired asks the caller for more input before a request can
// complete: the mount answers an InputRequiredResult with Requests as
// inputRequests and State sealed into requestState. When the client
// retries, the same host method sees the answers in
// [InputRound.Responses] and State in [InputRound.State].
type InputRequired struct {
	// Requests are keyed by host-chosen, non-empty keys; at least one.
	Requests map[string]InputRequest
	// State is the host's state for the next round; it travels sealed
	// (the client can neither read nor change it) and shares the
	// requestState size budget, so keep it under 2 KiB.
	State []byte
}

// InputRound is what a request the host serves knows about the client
// and the input rounds before it.
type InputRound struct {
	// Capabilities are the client capabilities this request declared.
	// Ask only what they allow ([ClientCapabilities.Supports]); the mount
	// answers any other request with -32021.
	Capabilities ClientCapabilities
	// Responses are the request's inputResponses. After a requestState
	// they hold only the keys the previous round asked (extra keys are
	// dropped); without one, whatever the client sent, which carries no
	// more authority than the request's arguments.
	Responses InputResponses
	// State is the previous round's [InputRequired.State]: nil when the
	// request carried no requestState (or that state was empty).
	State []byte
	// Round is the number of input rounds before this request: 0 for a
	// first call or a retry without requestState, so Round > 0 tells a
	// retry that brought a valid requestState back.
	Round int
}

// ClientCapabilities are the client capabilities a request declared in
// _meta io.modelcontextprotocol/clientCapabilities, as far as the mount
// acts on them. Everything else in that object is opaque (OpenWOP interop.md §The operation mappings).
type ClientCapabilities struct {
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

// Supports reports whether the client declared what req needs.
func (c ClientCapabilities) Supports(req InputRequest) bool {
	params, err := marshalParams(req.Params)
	return err == nil && c.missing(req.Method, params) == ""
}

// missing returns the requiredCapabilities member (a JSON object member
// without braces) that a request of method with params needs and the
// client did not declare, or "".
func (c ClientCapabilities) missing(method string, params json.RawMessage) string {
	switch method {
	case MethodElicit:
		var p struct {
			Mode string `json:"mode"`
		}
		_ = json.Unmarshal(params, &p) // params is an object: a bad mode reads as form
		switch {
		case !c.Elicitation:
			return `"elicitation":{}`
		case p.Mode == "url" && !c.ElicitationURL:
			return `"elicitation":{"url":{}}`
		case p.Mode != "url" && !c.ElicitationForm:
			return `"elicitation":{"form":{}}`
		}
	case MethodCreateMessage:
		var p struct {
			Tools          json.RawMessage `json:"tools"`
			IncludeContext string          `json:"includeContext"`
		}
		_ = json.Unmarshal(params, &p)
		switch {
		case !c.Sampling:
			return `"sampling":{}`
		case len(p.Tools) > 0 && string(p.Tools) != "null" && !c.SamplingTools:
			return `"sampling":{"tools":{}}`
		case p.IncludeContext != "" && p.IncludeContext != "none" && !c.SamplingContext:
			return `"sampling":{"context":{}}`
		}
	case MethodListRoots:
		if !c.Roots {
			return `"roots":{}`
		}
	}
	return ""
}

// InputResponses are the inputResponses of a retry: key → the client's
// result object (ElicitResult, CreateMessageResult or ListRootsResult), as
// sent.
type InputResponses map[string]json.RawMessage

// ElicitResult is the client's answer to an elicitation/create.
type ElicitResult struct {
	// Action is accept, decline or cancel.
	Action string `json:"action"`
	// Content is the submitted form (accept in form mode only).
	Content map[string]any `json:"content,omitempty"`
}

// Elicitation returns the answer to the elicitation asked under key; false
// when there is none or it is not an ElicitResult.
func (r InputResponses) Elicitation(key string) (ElicitResult, bool) {
	var er ElicitResult
	raw, ok := r[key]
	if !ok || json.Unmarshal(raw, &er) != nil {
		return ElicitResult{}, false
	}
	switch er.Action {
	case "accept", "decline", "cancel":
		return er, true
	}
	return ElicitResult{}, false
}

// SamplingResult is the client's answer to a sampling/createMessage.
type SamplingResult struct {
	Role       string          `json:"role"`
	Model      string          `json:"model"`
	StopReason string          `json:"stopReason,omitempty"`
	Content    json.RawMessage `json:"content"`
}

// Text returns the text of a single text content block, or "".
func (sr SamplingResult) Text() string {
	var c struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(sr.Content, &c) != nil || c.Type != ContentText {
		return ""
	}
	return c.Text
}

// Sampling returns the answer to the sampling request asked under key;
// false when there is none or it is not a CreateMessageResult.
func (r InputResponses) Sampling(key string) (SamplingResult, bool) {
	var sr SamplingResult
	raw, ok := r[key]
	if !ok || json.Unmarshal(raw, &sr) != nil || sr.Role == "" || len(sr.Content) == 0 {
		return SamplingResult{}, false
	}
	return sr, true
}

// Root is one root of a ListRootsResult.
type Root struct {
	URI  string `json:"uri"`
	Name string `json:"name,omitempty"`
}

// Roots returns the roots answered under key; false when there is no
// answer or it is not a ListRootsResult.
func (r InputResponses) Roots(key string) ([]Root, bool) {
	var lr struct {
		Roots *[]Root `json:"roots"`
	}
	raw, ok := r[key]
	if !ok || json.Unmarshal(raw, &lr) != nil || lr.Roots == nil {
		return nil, false
	}
	return *lr.Roots, true
}

// marshalParams encodes request params; nil is {}. Params must be a JSON
// object.
func marshalParams(p any) (json.RawMessage, error) {
	if p == nil {
		return json.RawMessage(`{}`), nil
	}
	b, err := mount.Marshal(p)
	if err != nil {
		return nil, err
	}
	if len(b) == 0 || b[0] != '{' {
		return nil, errors.New("input request params are not a JSON object")
	}
	return b, nil
}

// roundParams are the MRTR members of a request's params.
type roundParams struct {
	requestState string
	hasState     bool
	// responses are inputResponses: key → raw result object.
	responses    map[string]json.RawMessage
	hasResponses bool
}

var errMalformedResponses = errInvalidParams("Invalid params: inputResponses must map each key to a result object")

// parseRoundParams reads requestState and inputResponses. An explicit null
// counts as absent.
func parseRoundParams(p map[string]json.RawMessage) (roundParams, *Error) {
	var rp roundParams
	if raw, ok := p["requestState"]; ok && string(raw) != "null" {
		if json.Unmarshal(raw, &rp.requestState) != nil {
			return rp, errInvalidParams("Invalid params: requestState must be a string")
		}
		rp.hasState = true
	}
	if raw, ok := p["inputResponses"]; ok && string(raw) != "null" {
		if raw[0] != '{' || json.Unmarshal(raw, &rp.responses) != nil {
			return rp, errMalformedResponses
		}
		for _, v := range rp.responses {
			if len(v) == 0 || v[0] != '{' {
				return rp, errMalformedResponses
			}
		}
		rp.hasResponses = true
	}
	return rp, nil
}

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

// hostRound builds the InputRound of a request the host serves. A
// requestState must open as a host grant; a run grant is returned as run
// (a native tool that handed its call to a run, see [Handoff]) with the
// zero round, for the caller to resume that run.
func (s *Server) hostRound(ctx context.Context, c *call, rp roundParams, digest [32]byte) (round InputRound, run *sealed.Claims, err error) {
	round.Capabilities = c.caps
	if !rp.hasState {
		round.Responses = rp.responses
		return round, nil, nil
	}
	claims, err := s.openState(ctx, c.subject, rp.requestState, digest)
	if err != nil {
		return round, nil, err
	}
	if claims.RunID != "" {
		return round, &claims, nil
	}
	round.State, round.Round = claims.HostState, claims.Round
	round.Responses = InputResponses{}
	for _, k := range claims.InputKeys {
		if v, ok := rp.responses[k]; ok {
			round.Responses[k] = v
		}
	}
	return round, nil, nil
}

// inputRequestJSON is one encoded inputRequests entry.
type inputRequestJSON struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// hostInputRequired encodes the InputRequiredResult of a request the host
// serves: each request checked against the declared capabilities (-32021
// naming everything missing; OpenWOP interop map, mcp.meta), the host's state sealed as a
// host grant for round+1. A malformed InputRequired is a host fault.
func (s *Server) hostInputRequired(c *call, digest [32]byte, round int, in *InputRequired) ([]byte, error) {
	if len(in.Requests) == 0 {
		return nil, errors.New("mcp: InputRequired without requests")
	}
	requests := make(map[string]inputRequestJSON, len(in.Requests))
	keys := make([]string, 0, len(in.Requests))
	var missing []string
	for k, req := range in.Requests {
		if k == "" {
			return nil, errors.New("mcp: InputRequired with an empty key")
		}
		switch req.Method {
		case MethodElicit, MethodCreateMessage, MethodListRoots:
		default:
			return nil, fmt.Errorf("mcp: InputRequired asks %q, which an InputRequiredResult cannot carry", req.Method)
		}
		params, err := marshalParams(req.Params)
		if err != nil {
			return nil, fmt.Errorf("mcp: input request %q: %w", k, err)
		}
		if m := c.caps.missing(req.Method, params); m != "" && !slices.Contains(missing, m) {
			missing = append(missing, m)
		}
		requests[k] = inputRequestJSON{req.Method, params}
		keys = append(keys, k)
	}
	if len(missing) > 0 {
		return nil, missingCapability(mergeRequired(missing))
	}
	slices.Sort(keys)
	state, err := s.deps.Sealer.Seal(c.subject, sealed.Grant{Round: round + 1, RequestDigest: digest, InputKeys: keys, HostState: in.State})
	if err != nil {
		return nil, err
	}
	return mount.Marshal(struct {
		ResultType    string                      `json:"resultType"`
		InputRequests map[string]inputRequestJSON `json:"inputRequests"`
		RequestState  string                      `json:"requestState"`
	}{"input_required", requests, state})
}

// mergeRequired joins requiredCapabilities members into one
// ClientCapabilities object, merging the sub-objects of one capability
// ("elicitation":{"form":{}} and "elicitation":{"url":{}}).
func mergeRequired(members []string) string {
	merged := map[string]map[string]json.RawMessage{}
	for _, m := range members {
		var one map[string]map[string]json.RawMessage
		_ = json.Unmarshal([]byte("{"+m+"}"), &one) // members are our own constants
		for name, sub := range one {
			if merged[name] == nil {
				merged[name] = map[string]json.RawMessage{}
			}
			for k, v := range sub {
				merged[name][k] = v
			}
		}
	}
	b, _ := mount.Marshal(merged) // maps of raw objects: cannot fail
	return string(b)
}

// hostError maps what a host method returned: a refusal of the caller's
// input is -32602 (naming the field when the host did), an unknown or
// unreadable name is notFound, anything else a server fault whose text
// never reaches the wire.
func hostError(err error, notFound *Error) error {
	var ie *interop.InputError
	switch {
	case errors.As(err, &ie):
		return errInvalidParams("Invalid params: the host refused the request").withData(struct {
			Field  string `json:"field"`
			Reason string `json:"reason"`
		}{ie.Field, ie.Reason})
	case errors.Is(err, interop.ErrInvalidInput):
		return errInvalidParams("Invalid params: the host refused the request")
	case errors.Is(err, interop.ErrNotFound), errors.Is(err, interop.ErrForbidden):
		return notFound
	}
	return fmt.Errorf("host: %w", err)
}
