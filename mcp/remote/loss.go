package remote

import (
	"context"
	"encoding/json"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/outbound"
)

// Result is a tool's final result as the host's run takes it: the content
// blocks without their annotations and _meta, and the structured content.
// Everything in it is the server's untrusted content.
type Result struct {
	// IsError: the tool ran and reported an error.
	IsError bool `json:"isError"`
	// Content is the result's content blocks, in order.
	Content []Content `json:"content"`
	// Structured is the result's structuredContent, re-encoded from
	// go-sdk's decoding; absent when the server sent none.
	Structured json.RawMessage `json:"structuredContent,omitempty"`
}

// Content is one content block (MCP 2026-07-28 §Tool result): Type is
// "text", "image", "audio", "resource" (an embedded resource) or
// "resource_link".
type Content struct {
	Type string `json:"type"`
	// Text is a text block's text, or an embedded text resource's.
	Text string `json:"text,omitempty"`
	// Data is an image's or audio's bytes, or an embedded blob resource's.
	Data []byte `json:"data,omitempty"`
	// MIMEType is the media type the server declared.
	MIMEType string `json:"mimeType,omitempty"`
	// URI names an embedded resource or a resource link; the library never
	// fetches it.
	URI string `json:"uri,omitempty"`
	// Name is a resource link's name.
	Name string `json:"name,omitempty"`
}

// EventTranslationLoss is the run event recording what projecting one
// call into the host's run dropped (admission-boundaries §18.10): one per
// call that lost anything, content-free — counts by kind, never a key, a
// value or a server string. It is the same vendor type, under the
// library's own org (OpenWOP RFC 0171 §A.1), as the A2A delegation's, with
// the same payload shape and protocol "mcp".
//
// Its payload: protocol ("mcp"), attemptId, and
//
//   - dropped.metadataKeys: _meta keys of the final and the interim
//     (input_required) results, of their content blocks and embedded
//     resources, and of the input requests — outside the protocol's own
//     io.modelcontextprotocol/ namespace;
//   - dropped.annotations: content blocks that carried annotations;
//   - dropped.resourceLinkFields: a resource link's title, description,
//     size and icons (its uri, name and mimeType are kept);
//   - dropped.contentBlocks: blocks a tool result does not carry
//     (tool_use, tool_result) and embedded resources without contents;
//   - dropped.errorData: a JSON-RPC error's data member;
//   - coerced.structuredContentMismatch: structuredContent came with text
//     blocks and none of them holds the same JSON value, so a reader of one
//     misses the other (both are kept).
//
// A count that stays zero is left out. A call asks for no progress and no
// log messages, so none is received and none is counted.
const EventTranslationLoss = outbound.EventTranslationLoss

const protocolMCP = "mcp"

// eventGrace bounds appending a record after the caller's context ended.
const eventGrace = 5 * time.Second

// lossTracker counts what one call's projection drops.
type lossTracker struct {
	dropped droppedCounts
	coerced coercedCounts
}

type lossRecord struct {
	Protocol  string        `json:"protocol"`
	AttemptID string        `json:"attemptId"`
	Dropped   droppedCounts `json:"dropped,omitzero"`
	Coerced   coercedCounts `json:"coerced,omitzero"`
}

type droppedCounts struct {
	MetadataKeys       int `json:"metadataKeys,omitempty"`
	Annotations        int `json:"annotations,omitempty"`
	ResourceLinkFields int `json:"resourceLinkFields,omitempty"`
	ContentBlocks      int `json:"contentBlocks,omitempty"`
	ErrorData          int `json:"errorData,omitempty"`
}

type coercedCounts struct {
	StructuredContentMismatch int `json:"structuredContentMismatch,omitempty"`
}

// interim counts what an input_required answer carries beside its
// requests.
func (t *lossTracker) interim(res *mcp.CallToolResult) {
	t.dropped.MetadataKeys += metaKeys(res.Meta)
	t.blocks(res.Content) // a conforming server sends none
}

// project is res as the run takes it, counting what it leaves out.
func (t *lossTracker) project(res *mcp.CallToolResult) *Result {
	t.dropped.MetadataKeys += metaKeys(res.Meta)
	r := &Result{IsError: res.IsError, Content: t.blocks(res.Content)}
	if res.StructuredContent != nil {
		b, err := json.Marshal(res.StructuredContent)
		if err == nil {
			r.Structured = b
		}
		if !textHolds(res.Content, res.StructuredContent) {
			t.coerced.StructuredContentMismatch++
		}
	}
	return r
}

func (t *lossTracker) blocks(in []mcp.Content) []Content {
	out := make([]Content, 0, len(in))
	for _, b := range in {
		switch b := b.(type) {
		case *mcp.TextContent:
			t.block(b.Meta, b.Annotations)
			out = append(out, Content{Type: "text", Text: b.Text})
		case *mcp.ImageContent:
			t.block(b.Meta, b.Annotations)
			out = append(out, Content{Type: "image", Data: slices.Clone(b.Data), MIMEType: b.MIMEType})
		case *mcp.AudioContent:
			t.block(b.Meta, b.Annotations)
			out = append(out, Content{Type: "audio", Data: slices.Clone(b.Data), MIMEType: b.MIMEType})
		case *mcp.ResourceLink:
			t.block(b.Meta, b.Annotations)
			t.dropped.ResourceLinkFields += nonEmpty(b.Title != "", b.Description != "", b.Size != nil, len(b.Icons) > 0)
			out = append(out, Content{Type: "resource_link", URI: b.URI, Name: b.Name, MIMEType: b.MIMEType})
		case *mcp.EmbeddedResource:
			t.block(b.Meta, b.Annotations)
			if b.Resource == nil {
				t.dropped.ContentBlocks++
				continue
			}
			t.dropped.MetadataKeys += metaKeys(b.Resource.Meta)
			out = append(out, Content{Type: "resource", URI: b.Resource.URI, MIMEType: b.Resource.MIMEType,
				Text: b.Resource.Text, Data: slices.Clone(b.Resource.Blob)})
		default:
			t.dropped.ContentBlocks++
		}
	}
	return out
}

func (t *lossTracker) block(meta mcp.Meta, ann *mcp.Annotations) {
	t.dropped.MetadataKeys += metaKeys(meta)
	if ann != nil {
		t.dropped.Annotations++
	}
}

// protocolMetaPrefix is the MCP protocol's own _meta namespace: keys the
// SDKs read (io.modelcontextprotocol/serverInfo on every 2026-07-28
// result, SEP-2575) are protocol, not the result's content, and are not
// counted as dropped.
const protocolMetaPrefix = "io.modelcontextprotocol/"

// metaKeys counts the keys of m outside the protocol's own namespace.
func metaKeys(m map[string]any) int {
	n := 0
	for k := range m {
		if !strings.HasPrefix(k, protocolMetaPrefix) {
			n++
		}
	}
	return n
}

func nonEmpty(present ...bool) int {
	n := 0
	for _, p := range present {
		if p {
			n++
		}
	}
	return n
}

// textHolds reports whether the content has no text block, or a text
// block whose JSON value equals structured (the serialized copy MCP asks a
// tool with structured output to include).
func textHolds(content []mcp.Content, structured any) bool {
	want, err := json.Marshal(structured)
	if err != nil {
		return false
	}
	var norm any
	if json.Unmarshal(want, &norm) != nil {
		return false
	}
	sawText := false
	for _, b := range content {
		tc, ok := b.(*mcp.TextContent)
		if !ok {
			continue
		}
		sawText = true
		var v any
		if json.Unmarshal([]byte(tc.Text), &v) == nil && reflect.DeepEqual(v, norm) {
			return true
		}
	}
	return !sawText
}

func (t *lossTracker) record(attemptID string) (lossRecord, bool) {
	rec := lossRecord{Protocol: protocolMCP, AttemptID: attemptID, Dropped: t.dropped, Coerced: t.coerced}
	return rec, t.dropped != (droppedCounts{}) || t.coerced != (coercedCounts{})
}

// recordLoss appends the call's EventTranslationLoss when it lost
// anything.
func (s *Session) recordLoss(ctx context.Context, c *call) {
	if rec, lost := c.loss.record(c.attemptID); lost {
		s.appendEvent(ctx, EventTranslationLoss, rec)
	}
}

// appendEvent appends one content-free record to the run's log. A record
// the sink refuses is logged by type, and the call's outcome stands: it is
// the host's to act on either way.
func (s *Session) appendEvent(ctx context.Context, typ interop.EventType, payload any) {
	if s.deps == nil || s.deps.events == nil {
		return
	}
	b, err := json.Marshal(payload)
	if err != nil {
		s.logger().LogAttrs(ctx, slog.LevelWarn, "remote: run event not encoded", slog.String("type", string(typ)), slog.String("error", err.Error()))
		return
	}
	now := time.Now
	if s.deps.now != nil {
		now = s.deps.now
	}
	ev := interop.RunEvent{Type: typ, Timestamp: now().UTC(), SchemaVersion: interop.SchemaVersion, Payload: b}
	actx, stop := context.WithTimeout(context.WithoutCancel(ctx), eventGrace)
	defer stop()
	if err := s.deps.events.AppendRunEvent(actx, s.RunID, ev); err != nil {
		s.logger().LogAttrs(ctx, slog.LevelWarn, "remote: run event not recorded", slog.String("type", string(typ)), slog.String("error", err.Error()))
	}
}
