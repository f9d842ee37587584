package delegate

// The JSON-RPC 2.0 codec of the client side (JSON-RPC 2.0 §4–§5; A2A 1.0
// §9, the JSON-RPC binding): the request envelope written by hand, and the
// response read strictly — exact member names, our id echoed, exactly one
// of result and error — with a peer's error identified by code or ErrorInfo
// reason whatever shape its data has (an array of google.rpc details, or a
// legacy object with a reason; OpenWOP RFC 0211 §F).

import (
	"bytes"
	"encoding/json"
	"strings"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/internal/jsonbytes"
	"github.com/wopinterop/wopinterop/internal/version"
)

// appendRequest appends the request envelope
//
//	{"jsonrpc":"2.0","id":<id>,"method":<method>,"params":<params>}
//
// params is a JSON object already encoded.
func appendRequest(dst []byte, id, method string, params []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = jsonbytes.AppendString(dst, id, true)
	dst = append(dst, `,"method":`...)
	dst = jsonbytes.AppendString(dst, method, true)
	dst = append(dst, `,"params":`...)
	dst = append(dst, params...)
	return append(dst, '}')
}

// members returns the members of the JSON object raw by their exact
// (unescaped) names; ok is false when raw is not an object or names a
// member twice, which a strict reader cannot resolve.
func members(raw []byte) (map[string][]byte, bool) {
	raw = jsonbytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, false
	}
	out := map[string][]byte{}
	ok := true
	s := jsonbytes.Scanner{Data: raw}
	err := s.Members(func(name []byte, escaped bool, value []byte) error {
		k, err := jsonbytes.Unquote(name, escaped)
		if err != nil {
			return err
		}
		if _, dup := out[k]; dup {
			ok = false
		}
		out[k] = value
		return nil
	})
	if err != nil || !ok {
		return nil, false
	}
	s.Space()
	return out, s.Pos == len(raw)
}

func isNull(raw []byte) bool { return bytes.Equal(jsonbytes.TrimSpace(raw), []byte("null")) }

// decodeResponse reads one JSON-RPC response to the request with id
// wantID: its result (nil when the response has none), or the peer's
// error as a *PeerError, or an *InvalidResponseError.
func decodeResponse(body []byte, wantID string) ([]byte, error) {
	if !json.Valid(body) {
		return nil, invalid("the response is not JSON")
	}
	m, ok := members(body)
	if !ok {
		return nil, invalid("the response is not a JSON-RPC response object")
	}
	if v, ok := m["jsonrpc"]; !ok || !bytes.Equal(jsonbytes.TrimSpace(v), []byte(`"2.0"`)) {
		return nil, invalid(`the response does not say "jsonrpc": "2.0"`)
	}
	result, hasResult := m["result"]
	errObj, hasError := m["error"]
	if hasError && isNull(errObj) {
		hasError = false
	}
	if hasResult && hasError {
		return nil, invalid("the response has both a result and an error")
	}
	id, hasID := m["id"]
	if !hasID {
		return nil, invalid("the response has no id")
	}
	// An error may carry a null id: the peer could not read ours
	// (JSON-RPC 2.0 §5).
	if !(hasError && isNull(id)) && !idIs(id, wantID) {
		return nil, invalid("the response's id is not the request's")
	}
	if hasError {
		return nil, decodeError(errObj)
	}
	if !hasResult {
		return nil, nil
	}
	return jsonbytes.TrimSpace(result), nil
}

func idIs(raw []byte, want string) bool {
	c, escaped := jsonbytes.StringContents(jsonbytes.TrimSpace(raw))
	return jsonbytes.StringIs(c, escaped, want)
}

// decodeError reads a JSON-RPC error object into a *PeerError. Only the
// code, the ErrorInfo reason and a -32009's supported versions are read;
// the message and every other detail are dropped unread, so nothing the
// peer wrote can reach a message, a log or run state.
func decodeError(raw []byte) error {
	m, ok := members(raw)
	if !ok {
		return invalid("the error is not an object")
	}
	var code json.Number
	dec := json.NewDecoder(bytes.NewReader(m["code"]))
	dec.UseNumber()
	if err := dec.Decode(&code); err != nil {
		return invalid("the error has no numeric code")
	}
	n, err := code.Int64()
	if err != nil || n < -1<<31 || n > 1<<31-1 {
		return invalid("the error code is not an integer")
	}
	reason, supported := errorData(m["data"])
	e := &PeerError{Code: int(n)}
	if validReason(reason) {
		e.Reason = reason
	}
	e.Code, e.kind = classify(int(n), e.Reason)
	if e.kind == wire.ErrVersionNotSupported {
		e.SupportedVersions = supported
	}
	return e
}

// errorData reads the reason and the supported versions out of an
// error's data: an array of google.rpc details whose ErrorInfo carries
// them (A2A 1.0 §9.4; OpenWOP RFC 0211 §A), or a legacy object with a
// reason (and, for -32009, supportedVersions) of its own. Anything else
// is ignored: data is the peer's, and an error without it is still an
// error.
func errorData(raw []byte) (reason string, supported []string) {
	raw = jsonbytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "", nil
	}
	switch raw[0] {
	case '[':
		s := jsonbytes.Scanner{Data: raw}
		elems, err := s.Elements(64, jsonbytes.ErrMalformed)
		if err != nil {
			return "", nil
		}
		for _, el := range elems {
			m, ok := members(el)
			if !ok {
				continue
			}
			var typ string
			if json.Unmarshal(m["@type"], &typ) != nil || !strings.HasSuffix(typ, "google.rpc.ErrorInfo") {
				continue
			}
			_ = json.Unmarshal(m["reason"], &reason)
			return reason, supportedVersions(m["metadata"])
		}
	case '{':
		m, ok := members(raw)
		if !ok {
			return "", nil
		}
		_ = json.Unmarshal(m["reason"], &reason)
		if sv, ok := m["supportedVersions"]; ok {
			return reason, versionList(sv)
		}
		return reason, supportedVersions(m["metadata"])
	}
	return "", nil
}

// supportedVersions reads metadata.supportedVersions, whatever else the
// metadata holds (values of any type are tolerated; OpenWOP RFC 0211 §F).
func supportedVersions(metadata []byte) []string {
	m, ok := members(metadata)
	if !ok {
		return nil
	}
	return versionList(m["supportedVersions"])
}

// versionList reads a comma-joined string ("1.0,1.1", A2A 1.0 §3.6.2) or
// an array of strings, keeping only well-formed A2A versions: nothing
// else the peer wrote there travels on.
func versionList(raw []byte) []string {
	var items []string
	var joined string
	if json.Unmarshal(raw, &joined) == nil {
		return splitVersions(joined)
	} else if json.Unmarshal(raw, &items) != nil {
		return nil
	}
	return keepVersions(items)
}

// splitVersions reads a comma-joined list of versions.
func splitVersions(joined string) []string { return keepVersions(strings.Split(joined, ",")) }

func keepVersions(items []string) []string {
	var out []string
	for _, it := range items {
		if v, ok := version.A2A(strings.TrimSpace(it)); ok {
			out = append(out, v)
		}
	}
	return out
}

// The result decoders: checkKeys, then encoding/json into the a2a-go
// type, then the required members.

func decodeStrict(raw []byte, v any, what string) error {
	if raw == nil || isNull(raw) {
		return invalid("the result is not " + what)
	}
	if p := checkKeys(raw); p != "" {
		return invalid("the result has " + p)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return invalid("the result is not " + what)
	}
	return nil
}

func decodeTask(raw []byte) (*wire.Task, error) {
	var t wire.Task
	if err := decodeStrict(raw, &t, "a Task"); err != nil {
		return nil, err
	}
	if p := checkTask(&t); p != "" {
		return nil, invalid(p)
	}
	return &t, nil
}

// eventKind names the members a StreamResponse (A2A 1.0 §3.2.3) may hold,
// exactly one at a time.
type eventKind uint8

const (
	kindTask eventKind = 1 << iota
	kindMessage
	kindStatusUpdate
	kindArtifactUpdate
)

// sendResult are the kinds a SendMessage result may be; every kind may
// arrive on a stream.
const (
	sendResult  = kindTask | kindMessage
	streamEvent = kindTask | kindMessage | kindStatusUpdate | kindArtifactUpdate
)

// decodeEvent reads a StreamResponse-shaped result: one member, of a kind
// allowed; an unknown or second member is an unknown result kind.
func decodeEvent(raw []byte, allowed eventKind) (wire.Event, error) {
	if p := checkKeys(raw); p != "" {
		return nil, invalid("the result has " + p)
	}
	m, ok := members(raw)
	if !ok || len(m) != 1 {
		return nil, invalid("the result is not exactly one of task, message, statusUpdate, artifactUpdate")
	}
	var ev wire.Event
	var val []byte
	for name, v := range m {
		val = v
		switch {
		case name == "task" && allowed&kindTask != 0:
			ev = &wire.Task{}
		case name == "message" && allowed&kindMessage != 0:
			ev = &wire.Message{}
		case name == "statusUpdate" && allowed&kindStatusUpdate != 0:
			ev = &wire.TaskStatusUpdateEvent{}
		case name == "artifactUpdate" && allowed&kindArtifactUpdate != 0:
			ev = &wire.TaskArtifactUpdateEvent{}
		default:
			return nil, invalid("the result is of an unknown or unexpected kind")
		}
	}
	if isNull(val) || json.Unmarshal(val, ev) != nil {
		return nil, invalid("the result's event is malformed")
	}
	if p := checkEvent(ev); p != "" {
		return nil, invalid(p)
	}
	return ev, nil
}
