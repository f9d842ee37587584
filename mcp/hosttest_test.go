package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/wopinterop/wopinterop/interop"
)

// testHost implements every host extension point for the tests: a few
// tools, prompts, resources and completions with behaviour the tests
// check, recording what the mount handed it.
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

// withHost plugs h into every extension point.
func withHost(h *testHost) func(*testConfig) {
	return func(c *testConfig) {
		c.Tools, c.Prompts, c.Resources, c.Completions = h, h, h, h
		c.ResourceSchemes = []string{"test", "HTTPS"}
	}
}

const (
	echoSchema = `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`
	nameForm   = `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`
)

var pixel = []byte{0x89, 'P', 'N', 'G'}

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
		return ToolResult{Content: []Content{TextContent(args["text"])}, StructuredContent: json.RawMessage(`{"echo":` + quote(args["text"]) + `}`)}, nil
	case "media":
		return ToolResult{Content: []Content{
			TextContent("all of them"),
			ImageContent(pixel, "image/png"),
			AudioContent([]byte("RIFF"), "audio/wav"),
			EmbeddedResource(TextResource("test://doc", "text/plain", "a document")),
			EmbeddedResource(BlobResource("test://img", "image/png", pixel)),
			ResourceLinkContent(Resource{URI: "test://doc", Name: "doc", MIMEType: "text/plain"}),
		}}, nil
	case "ask":
		if er, ok := c.Responses.Elicitation("name"); ok {
			name, _ := er.Content["name"].(string)
			return ToolResult{Content: []Content{TextContent(fmt.Sprintf("Hello, %s (state %q, round %d)", name, c.State, c.Round))}}, nil
		}
		return ToolResult{Input: &InputRequired{Requests: map[string]InputRequest{"name": ElicitForm("Your name?", json.RawMessage(nameForm))}, State: []byte(fmt.Sprintf("asked-%d", c.Round+1))}}, nil
	case "ask-all":
		reqs := map[string]InputRequest{}
		for _, k := range strings.Split(args["ask"], ",") {
			switch k {
			case "form":
				reqs[k] = ElicitForm("Name?", json.RawMessage(nameForm))
			case "url":
				reqs[k] = ElicitURL("Sign in", "https://host.example/sign-in")
			case "sampling":
				reqs[k] = CreateMessage(SamplingRequest{Messages: []SamplingMessage{{Role: RoleUser, Content: TextContent("Hi?")}}, MaxTokens: 10})
			case "sampling-tools":
				reqs[k] = InputRequest{Method: MethodCreateMessage, Params: json.RawMessage(`{"messages":[],"maxTokens":1,"tools":[{"name":"t","inputSchema":{"type":"object"}}]}`)}
			case "roots":
				reqs[k] = ListRoots()
			case "ping":
				reqs[k] = InputRequest{Method: "ping"}
			case "array-params":
				reqs[k] = InputRequest{Method: MethodListRoots, Params: []int{1}}
			}
		}
		return ToolResult{Input: &InputRequired{Requests: reqs}}, nil
	case "progress":
		for _, p := range []float64{0, 50, 100} {
			c.Progress(p, 100, "")
		}
		c.Progress(101, 0, "more") // total unknown
		return ToolResult{Content: []Content{TextContent("done")}}, nil
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
			return ToolResult{Content: []Content{TextContent("x")}, Input: &InputRequired{Requests: map[string]InputRequest{"k": ListRoots()}}}, nil
		case "bad-structured":
			return ToolResult{StructuredContent: json.RawMessage(`[1]`)}, nil
		case "bad-content":
			return ToolResult{Content: []Content{{Type: "video"}}}, nil
		case "empty-input":
			return ToolResult{Input: &InputRequired{}}, nil
		case "tool-error":
			return ToolResult{Content: []Content{TextContent("it broke")}, IsError: true}, nil
		}
		return ToolResult{}, nil
	case "handoff", "handoff-required":
		if er, ok := c.Responses.Elicitation("go"); !ok || er.Action != "accept" {
			if args["ask"] == "yes" {
				return ToolResult{Input: &InputRequired{Requests: map[string]InputRequest{"go": ElicitForm("Go?", json.RawMessage(`{"type":"object","properties":{}}`))}}}, nil
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

func (h *testHost) ListPrompts(context.Context, interop.Subject) ([]Prompt, error) {
	return []Prompt{
		{Name: "greeting", Title: "Greeting", Description: "Greets.", Arguments: []PromptArgument{{Name: "name", Required: true}, {Name: "tone"}}},
		{Name: "ask-context", Description: "Asks for context first."},
		{Name: "hidden", Description: "Listed, then not found."},
		{Name: "broken", Description: "Fails."},
		{Name: "both", Description: "Messages and input at once."},
		{Name: "greeting", Description: "A duplicate, left out."},
		{Name: "", Description: "Nameless, left out."},
	}, nil
}

func (h *testHost) GetPrompt(_ context.Context, _ interop.Subject, req *PromptRequest) (PromptResult, error) {
	h.mu.Lock()
	h.prompts = append(h.prompts, *req)
	h.mu.Unlock()
	switch req.Name {
	case "greeting":
		return PromptResult{Description: "A greeting", Messages: []PromptMessage{
			{Role: RoleUser, Content: TextContent("Say hello to " + req.Arguments["name"])},
			{Role: RoleAssistant, Content: ImageContent(pixel, "image/png")},
		}}, nil
	case "ask-context":
		if er, ok := req.Responses.Elicitation("ctx"); ok {
			v, _ := er.Content["context"].(string)
			return PromptResult{Messages: []PromptMessage{{Role: RoleUser, Content: TextContent("Context: " + v)}}}, nil
		}
		return PromptResult{Input: &InputRequired{Requests: map[string]InputRequest{"ctx": ElicitForm("Context?", json.RawMessage(`{"type":"object","properties":{"context":{"type":"string"}}}`))}}}, nil
	case "both":
		return PromptResult{Messages: []PromptMessage{{Role: RoleUser, Content: TextContent("x")}}, Input: &InputRequired{Requests: map[string]InputRequest{"k": ListRoots()}}}, nil
	case "broken":
		return PromptResult{}, errors.New("template engine exploded")
	}
	return PromptResult{}, interop.ErrNotFound
}

func (h *testHost) ListResources(context.Context, interop.Subject) ([]Resource, error) {
	return []Resource{
		{URI: "test://img", Name: "img", MIMEType: "image/png", Size: 4},
		{URI: "test://doc", Name: "doc", Title: "Doc", Description: "A document.", MIMEType: "text/plain"},
		{URI: "test://doc", Name: "duplicate"},
		{URI: "", Name: "no uri"},
	}, nil
}

func (h *testHost) ListResourceTemplates(context.Context, interop.Subject) ([]ResourceTemplate, error) {
	return []ResourceTemplate{{URITemplate: "test://items/{id}", Name: "item", MIMEType: "application/json"}, {Name: "no template"}}, nil
}

func (h *testHost) ReadResource(_ context.Context, _ interop.Subject, req *ResourceRequest) (ResourceResult, error) {
	h.mu.Lock()
	h.reads = append(h.reads, *req)
	h.mu.Unlock()
	switch {
	case req.URI == "test://doc":
		return ResourceResult{Contents: []ResourceContents{TextResource(req.URI, "text/plain", "a document")}}, nil
	case req.URI == "test://img":
		return ResourceResult{Contents: []ResourceContents{BlobResource(req.URI, "image/png", pixel)}, TTL: 30 * time.Second, Public: true}, nil
	case req.URI == "test://empty":
		return ResourceResult{}, nil
	case req.URI == "test://ask":
		if _, ok := req.Responses.Roots("roots"); ok {
			return ResourceResult{Contents: []ResourceContents{TextResource(req.URI, "", "rooted")}}, nil
		}
		return ResourceResult{Input: &InputRequired{Requests: map[string]InputRequest{"roots": ListRoots()}}}, nil
	case strings.HasPrefix(req.URI, "test://items/"), strings.HasPrefix(req.URI, "https://"):
		return ResourceResult{Contents: []ResourceContents{TextResource(req.URI, "application/json", `{"uri":`+quote(req.URI)+`}`)}}, nil
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

func (h *testHost) Complete(_ context.Context, _ interop.Subject, req CompletionRequest) (Completion, error) {
	if req.Ref != RefPrompt || req.Name != "greeting" {
		return Completion{}, interop.ErrNotFound
	}
	var values []string
	for i := range 150 {
		if v := fmt.Sprintf("%s%03d", req.Value, i); req.Context["tone"] != "none" {
			values = append(values, v)
		}
	}
	return Completion{Values: values, Total: len(values)}, nil
}
