package remote

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The host as a client of multi-round tool results (MCP 2026-07-28,
// SEP-2322; OpenWOP interop map, mcp.mrtr): an input_required answer is
// turned into an InputRound for the host's decider, and the decider's
// answers into the retry's inputResponses.

// Elicitation modes and answer actions (MCP 2026-07-28 §Elicitation).
const (
	modeForm = "form"
	modeURL  = "url"

	methodElicit = "elicitation/create"
)

// requestState is a server's opaque requestState, kept exactly as go-sdk
// decoded it and echoed unchanged: never parsed, never rebuilt (MCP
// 2026-07-28 multi-round tool results, SEP-2322). Every string of valid
// Unicode comes back as the same string; a lone surrogate escape or
// invalid UTF-8, which RFC 8259 §8 leaves unpredictable, reaches go-sdk's
// decoder already replaced by U+FFFD, so a server issuing one gets the
// replacement back. Logged, it shows only its SHA-256 and length, so a
// record of it is content-free.
type requestState string

// LogValue implements slog.LogValuer.
func (s requestState) LogValue() slog.Value {
	sum := sha256.Sum256([]byte(s))
	return slog.GroupValue(slog.String("sha256", hex.EncodeToString(sum[:])), slog.Int("len", len(s)))
}

// answer turns one input round into the retry's inputResponses: it checks
// every request against what the call declared, asks the decider once,
// and checks the answers. An empty round (the server retrying without
// asking anything) is answered with nothing and no decider call.
func (c *call) answer(ctx context.Context, round int, asked mcp.InputRequestMap) (mcp.InputResponseMap, error) {
	view := InputRound{AttemptID: c.attemptID, Tool: c.req.Tool, Round: round, Requests: make([]InputRequest, 0, len(asked))}
	for id, r := range asked {
		req, err := c.view(id, r)
		if err != nil {
			return nil, err
		}
		view.Requests = append(view.Requests, req)
	}
	if len(view.Requests) == 0 {
		return nil, nil
	}
	slices.SortFunc(view.Requests, func(a, b InputRequest) int { return strings.Compare(a.ID, b.ID) })

	answers, err := c.req.Decide(ctx, view)
	if err != nil {
		return nil, &InputError{Reason: InputDeclined, Err: err}
	}
	responses := make(mcp.InputResponseMap, len(view.Requests))
	for _, r := range view.Requests {
		a := answers[r.ID]
		if a == nil || !answerFits(r, a) {
			return nil, &InputError{Reason: InputBadAnswer, Request: r.ID}
		}
		responses[r.ID] = &mcp.ElicitResult{Meta: a.Meta, Action: a.Action, Content: a.Content}
	}
	if len(answers) != len(responses) {
		for id := range answers {
			if _, ok := responses[id]; !ok {
				return nil, &InputError{Reason: InputBadAnswer, Request: id}
			}
		}
	}
	return responses, nil
}

// view is the decider's copy of one input request, refused when the call
// did not declare its method and mode.
func (c *call) view(id string, r mcp.InputRequest) (InputRequest, error) {
	p, ok := r.(*mcp.ElicitParams)
	if !ok || p == nil {
		// sampling/createMessage and roots/list are never declared.
		return InputRequest{}, &InputError{Reason: InputUndeclared, Request: id}
	}
	mode := elicitMode(p)
	if !declares(c.req.Elicitation, mode) {
		return InputRequest{}, &InputError{Reason: InputUndeclared, Request: id}
	}
	c.loss.dropped.MetadataKeys += metaKeys(p.Meta)
	v := InputRequest{ID: id, Method: methodElicit, Mode: mode, Message: p.Message}
	if mode == modeURL {
		v.URL, v.ElicitationID = p.URL, p.ElicitationID
	} else if p.RequestedSchema != nil {
		// A fresh encoding, so nothing the host is shown aliases the
		// decoded result.
		v.RequestedSchema, _ = json.Marshal(p.RequestedSchema)
	}
	return v, nil
}

// elicitMode is a request's mode; an absent mode is inferred as go-sdk and
// the TypeScript SDK do: url when it names a URL or an elicitation id,
// else form.
func elicitMode(p *mcp.ElicitParams) string {
	switch {
	case p.Mode != "":
		return p.Mode
	case p.URL != "" || p.ElicitationID != "":
		return modeURL
	}
	return modeForm
}

// declares reports whether caps covers mode. An empty elicitation
// capability means form only (MCP 2026-07-28 §Elicitation, capabilities).
func declares(caps *mcp.ElicitationCapabilities, mode string) bool {
	switch {
	case caps == nil:
		return false
	case mode == modeForm:
		return caps.Form != nil || caps.URL == nil
	case mode == modeURL:
		return caps.URL != nil
	}
	return false
}

// answerFits checks one answer against its request: a known action, and
// content only with accept on a form. A URL-mode answer never carries
// content: the user acts at the URL, and the host collects no data for it
// (MCP 2026-07-28 §Elicitation, URL mode).
func answerFits(r InputRequest, a *mcp.ElicitResult) bool {
	switch a.Action {
	case "accept":
		return r.Mode == modeForm || len(a.Content) == 0
	case "decline", "cancel":
		return len(a.Content) == 0
	}
	return false
}
