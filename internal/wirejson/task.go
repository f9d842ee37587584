// Package wirejson encodes the a2a-go wire types by appending: exactly
// the bytes encoding/json (HTML escaping on, as json.Marshal and
// json.Encoder write) produces for them, member order and omitempty
// included, without its reflection and without re-compacting what the
// wire types' MarshalJSON methods return. The A2A binding answers Tasks
// with it and the push worker encodes its StreamResponse bodies with it;
// FuzzAppendTask and FuzzAppendStreamResponse hold it to encoding/json
// byte for byte. Values typed any (metadata, data parts) are written here
// when they are JSON-shaped (appendAny) and by encoding/json otherwise.
package wirejson

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/internal/jsonbytes"
)

// AppendTask appends t as encoding/json encodes a wire.Task.
func AppendTask(dst []byte, t *wire.Task) ([]byte, error) {
	var err error
	dst = append(dst, `{"id":`...)
	dst = appendJSONString(dst, string(t.ID))
	if len(t.Artifacts) > 0 {
		dst = append(dst, `,"artifacts":[`...)
		for i, a := range t.Artifacts {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = appendArtifact(dst, a); err != nil {
				return dst, err
			}
		}
		dst = append(dst, ']')
	}
	dst = append(dst, `,"contextId":`...)
	dst = appendJSONString(dst, t.ContextID)
	if len(t.History) > 0 {
		dst = append(dst, `,"history":[`...)
		for i, m := range t.History {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = appendMessage(dst, m); err != nil {
				return dst, err
			}
		}
		dst = append(dst, ']')
	}
	if dst, err = appendMetadata(dst, t.Metadata); err != nil {
		return dst, err
	}
	dst = append(dst, `,"status":`...)
	if dst, err = appendStatus(dst, &t.Status); err != nil {
		return dst, err
	}
	return append(dst, '}'), nil
}

// appendStatus appends s as encoding/json encodes a wire.TaskStatus.
func appendStatus(dst []byte, s *wire.TaskStatus) ([]byte, error) {
	var err error
	dst = append(dst, '{')
	if m := s.Message; m != nil {
		dst = append(dst, `"message":`...)
		if dst, err = appendMessage(dst, m); err != nil {
			return dst, err
		}
		dst = append(dst, ',')
	}
	dst = append(dst, `"state":`...)
	dst = appendJSONString(dst, s.State.String())
	if ts := s.Timestamp; ts != nil {
		dst = append(dst, `,"timestamp":`...)
		if dst, err = appendTime(dst, *ts); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

// appendMessage appends m as encoding/json encodes a *wire.Message.
func appendMessage(dst []byte, m *wire.Message) ([]byte, error) {
	if m == nil {
		return append(dst, "null"...), nil
	}
	var err error
	dst = append(dst, `{"messageId":`...)
	dst = appendJSONString(dst, m.ID)
	if m.ContextID != "" {
		dst = append(dst, `,"contextId":`...)
		dst = appendJSONString(dst, m.ContextID)
	}
	dst = appendStrings(dst, `,"extensions":`, m.Extensions)
	if dst, err = appendMetadata(dst, m.Metadata); err != nil {
		return dst, err
	}
	dst = append(dst, `,"parts":`...)
	if dst, err = appendParts(dst, m.Parts); err != nil {
		return dst, err
	}
	if len(m.ReferenceTasks) > 0 {
		dst = append(dst, `,"referenceTaskIds":[`...)
		for i, id := range m.ReferenceTasks {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, string(id))
		}
		dst = append(dst, ']')
	}
	dst = append(dst, `,"role":`...)
	dst = appendJSONString(dst, m.Role.String())
	if m.TaskID != "" {
		dst = append(dst, `,"taskId":`...)
		dst = appendJSONString(dst, string(m.TaskID))
	}
	return append(dst, '}'), nil
}

// appendArtifact appends a as encoding/json encodes a *wire.Artifact.
func appendArtifact(dst []byte, a *wire.Artifact) ([]byte, error) {
	if a == nil {
		return append(dst, "null"...), nil
	}
	var err error
	dst = append(dst, `{"artifactId":`...)
	dst = appendJSONString(dst, string(a.ID))
	if a.Description != "" {
		dst = append(dst, `,"description":`...)
		dst = appendJSONString(dst, a.Description)
	}
	dst = appendStrings(dst, `,"extensions":`, a.Extensions)
	if dst, err = appendMetadata(dst, a.Metadata); err != nil {
		return dst, err
	}
	if a.Name != "" {
		dst = append(dst, `,"name":`...)
		dst = appendJSONString(dst, a.Name)
	}
	dst = append(dst, `,"parts":`...)
	if dst, err = appendParts(dst, a.Parts); err != nil {
		return dst, err
	}
	return append(dst, '}'), nil
}

// appendParts appends parts as wire.ContentParts.MarshalJSON does (nil is
// null).
func appendParts(dst []byte, parts wire.ContentParts) ([]byte, error) {
	if parts == nil {
		return append(dst, "null"...), nil
	}
	dst = append(dst, '[')
	var err error
	for i, p := range parts {
		if i > 0 {
			dst = append(dst, ',')
		}
		if dst, err = appendPart(dst, p); err != nil {
			return dst, err
		}
	}
	return append(dst, ']'), nil
}

// appendPart appends p as wire.Part.MarshalJSON does: the content flattened
// into the member naming its kind (A2A specification §4.1.6 Part).
func appendPart(dst []byte, p *wire.Part) ([]byte, error) {
	if p == nil {
		return append(dst, "null"...), nil
	}
	start := len(dst)
	dst = append(dst, '{')
	var err error
	switch v := p.Content.(type) {
	case wire.Text:
		dst = append(dst, `"text":`...)
		dst = appendJSONString(dst, string(v))
	case wire.Raw:
		dst = append(dst, `"raw":`...)
		if v == nil {
			dst = append(dst, "null"...)
		} else {
			dst = append(dst, '"')
			dst = base64.StdEncoding.AppendEncode(dst, v)
			dst = append(dst, '"')
		}
	case wire.Data:
		dst = append(dst, `"data":`...)
		if dst, err = appendAny(dst, v.Value); err != nil {
			return dst, err
		}
	case wire.URL:
		if v != "" {
			dst = append(dst, `"url":`...)
			dst = appendJSONString(dst, string(v))
		}
	}
	if p.Filename != "" {
		dst = appendSeparator(dst, start)
		dst = append(dst, `"filename":`...)
		dst = appendJSONString(dst, p.Filename)
	}
	if p.MediaType != "" {
		dst = appendSeparator(dst, start)
		dst = append(dst, `"mediaType":`...)
		dst = appendJSONString(dst, p.MediaType)
	}
	if len(p.Metadata) > 0 {
		dst = appendSeparator(dst, start)
		dst = append(dst, `"metadata":`...)
		if dst, err = appendAny(dst, p.Metadata); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

// appendSeparator appends the comma before a member of the object opened
// at start, unless it is the first.
func appendSeparator(dst []byte, start int) []byte {
	if len(dst) > start+1 {
		dst = append(dst, ',')
	}
	return dst
}

// appendMetadata appends `,"metadata":{…}` when m has members.
func appendMetadata(dst []byte, m map[string]any) ([]byte, error) {
	if len(m) == 0 {
		return dst, nil
	}
	dst = append(dst, `,"metadata":`...)
	return appendAny(dst, m)
}

// appendStrings appends member and list when list has elements.
func appendStrings(dst []byte, member string, list []string) []byte {
	if len(list) == 0 {
		return dst
	}
	dst = append(dst, member...)
	dst = append(dst, '[')
	for i, s := range list {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, s)
	}
	return append(dst, ']')
}

// appendTime appends t as time.Time.MarshalJSON does (RFC 3339, refusing
// what RFC 3339 cannot write).
func appendTime(dst []byte, t time.Time) ([]byte, error) {
	dst = append(dst, '"')
	dst, err := t.AppendText(dst)
	if err != nil {
		return dst, fmt.Errorf("encode timestamp: %w", err)
	}
	return append(dst, '"'), nil
}

// appendAny appends v as encoding/json encodes it. Strings, booleans,
// null, objects and arrays of those, and a json.RawMessage that is already
// compact and holds nothing the encoder escapes (the usual data part: the
// host's validated output) are appended here; anything else (numbers,
// structs, other types) is encoding/json's.
func appendAny(dst []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case string:
		return appendJSONString(dst, v), nil
	case bool:
		return strconv.AppendBool(dst, v), nil
	case map[string]any:
		return appendObject(dst, v)
	case []any:
		if v == nil {
			return append(dst, "null"...), nil
		}
		dst = append(dst, '[')
		var err error
		for i, e := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = appendAny(dst, e); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	case json.RawMessage:
		if v != nil && verbatim(v) {
			return append(dst, v...), nil
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

// appendObject appends m with its members sorted by name, as encoding/json
// orders a map's keys.
func appendObject(dst []byte, m map[string]any) ([]byte, error) {
	if m == nil {
		return append(dst, "null"...), nil
	}
	keys := make([]string, 0, 8) // on the stack for the usual small map
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	dst = append(dst, '{')
	var err error
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(appendJSONString(dst, k), ':')
		if dst, err = appendAny(dst, m[k]); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

// verbatim reports whether encoding/json writes raw unchanged: valid JSON
// with no whitespace to compact away and no '<', '>', '&' or U+2028/U+2029
// (first byte 0xE2) to escape.
func verbatim(raw []byte) bool {
	if len(raw) == 0 {
		return false
	}
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\n', '\r', '<', '>', '&', 0xE2:
			return false
		}
	}
	return json.Valid(raw)
}

// appendJSONString appends s as a JSON string exactly as encoding/json
// writes it (HTML escaping on).
func appendJSONString(dst []byte, s string) []byte { return jsonbytes.AppendString(dst, s, true) }
