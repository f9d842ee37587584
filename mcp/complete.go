package mcp

// completion/complete over Config.Completions.

import (
	"context"
	"encoding/json"

	"github.com/wopinterop/wopinterop/mcp/internal/mount"
)

// maxCompletionValues is the most values one completion result carries.
const maxCompletionValues = 100

var errUnknownReference = errInvalidParams("Invalid params: unknown completion reference")

// complete answers completion/complete.
func (s *Server) complete(ctx context.Context, c *call) (answer, error) {
	return bodyAnswer(s.completion(ctx, c))
}

func (s *Server) completion(ctx context.Context, c *call) ([]byte, error) {
	var ref struct {
		Type string  `json:"type"`
		Name *string `json:"name"`
		URI  *string `json:"uri"`
	}
	var arg struct {
		Name  *string `json:"name"`
		Value *string `json:"value"`
	}
	var ctxArgs struct {
		Arguments map[string]string `json:"arguments"`
	}
	if raw := c.msg.params["ref"]; len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &ref) != nil {
		return nil, errInvalidParams("Invalid params: ref must be a prompt or resource reference")
	}
	req := CompletionRequest{Ref: ref.Type}
	switch {
	case ref.Type == RefPrompt && ref.Name != nil:
		req.Name = *ref.Name
	case ref.Type == RefResource && ref.URI != nil:
		req.URI = *ref.URI
	default:
		return nil, errInvalidParams("Invalid params: ref must be a prompt or resource reference")
	}
	if raw := c.msg.params["argument"]; len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &arg) != nil || arg.Name == nil || arg.Value == nil {
		return nil, errInvalidParams("Invalid params: argument must have a name and a value")
	}
	req.Argument, req.Value = *arg.Name, *arg.Value
	if raw, ok := c.msg.params["context"]; ok && string(raw) != "null" {
		if raw[0] != '{' || json.Unmarshal(raw, &ctxArgs) != nil {
			return nil, errInvalidParams("Invalid params: context.arguments must map each name to a string")
		}
		req.Context = ctxArgs.Arguments
	}
	res, err := s.opts.Completions.Complete(ctx, c.subject, req)
	if err != nil {
		return nil, hostError(err, errUnknownReference)
	}
	values := res.Values
	if values == nil {
		values = []string{}
	}
	hasMore := res.HasMore
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
	}{"complete", completion{values, max(res.Total, 0), hasMore}})
}
