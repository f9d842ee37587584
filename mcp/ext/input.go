package ext

// Input requests of what the host serves itself: a native tool, a prompt
// or a resource read may answer input_required with any of the three
// requests an InputRequiredResult can carry — elicitation/create (form or
// URL mode), sampling/createMessage and roots/list — keyed by keys the
// host chooses (OpenWOP interop map, mcp.mrtr, as it applies to requests
// that are not runs). Each request is checked against the capabilities
// the request declared (never assumed, else -32021; OpenWOP interop map,
// mcp.meta); the host's state is sealed into requestState by the mount
// (bound to the principal, the request digest, a TTL and the round; single
// use; a tampered state is -32602; OpenWOP interop map, mcp.mrtr), and the
// retry hands the host the responses to exactly the keys it asked.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/mcp/internal/mount"
	"github.com/wopinterop/wopinterop/mcp/sealed"
)

// InputRequired asks the caller for more input before a request can
// complete: the mount answers an InputRequiredResult with Requests as
// inputRequests and State sealed into requestState. When the client
// retries, the same host method sees the answers in
// [InputRound.Responses] and State in [InputRound.State].
type InputRequired struct {
	// Requests are keyed by host-chosen, non-empty keys; at least one. A
	// value is an *sdk.ElicitParams (form mode for a flat, non-secret
	// form, URL mode for anything sensitive: OpenWOP RFC 0199 §C.6, §D.2),
	// an *sdk.CreateMessageParams or *sdk.CreateMessageWithToolsParams, or
	// an *sdk.ListRootsParams.
	Requests sdk.InputRequestMap
	// State is the host's state for the next round; it travels sealed
	// (the client can neither read nor change it) and shares the
	// requestState size budget, so keep it under 2 KiB.
	State []byte
}

// InputRound is what a request the host serves knows about the client
// and the input rounds before it.
type InputRound struct {
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

	// caps are the client capabilities the request declared.
	caps mount.Caps
}

// Supports reports whether the request declared the client capabilities
// req needs (_meta io.modelcontextprotocol/clientCapabilities). Ask only
// what it allows: the mount answers any other request with -32021.
func (r *InputRound) Supports(req sdk.InputRequest) bool {
	m, err := missing(r.caps, req)
	return err == nil && m == ""
}

// missing returns the requiredCapabilities member (a JSON object member
// without braces) that req needs and caps lack, or "". A request of no
// kind an InputRequiredResult carries is an error.
func missing(caps mount.Caps, req sdk.InputRequest) (string, error) {
	switch p := req.(type) {
	case *sdk.ElicitParams:
		if p == nil {
			break
		}
		switch {
		case !caps.Elicitation:
			return `"elicitation":{}`, nil
		case elicitMode(p) == "url" && !caps.ElicitationURL:
			return `"elicitation":{"url":{}}`, nil
		case elicitMode(p) != "url" && !caps.ElicitationForm:
			return `"elicitation":{"form":{}}`, nil
		}
		return "", nil
	case *sdk.CreateMessageParams:
		if p == nil {
			break
		}
		return missingSampling(caps, false, p.IncludeContext), nil
	case *sdk.CreateMessageWithToolsParams:
		if p == nil {
			break
		}
		return missingSampling(caps, len(p.Tools) > 0, p.IncludeContext), nil
	case *sdk.ListRootsParams:
		if p == nil {
			break
		}
		if !caps.Roots {
			return `"roots":{}`, nil
		}
		return "", nil
	}
	return "", fmt.Errorf("%T is no input request an InputRequiredResult carries", req)
}

// missingSampling is missing for a sampling request.
func missingSampling(caps mount.Caps, tools bool, includeContext string) string {
	switch {
	case !caps.Sampling:
		return `"sampling":{}`
	case tools && !caps.SamplingTools:
		return `"sampling":{"tools":{}}`
	case includeContext != "" && includeContext != "none" && !caps.SamplingContext:
		return `"sampling":{"context":{}}`
	}
	return ""
}

// elicitMode is an elicitation's mode, inferred as go-sdk infers it when
// unset: url when it names a URL or an elicitation id, otherwise form.
func elicitMode(p *sdk.ElicitParams) string {
	switch {
	case p.Mode != "":
		return p.Mode
	case p.URL != "" || p.ElicitationID != "":
		return "url"
	}
	return "form"
}

// InputResponses are the inputResponses of a retry: key → the client's
// result object (ElicitResult, CreateMessageResult or ListRootsResult), as
// sent. Its methods decode one answer as go-sdk's result types.
type InputResponses map[string]json.RawMessage

// Elicitation returns the answer to the elicitation asked under key; false
// when there is none or it is not an ElicitResult.
func (r InputResponses) Elicitation(key string) (*sdk.ElicitResult, bool) {
	var er sdk.ElicitResult
	raw, ok := r[key]
	if !ok || json.Unmarshal(raw, &er) != nil {
		return nil, false
	}
	switch er.Action {
	case "accept", "decline", "cancel":
		return &er, true
	}
	return nil, false
}

// Sampling returns the answer to the sampling request asked under key;
// false when there is none or it is not a CreateMessageResult with one
// text, image or audio block.
func (r InputResponses) Sampling(key string) (*sdk.CreateMessageResult, bool) {
	var sr sdk.CreateMessageResult
	raw, ok := r[key]
	if !ok || json.Unmarshal(raw, &sr) != nil || sr.Role == "" || sr.Content == nil {
		return nil, false
	}
	return &sr, true
}

// Roots returns the roots answered under key; false when there is no
// answer or it is not a ListRootsResult.
func (r InputResponses) Roots(key string) ([]*sdk.Root, bool) {
	var lr struct {
		Roots *[]*sdk.Root `json:"roots"`
	}
	raw, ok := r[key]
	if !ok || json.Unmarshal(raw, &lr) != nil || lr.Roots == nil {
		return nil, false
	}
	return *lr.Roots, true
}

// roundOf reads a request's requestState and inputResponses.
func roundOf(c *mount.Call) (mount.Round, error) {
	rp, msg := mount.ParseRound(c.Params)
	if msg != "" {
		return rp, invalidParams(msg)
	}
	return rp, nil
}

// hostRound builds the InputRound of a request the host serves. A
// requestState must open as a host grant; with runs, a run grant (a native
// tool that handed its call to a run, see [Handoff]) is returned as run
// with the zero round, for the mount to resume that run.
func hostRound(ctx context.Context, env mount.Env, c *mount.Call, rp mount.Round, digest [32]byte, runs bool) (round InputRound, run *sealed.Claims, err error) {
	round.caps = c.Caps
	if !rp.HasState {
		round.Responses = rp.Responses
		return round, nil, nil
	}
	claims, err := env.OpenState(ctx, c.Subject, rp.State, digest, runs)
	if err != nil {
		return round, nil, err
	}
	if claims.RunID != "" {
		return round, &claims, nil
	}
	round.State, round.Round = claims.HostState, claims.Round
	round.Responses = InputResponses{}
	for _, k := range claims.InputKeys {
		if v, ok := rp.Responses[k]; ok {
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

// inputRequired encodes the InputRequiredResult of a request the host
// serves: each request checked against the declared capabilities (-32021
// naming everything missing; OpenWOP interop map, mcp.meta), the host's
// state sealed as a host grant for round+1. A malformed InputRequired is
// a host fault.
func inputRequired(env mount.Env, c *mount.Call, digest [32]byte, round int, in *InputRequired) ([]byte, error) {
	if len(in.Requests) == 0 {
		return nil, errors.New("mcp/ext: InputRequired without requests")
	}
	requests := make(map[string]inputRequestJSON, len(in.Requests))
	keys := make([]string, 0, len(in.Requests))
	var needed []string
	for k, req := range in.Requests {
		if k == "" {
			return nil, errors.New("mcp/ext: InputRequired with an empty key")
		}
		m, err := missing(c.Caps, req)
		if err != nil {
			return nil, fmt.Errorf("mcp/ext: input request %q: %w", k, err)
		}
		method, params, err := encodeInputRequest(req)
		if err != nil {
			return nil, fmt.Errorf("mcp/ext: input request %q: %w", k, err)
		}
		if m != "" && !slices.Contains(needed, m) {
			needed = append(needed, m)
		}
		requests[k] = inputRequestJSON{method, params}
		keys = append(keys, k)
	}
	if len(needed) > 0 {
		return nil, missingCapability(mergeRequired(needed))
	}
	slices.Sort(keys)
	state, err := env.Seal(c.Subject, sealed.Grant{Round: round + 1, RequestDigest: digest, InputKeys: keys, HostState: in.State})
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
func hostError(err error, notFound error) error {
	var ie *interop.InputError
	switch {
	case errors.As(err, &ie):
		return withData(invalidParams("Invalid params: the host refused the request"), struct {
			Field  string `json:"field"`
			Reason string `json:"reason"`
		}{ie.Field, ie.Reason})
	case errors.Is(err, interop.ErrInvalidInput):
		return invalidParams("Invalid params: the host refused the request")
	case errors.Is(err, interop.ErrNotFound), errors.Is(err, interop.ErrForbidden):
		return notFound
	}
	return fmt.Errorf("host: %w", err)
}
