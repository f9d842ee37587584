package mcp

// prompts/list and prompts/get over Config.Prompts (OpenWOP interop map, mcp.methods):
// the list is sorted by name and private to the caller; a get names a
// listed prompt, supplies every required argument as a plain string and
// may answer input_required like a tool (SEP-2322 allows it on
// prompts/get), its requestState bound with sealed.OperationDigest.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/wopinterop/wopinterop/mcp/internal/mount"
	"github.com/wopinterop/wopinterop/mcp/sealed"
)

var (
	errUnknownPrompt = errInvalidParams("Invalid params: unknown prompt")
	errUnknownCursor = errInvalidParams("Invalid params: unknown cursor")
)

// refuseCursor answers a cursor on a list the mount sends as one page: it
// never issued one, so any cursor is unknown.
func refuseCursor(c *call) *Error {
	if raw, ok := c.msg.params["cursor"]; ok && string(raw) != "null" {
		return errUnknownCursor
	}
	return nil
}

// listResult encodes a one-page list result with the cache hints every
// list carries (OpenWOP interop map, mcp.cache): private, because each list is the caller's.
func (s *Server) listResult(member string, items any) ([]byte, error) {
	b, err := mount.Marshal(items)
	if err != nil {
		return nil, err
	}
	out := []byte(`{"resultType":"complete","ttlMs":`)
	out = fmt.Appendf(out, "%d", s.listTTLMs())
	out = append(out, `,"cacheScope":"private",`...)
	out = mount.AppendString(out, member)
	out = append(out, ':')
	out = append(out, b...)
	return append(out, '}'), nil
}

// prompts returns the caller's prompts sorted by name, without nameless
// or repeated ones.
func (s *Server) prompts(ctx context.Context, c *call) ([]Prompt, error) {
	ps, err := s.opts.Prompts.ListPrompts(ctx, c.subject)
	if err != nil {
		return nil, fmt.Errorf("list prompts: %w", err)
	}
	out := make([]Prompt, 0, len(ps))
	for _, p := range ps {
		if p.Name == "" {
			s.log.WarnContext(ctx, "mcp: prompt without a name left out of prompts/list")
			continue
		}
		out = append(out, p)
	}
	slices.SortStableFunc(out, func(a, b Prompt) int { return strings.Compare(a.Name, b.Name) })
	return slices.CompactFunc(out, func(a, b Prompt) bool { return a.Name == b.Name }), nil
}

// promptsList answers prompts/list.
func (s *Server) promptsList(ctx context.Context, c *call) (answer, error) {
	if e := refuseCursor(c); e != nil {
		return answer{}, e
	}
	ps, err := s.prompts(ctx, c)
	if err != nil {
		return answer{}, err
	}
	return bodyAnswer(s.listResult("prompts", ps))
}

// promptsGet answers prompts/get.
func (s *Server) promptsGet(ctx context.Context, c *call) (answer, error) {
	return bodyAnswer(s.getPrompt(ctx, c))
}

func (s *Server) getPrompt(ctx context.Context, c *call) ([]byte, error) {
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
	ps, err := s.prompts(ctx, c)
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
	res, err := s.opts.Prompts.GetPrompt(ctx, c.subject, &PromptRequest{Name: name, Arguments: args, InputRound: round})
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
	return mount.Marshal(struct {
		ResultType  string          `json:"resultType"`
		Description string          `json:"description,omitempty"`
		Messages    []PromptMessage `json:"messages"`
	}{"complete", res.Description, messages})
}
