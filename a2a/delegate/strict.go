package delegate

// Strict reading of what a peer sends (OpenWOP interop map, a2a.errors:
// a malformed peer response is InvalidAgentResponseError and never enters
// run state). encoding/json matches object keys to struct fields
// case-insensitively, with Unicode simple folding, so "ID", "Id" or
// "meſsageId" (long s) would land in a field as if spelled right. Before a
// result is decoded into an a2a-go type, one walk of its raw JSON refuses
// any key that folds to a member name of the A2A 1.0 JSON binding without
// being that name, and any duplicated key. Unknown members are otherwise
// ignored, as proto-JSON readers do. The peer's own keys — inside
// "metadata", a part's "data", an extension's "params", a signature's
// "header", the card's security declarations — are skipped unread.
//
// After the decode, check* functions require the members A2A 1.0 marks
// required (ids, states, parts) and refuse what the binding cannot mean
// (a part with no content, a task without an id), so an empty or partial
// object never passes for a real one.

import (
	"strings"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/internal/jsonbytes"
)

// maxDepth bounds the nesting a peer document may have outside the
// skipped subtrees; deeper documents are refused rather than walked.
const maxDepth = 64

// wireNames are the member names of the A2A 1.0 JSON binding that results
// and cards use, as a2a-go's wire types spell them (a2a/core.go,
// a2a/agent.go, a2a/push.go).
const wireNames = ",id,contextId,status,state,timestamp,message,messageId,role,parts,text,raw,url," +
	"filename,mediaType,taskId,referenceTaskIds,extensions,artifacts,artifactId,name,description," +
	"history,task,statusUpdate,artifactUpdate,append,lastChunk,artifact,tasks,totalSize,pageSize," +
	"nextPageToken,configs,tenant,authentication,token,credentials,scheme,supportedInterfaces," +
	"protocolBinding,protocolVersion,capabilities,streaming,pushNotifications,extendedAgentCard," +
	"defaultInputModes,defaultOutputModes,documentationUrl,iconUrl,provider,organization," +
	"signatures,protected,signature,skills,examples,inputModes,outputModes,tags,version,uri,required,"

// opaqueMember reports members whose value belongs to the sender: their
// keys are never judged.
func opaqueMember(name string) bool {
	switch name {
	case "metadata", "data", "params", "header", "securitySchemes", "securityRequirements":
		return true
	}
	return false
}

// foldKey is the key as encoding/json compares it: ASCII case folded, and
// the two non-ASCII runes that fold to ASCII letters (U+017F long s →
// 's', U+212A Kelvin sign → 'k').
func foldKey(k string) string {
	k = strings.ReplaceAll(k, "\u017f", "s")
	k = strings.ReplaceAll(k, "\u212a", "k")
	return strings.ToLower(k)
}

// foldedWireName reports whether k is not a wire member name but folds to
// one.
func foldedWireName(k string) bool {
	if strings.Contains(wireNames, ","+k+",") {
		return false
	}
	f := foldKey(k)
	for rest := wireNames[1:]; rest != ""; {
		i := strings.IndexByte(rest, ',')
		if foldKey(rest[:i]) == f {
			return true
		}
		rest = rest[i+1:]
	}
	return false
}

// checkKeys walks raw (valid JSON) and reports the first key that is
// duplicated in its object or folds to a wire name it is not; "" when
// there is none.
func checkKeys(raw []byte) string { return checkKeysAt(raw, 0) }

func checkKeysAt(raw []byte, depth int) string {
	raw = jsonbytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "empty value"
	}
	if depth > maxDepth {
		return "nested too deeply"
	}
	s := jsonbytes.Scanner{Data: raw}
	switch raw[0] {
	case '{':
		var seen []string
		problem := ""
		err := s.Members(func(name []byte, escaped bool, value []byte) error {
			if problem != "" {
				return nil
			}
			k, err := jsonbytes.Unquote(name, escaped)
			if err != nil {
				problem = "a malformed member name"
				return nil
			}
			for _, prev := range seen {
				if prev == k {
					problem = "a duplicated member"
					return nil
				}
			}
			seen = append(seen, k)
			if foldedWireName(k) {
				problem = "a member name in the wrong case"
				return nil
			}
			if !opaqueMember(k) {
				problem = checkKeysAt(value, depth+1)
			}
			return nil
		})
		if err != nil {
			return "malformed JSON"
		}
		return problem
	case '[':
		elems, err := s.Elements(1<<20, jsonbytes.ErrMalformed)
		if err != nil {
			return "malformed JSON"
		}
		for _, e := range elems {
			if p := checkKeysAt(e, depth+1); p != "" {
				return p
			}
		}
	}
	return ""
}

// The required-member checks. Each returns "" or what is missing, in the
// library's words.

func checkTask(t *wire.Task) string {
	switch {
	case t == nil:
		return "task is null"
	case t.ID == "":
		return "task without an id"
	case t.ContextID == "":
		return "task without a contextId"
	}
	if p := checkStatus(&t.Status); p != "" {
		return "task " + p
	}
	for _, a := range t.Artifacts {
		if p := checkArtifact(a); p != "" {
			return "task " + p
		}
	}
	for _, m := range t.History {
		if p := checkMessage(m); p != "" {
			return "task history " + p
		}
	}
	return ""
}

func checkStatus(s *wire.TaskStatus) string {
	if s.State == wire.TaskStateUnspecified {
		// An unknown state string is kept (the reverse projection reads it
		// with a warning); an absent or unspecified one is a missing
		// member.
		return "status without a state"
	}
	if s.Message != nil {
		if p := checkMessage(s.Message); p != "" {
			return "status " + p
		}
	}
	return ""
}

func checkMessage(m *wire.Message) string {
	switch {
	case m == nil:
		return "message is null"
	case m.ID == "":
		return "message without a messageId"
	case m.Role != wire.MessageRoleAgent && m.Role != wire.MessageRoleUser:
		return "message without a known role"
	case m.Parts == nil:
		return "message without parts"
	}
	return checkParts(m.Parts)
}

func checkParts(parts wire.ContentParts) string {
	for _, p := range parts {
		// a2a-go's Part decoder refuses a part with no or several contents;
		// a null element is left nil.
		if p == nil || p.Content == nil {
			return "part without content"
		}
	}
	return ""
}

func checkArtifact(a *wire.Artifact) string {
	switch {
	case a == nil:
		return "artifact is null"
	case a.ID == "":
		return "artifact without an artifactId"
	case a.Parts == nil:
		return "artifact without parts"
	}
	return checkParts(a.Parts)
}

func checkEvent(ev wire.Event) string {
	switch e := ev.(type) {
	case *wire.Task:
		return checkTask(e)
	case *wire.Message:
		return checkMessage(e)
	case *wire.TaskStatusUpdateEvent:
		switch {
		case e.TaskID == "":
			return "status update without a taskId"
		case e.ContextID == "":
			return "status update without a contextId"
		}
		if p := checkStatus(&e.Status); p != "" {
			return "status update " + p
		}
		return ""
	case *wire.TaskArtifactUpdateEvent:
		switch {
		case e.TaskID == "":
			return "artifact update without a taskId"
		case e.ContextID == "":
			return "artifact update without a contextId"
		}
		if p := checkArtifact(e.Artifact); p != "" {
			return "artifact update " + p
		}
		return ""
	}
	return "unknown event"
}

func checkPushConfig(c *wire.PushConfig) string {
	switch {
	case c == nil:
		return "push config is null"
	case c.TaskID == "":
		return "push config without a taskId"
	case c.URL == "":
		return "push config without a url"
	}
	return ""
}
