package wirejson

import (
	"fmt"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
)

// AppendStreamResponse appends ev as encoding/json encodes
// wire.StreamResponse{Event: ev}: an object with the one member that
// names the event's kind (A2A §3.2.3 StreamResponse), e.g.
// {"statusUpdate":{…}}. A nil event of a known kind is "{}", as the
// wire type's omitempty members make it; an unknown kind is an error.
func AppendStreamResponse(dst []byte, ev wire.Event) ([]byte, error) {
	var err error
	switch e := ev.(type) {
	case *wire.TaskStatusUpdateEvent:
		if e == nil {
			break
		}
		dst = append(dst, `{"statusUpdate":{"contextId":`...)
		dst = appendJSONString(dst, e.ContextID)
		dst = append(dst, `,"status":`...)
		if dst, err = appendStatus(dst, &e.Status); err != nil {
			return dst, err
		}
		dst = append(dst, `,"taskId":`...)
		dst = appendJSONString(dst, string(e.TaskID))
		if dst, err = appendMetadata(dst, e.Metadata); err != nil {
			return dst, err
		}
		return append(dst, "}}"...), nil
	case *wire.TaskArtifactUpdateEvent:
		if e == nil {
			break
		}
		dst = append(dst, `{"artifactUpdate":{`...)
		if e.Append {
			dst = append(dst, `"append":true,`...)
		}
		dst = append(dst, `"artifact":`...)
		if dst, err = appendArtifact(dst, e.Artifact); err != nil {
			return dst, err
		}
		dst = append(dst, `,"contextId":`...)
		dst = appendJSONString(dst, e.ContextID)
		if e.LastChunk {
			dst = append(dst, `,"lastChunk":true`...)
		}
		dst = append(dst, `,"taskId":`...)
		dst = appendJSONString(dst, string(e.TaskID))
		if dst, err = appendMetadata(dst, e.Metadata); err != nil {
			return dst, err
		}
		return append(dst, "}}"...), nil
	case *wire.Task:
		if e == nil {
			break
		}
		dst = append(dst, `{"task":`...)
		if dst, err = AppendTask(dst, e); err != nil {
			return dst, err
		}
		return append(dst, '}'), nil
	case *wire.Message:
		if e == nil {
			break
		}
		dst = append(dst, `{"message":`...)
		if dst, err = appendMessage(dst, e); err != nil {
			return dst, err
		}
		return append(dst, '}'), nil
	default:
		return dst, fmt.Errorf("unknown event type: %T", ev)
	}
	return append(dst, "{}"...), nil
}
