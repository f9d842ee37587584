package ext

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopinterop/wopinterop/interop"
)

// testHost implements every extension point for the tests: a few tools,
// prompts, resources and completions with behaviour the tests check,
// recording what the mount handed it.
type testHost struct {
	mu       sync.Mutex
	calls    []ToolCall
	prompts  []PromptRequest
	reads    []ResourceRequest
	listings int
	// entered is signalled when the "native-waits" tool starts.
	entered chan struct{}
}

func newTestHost() *testHost { return &testHost{entered: make(chan struct{}, 1)} }

const (
	echoSchema = `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`
	nameForm   = `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`
)

var pixel = []byte{0x89, 'P', 'N', 'G'}

func text(s string) *sdk.TextContent { return &sdk.TextContent{Text: s} }

func elicitForm(message, schema string) *sdk.ElicitParams {
	return &sdk.ElicitParams{Mode: "form", Message: message, RequestedSchema: json.RawMessage(schema)}
}

func (h *testHost) ListTools(ctx context.Context, _ interop.Subject) ([]Tool, error) {
	h.mu.Lock()
	h.listings++
	h.mu.Unlock()
	return []Tool{
		{Name: "echo", Title: "Echo", Description: "Echoes text.", InputSchema: json.RawMessage(echoSchema)},
		{Name: "media", Description: "Every content type."},
		{Name: "ask", Description: "Asks a name over two rounds at most.", TaskSupport: interop.TaskOptional},
		{Name: "ask-all", Description: "Asks whatever its arguments name."},
		{Name: "progress", Description: "Reports progress."},
		{Name: "fails", Description: "Fails as its arguments say."},
		{Name: "handoff", Description: "Continues as a run.", TaskSupport: interop.TaskOptional},
		{Name: "handoff-required", Description: "Continues as a run; tasks only.", TaskSupport: interop.TaskRequired},
		{Name: "native-waits", Description: "Waits for its context."},
		// Left out: a workflow's name, an unusable schema, no name.
		{Name: "conformance-noop", Description: "Shadowed by the workflow."},
		{Name: "bad-schema", Description: "x", InputSchema: json.RawMessage(`[1]`)},
		{Name: "", Description: "nameless"},
	}, nil
}

func (h *testHost) record(c *ToolCall) {
	h.mu.Lock()
	defer h.mu.Unlock()
	cp := *c
	cp.progress = nil
	h.calls = append(h.calls, cp)
}

func (h *testHost) lastCall() ToolCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.calls) == 0 {
		return ToolCall{}
	}
	return h.calls[len(h.calls)-1]
}

func (h *testHost) callCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.calls)
}

func (h *testHost) CallTool(ctx context.Context, _ interop.Subject, c *ToolCall) (ToolResult, error) {
	h.record(c)
	var args map[string]string
	_ = json.Unmarshal(c.Arguments, &args)
	switch c.Name {
	case "echo":
		return ToolResult{Content: []sdk.Content{text(args["text"])}, StructuredContent: json.RawMessage(`{"echo":` + quote(args["text"]) + `}`)}, nil
	case "media":
		return ToolResult{Content: []sdk.Content{
			text("all of them"),
			&sdk.ImageContent{Data: pixel, MIMEType: "image/png"},
			&sdk.AudioContent{Data: []byte("RIFF"), MIMEType: "audio/wav"},
			&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "test://doc", MIMEType: "text/plain", Text: "a document"}},
			&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "test://img", MIMEType: "image/png", Blob: pixel}},
			&sdk.ResourceLink{URI: "test://doc", Name: "doc", MIMEType: "text/plain"},
		}}, nil
	case "ask":
		if er, ok := c.Responses.Elicitation("name"); ok {
			name, _ := er.Content["name"].(string)
			return ToolResult{Content: []sdk.Content{text(fmt.Sprintf("Hello, %s (state %q, round %d)", name, c.State, c.Round))}}, nil
		}
		return ToolResult{Input: &InputRequired{Requests: sdk.InputRequestMap{"name": elicitForm("Your name?", nameForm)}, State: []byte(fmt.Sprintf("asked-%d", c.Round+1))}}, nil
	case "ask-all":
		reqs := sdk.InputRequestMap{}
		for _, k := range strings.Split(args["ask"], ",") {
			switch k {
			case "form":
				reqs[k] = elicitForm("Name?", nameForm)
			case "url":
				reqs[k] = &sdk.ElicitParams{Message: "Sign in", URL: "https://host.example/sign-in"}
			case "sampling":
				reqs[k] = &sdk.CreateMessageParams{Messages: []*sdk.SamplingMessage{{Role: "user", Content: text("Hi?")}}, MaxTokens: 10}
			case "sampling-tools":
				reqs[k] = &sdk.CreateMessageWithToolsParams{MaxTokens: 1, Tools: []*sdk.Tool{{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}}}
			case "roots":
				reqs[k] = &sdk.ListRootsParams{}
			case "nil":
				reqs[k] = (*sdk.ListRootsParams)(nil)
			}
		}
		return ToolResult{Input: &InputRequired{Requests: reqs}}, nil
	case "progress":
		for _, p := range []float64{0, 50, 100} {
			c.Progress(p, 100, "")
		}
		c.Progress(101, 0, "more") // total unknown
		return ToolResult{Content: []sdk.Content{text("done")}}, nil
	case "fails":
		switch args["kind"] {
		case "input":
			return ToolResult{}, &interop.InputError{Field: "arguments/kind", Reason: "not today"}
		case "invalid":
			return ToolResult{}, fmt.Errorf("wrapped: %w", interop.ErrInvalidInput)
		case "notfound":
			return ToolResult{}, interop.ErrNotFound
		case "fault":
			return ToolResult{}, errors.New("db password=hunter2 rejected")
		case "two":
			return ToolResult{Content: []sdk.Content{text("x")}, Input: &InputRequired{Requests: sdk.InputRequestMap{"k": &sdk.ListRootsParams{}}}}, nil
		case "bad-structured":
			return ToolResult{StructuredContent: json.RawMessage(`[1]`)}, nil
		case "bad-content":
			return ToolResult{Content: []sdk.Content{&sdk.ToolUseContent{ID: "u", Name: "t"}}}, nil
		case "empty-input":
			return ToolResult{Input: &InputRequired{}}, nil
		case "tool-error":
			return ToolResult{Content: []sdk.Content{text("it broke")}, IsError: true}, nil
		}
		return ToolResult{}, nil
	case "handoff", "handoff-required":
		if er, ok := c.Responses.Elicitation("go"); !ok || er.Action != "accept" {
			if args["ask"] == "yes" {
				return ToolResult{Input: &InputRequired{Requests: sdk.InputRequestMap{"go": elicitForm("Go?", `{"type":"object","properties":{}}`)}}}, nil
			}
		}
		return ToolResult{Handoff: &Handoff{WorkflowID: args["workflow"]}}, nil
	case "native-waits":
		select {
		case h.entered <- struct{}{}:
		default:
		}
		<-ctx.Done()
		return ToolResult{}, ctx.Err()
	}
	return ToolResult{}, interop.ErrNotFound
}

func (h *testHost) ListPrompts(context.Context, interop.Subject) ([]*sdk.Prompt, error) {
	return []*sdk.Prompt{
		{Name: "greeting", Title: "Greeting", Description: "Greets.", Arguments: []*sdk.PromptArgument{{Name: "name", Required: true}, {Name: "tone"}}},
		{Name: "ask-context", Description: "Asks for context first."},
		{Name: "hidden", Description: "Listed, then not found."},
		{Name: "broken", Description: "Fails."},
		{Name: "both", Description: "Messages and input at once."},
		{Name: "greeting", Description: "A duplicate, left out."},
		{Name: "", Description: "Nameless, left out."},
		nil,
	}, nil
}

func (h *testHost) GetPrompt(_ context.Context, _ interop.Subject, req *PromptRequest) (PromptResult, error) {
	h.mu.Lock()
	h.prompts = append(h.prompts, *req)
	h.mu.Unlock()
	switch req.Name {
	case "greeting":
		return PromptResult{Description: "A greeting", Messages: []*sdk.PromptMessage{
			{Role: "user", Content: text("Say hello to " + req.Arguments["name"])},
			{Role: "assistant", Content: &sdk.ImageContent{Data: pixel, MIMEType: "image/png"}},
		}}, nil
	case "ask-context":
		if er, ok := req.Responses.Elicitation("ctx"); ok {
			v, _ := er.Content["context"].(string)
			return PromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: text("Context: " + v)}}}, nil
		}
		return PromptResult{Input: &InputRequired{Requests: sdk.InputRequestMap{"ctx": elicitForm("Context?", `{"type":"object","properties":{"context":{"type":"string"}}}`)}}}, nil
	case "both":
		return PromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: text("x")}}, Input: &InputRequired{Requests: sdk.InputRequestMap{"k": &sdk.ListRootsParams{}}}}, nil
	case "broken":
		return PromptResult{}, errors.New("template engine exploded")
	}
	return PromptResult{}, interop.ErrNotFound
}

func (h *testHost) ListResources(context.Context, interop.Subject) ([]*sdk.Resource, error) {
	return []*sdk.Resource{
		{URI: "test://img", Name: "img", MIMEType: "image/png", Size: 4},
		{URI: "test://doc", Name: "doc", Title: "Doc", Description: "A document.", MIMEType: "text/plain"},
		{URI: "test://doc", Name: "duplicate"},
		{URI: "", Name: "no uri"},
		nil,
	}, nil
}

func (h *testHost) ListResourceTemplates(context.Context, interop.Subject) ([]*sdk.ResourceTemplate, error) {
	return []*sdk.ResourceTemplate{{URITemplate: "test://items/{id}", Name: "item", MIMEType: "application/json"}, {Name: "no template"}}, nil
}

func (h *testHost) ReadResource(_ context.Context, _ interop.Subject, req *ResourceRequest) (ResourceResult, error) {
	h.mu.Lock()
	h.reads = append(h.reads, *req)
	h.mu.Unlock()
	textResource := func(mimeType, s string) []*sdk.ResourceContents {
		return []*sdk.ResourceContents{{URI: req.URI, MIMEType: mimeType, Text: s}}
	}
	switch {
	case req.URI == "test://doc":
		return ResourceResult{Contents: textResource("text/plain", "a document")}, nil
	case req.URI == "test://img":
		return ResourceResult{Contents: []*sdk.ResourceContents{{URI: req.URI, MIMEType: "image/png", Blob: pixel}}, TTL: 30 * time.Second, Public: true}, nil
	case req.URI == "test://empty":
		return ResourceResult{}, nil
	case req.URI == "test://ask":
		if _, ok := req.Responses.Roots("roots"); ok {
			return ResourceResult{Contents: textResource("", "rooted")}, nil
		}
		return ResourceResult{Input: &InputRequired{Requests: sdk.InputRequestMap{"roots": &sdk.ListRootsParams{}}}}, nil
	case strings.HasPrefix(req.URI, "test://items/"), strings.HasPrefix(req.URI, "https://"):
		return ResourceResult{Contents: textResource("application/json", `{"uri":`+quote(req.URI)+`}`)}, nil
	}
	return ResourceResult{}, interop.ErrNotFound
}

func (h *testHost) lastRead() ResourceRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.reads) == 0 {
		return ResourceRequest{}
	}
	return h.reads[len(h.reads)-1]
}

func (h *testHost) Complete(_ context.Context, _ interop.Subject, req *sdk.CompleteParams) (*sdk.CompletionResultDetails, error) {
	if req.Ref.Type != "ref/prompt" || req.Ref.Name != "greeting" {
		return nil, interop.ErrNotFound
	}
	var values []string
	for i := range 150 {
		if v := fmt.Sprintf("%s%03d", req.Argument.Value, i); req.Context == nil || req.Context.Arguments["tone"] != "none" {
			values = append(values, v)
		}
	}
	return &sdk.CompletionResultDetails{Values: values, Total: len(values)}, nil
}
