package mcpfixtures

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/mcp"
)

// Host serves the fixtures that are not workflows: it implements
// mcp.NativeTools, mcp.Prompts, mcp.Resources and mcp.Completions. It is
// immutable and safe for concurrent use. It serves every Subject alike;
// the host decides who reaches it by the tenant it maps callers to (see
// [Tenant]).
type Host struct {
	png, wav []byte
	tools    map[string]nativeTool
	list     []mcp.Tool
}

// New returns the fixture host.
func New() *Host {
	h := &Host{png: redPixelPNG(), wav: silentWAV(), tools: map[string]nativeTool{}}
	for _, t := range tools() {
		h.tools[t.Name] = t
		h.list = append(h.list, t.Tool)
	}
	return h
}

// ResourceScheme is the only URI scheme the fixture resources use.
const ResourceScheme = "test"

// Configure plugs the fixture host into cfg: every extension point, and
// "test" among the resource schemes.
func (h *Host) Configure(cfg *mcp.Options) {
	cfg.Tools, cfg.Prompts, cfg.Resources, cfg.Completions = h, h, h, h
	if !slices.Contains(cfg.ResourceSchemes, ResourceScheme) {
		cfg.ResourceSchemes = append(slices.Clone(cfg.ResourceSchemes), ResourceScheme)
	}
}

// ListTools implements mcp.NativeTools.
func (h *Host) ListTools(ctx context.Context, _ interop.Subject) ([]mcp.Tool, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return slices.Clone(h.list), nil
}

// CallTool implements mcp.NativeTools.
func (h *Host) CallTool(ctx context.Context, _ interop.Subject, call *mcp.ToolCall) (mcp.ToolResult, error) {
	t, ok := h.tools[call.Name]
	if !ok {
		return mcp.ToolResult{}, interop.ErrNotFound
	}
	return t.call(ctx, h, call)
}

// Names of the prompt fixtures.
const (
	PromptSimple        = "test_simple_prompt"
	PromptWithArguments = "test_prompt_with_arguments"
	PromptEmbedded      = "test_prompt_with_embedded_resource"
	PromptImage         = "test_prompt_with_image"
	PromptInputRequired = "test_input_required_result_prompt"
)

// ListPrompts implements mcp.Prompts.
func (h *Host) ListPrompts(context.Context, interop.Subject) ([]mcp.Prompt, error) {
	return []mcp.Prompt{
		{Name: PromptSimple, Description: "A prompt without arguments."},
		{Name: PromptWithArguments, Description: "A prompt with two required arguments.", Arguments: []mcp.PromptArgument{
			{Name: "arg1", Description: "The first argument.", Required: true},
			{Name: "arg2", Description: "The second argument.", Required: true},
		}},
		{Name: PromptEmbedded, Description: "A prompt embedding a resource.", Arguments: []mcp.PromptArgument{
			{Name: "resourceUri", Description: "The URI of the resource to embed.", Required: true},
		}},
		{Name: PromptImage, Description: "A prompt with an image."},
		{Name: PromptInputRequired, Description: "A prompt that first asks the user for context (key user_context)."},
	}, nil
}

// GetPrompt implements mcp.Prompts. Arguments are only ever quoted as
// text, never evaluated.
func (h *Host) GetPrompt(_ context.Context, _ interop.Subject, req *mcp.PromptRequest) (mcp.PromptResult, error) {
	user := func(c mcp.Content) mcp.PromptMessage { return mcp.PromptMessage{Role: mcp.RoleUser, Content: c} }
	switch req.Name {
	case PromptSimple:
		return mcp.PromptResult{Messages: []mcp.PromptMessage{user(mcp.TextContent("This is a simple prompt for testing."))}}, nil
	case PromptWithArguments:
		return mcp.PromptResult{Messages: []mcp.PromptMessage{user(mcp.TextContent(
			fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", req.Arguments["arg1"], req.Arguments["arg2"])))}}, nil
	case PromptEmbedded:
		uri := req.Arguments["resourceUri"]
		if u, err := url.Parse(uri); err != nil || u.Scheme == "" {
			return mcp.PromptResult{}, &interop.InputError{Field: "arguments/resourceUri", Reason: "not an absolute URI"}
		}
		return mcp.PromptResult{Messages: []mcp.PromptMessage{
			user(mcp.EmbeddedResource(mcp.TextResource(uri, "text/plain", "Embedded resource content for testing."))),
			user(mcp.TextContent("Please process the embedded resource above.")),
		}}, nil
	case PromptImage:
		return mcp.PromptResult{Messages: []mcp.PromptMessage{
			user(mcp.ImageContent(h.png, "image/png")),
			user(mcp.TextContent("Please analyze the image above.")),
		}}, nil
	case PromptInputRequired:
		er, ok := req.Responses.Elicitation("user_context")
		userContext, _ := er.Content["context"].(string)
		if !ok || er.Action != "accept" || userContext == "" {
			return mcp.PromptResult{Input: &mcp.InputRequired{Requests: map[string]mcp.InputRequest{
				"user_context": mcp.ElicitForm("What context should the prompt use?",
					json.RawMessage(`{"type":"object","properties":{"context":{"type":"string","title":"Context"}},"required":["context"]}`)),
			}}}, nil
		}
		return mcp.PromptResult{Messages: []mcp.PromptMessage{user(mcp.TextContent("Answer with this context in mind: " + userContext))}}, nil
	}
	return mcp.PromptResult{}, interop.ErrNotFound
}

// URIs of the resource fixtures.
const (
	ResourceStaticText   = "test://static-text"
	ResourceStaticBinary = "test://static-binary"
	ResourceTemplate     = "test://template/{id}/data"
	StaticText           = "This is the content of the static text resource."
)

// ListResources implements mcp.Resources.
func (h *Host) ListResources(context.Context, interop.Subject) ([]mcp.Resource, error) {
	return []mcp.Resource{
		{URI: ResourceStaticText, Name: "static-text", Description: "A static text resource.", MIMEType: "text/plain"},
		{URI: ResourceStaticBinary, Name: "static-binary", Description: "A static PNG image.", MIMEType: "image/png"},
	}, nil
}

// ListResourceTemplates implements mcp.Resources.
func (h *Host) ListResourceTemplates(context.Context, interop.Subject) ([]mcp.ResourceTemplate, error) {
	return []mcp.ResourceTemplate{
		{URITemplate: ResourceTemplate, Name: "template", Description: "JSON data for an id.", MIMEType: "application/json"},
	}, nil
}

// ReadResource implements mcp.Resources.
func (h *Host) ReadResource(_ context.Context, _ interop.Subject, req *mcp.ResourceRequest) (mcp.ResourceResult, error) {
	switch req.URI {
	case ResourceStaticText:
		return mcp.ResourceResult{Contents: []mcp.ResourceContents{mcp.TextResource(req.URI, "text/plain", StaticText)}, TTL: time.Minute, Public: true}, nil
	case ResourceStaticBinary:
		return mcp.ResourceResult{Contents: []mcp.ResourceContents{mcp.BlobResource(req.URI, "image/png", h.png)}, TTL: time.Minute, Public: true}, nil
	}
	if id, ok := templateID(req.URI); ok {
		body, err := json.Marshal(struct {
			ID           string `json:"id"`
			TemplateTest bool   `json:"templateTest"`
			Data         string `json:"data"`
		}{id, true, "Data for ID: " + id})
		if err != nil {
			return mcp.ResourceResult{}, err
		}
		return mcp.ResourceResult{Contents: []mcp.ResourceContents{mcp.TextResource(req.URI, "application/json", string(body))}}, nil
	}
	return mcp.ResourceResult{}, interop.ErrNotFound
}

// templateID matches test://template/{id}/data with a non-empty id of one
// path segment.
func templateID(uri string) (string, bool) {
	rest, ok := strings.CutPrefix(uri, "test://template/")
	if !ok {
		return "", false
	}
	id, ok := strings.CutSuffix(rest, "/data")
	if !ok || id == "" || strings.Contains(id, "/") {
		return "", false
	}
	unescaped, err := url.PathUnescape(id)
	return unescaped, err == nil
}

// Complete implements mcp.Completions: arg1 and arg2 of
// test_prompt_with_arguments and id of the template complete from fixed
// lists by prefix.
func (h *Host) Complete(_ context.Context, _ interop.Subject, req mcp.CompletionRequest) (mcp.Completion, error) {
	var candidates []string
	switch {
	case req.Ref == mcp.RefPrompt && req.Name == PromptWithArguments && (req.Argument == "arg1" || req.Argument == "arg2"):
		candidates = []string{"paris", "park", "party", "test-value", "testing"}
	case req.Ref == mcp.RefResource && req.URI == ResourceTemplate && req.Argument == "id":
		candidates = []string{"1", "12", "123"}
	default:
		return mcp.Completion{}, interop.ErrNotFound
	}
	var values []string
	for _, c := range candidates {
		if strings.HasPrefix(c, req.Value) {
			values = append(values, c)
		}
	}
	return mcp.Completion{Values: values, Total: len(values)}, nil
}
