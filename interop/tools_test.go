package interop_test

import (
	"testing"

	"github.com/wopinterop/wopinterop/interop"
)

// TestToolResultText joins the text blocks only.
func TestToolResultText(t *testing.T) {
	r := interop.ToolResult{Content: []interop.ToolContent{{Type: "text", Text: "a"}, {Type: "image", Data: []byte{1}}, {Type: "text", Text: "b"}}}
	if got := r.Text(); got != "a\nb" {
		t.Fatalf("Text() = %q", got)
	}
	if got := (interop.ToolResult{}).Text(); got != "" {
		t.Fatalf("empty Text() = %q", got)
	}
}
