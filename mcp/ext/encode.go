package ext

// The wire form of what the host hands back in go-sdk's protocol types:
// content blocks, resource contents, listing records, input requests and
// the results that carry them. The types are go-sdk's; the encoding is
// ours, for three reasons (doc.go has the numbers):
//
//   - the bytes stay what clients already receive: go-sdk orders members
//     by its struct fields (an image block's mimeType before its data, a
//     resource link's mimeType before its uri), escapes <, > and & in
//     text, and drops the empty text of a text resource, which the
//     2026-07-28 schema requires;
//   - a value the wire cannot carry is refused before anything is sent: a
//     block without its required members, a prompt message whose role is
//     neither user nor assistant, a sampling-only block (tool_use,
//     tool_result) in a tool result;
//   - a whole result is encoded in one pass over plain structs, where
//     go-sdk's MarshalJSON methods encode each block on its own and the
//     result is compacted again.
//
// Members go-sdk carries beyond ours — annotations, icons, _meta — are
// sent after the ones above when set. CreateMessageWithToolsParams keeps
// go-sdk's own encoding.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopinterop/wopinterop/mcp/internal/mount"
)

// errContent refuses a value the wire cannot carry: the mount then answers
// with an internal error rather than send an invalid message.
var errContent = errors.New("mcp/ext: invalid content")

// contentJSON is one ContentBlock — text, image, audio, an embedded
// resource or a resource link — in its wire form: each kind sets its own
// members, in the order the wire has always had them.
type contentJSON struct {
	Type        string                `json:"type"`
	Text        *string               `json:"text,omitempty"`
	Data        *string               `json:"data,omitempty"`
	URI         string                `json:"uri,omitempty"`
	Name        string                `json:"name,omitempty"`
	Title       string                `json:"title,omitempty"`
	Description string                `json:"description,omitempty"`
	MIMEType    string                `json:"mimeType,omitempty"`
	Size        *int64                `json:"size,omitempty"`
	Resource    *resourceContentsJSON `json:"resource,omitempty"`
	Annotations *sdk.Annotations      `json:"annotations,omitempty"`
	Icons       []sdk.Icon            `json:"icons,omitempty"`
	Meta        sdk.Meta              `json:"_meta,omitempty"`

	data string // Data's base64
}

// contentsJSON converts content blocks; the result is never nil, so an
// empty list is sent as [].
func contentsJSON(cs []sdk.Content) ([]contentJSON, error) {
	out := make([]contentJSON, len(cs))
	for i, c := range cs {
		if err := out[i].set(c); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// set makes w the wire form of c.
func (w *contentJSON) set(c sdk.Content) error {
	switch c := c.(type) {
	case *sdk.TextContent:
		if c != nil {
			*w = contentJSON{Type: "text", Text: &c.Text, Annotations: c.Annotations, Meta: c.Meta}
			return nil
		}
	case *sdk.ImageContent:
		if c != nil {
			return w.setMedia("image", c.Data, c.MIMEType, c.Annotations, c.Meta)
		}
	case *sdk.AudioContent:
		if c != nil {
			return w.setMedia("audio", c.Data, c.MIMEType, c.Annotations, c.Meta)
		}
	case *sdk.EmbeddedResource:
		if c == nil || c.Resource == nil {
			return fmt.Errorf("%w: resource block without a resource", errContent)
		}
		rc, err := resourceContents(c.Resource)
		if err != nil {
			return err
		}
		*w = contentJSON{Type: "resource", Resource: &rc, Annotations: c.Annotations, Meta: c.Meta}
		rc.place()
		return nil
	case *sdk.ResourceLink:
		if c == nil || c.URI == "" || c.Name == "" {
			return fmt.Errorf("%w: resource_link block without a URI and a name", errContent)
		}
		*w = contentJSON{Type: "resource_link", URI: c.URI, Name: c.Name, Title: c.Title, Description: c.Description,
			MIMEType: c.MIMEType, Size: c.Size, Annotations: c.Annotations, Icons: c.Icons, Meta: c.Meta}
		return nil
	}
	return fmt.Errorf("%w: %T is no tool or prompt content block", errContent, c)
}

// setMedia makes w an image or audio block: base64 data and its MIME type,
// which is required.
func (w *contentJSON) setMedia(kind string, data []byte, mimeType string, ann *sdk.Annotations, meta sdk.Meta) error {
	if mimeType == "" {
		return fmt.Errorf("%w: %s block without a MIME type", errContent, kind)
	}
	*w = contentJSON{Type: kind, MIMEType: mimeType, Annotations: ann, Meta: meta, data: base64.StdEncoding.EncodeToString(data)}
	w.Data = &w.data
	return nil
}

// resourceContentsJSON is TextResourceContents, or BlobResourceContents
// when Blob is set. Text is always sent for text contents, empty or not:
// the schema requires it.
type resourceContentsJSON struct {
	URI      string   `json:"uri"`
	MIMEType string   `json:"mimeType,omitempty"`
	Text     *string  `json:"text,omitempty"`
	Blob     *string  `json:"blob,omitempty"`
	Meta     sdk.Meta `json:"_meta,omitempty"`

	blob   string // Blob's base64
	binary bool
}

// place points Blob at the base64 once r is where it is encoded from.
func (r *resourceContentsJSON) place() {
	if r.binary {
		r.Blob = &r.blob
	}
}

// resourceContents converts rc: text contents, or binary ones when its
// Blob is non-nil.
func resourceContents(rc *sdk.ResourceContents) (resourceContentsJSON, error) {
	if rc == nil || rc.URI == "" {
		return resourceContentsJSON{}, fmt.Errorf("%w: resource contents without a URI", errContent)
	}
	if rc.Blob == nil {
		return resourceContentsJSON{URI: rc.URI, MIMEType: rc.MIMEType, Text: &rc.Text, Meta: rc.Meta}, nil
	}
	return resourceContentsJSON{URI: rc.URI, MIMEType: rc.MIMEType, Meta: rc.Meta, blob: base64.StdEncoding.EncodeToString(rc.Blob), binary: true}, nil
}

// contentsListJSON converts the contents of a read.
func contentsListJSON(l []*sdk.ResourceContents) ([]resourceContentsJSON, error) {
	out := make([]resourceContentsJSON, len(l))
	for i, rc := range l {
		var err error
		if out[i], err = resourceContents(rc); err != nil {
			return nil, err
		}
		out[i].place()
	}
	return out, nil
}

// resourceJSON is a Resource of resources/list.
type resourceJSON struct {
	URI         string           `json:"uri"`
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	MIMEType    string           `json:"mimeType,omitempty"`
	Size        int64            `json:"size,omitempty"`
	Annotations *sdk.Annotations `json:"annotations,omitempty"`
	Icons       []sdk.Icon       `json:"icons,omitempty"`
	Meta        sdk.Meta         `json:"_meta,omitempty"`
}

func newResourceJSON(r *sdk.Resource) resourceJSON {
	return resourceJSON{r.URI, r.Name, r.Title, r.Description, r.MIMEType, r.Size, r.Annotations, r.Icons, r.Meta}
}

// resourceTemplateJSON is a ResourceTemplate of resources/templates/list.
type resourceTemplateJSON struct {
	URITemplate string           `json:"uriTemplate"`
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	MIMEType    string           `json:"mimeType,omitempty"`
	Annotations *sdk.Annotations `json:"annotations,omitempty"`
	Icons       []sdk.Icon       `json:"icons,omitempty"`
	Meta        sdk.Meta         `json:"_meta,omitempty"`
}

func newResourceTemplateJSON(t *sdk.ResourceTemplate) resourceTemplateJSON {
	return resourceTemplateJSON{t.URITemplate, t.Name, t.Title, t.Description, t.MIMEType, t.Annotations, t.Icons, t.Meta}
}

// promptJSON is a Prompt of prompts/list.
type promptJSON struct {
	Name        string                `json:"name"`
	Title       string                `json:"title,omitempty"`
	Description string                `json:"description,omitempty"`
	Arguments   []*sdk.PromptArgument `json:"arguments,omitempty"`
	Icons       []sdk.Icon            `json:"icons,omitempty"`
	Meta        sdk.Meta              `json:"_meta,omitempty"`
}

func newPromptJSON(p *sdk.Prompt) promptJSON {
	return promptJSON{p.Name, p.Title, p.Description, p.Arguments, p.Icons, p.Meta}
}

// messageJSON is a PromptMessage or a SamplingMessage.
type messageJSON struct {
	Role    sdk.Role    `json:"role"`
	Content contentJSON `json:"content"`
}

// promptMessagesJSON converts a prompt's messages, whose roles must be
// user or assistant.
func promptMessagesJSON(ms []*sdk.PromptMessage) ([]messageJSON, error) {
	out := make([]messageJSON, len(ms))
	for i, m := range ms {
		if m == nil || m.Role != "user" && m.Role != "assistant" {
			return nil, fmt.Errorf("%w: a prompt message of role user or assistant is required", errContent)
		}
		out[i].Role = m.Role
		if err := out[i].Content.set(m.Content); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// encodeInputRequest encodes one inputRequests entry: its method and
// params.
func encodeInputRequest(req sdk.InputRequest) (method string, params []byte, err error) {
	switch p := req.(type) {
	case *sdk.ElicitParams:
		params, err = mount.Marshal(struct {
			Mode            string   `json:"mode"`
			Message         string   `json:"message"`
			RequestedSchema any      `json:"requestedSchema,omitempty"`
			URL             string   `json:"url,omitempty"`
			ElicitationID   string   `json:"elicitationId,omitempty"`
			Meta            sdk.Meta `json:"_meta,omitempty"`
		}{elicitMode(p), p.Message, p.RequestedSchema, p.URL, p.ElicitationID, p.Meta})
		return "elicitation/create", params, err
	case *sdk.CreateMessageParams:
		params, err = encodeSampling(p)
		return "sampling/createMessage", params, err
	case *sdk.CreateMessageWithToolsParams:
		params, err = mount.Marshal(p)
		return "sampling/createMessage", params, err
	case *sdk.ListRootsParams:
		params, err = mount.Marshal(p)
		return "roots/list", params, err
	}
	return "", nil, fmt.Errorf("%T is no input request an InputRequiredResult carries", req)
}

// encodeSampling encodes the params of a sampling/createMessage.
func encodeSampling(p *sdk.CreateMessageParams) ([]byte, error) {
	messages := make([]messageJSON, len(p.Messages))
	for i, m := range p.Messages {
		if m == nil {
			return nil, fmt.Errorf("%w: a nil sampling message", errContent)
		}
		messages[i].Role = m.Role
		if err := messages[i].Content.set(m.Content); err != nil {
			return nil, err
		}
	}
	return mount.Marshal(struct {
		Messages         []messageJSON         `json:"messages"`
		MaxTokens        int64                 `json:"maxTokens"`
		SystemPrompt     string                `json:"systemPrompt,omitempty"`
		Temperature      float64               `json:"temperature,omitempty"`
		StopSequences    []string              `json:"stopSequences,omitempty"`
		ModelPreferences *sdk.ModelPreferences `json:"modelPreferences,omitempty"`
		Metadata         any                   `json:"metadata,omitempty"`
		IncludeContext   string                `json:"includeContext,omitempty"`
		Meta             sdk.Meta              `json:"_meta,omitempty"`
	}{messages, p.MaxTokens, p.SystemPrompt, p.Temperature, p.StopSequences, p.ModelPreferences, p.Metadata, p.IncludeContext, p.Meta})
}

// encodeToolResult encodes a native tool's CallToolResult.
func encodeToolResult(res *ToolResult) ([]byte, error) {
	sc := bytes.TrimSpace(res.StructuredContent)
	if len(sc) > 0 && (sc[0] != '{' || !json.Valid(sc)) {
		return nil, errors.New("mcp/ext: structuredContent is not a JSON object")
	}
	content, err := contentsJSON(res.Content)
	if err != nil {
		return nil, err
	}
	return mount.Marshal(struct {
		ResultType        string          `json:"resultType"`
		Content           []contentJSON   `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
		IsError           bool            `json:"isError"`
	}{"complete", content, sc, res.IsError})
}

// toolError is a CallToolResult with isError true and one safe text.
func toolError(text string) ([]byte, error) {
	return encodeToolResult(&ToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}, IsError: true})
}
