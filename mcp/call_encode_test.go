package mcp

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/wopinterop/wopinterop/mcp/internal/mount"
)

// FuzzAppendCallToolResult: the hand-written CallToolResult is
// mount.Marshal's bytes for every shape the mount builds — text, embedded
// resources with text or blob, resource links, structured content however
// spaced — and invalid structured content is refused as mount.Marshal
// refuses it.
func FuzzAppendCallToolResult(f *testing.F) {
	f.Add("complete", "The tool completed.", []byte(`{"ok":true}`), "openwop://runs/r/artifacts/a/parts/0", "text/plain", "<b>&\u2028", uint8(0))
	f.Add("complete", "", []byte(` { "a" : [ 1 , "x y" ] } `), "", "", "", uint8(1))
	f.Add("", "bad\xff", []byte(`{"a"`), "https://example.com/f?a=1&b=2", "n", "\x00", uint8(2))
	f.Add("complete", "t", []byte(nil), "u", "", "", uint8(3))
	f.Fuzz(func(t *testing.T, resultType, text string, structured []byte, uri, name, body string, shape uint8) {
		res := callToolResultJSON{ResultType: resultType, StructuredContent: structured, IsError: shape&1 != 0}
		if shape&2 == 0 {
			res.Content = append(res.Content, content{Type: "text", Text: text})
		}
		if shape&4 != 0 {
			res.Content = append(res.Content, content{Type: "resource_link", URI: uri, Name: name, MIMEType: body})
		}
		if shape&8 != 0 {
			res.Content = append(res.Content, content{Type: "resource", Resource: &resourceContents{URI: uri, MIMEType: name, Text: &body}})
		}
		if shape&16 != 0 {
			res.Content = append(res.Content, content{Type: "resource", Resource: &resourceContents{URI: uri, Blob: body}})
		}
		if shape&32 != 0 {
			res.Content = []content{}
		}
		want, wantErr := mount.Marshal(res)
		got, err := marshalCallToolResult(&res)
		if (err == nil) != (wantErr == nil) || !bytes.Equal(got, want) {
			t.Fatalf("%+v:\n got %s (%v)\nwant %s (%v)", res, got, err, want, wantErr)
		}
		if _, ok := appendCallToolResult(nil, &res); ok != json.Valid(structured) && len(structured) > 0 {
			t.Fatalf("structured %q: appended %v", structured, ok)
		}
	})
}

// A CallToolResult is encoded in one allocation of about its size, short
// or long, escapes included.
func TestMarshalCallToolResultAllocatesOnce(t *testing.T) {
	long := strings.Repeat(`{"k":"v\n"},`, 100)
	text := "<b>"
	for _, res := range []callToolResultJSON{
		{ResultType: "complete", Content: []content{{Type: "text", Text: `{"ok":true}`}}, StructuredContent: json.RawMessage(`{"ok":true}`)},
		{ResultType: "complete", Content: []content{{Type: "text", Text: long}}, StructuredContent: json.RawMessage(`{"a":[` + strings.Repeat(`1,`, 300) + `1]}`)},
		{ResultType: "complete", Content: []content{{Type: "text", Text: "The tool failed."}}, IsError: true},
		{ResultType: "complete", Content: []content{
			{Type: "text", Text: "done"},
			{Type: "resource", Resource: &resourceContents{URI: "openwop://runs/r/artifacts/a/parts/0", MIMEType: "text/html", Text: &text}},
			{Type: "resource_link", URI: "https://example.com/report.pdf", Name: "report.pdf", MIMEType: "application/pdf"},
		}},
	} {
		if n := testing.AllocsPerRun(20, func() {
			if _, err := marshalCallToolResult(&res); err != nil {
				t.Fatal(err)
			}
		}); n != 1 {
			t.Errorf("%.40s…: %v allocations", res.Content[0].Text, n)
		}
	}
}
