package mcp

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/wopinterop/wopinterop/internal/jsonbytes"
	"github.com/wopinterop/wopinterop/mcp/internal/mount"
)

// marshalCallToolResult is mount.Marshal(res), byte for byte, written by
// appendCallToolResult without reflection; structured content that is not
// valid JSON is refused with the error mount.Marshal gives it.
// FuzzAppendCallToolResult holds the two together.
func marshalCallToolResult(res *callToolResultJSON) ([]byte, error) {
	if b, ok := appendCallToolResult(make([]byte, 0, callToolResultSize(res)), res); ok {
		return b, nil
	}
	// Only the structured content can be refused. Marshalling a copy of
	// it alone keeps res and what it points to off the heap.
	if _, err := mount.Marshal(json.RawMessage(bytes.Clone(res.StructuredContent))); err != nil {
		return nil, err
	}
	return nil, errors.New("mcp: structured content is not valid JSON")
}

// callToolResultSize estimates the encoded length of res, so that a result
// is encoded into one allocation of about its size: the members' fixed
// text and every value as a JSON string takes it (quotes and control
// characters escaped; text output is often JSON, full of quotes).
func callToolResultSize(res *callToolResultJSON) int {
	n := 64 + len(res.ResultType) + len(res.StructuredContent)
	for i := range res.Content {
		c := &res.Content[i]
		n += 48 + quotedSize(c.Type) + quotedSize(c.Text) + quotedSize(c.URI) + quotedSize(c.Name) + quotedSize(c.MIMEType)
		if rc := c.Resource; rc != nil {
			n += 48 + quotedSize(rc.URI) + quotedSize(rc.MIMEType) + len(rc.Blob)
			if rc.Text != nil {
				n += quotedSize(*rc.Text)
			}
		}
	}
	return n
}

// quotedSize bounds the length of s as mount.AppendString writes it, but
// for rare invalid UTF-8: a quote or backslash takes two bytes, a control
// character up to six, U+2028 and U+2029 six for their three.
func quotedSize(s string) int {
	n := len(s)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			n++
		case c < 0x20:
			n += 5
		case c >= 0x80:
			n++
		}
	}
	return n
}

// appendCallToolResult appends res as mount.Marshal encodes it (members in
// field order, omitempty honoured, HTML not escaped, raw JSON compacted),
// reporting false when its structured content is not valid JSON.
func appendCallToolResult(dst []byte, res *callToolResultJSON) ([]byte, bool) {
	dst = append(dst, `{"resultType":`...)
	dst = mount.AppendString(dst, res.ResultType)
	dst = append(dst, `,"content":`...)
	if res.Content == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, '[')
		for i := range res.Content {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendContent(dst, &res.Content[i])
		}
		dst = append(dst, ']')
	}
	if len(res.StructuredContent) > 0 {
		dst = append(dst, `,"structuredContent":`...)
		var ok bool
		if dst, ok = jsonbytes.AppendCompact(dst, res.StructuredContent); !ok {
			return dst, false
		}
	}
	if res.IsError {
		return append(dst, `,"isError":true}`...), true
	}
	return append(dst, `,"isError":false}`...), true
}

func appendContent(dst []byte, c *content) []byte {
	dst = append(dst, `{"type":`...)
	dst = mount.AppendString(dst, c.Type)
	if c.Text != "" {
		dst = append(dst, `,"text":`...)
		dst = mount.AppendString(dst, c.Text)
	}
	if rc := c.Resource; rc != nil {
		dst = append(dst, `,"resource":{"uri":`...)
		dst = mount.AppendString(dst, rc.URI)
		if rc.MIMEType != "" {
			dst = append(dst, `,"mimeType":`...)
			dst = mount.AppendString(dst, rc.MIMEType)
		}
		if rc.Text != nil {
			dst = append(dst, `,"text":`...)
			dst = mount.AppendString(dst, *rc.Text)
		}
		if rc.Blob != "" {
			dst = append(dst, `,"blob":`...)
			dst = mount.AppendString(dst, rc.Blob)
		}
		dst = append(dst, '}')
	}
	if c.URI != "" {
		dst = append(dst, `,"uri":`...)
		dst = mount.AppendString(dst, c.URI)
	}
	if c.Name != "" {
		dst = append(dst, `,"name":`...)
		dst = mount.AppendString(dst, c.Name)
	}
	if c.MIMEType != "" {
		dst = append(dst, `,"mimeType":`...)
		dst = mount.AppendString(dst, c.MIMEType)
	}
	return append(dst, '}')
}
