package memstore

import (
	"github.com/wopinterop/wopinterop/internal/jsonbytes"
	"github.com/wopinterop/wopinterop/interop"
)

// appendPayload appends the JSON of the payloads every run writes —
// run.started and artifact.created, strings only — byte for byte as
// json.Marshal encodes them (HTML-escaped strings, members in field
// order, omitempty honoured), without reflection. Any other payload is
// nil: json.Marshal encodes it.
func appendPayload(dst []byte, payload any) []byte {
	switch p := payload.(type) {
	case interop.RunStarted:
		if len(p.Inputs) > 0 {
			return nil
		}
		dst = append(dst, `{"workflowId":`...)
		dst = jsonbytes.AppendString(dst, p.WorkflowID, true)
		if p.Transport != "" {
			dst = append(dst, `,"transport":`...)
			dst = jsonbytes.AppendString(dst, string(p.Transport), true)
		}
		return append(dst, '}')
	case interop.ArtifactCreated:
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
	}
	return nil
}
