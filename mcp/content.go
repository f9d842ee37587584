package mcp

// Content blocks, resource contents and the listing records the optional
// host extension points (host.go) return, each with its exact 2026-07-28
// wire form. They are our own types: the mount encodes them itself, so a
// host never needs go-sdk to answer.

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/wopinterop/wopinterop/mcp/internal/mount"
)

// Content types of a [Content] block.
const (
	ContentText         = "text"
	ContentImage        = "image"
	ContentAudio        = "audio"
	ContentResource     = "resource"
	ContentResourceLink = "resource_link"
)

// Content is one content block (ContentBlock) of a tool result or a prompt
// message: text, an image, audio, an embedded resource or a link to a
// resource. Build it with [TextContent], [ImageContent], [AudioContent],
// [EmbeddedResource] or [ResourceLinkContent]; only the fields its Type
// names are encoded.
type Content struct {
	// Type is one of the Content* constants.
	Type string
	// Text is the text of a text block.
	Text string
	// Data are the raw bytes of an image or audio block (base64 on the
	// wire); MIMEType is required with them.
	Data     []byte
	MIMEType string
	// Resource is the embedded resource of a resource block.
	Resource *ResourceContents
	// Link is the resource a resource_link block points at.
	Link *Resource
}

// TextContent returns a text block.
func TextContent(text string) Content { return Content{Type: ContentText, Text: text} }

// ImageContent returns an image block of data with its MIME type.
func ImageContent(data []byte, mimeType string) Content {
	return Content{Type: ContentImage, Data: data, MIMEType: mimeType}
}

// AudioContent returns an audio block of data with its MIME type.
func AudioContent(data []byte, mimeType string) Content {
	return Content{Type: ContentAudio, Data: data, MIMEType: mimeType}
}

// EmbeddedResource returns a block embedding the contents of a resource.
func EmbeddedResource(rc ResourceContents) Content {
	return Content{Type: ContentResource, Resource: &rc}
}

// ResourceLinkContent returns a block pointing at a resource the client
// may read (or fetch) itself.
func ResourceLinkContent(r Resource) Content { return Content{Type: ContentResourceLink, Link: &r} }

var errContent = errors.New("mcp: invalid content block")

// MarshalJSON encodes the block in its wire form. A block whose Type is
// unknown or whose required fields are missing is an error: the mount then
// answers with an internal error rather than send an invalid message.
func (c Content) MarshalJSON() ([]byte, error) {
	switch c.Type {
	case ContentText:
		return mount.Marshal(struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}{c.Type, c.Text})
	case ContentImage, ContentAudio:
		if c.MIMEType == "" {
			return nil, fmt.Errorf("%w: %s block without a MIME type", errContent, c.Type)
		}
		return mount.Marshal(struct {
			Type     string `json:"type"`
			Data     string `json:"data"`
			MIMEType string `json:"mimeType"`
		}{c.Type, base64.StdEncoding.EncodeToString(c.Data), c.MIMEType})
	case ContentResource:
		if c.Resource == nil {
			return nil, fmt.Errorf("%w: resource block without a resource", errContent)
		}
		return mount.Marshal(struct {
			Type     string            `json:"type"`
			Resource *ResourceContents `json:"resource"`
		}{c.Type, c.Resource})
	case ContentResourceLink:
		if c.Link == nil || c.Link.URI == "" || c.Link.Name == "" {
			return nil, fmt.Errorf("%w: resource_link block without a URI and a name", errContent)
		}
		type link struct {
			Type string `json:"type"`
			Resource
		}
		return mount.Marshal(link{c.Type, *c.Link})
	}
	return nil, fmt.Errorf("%w: unknown type %q", errContent, c.Type)
}

// ResourceContents are the contents of one resource: text, or binary when
// Blob is non-nil (base64 on the wire).
type ResourceContents struct {
	URI      string
	MIMEType string
	Text     string
	Blob     []byte
}

// TextResource returns text contents of uri.
func TextResource(uri, mimeType, text string) ResourceContents {
	return ResourceContents{URI: uri, MIMEType: mimeType, Text: text}
}

// BlobResource returns binary contents of uri.
func BlobResource(uri, mimeType string, blob []byte) ResourceContents {
	if blob == nil {
		blob = []byte{}
	}
	return ResourceContents{URI: uri, MIMEType: mimeType, Blob: blob}
}

// MarshalJSON encodes TextResourceContents or BlobResourceContents.
func (rc ResourceContents) MarshalJSON() ([]byte, error) {
	if rc.URI == "" {
		return nil, fmt.Errorf("%w: resource contents without a URI", errContent)
	}
	if rc.Blob != nil {
		return mount.Marshal(struct {
			URI      string `json:"uri"`
			MIMEType string `json:"mimeType,omitempty"`
			Blob     string `json:"blob"`
		}{rc.URI, rc.MIMEType, base64.StdEncoding.EncodeToString(rc.Blob)})
	}
	return mount.Marshal(struct {
		URI      string `json:"uri"`
		MIMEType string `json:"mimeType,omitempty"`
		Text     string `json:"text"`
	}{rc.URI, rc.MIMEType, rc.Text})
}

// Resource is a resource the caller may read (resources/list), or the
// target of a resource_link block.
type Resource struct {
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
	// Size is the size in bytes before any encoding; 0 means unknown.
	Size int64 `json:"size,omitempty"`
}

// ResourceTemplate is a family of resources addressed by an RFC 6570 URI
// template (resources/templates/list).
type ResourceTemplate struct {
	URITemplate string `json:"uriTemplate"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
}

// Prompt is a prompt the caller may get (prompts/list).
type Prompt struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
}

// PromptArgument is one argument of a [Prompt]. The mount refuses a
// prompts/get that omits a required one (-32602).
type PromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// Roles of a prompt or sampling message.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// PromptMessage is one message of a rendered prompt.
type PromptMessage struct {
	Role    string  `json:"role"`
	Content Content `json:"content"`
}

// MarshalJSON refuses a role other than user or assistant.
func (m PromptMessage) MarshalJSON() ([]byte, error) {
	if m.Role != RoleUser && m.Role != RoleAssistant {
		return nil, fmt.Errorf("%w: message role %q", errContent, m.Role)
	}
	type plain PromptMessage
	return mount.Marshal(plain(m))
}

// rawObject returns b, or {} when b is empty.
func rawObject(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage(`{}`)
	}
	return b
}
