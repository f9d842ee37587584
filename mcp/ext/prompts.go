package ext

// prompts/list and prompts/get over Config.Prompts (OpenWOP interop map,
// mcp.methods): the list is sorted by name and private to the caller; a
// get names a listed prompt, supplies every required argument as a plain
// string and may answer input_required like a tool (SEP-2322 allows it on
// prompts/get), its requestState bound with sealed.OperationDigest.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopinterop/wopinterop/mcp/internal/mount"
	"github.com/wopinterop/wopinterop/mcp/sealed"
)

var errUnknownPrompt = invalidParams("Invalid params: unknown prompt")

// refuseCursor refuses any cursor on a list sent as one page.
func refuseCursor(c *mount.Call) error {
	if raw, ok := c.Params.Get("cursor"); ok && string(raw) != "null" {
		return errUnknownCursor
	}
	return nil
}

// listResult encodes a one-page list result with the cache hints every
// list carries (OpenWOP interop map, mcp.cache): private, because each
// list is the caller's.
func listResult(env mount.Env, member string, items any) ([]byte, error) {
	b, err := mount.Marshal(items)
	if err != nil {
		return nil, err
	}
	out := []byte(`{"resultType":"complete","ttlMs":`)
	out = strconv.AppendInt(out, env.ListTTLMs(), 10)
	out = append(out, `,"cacheScope":"private",`...)
	out = mount.AppendString(out, member)
	out = append(out, ':')
	out = append(out, b...)
	return append(out, '}'), nil
}

// prompts returns the caller's prompts sorted by name, without nameless
// or repeated ones.
func (x *extension) prompts(ctx context.Context, env mount.Env, c *mount.Call) ([]*sdk.Prompt, error) {
	ps, err := x.cfg.Prompts.ListPrompts(ctx, c.Subject)
	if err != nil {
		return nil, fmt.Errorf("list prompts: %w", err)
	}
	out := make([]*sdk.Prompt, 0, len(ps))
	for _, p := range ps {
		if p == nil || p.Name == "" {
			env.Logger().WarnContext(ctx, "mcp: prompt without a name left out of prompts/list")
			continue
		}
		out = append(out, p)
	}
	slices.SortStableFunc(out, func(a, b *sdk.Prompt) int { return strings.Compare(a.Name, b.Name) })
	return slices.CompactFunc(out, func(a, b *sdk.Prompt) bool { return a.Name == b.Name }), nil
}

// promptsList answers prompts/list.
func (x *extension) promptsList(ctx context.Context, env mount.Env, c *mount.Call) ([]byte, error) {
	if err := refuseCursor(c); err != nil {
		return nil, err
	}
	ps, err := x.prompts(ctx, env, c)
	if err != nil {
		return nil, err
	}
	list := make([]promptJSON, len(ps))
	for i, p := range ps {
		list[i] = newPromptJSON(p)
	}
	return listResult(env, "prompts", list)
}

// promptsGet answers prompts/get.
func (x *extension) promptsGet(ctx context.Context, env mount.Env, c *mount.Call) ([]byte, error) {
	var name string
	if raw, _ := c.Params.Get("name"); json.Unmarshal(raw, &name) != nil {
		return nil, invalidParams("Invalid params: name must be a string")
	}
	rawArgs := json.RawMessage(`{}`)
	args := map[string]string{}
	if raw, ok := c.Params.Get("arguments"); ok && string(raw) != "null" {
		// Arguments are plain text (OpenWOP interop map, mcp.methods):
		// anything but strings is refused, never coerced.
		if raw[0] != '{' || json.Unmarshal(raw, &args) != nil {
			return nil, invalidParams("Invalid params: arguments must map each name to a string")
		}
		rawArgs = raw
	}
	rp, err := roundOf(c)
	if err != nil {
		return nil, err
	}
	ps, err := x.prompts(ctx, env, c)
	if err != nil {
		return nil, err
	}
	i, found := slices.BinarySearchFunc(ps, name, func(p *sdk.Prompt, n string) int { return strings.Compare(p.Name, n) })
	if !found {
		return nil, errUnknownPrompt
	}
	for _, a := range ps[i].Arguments {
		if a == nil {
			continue
		}
		if _, ok := args[a.Name]; a.Required && !ok {
			return nil, withData(invalidParams("Invalid params: a required prompt argument is missing"), struct {
				Field  string `json:"field"`
				Reason string `json:"reason"`
			}{"arguments/" + a.Name, "required"})
		}
	}
	digest, derr := sealed.OperationDigest(mount.MethodPromptsGet, name, rawArgs)
	if derr != nil {
		return nil, invalidParams("Invalid params: arguments must not repeat a member name")
	}
	round, _, err := hostRound(ctx, env, c, rp, digest, false)
	if err != nil {
		return nil, err
	}
	res, err := x.cfg.Prompts.GetPrompt(ctx, c.Subject, &PromptRequest{Name: name, Arguments: args, InputRound: round})
	if err != nil {
		return nil, hostError(err, errUnknownPrompt)
	}
	if res.Input != nil {
		if len(res.Messages) > 0 {
			return nil, fmt.Errorf("mcp/ext: prompt %q returned both messages and an input request", name)
		}
		return inputRequired(env, c, digest, round.Round, res.Input)
	}
	messages, err := promptMessagesJSON(res.Messages)
	if err != nil {
		return nil, err
	}
	return mount.Marshal(struct {
		ResultType  string        `json:"resultType"`
		Description string        `json:"description,omitempty"`
		Messages    []messageJSON `json:"messages"`
	}{"complete", res.Description, messages})
}
