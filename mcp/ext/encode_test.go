package ext

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopinterop/wopinterop/mcp/internal/mount"
)

// TestContentEncoding pins the wire form of every content block and
// record type the host hands back in go-sdk's types, and refuses values
// that would be invalid on the wire.
func TestContentEncoding(t *testing.T) {
	size := int64(9)
	values := []any{
		block(t, text("x <&>")),
		block(t, &sdk.ImageContent{Data: []byte{1, 2, 3}, MIMEType: "image/png"}),
		block(t, &sdk.AudioContent{MIMEType: "audio/wav"}),
		block(t, &sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "test://a"}}),
		block(t, &sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "test://b", MIMEType: "application/octet-stream", Blob: []byte{}}}),
		block(t, &sdk.ResourceLink{URI: "https://h/x", Name: "x", Title: "X", Description: "d", MIMEType: "text/plain", Size: &size}),
		promptMessage(t, &sdk.PromptMessage{Role: "assistant", Content: text("hi")}),
		newPromptJSON(&sdk.Prompt{Name: "p", Arguments: []*sdk.PromptArgument{{Name: "a", Required: true}, {Name: "b", Title: "B"}}}),
		newResourceTemplateJSON(&sdk.ResourceTemplate{URITemplate: "test://{id}", Name: "t"}),
		inputParams(t, &sdk.ElicitParams{Mode: "url", Message: "Sign in", URL: "https://h/sign-in"}),
		inputParams(t, elicitForm("Name?", `{"type":"object","properties":{}}`)),
		inputParams(t, &sdk.CreateMessageParams{Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.ImageContent{Data: []byte{0}, MIMEType: "image/gif"}}}, MaxTokens: 5, SystemPrompt: "s"}),
	}
	checkGolden(t, "content", encodeLines(t, values))

	for name, c := range map[string]sdk.Content{
		"a sampling-only block": &sdk.ToolUseContent{ID: "u", Name: "t"},
		"no block":              nil,
		"a nil block":           (*sdk.TextContent)(nil),
		"image without MIME":    &sdk.ImageContent{Data: []byte{1}},
		"resource without body": &sdk.EmbeddedResource{},
		"link without name":     &sdk.ResourceLink{URI: "test://x"},
		"contents without URI":  &sdk.EmbeddedResource{Resource: &sdk.ResourceContents{MIMEType: "text/plain", Text: "x"}},
	} {
		if _, err := contentsJSON([]sdk.Content{c}); !errors.Is(err, errContent) {
			t.Errorf("%s: err %v, want errContent", name, err)
		}
	}
	for name, m := range map[string]*sdk.PromptMessage{
		"system role": {Role: "system", Content: text("x")},
		"no message":  nil,
		"no content":  {Role: "user"},
	} {
		if _, err := promptMessagesJSON([]*sdk.PromptMessage{m}); !errors.Is(err, errContent) {
			t.Errorf("%s: err %v, want errContent", name, err)
		}
	}
	if _, err := contentsListJSON([]*sdk.ResourceContents{{Text: "no URI"}}); !errors.Is(err, errContent) {
		t.Errorf("contents without URI: %v", err)
	}
}

// TestContentExtras pins the members go-sdk's types carry beyond the
// ones above — annotations, icons, _meta — sent after them when set.
func TestContentExtras(t *testing.T) {
	ann := &sdk.Annotations{Audience: []sdk.Role{"user"}, Priority: 0.5}
	meta := sdk.Meta{"k": "v"}
	icons := []sdk.Icon{{Source: "https://h/i.png", MIMEType: "image/png"}}
	values := []any{
		block(t, &sdk.TextContent{Text: "t", Annotations: ann, Meta: meta}),
		block(t, &sdk.ImageContent{Data: []byte{1}, MIMEType: "image/png", Annotations: ann}),
		block(t, &sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "test://a", Text: "a", Meta: meta}, Annotations: ann}),
		block(t, &sdk.ResourceLink{URI: "test://l", Name: "l", Icons: icons, Meta: meta}),
		newResourceJSON(&sdk.Resource{URI: "test://r", Name: "r", Annotations: ann, Icons: icons, Meta: meta}),
		newResourceTemplateJSON(&sdk.ResourceTemplate{URITemplate: "test://{id}", Name: "t", Icons: icons}),
		newPromptJSON(&sdk.Prompt{Name: "p", Icons: icons, Meta: meta}),
		inputParams(t, &sdk.ElicitParams{Message: "m", URL: "https://h/x", ElicitationID: "e-1", Meta: meta}),
		inputParams(t, &sdk.CreateMessageParams{Messages: []*sdk.SamplingMessage{}, MaxTokens: 1, Temperature: 0.5, StopSequences: []string{"x"}, IncludeContext: "none", Meta: meta}),
		inputParams(t, &sdk.ListRootsParams{}),
	}
	checkGolden(t, "content_extras", encodeLines(t, values))
}

// block is the wire form of one content block.
func block(t *testing.T, c sdk.Content) contentJSON {
	t.Helper()
	cs, err := contentsJSON([]sdk.Content{c})
	if err != nil {
		t.Fatal(err)
	}
	return cs[0]
}

// promptMessage is the wire form of one prompt message.
func promptMessage(t *testing.T, m *sdk.PromptMessage) messageJSON {
	t.Helper()
	ms, err := promptMessagesJSON([]*sdk.PromptMessage{m})
	if err != nil {
		t.Fatal(err)
	}
	return ms[0]
}

// inputParams are the encoded params of an input request.
func inputParams(t *testing.T, req sdk.InputRequest) json.RawMessage {
	t.Helper()
	_, params, err := encodeInputRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	return params
}

func encodeLines(t *testing.T, values []any) []byte {
	t.Helper()
	var b strings.Builder
	for _, v := range values {
		out, err := mount.Marshal(v)
		if err != nil {
			t.Fatalf("%#v: %v", v, err)
		}
		b.Write(out)
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// TestInputResponses: the typed readers accept their result shapes and
// nothing else.
func TestInputResponses(t *testing.T) {
	r := InputResponses{
		"el":      json.RawMessage(`{"action":"accept","content":{"name":"Ada","n":2}}`),
		"badact":  json.RawMessage(`{"action":"maybe"}`),
		"sample":  json.RawMessage(`{"role":"assistant","model":"m","content":{"type":"text","text":"Paris"},"stopReason":"endTurn"}`),
		"image":   json.RawMessage(`{"role":"assistant","model":"m","content":{"type":"image","data":"AA==","mimeType":"image/png"}}`),
		"roots":   json.RawMessage(`{"roots":[{"uri":"file:///r","name":"R"}]}`),
		"noroots": json.RawMessage(`{"roots":[]}`),
		"other":   json.RawMessage(`{"x":1}`),
	}
	if er, ok := r.Elicitation("el"); !ok || er.Action != "accept" || er.Content["name"] != "Ada" {
		t.Errorf("Elicitation = %+v %v", er, ok)
	}
	for _, k := range []string{"badact", "sample", "missing"} {
		if _, ok := r.Elicitation(k); ok {
			t.Errorf("Elicitation(%s) accepted", k)
		}
	}
	if sr, ok := r.Sampling("sample"); !ok || sr.Model != "m" || sr.Content.(*sdk.TextContent).Text != "Paris" {
		t.Errorf("Sampling = %+v %v", sr, ok)
	}
	if sr, ok := r.Sampling("image"); !ok || sr.Content.(*sdk.ImageContent).MIMEType != "image/png" {
		t.Errorf("Sampling(image) = %+v %v", sr, ok)
	}
	for _, k := range []string{"el", "roots", "other", "missing"} {
		if _, ok := r.Sampling(k); ok {
			t.Errorf("Sampling(%s) accepted", k)
		}
	}
	if roots, ok := r.Roots("roots"); !ok || len(roots) != 1 || roots[0].URI != "file:///r" {
		t.Errorf("Roots = %v %v", roots, ok)
	}
	if roots, ok := r.Roots("noroots"); !ok || len(roots) != 0 {
		t.Errorf("Roots(empty) = %v %v", roots, ok)
	}
	for _, k := range []string{"el", "other", "missing"} {
		if _, ok := r.Roots(k); ok {
			t.Errorf("Roots(%s) accepted", k)
		}
	}
}
