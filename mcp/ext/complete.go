package ext

// completion/complete over Config.Completions.

import (
	"context"
	"encoding/json"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopinterop/wopinterop/mcp/internal/mount"
)

// maxCompletionValues is the most values one completion result carries.
const maxCompletionValues = 100

var errUnknownReference = invalidParams("Invalid params: unknown completion reference")

// complete answers completion/complete. Its params are read strictly
// (a reference of a known type with its name or URI, an argument with a
// name and a value, context arguments as strings) before the host sees
// them as go-sdk's CompleteParams.
func (x *extension) complete(ctx context.Context, c *mount.Call) ([]byte, error) {
	var ref struct {
		Type string  `json:"type"`
		Name *string `json:"name"`
		URI  *string `json:"uri"`
	}
	var arg struct {
		Name  *string `json:"name"`
		Value *string `json:"value"`
	}
	if raw, _ := c.Params.Get("ref"); len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &ref) != nil {
		return nil, invalidParams("Invalid params: ref must be a prompt or resource reference")
	}
	req := &sdk.CompleteParams{Ref: &sdk.CompleteReference{Type: ref.Type}}
	switch {
	case ref.Type == "ref/prompt" && ref.Name != nil:
		req.Ref.Name = *ref.Name
	case ref.Type == "ref/resource" && ref.URI != nil:
		req.Ref.URI = *ref.URI
	default:
		return nil, invalidParams("Invalid params: ref must be a prompt or resource reference")
	}
	if raw, _ := c.Params.Get("argument"); len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &arg) != nil || arg.Name == nil || arg.Value == nil {
		return nil, invalidParams("Invalid params: argument must have a name and a value")
	}
	req.Argument = sdk.CompleteParamsArgument{Name: *arg.Name, Value: *arg.Value}
	if raw, ok := c.Params.Get("context"); ok && string(raw) != "null" {
		var cc sdk.CompleteContext
		if raw[0] != '{' || json.Unmarshal(raw, &cc) != nil {
			return nil, invalidParams("Invalid params: context.arguments must map each name to a string")
		}
		req.Context = &cc
	}
	res, err := x.cfg.Completions.Complete(ctx, c.Subject, req)
	if err != nil {
		return nil, hostError(err, errUnknownReference)
	}
	var details sdk.CompletionResultDetails
	if res != nil {
		details = *res
	}
	values, hasMore := details.Values, details.HasMore
	if values == nil {
		values = []string{}
	}
	if len(values) > maxCompletionValues {
		values, hasMore = values[:maxCompletionValues], true
	}
	type completion struct {
		Values  []string `json:"values"`
		Total   int      `json:"total,omitempty"`
		HasMore bool     `json:"hasMore,omitempty"`
	}
	return mount.Marshal(struct {
		ResultType string     `json:"resultType"`
		Completion completion `json:"completion"`
	}{"complete", completion{values, max(details.Total, 0), hasMore}})
}
