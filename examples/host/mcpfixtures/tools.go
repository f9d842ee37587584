package mcpfixtures

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/mcp/ext"
)

// Names of the native tool fixtures.
const (
	ToolSimpleText        = "test_simple_text"
	ToolImage             = "test_image_content"
	ToolAudio             = "test_audio_content"
	ToolEmbeddedResource  = "test_embedded_resource"
	ToolMixedContent      = "test_multiple_content_types"
	ToolProgress          = "test_tool_with_progress"
	ToolError             = "test_error_handling"
	ToolMissingCapability = "test_missing_capability"
	ToolStreamingElicit   = "test_streaming_elicitation"
	ToolLogging           = "test_logging_tool"
	ToolJSONSchema2020    = "json_schema_2020_12_tool"
	ToolElicitation       = "test_input_required_result_elicitation"
	ToolSampling          = "test_input_required_result_sampling"
	ToolListRoots         = "test_input_required_result_list_roots"
	ToolRequestState      = "test_input_required_result_request_state"
	ToolMultipleInputs    = "test_input_required_result_multiple_inputs"
	ToolMultiRound        = "test_input_required_result_multi_round"
	ToolTamperedState     = "test_input_required_result_tampered_state"
	ToolCapabilities      = "test_input_required_result_capabilities"
	ToolWithTask          = "test_tool_with_task"
)

const (
	progressStepDelay = 50 * time.Millisecond
	// The sealed states of the state-checking tools.
	requestStateMarker   = "request-state/v1"
	tamperedStateMarker  = "tampered-state/v1"
	multipleInputsMarker = "multiple-inputs/v1"
	// toolWithTaskSeconds is how long the task test_tool_with_task hands
	// off to computes, so the call is answered as a working task.
	toolWithTaskSeconds = 1
)

// Observable texts of the native tool fixtures.
const (
	SimpleText       = "This is a simple text response for testing."
	EmbeddedText     = "This is an embedded resource content."
	ErrorText        = "This tool intentionally returns an error for testing"
	MixedContentText = "Multiple content types test:"
	// StateOK is in the text of test_input_required_result_request_state
	// once its sealed state came back intact.
	StateOK = "state-ok"
)

const (
	nameFormSchema    = `{"type":"object","properties":{"name":{"type":"string","title":"Name"}},"required":["name"]}`
	okFormSchema      = `{"type":"object","properties":{"ok":{"type":"boolean","title":"OK"}},"required":["ok"]}`
	colorFormSchema   = `{"type":"object","properties":{"color":{"type":"string","title":"Color"}},"required":["color"]}`
	noArgumentsObject = `{"type":"object","properties":{}}`
	// contactSchema exercises JSON Schema 2020-12 keywords a mount must
	// send untouched: $schema, $defs with an $anchor, allOf/anyOf,
	// if/then/else and additionalProperties.
	contactSchema = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
		`"$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},` +
		`"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},"contactMethod":{"type":"string","enum":["phone","email"]},"phone":{"type":"string"},"email":{"type":"string"}},` +
		`"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],` +
		`"if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},"then":{"required":["phone"]},"else":{"required":["email"]},` +
		`"additionalProperties":false}`
)

// nativeTool is one native tool fixture.
type nativeTool struct {
	ext.Tool
	call func(ctx context.Context, h *Host, tc *ext.ToolCall) (ext.ToolResult, error)
}

func tools() []nativeTool {
	plain := func(name, description string, call func(ctx context.Context, h *Host, tc *ext.ToolCall) (ext.ToolResult, error)) nativeTool {
		return nativeTool{Tool: ext.Tool{Name: name, Description: description, InputSchema: json.RawMessage(noArgumentsObject)}, call: call}
	}
	return []nativeTool{
		plain(ToolSimpleText, "Returns one text block.", func(context.Context, *Host, *ext.ToolCall) (ext.ToolResult, error) {
			return text(SimpleText), nil
		}),
		plain(ToolImage, "Returns a 1x1 PNG image.", func(_ context.Context, h *Host, _ *ext.ToolCall) (ext.ToolResult, error) {
			return ext.ToolResult{Content: []sdk.Content{&sdk.ImageContent{Data: h.png, MIMEType: "image/png"}}}, nil
		}),
		plain(ToolAudio, "Returns a short WAV clip.", func(_ context.Context, h *Host, _ *ext.ToolCall) (ext.ToolResult, error) {
			return ext.ToolResult{Content: []sdk.Content{&sdk.AudioContent{Data: h.wav, MIMEType: "audio/wav"}}}, nil
		}),
		plain(ToolEmbeddedResource, "Returns an embedded text resource.", func(context.Context, *Host, *ext.ToolCall) (ext.ToolResult, error) {
			return ext.ToolResult{Content: []sdk.Content{&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "test://embedded-resource", MIMEType: "text/plain", Text: EmbeddedText}}}}, nil
		}),
		plain(ToolMixedContent, "Returns text, an image and an embedded resource.", func(_ context.Context, h *Host, _ *ext.ToolCall) (ext.ToolResult, error) {
			return ext.ToolResult{Content: []sdk.Content{
				textContent(MixedContentText),
				&sdk.ImageContent{Data: h.png, MIMEType: "image/png"},
				&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "test://mixed-content-resource", MIMEType: "application/json", Text: `{"test":"data","value":123}`}},
			}}, nil
		}),
		plain(ToolProgress, "Reports progress 0, 50 and 100 of 100, then completes.", runProgress),
		plain(ToolError, "Always returns a tool error.", func(context.Context, *Host, *ext.ToolCall) (ext.ToolResult, error) {
			return ext.ToolResult{Content: []sdk.Content{textContent(ErrorText)}, IsError: true}, nil
		}),
		plain(ToolMissingCapability, "Needs the sampling capability: a call that did not declare it is refused with -32021.", runMissingCapability),
		plain(ToolStreamingElicit, "Reports progress while it asks for a confirmation; its answer stream carries notifications only, never requests.", runStreamingElicitation),
		plain(ToolLogging, "Would log, but sends no log message to a request that set no log level.", func(context.Context, *Host, *ext.ToolCall) (ext.ToolResult, error) {
			return text("Nothing was logged: the request set no log level."), nil
		}),
		{Tool: ext.Tool{Name: ToolJSONSchema2020, Description: "Takes a contact described with JSON Schema 2020-12 keywords.", InputSchema: json.RawMessage(contactSchema)},
			call: func(_ context.Context, _ *Host, tc *ext.ToolCall) (ext.ToolResult, error) {
				var in struct {
					Name string `json:"name"`
				}
				_ = json.Unmarshal(tc.Arguments, &in) // validated against the schema already
				return text("Contact received for " + in.Name + "."), nil
			}},
		plain(ToolElicitation, "Asks the caller's name (elicitation, key user_name), then greets.", runElicitation),
		plain(ToolSampling, "Asks the client's model a question (sampling, key capital_question), then returns the answer.", runSampling),
		plain(ToolListRoots, "Asks the client for its roots (roots/list, key client_roots), then lists them.", runListRoots),
		plain(ToolRequestState, "Asks for a confirmation with sealed request state, then reports state-ok.", stateChecked(requestStateMarker, StateOK+": the request state came back intact.")),
		plain(ToolMultipleInputs, "Asks for a name, a sampled greeting and the roots in one round.", runMultipleInputs),
		plain(ToolMultiRound, "Asks for a name, then a favourite colour, then completes.", runMultiRound),
		plain(ToolTamperedState, "Asks for a confirmation; a retry with altered request state is refused.", stateChecked(tamperedStateMarker, "The request state verified.")),
		plain(ToolCapabilities, "Asks only for the inputs the request's client capabilities allow.", runCapabilities),
		{Tool: ext.Tool{Name: ToolWithTask, Description: "Asks the caller's name, then continues as a task that greets them.",
			InputSchema: json.RawMessage(noArgumentsObject), TaskSupport: interop.TaskRequired}, call: runToolWithTask},
	}
}

func textContent(s string) *sdk.TextContent { return &sdk.TextContent{Text: s} }

func text(s string) ext.ToolResult {
	return ext.ToolResult{Content: []sdk.Content{textContent(s)}}
}

// elicitForm asks for a flat form (elicitation form mode).
func elicitForm(message, schema string) *sdk.ElicitParams {
	return &sdk.ElicitParams{Mode: "form", Message: message, RequestedSchema: json.RawMessage(schema)}
}

func ask(state string, requests sdk.InputRequestMap) ext.ToolResult {
	var st []byte
	if state != "" {
		st = []byte(state)
	}
	return ext.ToolResult{Input: &ext.InputRequired{Requests: requests, State: st}}
}

func askName(message string) *sdk.ElicitParams {
	return elicitForm(message, nameFormSchema)
}

func runProgress(ctx context.Context, _ *Host, tc *ext.ToolCall) (ext.ToolResult, error) {
	for i, p := range []float64{0, 50, 100} {
		if i > 0 {
			if err := sleep(ctx, progressStepDelay); err != nil {
				return ext.ToolResult{}, err
			}
		}
		tc.Progress(p, 100, fmt.Sprintf("step %d of 3", i+1))
	}
	return text("Progress test completed."), nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func capitalQuestion(question string, maxTokens int64) *sdk.CreateMessageParams {
	return &sdk.CreateMessageParams{
		Messages:  []*sdk.SamplingMessage{{Role: "user", Content: textContent(question)}},
		MaxTokens: maxTokens,
	}
}

// sampledText is the text a sampling answer carries, or "".
func sampledText(res *sdk.CreateMessageResult) string {
	if t, ok := res.Content.(*sdk.TextContent); ok {
		return t.Text
	}
	return ""
}

func runMissingCapability(_ context.Context, _ *Host, tc *ext.ToolCall) (ext.ToolResult, error) {
	if sr, ok := tc.Responses.Sampling("summary"); ok {
		return text("The model said: " + sampledText(sr)), nil
	}
	// Asked regardless of what the request declared: the mount refuses
	// the request with -32021 when sampling is missing.
	return ask("", sdk.InputRequestMap{"summary": capitalQuestion("Summarise this conversation.", 50)}), nil
}

func runStreamingElicitation(_ context.Context, _ *Host, tc *ext.ToolCall) (ext.ToolResult, error) {
	tc.Progress(1, 2, "asking for a confirmation")
	if er, ok := tc.Responses.Elicitation("confirm"); ok {
		tc.Progress(2, 2, "done")
		return text("Confirmation: " + er.Action + "."), nil
	}
	return ask("", sdk.InputRequestMap{"confirm": elicitForm("Continue?", okFormSchema)}), nil
}

func runElicitation(_ context.Context, _ *Host, tc *ext.ToolCall) (ext.ToolResult, error) {
	er, ok := tc.Responses.Elicitation("user_name")
	if !ok {
		return ask("", sdk.InputRequestMap{"user_name": askName("What is your name?")}), nil
	}
	name, _ := er.Content["name"].(string)
	if er.Action != "accept" || name == "" {
		return text("No name was given."), nil
	}
	return text("Hello, " + name + "!"), nil
}

func runSampling(_ context.Context, _ *Host, tc *ext.ToolCall) (ext.ToolResult, error) {
	sr, ok := tc.Responses.Sampling("capital_question")
	if !ok {
		return ask("", sdk.InputRequestMap{"capital_question": capitalQuestion("What is the capital of France?", 100)}), nil
	}
	return text("The model answered: " + sampledText(sr)), nil
}

func runListRoots(_ context.Context, _ *Host, tc *ext.ToolCall) (ext.ToolResult, error) {
	roots, ok := tc.Responses.Roots("client_roots")
	if !ok {
		return ask("", sdk.InputRequestMap{"client_roots": &sdk.ListRootsParams{}}), nil
	}
	return text(describeRoots(roots)), nil
}

func describeRoots(roots []*sdk.Root) string {
	uris := make([]string, len(roots))
	for i, r := range roots {
		uris[i] = r.URI
	}
	return fmt.Sprintf("The client has %d root(s): %s", len(roots), strings.Join(uris, ", "))
}

// stateChecked asks for a confirmation with marker as its sealed state and
// completes with done only when the retry brings that state back; a retry
// without it is asked again.
func stateChecked(marker, done string) func(context.Context, *Host, *ext.ToolCall) (ext.ToolResult, error) {
	return func(_ context.Context, _ *Host, tc *ext.ToolCall) (ext.ToolResult, error) {
		if _, ok := tc.Responses.Elicitation("confirm"); ok && string(tc.State) == marker {
			return text(done), nil
		}
		return ask(marker, sdk.InputRequestMap{"confirm": elicitForm("Please confirm", okFormSchema)}), nil
	}
}

func runMultipleInputs(_ context.Context, _ *Host, tc *ext.ToolCall) (ext.ToolResult, error) {
	missing := sdk.InputRequestMap{}
	er, okName := tc.Responses.Elicitation("user_name")
	if !okName {
		missing["user_name"] = askName("What is your name?")
	}
	sr, okGreeting := tc.Responses.Sampling("greeting")
	if !okGreeting {
		missing["greeting"] = capitalQuestion("Generate a greeting", 50)
	}
	roots, okRoots := tc.Responses.Roots("client_roots")
	if !okRoots {
		missing["client_roots"] = &sdk.ListRootsParams{}
	}
	if len(missing) > 0 {
		return ask(multipleInputsMarker, missing), nil
	}
	name, _ := er.Content["name"].(string)
	return text(fmt.Sprintf("Name: %s. Greeting: %s. %s.", name, sampledText(sr), describeRoots(roots))), nil
}

// multiRoundState is the sealed state of test_input_required_result_multi_round.
type multiRoundState struct {
	Step int    `json:"step"`
	Name string `json:"name,omitempty"`
}

func runMultiRound(_ context.Context, _ *Host, tc *ext.ToolCall) (ext.ToolResult, error) {
	var st multiRoundState
	if len(tc.State) == 0 || json.Unmarshal(tc.State, &st) != nil {
		st = multiRoundState{Step: 1}
	}
	if st.Step == 1 {
		if er, ok := tc.Responses.Elicitation("step1"); ok && len(tc.State) > 0 {
			name, _ := er.Content["name"].(string)
			st = multiRoundState{Step: 2, Name: name}
		}
	} else if er, ok := tc.Responses.Elicitation("step2"); ok {
		color, _ := er.Content["color"].(string)
		return text(fmt.Sprintf("%s's favourite colour is %s.", st.Name, color)), nil
	}
	state, err := json.Marshal(st)
	if err != nil {
		return ext.ToolResult{}, err
	}
	if st.Step == 1 {
		return ask(string(state), sdk.InputRequestMap{"step1": askName("Step 1: What is your name?")}), nil
	}
	return ask(string(state), sdk.InputRequestMap{"step2": elicitForm("Step 2: What is your favorite color?", colorFormSchema)}), nil
}

func runCapabilities(_ context.Context, _ *Host, tc *ext.ToolCall) (ext.ToolResult, error) {
	var answered []string
	for _, k := range []string{"user_name", "capital_question", "client_roots"} {
		if _, ok := tc.Responses[k]; ok {
			answered = append(answered, k)
		}
	}
	if len(answered) > 0 {
		return text("Answered: " + strings.Join(answered, ", ") + "."), nil
	}
	requests := sdk.InputRequestMap{}
	for key, req := range map[string]sdk.InputRequest{
		"user_name":        askName("What is your name?"),
		"capital_question": capitalQuestion("What is the capital of France?", 100),
		"client_roots":     &sdk.ListRootsParams{},
	} {
		if tc.Supports(req) {
			requests[key] = req
		}
	}
	if len(requests) == 0 {
		// Nothing the client can answer: asking anyway lets the mount refuse
		// with -32021 naming elicitation.
		requests["user_name"] = askName("What is your name?")
	}
	return ask("", requests), nil
}

func runToolWithTask(_ context.Context, _ *Host, tc *ext.ToolCall) (ext.ToolResult, error) {
	er, ok := tc.Responses.Elicitation("user_name")
	var name string
	if ok && er.Action == "accept" {
		name, _ = er.Content["name"].(string)
	}
	if name == "" {
		return ask("", sdk.InputRequestMap{"user_name": askName("What is your name?")}), nil
	}
	inputs, err := json.Marshal(struct {
		Seconds int    `json:"seconds"`
		Label   string `json:"label"`
	}{toolWithTaskSeconds, "Hello, " + name + "!"})
	if err != nil {
		return ext.ToolResult{}, err
	}
	return ext.ToolResult{Handoff: &ext.Handoff{WorkflowID: WorkflowSlowCompute, Inputs: inputs}}, nil
}
