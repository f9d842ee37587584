package mcpfixtures

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/mcp/ext"
)

// Host serves the fixtures that are not workflows: it implements
// ext.NativeTools, ext.Prompts, ext.Resources and ext.Completions. It is
// immutable and safe for concurrent use. It serves every Subject alike;
// the host decides who reaches it by the tenant it maps callers to (see
// [Tenant]).
type Host struct {
	png, wav []byte
	tools    map[string]nativeTool
	list     []ext.Tool
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

// Config is the fixture host on every extension point, with "test" as
// the one resource scheme; ext.New turns it into the mount's
// mcp.Options.Extension.
func (h *Host) Config() ext.Config {
	return ext.Config{Tools: h, Prompts: h, Resources: h, Completions: h, ResourceSchemes: []string{ResourceScheme}}
}

// ListTools implements ext.NativeTools.
func (h *Host) ListTools(ctx context.Context, _ interop.Subject) ([]ext.Tool, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return slices.Clone(h.list), nil
}

// CallTool implements ext.NativeTools.
func (h *Host) CallTool(ctx context.Context, _ interop.Subject, call *ext.ToolCall) (ext.ToolResult, error) {
	t, ok := h.tools[call.Name]
	if !ok {
		return ext.ToolResult{}, interop.ErrNotFound
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

// ListPrompts implements ext.Prompts.
func (h *Host) ListPrompts(context.Context, interop.Subject) ([]*sdk.Prompt, error) {
	return []*sdk.Prompt{
		{Name: PromptSimple, Description: "A prompt without arguments."},
		{Name: PromptWithArguments, Description: "A prompt with two required arguments.", Arguments: []*sdk.PromptArgument{
			{Name: "arg1", Description: "The first argument.", Required: true},
			{Name: "arg2", Description: "The second argument.", Required: true},
		}},
		{Name: PromptEmbedded, Description: "A prompt embedding a resource.", Arguments: []*sdk.PromptArgument{
			{Name: "resourceUri", Description: "The URI of the resource to embed.", Required: true},
		}},
		{Name: PromptImage, Description: "A prompt with an image."},
		{Name: PromptInputRequired, Description: "A prompt that first asks the user for context (key user_context)."},
	}, nil
}

// GetPrompt implements ext.Prompts. Arguments are only ever quoted as
// text, never evaluated.
func (h *Host) GetPrompt(_ context.Context, _ interop.Subject, req *ext.PromptRequest) (ext.PromptResult, error) {
	user := func(c sdk.Content) *sdk.PromptMessage { return &sdk.PromptMessage{Role: "user", Content: c} }
	messages := func(ms ...*sdk.PromptMessage) (ext.PromptResult, error) { return ext.PromptResult{Messages: ms}, nil }
	switch req.Name {
	case PromptSimple:
		return messages(user(textContent("This is a simple prompt for testing.")))
	case PromptWithArguments:
		return messages(user(textContent(
			fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", req.Arguments["arg1"], req.Arguments["arg2"]))))
	case PromptEmbedded:
		uri := req.Arguments["resourceUri"]
		if u, err := url.Parse(uri); err != nil || u.Scheme == "" {
			return ext.PromptResult{}, &interop.InputError{Field: "arguments/resourceUri", Reason: "not an absolute URI"}
		}
		return messages(
			user(&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: uri, MIMEType: "text/plain", Text: "Embedded resource content for testing."}}),
			user(textContent("Please process the embedded resource above.")),
		)
	case PromptImage:
		return messages(
			user(&sdk.ImageContent{Data: h.png, MIMEType: "image/png"}),
			user(textContent("Please analyze the image above.")),
		)
	case PromptInputRequired:
		er, ok := req.Responses.Elicitation("user_context")
		var userContext string
		if ok {
			userContext, _ = er.Content["context"].(string)
		}
		if !ok || er.Action != "accept" || userContext == "" {
			return ext.PromptResult{Input: &ext.InputRequired{Requests: sdk.InputRequestMap{
				"user_context": elicitForm("What context should the prompt use?",
					`{"type":"object","properties":{"context":{"type":"string","title":"Context"}},"required":["context"]}`),
			}}}, nil
		}
		return messages(user(textContent("Answer with this context in mind: " + userContext)))
	}
	return ext.PromptResult{}, interop.ErrNotFound
}

// URIs of the resource fixtures.
const (
	ResourceStaticText   = "test://static-text"
	ResourceStaticBinary = "test://static-binary"
	ResourceTemplate     = "test://template/{id}/data"
	StaticText           = "This is the content of the static text resource."
)

// ListResources implements ext.Resources.
func (h *Host) ListResources(context.Context, interop.Subject) ([]*sdk.Resource, error) {
	return []*sdk.Resource{
		{URI: ResourceStaticText, Name: "static-text", Description: "A static text resource.", MIMEType: "text/plain"},
		{URI: ResourceStaticBinary, Name: "static-binary", Description: "A static PNG image.", MIMEType: "image/png"},
	}, nil
}

// ListResourceTemplates implements ext.Resources.
func (h *Host) ListResourceTemplates(context.Context, interop.Subject) ([]*sdk.ResourceTemplate, error) {
	return []*sdk.ResourceTemplate{
		{URITemplate: ResourceTemplate, Name: "template", Description: "JSON data for an id.", MIMEType: "application/json"},
	}, nil
}

// ReadResource implements ext.Resources.
func (h *Host) ReadResource(_ context.Context, _ interop.Subject, req *ext.ResourceRequest) (ext.ResourceResult, error) {
	switch req.URI {
	case ResourceStaticText:
		return ext.ResourceResult{Contents: []*sdk.ResourceContents{{URI: req.URI, MIMEType: "text/plain", Text: StaticText}}, TTL: time.Minute, Public: true}, nil
	case ResourceStaticBinary:
		return ext.ResourceResult{Contents: []*sdk.ResourceContents{{URI: req.URI, MIMEType: "image/png", Blob: h.png}}, TTL: time.Minute, Public: true}, nil
	}
	if id, ok := templateID(req.URI); ok {
		body, err := json.Marshal(struct {
			ID           string `json:"id"`
			TemplateTest bool   `json:"templateTest"`
			Data         string `json:"data"`
		}{id, true, "Data for ID: " + id})
		if err != nil {
			return ext.ResourceResult{}, err
		}
		return ext.ResourceResult{Contents: []*sdk.ResourceContents{{URI: req.URI, MIMEType: "application/json", Text: string(body)}}}, nil
	}
	return ext.ResourceResult{}, interop.ErrNotFound
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

// Complete implements ext.Completions: arg1 and arg2 of
// test_prompt_with_arguments and id of the template complete from fixed
// lists by prefix.
func (h *Host) Complete(_ context.Context, _ interop.Subject, req *sdk.CompleteParams) (*sdk.CompletionResultDetails, error) {
	var candidates []string
	arg := req.Argument.Name
	switch {
	case req.Ref.Type == "ref/prompt" && req.Ref.Name == PromptWithArguments && (arg == "arg1" || arg == "arg2"):
		candidates = []string{"paris", "park", "party", "test-value", "testing"}
	case req.Ref.Type == "ref/resource" && req.Ref.URI == ResourceTemplate && arg == "id":
		candidates = []string{"1", "12", "123"}
	default:
		return nil, interop.ErrNotFound
	}
	var values []string
	for _, c := range candidates {
		if strings.HasPrefix(c, req.Argument.Value) {
			values = append(values, c)
		}
	}
	return &sdk.CompletionResultDetails{Values: values, Total: len(values)}, nil
}
