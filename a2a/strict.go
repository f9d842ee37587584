package a2a

// Case-sensitive member names (JSON member names are case-sensitive, and
// the A2A 1.0 proto-JSON names are exact). encoding/json matches object keys to struct fields
// case-insensitively, with Unicode simple folding: "ID", "Id" and even
// "meſsageId" (long s) or "pageToKen" (Kelvin sign) land in a field, so a
// request that spells a member wrongly would be served as if it were right.
// Before a binding decodes params into an a2a-go request type, it walks the
// raw JSON once and refuses any key that differs from a known member name
// only in case. Unknown members are otherwise ignored, as proto JSON readers
// do, and the opaque subtrees — every "metadata" value and a Part's "data"
// payload — are skipped unread: their keys belong to the sender
// (OpenWOP interop.md §The operation mappings).
//
// The same walk keeps where each message part's "data" value lies in the
// request, so the binding can hand the run those exact bytes (data.go):
// a2a-go decodes "data" into an any, which would turn every number into a
// float64 and every object into a map.
//
// The walker reads bytes in place (internal/jsonbytes): it allocates only
// for a key written with escapes, and it never recurses into a subtree it
// skips, so a deeply nested opaque value costs no stack.

import (
	"errors"
	"strconv"
	"strings"

	"github.com/wopinterop/wopinterop/internal/jsonbytes"
)

// shape names an object (or an array of objects) the binding decodes, so
// the walker knows which member names are known at each level.
type shape uint8

const (
	// shapeSkip is a scalar, an unknown member or an opaque subtree.
	shapeSkip shape = iota
	shapeSendMessageRequest
	shapeSendMessageConfig
	shapeMessage
	shapeParts // an array of shapePart
	shapePart
	shapePushConfig
	shapePushAuth
	shapeGetTaskRequest
	shapeListTasksRequest
	shapeCancelTaskRequest
	shapeSubscribeRequest
	shapeGetPushConfigRequest
	shapeListPushConfigsRequest
	shapeDeletePushConfigRequest
	shapeExtendedCardRequest
	// shapeData is a message part's "data" value: skipped unread like any
	// opaque subtree, and its span kept. It is only ever a child.
	shapeData
)

// names lists the member names of an object shape, comma-separated, exactly
// as the a2a-go wire types spell them in their json tags (a2a/core.go,
// a2a/push.go; Part members from its custom codec).
func (sh shape) names() string {
	switch sh {
	case shapeSendMessageRequest:
		return "tenant,configuration,message,metadata"
	case shapeSendMessageConfig:
		return "acceptedOutputModes,returnImmediately,historyLength,taskPushNotificationConfig"
	case shapeMessage:
		return "messageId,contextId,extensions,metadata,parts,referenceTaskIds,role,taskId"
	case shapePart:
		return "text,raw,data,url,filename,mediaType,metadata"
	case shapePushConfig:
		return "tenant,taskId,id,authentication,token,url"
	case shapePushAuth:
		return "credentials,scheme"
	case shapeGetTaskRequest:
		return "tenant,id,historyLength"
	case shapeListTasksRequest:
		return "tenant,contextId,status,pageSize,pageToken,historyLength,statusTimestampAfter,includeArtifacts"
	case shapeCancelTaskRequest:
		return "tenant,id,metadata"
	case shapeSubscribeRequest:
		return "tenant,id"
	case shapeGetPushConfigRequest, shapeDeletePushConfigRequest:
		return "tenant,taskId,id"
	case shapeListPushConfigsRequest:
		return "tenant,taskId,pageSize,pageToken"
	case shapeExtendedCardRequest:
		return "tenant"
	}
	return ""
}

// child is the shape of the value of the known member name of sh; members
// not listed are scalars or opaque ("metadata", a Part's "data").
func (sh shape) child(name string) shape {
	switch {
	case sh == shapeSendMessageRequest && name == "configuration":
		return shapeSendMessageConfig
	case sh == shapeSendMessageRequest && name == "message":
		return shapeMessage
	case sh == shapeSendMessageConfig && name == "taskPushNotificationConfig":
		return shapePushConfig
	case sh == shapeMessage && name == "parts":
		return shapeParts
	case sh == shapePushConfig && name == "authentication":
		return shapePushAuth
	case sh == shapePart && name == "data":
		return shapeData
	}
	return shapeSkip
}

// member returns the member of sh that name is exactly, as a substring of
// names() so that keeping it costs nothing.
func (sh shape) member(name string) (string, bool) {
	rest := sh.names()
	for rest != "" {
		var n string
		n, rest, _ = strings.Cut(rest, ",")
		if n == name {
			return n, true
		}
	}
	return "", false
}

// known reports whether name is exactly one of sh's members.
func (sh shape) known(name string) bool {
	_, ok := sh.member(name)
	return ok
}

// foldMatch returns the member of sh that name spells in another case, if
// any. strings.EqualFold folds exactly as encoding/json's field matching
// does (Unicode simple folding).
func (sh shape) foldMatch(name string) (string, bool) {
	rest := sh.names()
	for rest != "" {
		var n string
		n, rest, _ = strings.Cut(rest, ",")
		if n != name && strings.EqualFold(n, name) {
			return n, true
		}
	}
	return "", false
}

// errMalformedJSON is returned by the walker for input that is not JSON.
// The binding validates bodies first, so it only reaches fuzz tests.
var errMalformedJSON = jsonbytes.ErrMalformed

// caseMismatch reports a member whose name differs from a known one only in
// case. Field is the canonical path of that member ("message.parts[0].text").
type caseMismatch struct {
	Field string
}

func (e *caseMismatch) Error() string {
	return "a2a: member " + e.Field + " is spelled in another case"
}

// checkMemberCase walks data, a JSON value expected to have shape sh, and
// returns a *caseMismatch for the first key that is a known member name in
// another case, errMalformedJSON for input that is not JSON, or nil.
// Duplicate members are not refused: encoding/json keeps the last one, and
// so does the binding.
func checkMemberCase(data []byte, sh shape) error {
	w := walker{Scanner: jsonbytes.Scanner{Data: data}}
	return w.check(sh)
}

// check walks w.Data as a value of shape sh: checkMemberCase, keeping the
// data spans in w.spans.
func (w *walker) check(sh shape) error {
	if err := w.value(sh); err != nil {
		return err
	}
	w.Space()
	if w.Pos != len(w.Data) {
		return errMalformedJSON
	}
	return nil
}

// pathStep is one step of the path to the member being read: a member
// name, or an array index when name is "".
type pathStep struct {
	name  string
	index int
}

// maxPathDepth bounds the path the walker records. The shapes nest four
// levels at most (configuration.taskPushNotificationConfig.authentication,
// message.parts[i]); unknown and opaque subtrees are skipped, not walked.
const maxPathDepth = 8

// walker is a minimal JSON reader over a byte slice. The path to the
// current member is a fixed array rather than linked steps, so walking
// costs no allocation: it is rendered only for a refusal.
type walker struct {
	jsonbytes.Scanner
	path  [maxPathDepth]pathStep
	depth int
	// spans are the message parts' "data" values in the order read (a
	// duplicated member appears twice; the later one is the one
	// encoding/json keeps). They alias data.
	spans []dataSpan
}

// dataSpan is where the "data" value of message.parts[part] lies.
type dataSpan struct {
	part int
	raw  []byte
}

func (w *walker) push(name string, index int) {
	if w.depth < maxPathDepth {
		w.path[w.depth] = pathStep{name: name, index: index}
	}
	w.depth++
}

func (w *walker) pop() { w.depth-- }

// render is the canonical path of member last at the current position,
// e.g. "message.parts[0].text".
func (w *walker) render(last string) string {
	var b strings.Builder
	for _, s := range w.path[:min(w.depth, maxPathDepth)] {
		if s.name == "" {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(s.index))
			b.WriteByte(']')
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s.name)
	}
	if b.Len() > 0 {
		b.WriteByte('.')
	}
	b.WriteString(last)
	return b.String()
}

// value reads one value of shape sh at the current position.
func (w *walker) value(sh shape) error {
	w.Space()
	if w.Pos >= len(w.Data) {
		return errMalformedJSON
	}
	switch {
	case sh == shapeSkip:
		return w.Skip()
	case sh == shapeData:
		start := w.Pos
		if err := w.Skip(); err != nil {
			return err
		}
		// The path is message, parts[i], data: the part index is one step
		// up.
		if w.depth >= 2 && w.depth <= maxPathDepth {
			w.spans = append(w.spans, dataSpan{part: w.path[w.depth-2].index, raw: w.Data[start:w.Pos]})
		}
		return nil
	case sh == shapeParts && w.Data[w.Pos] == '[':
		return w.array(shapePart)
	case sh != shapeParts && w.Data[w.Pos] == '{':
		return w.object(sh)
	}
	// A value of the wrong JSON type: encoding/json reports it when
	// decoding; there are no member names in it to check.
	return w.Skip()
}

func (w *walker) array(elem shape) error {
	w.Pos++ // '['
	w.Space()
	if w.Pos < len(w.Data) && w.Data[w.Pos] == ']' {
		w.Pos++
		return nil
	}
	for i := 0; ; i++ {
		w.push("", i)
		err := w.value(elem)
		w.pop()
		if err != nil {
			return err
		}
		if done, err := w.Separator(']'); done || err != nil {
			return err
		}
	}
}

func (w *walker) object(sh shape) error {
	w.Pos++ // '{'
	w.Space()
	if w.Pos < len(w.Data) && w.Data[w.Pos] == '}' {
		w.Pos++
		return nil
	}
	for {
		w.Space()
		raw, escaped, err := w.String()
		if err != nil {
			return err
		}
		w.Space()
		if w.Pos >= len(w.Data) || w.Data[w.Pos] != ':' {
			return errMalformedJSON
		}
		w.Pos++
		// The key is compared in place; only a key written with escapes
		// is decoded (and allocated).
		var name string
		if escaped {
			if name, err = jsonbytes.Unquote(raw, true); err != nil {
				return err
			}
		}
		var canonical string
		var known bool
		if escaped {
			canonical, known = sh.member(name)
		} else {
			canonical, known = sh.member(string(raw))
		}
		child := shapeSkip
		switch {
		case known:
			child = sh.child(canonical)
		case escaped:
			if c, ok := sh.foldMatch(name); ok {
				return &caseMismatch{Field: w.render(c)}
			}
		default:
			if c, ok := sh.foldMatch(string(raw)); ok {
				return &caseMismatch{Field: w.render(c)}
			}
		}
		// The path holds canonical names only: unknown members are
		// skipped, never walked.
		w.push(canonical, 0)
		err = w.value(child)
		w.pop()
		if err != nil {
			return err
		}
		if done, err := w.Separator('}'); done || err != nil {
			return err
		}
	}
}

// memberCaseError turns a walker result into the binding's refusal: a
// *caseMismatch is an invalid-params error naming the canonical member.
func (t *errorTable) memberCaseError(err error) *Error {
	var cm *caseMismatch
	if errors.As(err, &cm) {
		return t.invalidParams(cm.Field, "member names are case-sensitive")
	}
	return t.invalidParams("", "params are not a JSON object")
}
