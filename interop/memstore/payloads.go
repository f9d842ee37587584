package memstore

import (
	"slices"

	"github.com/wopinterop/wopinterop/internal/jsonbytes"
	"github.com/wopinterop/wopinterop/interop"
)

// appendPayload appends the JSON of the payloads every run writes —
// run.started and artifact.created, strings only, and run.completed with
// outputs json.Marshal would copy unchanged — byte for byte as
// json.Marshal encodes them (HTML-escaped strings, members in field
// order, omitempty honoured), without reflection. Any other payload is
// nil: json.Marshal encodes it.
func appendPayload(dst []byte, payload any) []byte {
	switch p := payload.(type) {
	case interop.RunStarted:
		if len(p.Inputs) > 0 {
			return nil
		}
		dst = slices.Grow(dst, len(`{"workflowId":"","transport":""}`)+len(p.WorkflowID)+len(p.Transport))
		dst = append(dst, `{"workflowId":`...)
		dst = jsonbytes.AppendString(dst, p.WorkflowID, true)
		if p.Transport != "" {
			dst = append(dst, `,"transport":`...)
			dst = jsonbytes.AppendString(dst, string(p.Transport), true)
		}
		return append(dst, '}')
	case interop.ArtifactCreated:
		dst = slices.Grow(dst, 96+len(p.ArtifactID)+len(p.ArtifactType)+len(p.NodeID)+len(p.Summary))
		dst = append(dst, `{"artifactId":`...)
		dst = jsonbytes.AppendString(dst, p.ArtifactID, true)
		dst = append(dst, `,"artifactType":`...)
		dst = jsonbytes.AppendString(dst, p.ArtifactType, true)
		if p.NodeID != "" {
			dst = append(dst, `,"nodeId":`...)
			dst = jsonbytes.AppendString(dst, p.NodeID, true)
		}
		if p.Summary != "" {
			dst = append(dst, `,"summary":`...)
			dst = jsonbytes.AppendString(dst, p.Summary, true)
		}
		switch {
		case p.Registered == nil:
		case *p.Registered:
			dst = append(dst, `,"registered":true`...)
		default:
			dst = append(dst, `,"registered":false`...)
		}
		return append(dst, '}')
	case interop.RunCompleted:
		if !verbatimJSON(p.Outputs) {
			return nil
		}
		dst = slices.Grow(dst, len(`{"outputs":}`)+len(p.Outputs))
		dst = append(dst, `{"outputs":`...)
		dst = append(dst, p.Outputs...)
		return append(dst, '}')
	}
	return nil
}

// verbatimJSON reports whether json.Marshal copies raw, a
// json.RawMessage, unchanged: it is valid, compact, and holds nothing
// json.Marshal escapes (<, >, &, U+2028 and U+2029, whose UTF-8 starts
// with 0xE2; any 0xE2 is left to json.Marshal).
func verbatimJSON(raw []byte) bool {
	inString := false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case c == '<' || c == '>' || c == '&' || c == 0xE2:
			return false
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case !inString && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return false
		}
	}
	return len(raw) > 0 && jsonbytes.Valid(raw)
}
