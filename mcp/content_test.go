package mcp

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/wopinterop/wopinterop/mcp/internal/mount"
)

// TestContentEncoding pins the wire form of every content block and
// record type, and refuses blocks that would be invalid on the wire.
func TestContentEncoding(t *testing.T) {
	values := []any{
		TextContent("x <&>"),
		ImageContent([]byte{1, 2, 3}, "image/png"),
		AudioContent(nil, "audio/wav"),
		EmbeddedResource(TextResource("test://a", "", "")),
		EmbeddedResource(BlobResource("test://b", "application/octet-stream", nil)),
		ResourceLinkContent(Resource{URI: "https://h/x", Name: "x", Title: "X", Description: "d", MIMEType: "text/plain", Size: 9}),
		PromptMessage{Role: RoleAssistant, Content: TextContent("hi")},
		Prompt{Name: "p", Arguments: []PromptArgument{{Name: "a", Required: true}, {Name: "b", Title: "B"}}},
		ResourceTemplate{URITemplate: "test://{id}", Name: "t"},
		ElicitURL("Sign in", "https://h/sign-in").Params,
		ElicitForm("Name?", json.RawMessage(`{"type":"object","properties":{}}`)).Params,
		CreateMessage(SamplingRequest{Messages: []SamplingMessage{{Role: RoleUser, Content: ImageContent([]byte{0}, "image/gif")}}, MaxTokens: 5, SystemPrompt: "s"}).Params,
	}
	var b strings.Builder
	for _, v := range values {
		out, err := mount.Marshal(v)
		if err != nil {
			t.Fatalf("%#v: %v", v, err)
		}
		b.Write(out)
		b.WriteByte('\n')
	}
	checkGolden(t, "content", []byte(b.String()))

	for name, v := range map[string]any{
		"unknown type":          Content{Type: "video"},
		"zero block":            Content{},
		"image without MIME":    ImageContent([]byte{1}, ""),
		"resource without body": Content{Type: ContentResource},
		"link without name":     ResourceLinkContent(Resource{URI: "test://x"}),
		"contents without URI":  TextResource("", "text/plain", "x"),
		"system role":           PromptMessage{Role: "system", Content: TextContent("x")},
	} {
		if _, err := mount.Marshal(v); !errors.Is(err, errContent) {
			t.Errorf("%s: err %v, want errContent", name, err)
		}
	}
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
	if sr, ok := r.Sampling("sample"); !ok || sr.Text() != "Paris" || sr.Model != "m" {
		t.Errorf("Sampling = %+v %v", sr, ok)
	}
	if sr, ok := r.Sampling("image"); !ok || sr.Text() != "" {
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
