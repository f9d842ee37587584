package mcp

// prompts/list and prompts/get over Config.Prompts (OpenWOP interop map, mcp.methods):
// the list is sorted by name and private to the caller; a get names a
// listed prompt, supplies every required argument as a plain string and
// may answer input_required like a tool (SEP-2322 allows it on
// prompts/get), its requestState bound with sealed.OperationDigest.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/wopinterop/wopinterop/mcp/sealed"
)

var (
	errUnknownPrompt = errInvalidParams("Invalid params: unknown prompt")
	errUnknownCursor = errInvalidParams("Invalid params: unknown cursor")
)

// refuseCursor answers a cursor on a list the mount sends as one page: it
// never issued one, so any cursor is unknown.
func refuseCursor(c *call) *rpcError {
	if raw, ok := c.msg.params["cursor"]; ok && string(raw) != "null" {
		return errUnknownCursor
	}
	return nil
}

// listResult encodes a one-page list result with the cache hints every
// list carries (OpenWOP interop map, mcp.cache): private, because each list is the caller's.
func (s *Server) listResult(member string, items any) ([]byte, error) {
	b, err := marshal(items)
	if err != nil {
		return nil, err
	}
	out := []byte(`{"resultType":"complete","ttlMs":`)
	out = fmt.Appendf(out, "%d", s.listTTLMs())
	out = append(out, `,"cacheScope":"private",`...)
	out = appendString(out, member)
	out = append(out, ':')
	out = append(out, b...)
	return append(out, '}'), nil
}

// prompts returns the caller's prompts sorted by name, without nameless
// or repeated ones.
func (s *Server) prompts(r *http.Request, c *call) ([]Prompt, error) {
	ps, err := s.cfg.Prompts.ListPrompts(r.Context(), c.subject)
	if err != nil {
		return nil, fmt.Errorf("list prompts: %w", err)
	}
	out := make([]Prompt, 0, len(ps))
	for _, p := range ps {
		if p.Name == "" {
			s.log.WarnContext(r.Context(), "mcp: prompt without a name left out of prompts/list")
			continue
		}
		out = append(out, p)
	}
	slices.SortStableFunc(out, func(a, b Prompt) int { return strings.Compare(a.Name, b.Name) })
	return slices.CompactFunc(out, func(a, b Prompt) bool { return a.Name == b.Name }), nil
}

// promptsList answers prompts/list.
func (s *Server) promptsList(w http.ResponseWriter, r *http.Request, c *call) {
	if e := refuseCursor(c); e != nil {
		s.writeError(w, r, c.msg.id, e)
		return
	}
	ps, err := s.prompts(r, c)
	if err == nil {
		var body []byte
		if body, err = s.listResult("prompts", ps); err == nil {
			s.writeResult(w, r, c.msg.id, body)
			return
		}
	}
	s.writeError(w, r, c.msg.id, err)
}

// promptsGet answers prompts/get.
func (s *Server) promptsGet(w http.ResponseWriter, r *http.Request, c *call) {
	body, err := s.getPrompt(r, c)
	if err != nil {
		s.writeError(w, r, c.msg.id, err)
		return
	}
	s.writeResult(w, r, c.msg.id, body)
}

func (s *Server) getPrompt(r *http.Request, c *call) ([]byte, error) {
	ctx := r.Context()
	var name string
	if json.Unmarshal(c.msg.params["name"], &name) != nil {
		return nil, errInvalidParams("Invalid params: name must be a string")
	}
	rawArgs := json.RawMessage(`{}`)
	args := map[string]string{}
	if raw, ok := c.msg.params["arguments"]; ok && string(raw) != "null" {
		// Arguments are plain text (OpenWOP interop map, mcp.methods): anything but strings is
		// refused, never coerced.
		if raw[0] != '{' || json.Unmarshal(raw, &args) != nil {
			return nil, errInvalidParams("Invalid params: arguments must map each name to a string")
		}
		rawArgs = raw
	}
	rp, perr := parseRoundParams(c.msg.params)
	if perr != nil {
		return nil, perr
	}
	ps, err := s.prompts(r, c)
	if err != nil {
		return nil, err
	}
	i, found := slices.BinarySearchFunc(ps, name, func(p Prompt, n string) int { return strings.Compare(p.Name, n) })
	if !found {
		return nil, errUnknownPrompt
	}
	for _, a := range ps[i].Arguments {
		if _, ok := args[a.Name]; a.Required && !ok {
			return nil, errInvalidParams("Invalid params: a required prompt argument is missing").withData(struct {
				Field  string `json:"field"`
				Reason string `json:"reason"`
			}{"arguments/" + a.Name, "required"})
		}
	}
	digest, derr := sealed.OperationDigest(methodPromptsGet, name, rawArgs)
	if derr != nil {
		return nil, errInvalidParams("Invalid params: arguments must not repeat a member name")
	}
	round, runClaims, err := s.hostRound(ctx, c, rp, digest)
	if err != nil {
		return nil, err
	}
	if runClaims != nil {
		return nil, errInvalidState // a prompt never resumes a run
	}
	res, err := s.cfg.Prompts.GetPrompt(ctx, c.subject, &PromptRequest{Name: name, Arguments: args, InputRound: round})
	if err != nil {
		return nil, hostError(err, errUnknownPrompt)
	}
	if res.Input != nil {
		if len(res.Messages) > 0 {
			return nil, fmt.Errorf("mcp: prompt %q returned both messages and an input request", name)
		}
		return s.hostInputRequired(c, digest, round.Round, res.Input)
	}
	messages := res.Messages
	if messages == nil {
		messages = []PromptMessage{}
	}
	return marshal(struct {
		ResultType  string          `json:"resultType"`
		Description string          `json:"description,omitempty"`
		Messages    []PromptMessage `json:"messages"`
	}{"complete", res.Description, messages})
}
