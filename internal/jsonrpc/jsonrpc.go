// Package jsonrpc is the JSON-RPC 2.0 codec of both protocol surfaces
// (JSON-RPC 2.0 §4–§6): it reads request objects in place — member names
// exact, the id's forms, notifications, batches split without decoding —
// and writes response envelopes by hand, so that a result is encoded once
// into the response and an error needs no encoder at all.
//
// What differs between the surfaces is passed in, never decided here: A2A
// accepts a null id and refuses an envelope member spelled in another
// case; MCP ids are never null. Each surface turns a [Problem] into its
// own refusal text, writes its own error data (A2A a google.rpc detail
// array, MCP a data object) between [AppendErrorStart] and
// [AppendErrorEnd], and maps errors to HTTP statuses itself.
package jsonrpc

import (
	"bytes"
	"errors"
	"strconv"

	"github.com/wopinterop/wopinterop/internal/jsonbytes"
)

// The codes JSON-RPC 2.0 §5.1 reserves.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// Rules are what a surface allows of a request object.
type Rules struct {
	// NullID accepts "id": null as an id (JSON-RPC 2.0 §4). A request with
	// a null id is answered, not treated as a notification.
	NullID bool
	// RefuseFolded refuses an envelope member spelled in another case
	// ("Method", "ID"), which a case-insensitive reader would take for
	// the member: JSON-RPC member names are case-sensitive.
	RefuseFolded bool
}

// Problem is why a request object is refused; the surface words it.
type Problem uint8

// Problems, in the order they are judged.
const (
	OK Problem = iota
	// NotJSON: the object could not be read (only input that is not valid
	// JSON reaches it).
	NotJSON
	// BadID: "id" is not a string, a number or (when allowed) null.
	BadID
	// FoldedMember: an envelope member is spelled in another case.
	FoldedMember
	// BadVersion: "jsonrpc" is not the string "2.0".
	BadVersion
	// BadMethod: "method" is absent or not a string.
	BadMethod
	// BadParams: "params" is neither an object, null nor absent.
	BadParams
)

// Request is one request object read in place: its slices alias the body.
type Request struct {
	// ID is the raw JSON id; nil when absent (a notification). It is set
	// on a refusal too once it was found valid, so the error can echo it.
	ID []byte
	// Method is the raw contents of the method string; MethodEscaped
	// tells whether they hold escapes ([Request.MethodName] decodes them).
	Method        []byte
	MethodEscaped bool
	// Params is the params object; nil when absent or null.
	Params []byte
}

// Notification reports a request without an id (JSON-RPC 2.0 §4.1).
func (q *Request) Notification() bool { return q.ID == nil }

// MethodName is the method as a Go string, escapes decoded.
func (q *Request) MethodName() string {
	name, _ := jsonbytes.Unquote(q.Method, q.MethodEscaped)
	return name
}

// envelope is what a request object says, before it is judged.
type envelope struct {
	version, method, params, id []byte
	versionEsc, methodEsc       bool
	hasVersion, hasMethod       bool
	hasID                       bool
	folded                      bool
}

// Parse reads one request object (raw is valid JSON starting with '{')
// under rules. Unknown members are ignored; a duplicated member counts
// once, the last one, as encoding/json would read it.
func Parse(raw []byte, rules Rules) (Request, Problem) {
	var env envelope
	sc := jsonbytes.Scanner{Data: raw}
	err := sc.Members(func(name []byte, escaped bool, val []byte) error {
		if escaped {
			n, err := jsonbytes.Unquote(name, true)
			if err != nil {
				return err
			}
			name = []byte(n)
		}
		env.member(name, val, rules.RefuseFolded)
		return nil
	})
	if err != nil {
		return Request{}, NotJSON
	}
	return env.judge(rules)
}

// member records one member; a later one of the same name replaces it.
func (env *envelope) member(name, val []byte, foldCheck bool) {
	switch string(name) {
	case "jsonrpc":
		env.hasVersion = true
		env.version, env.versionEsc = jsonbytes.StringContents(val)
	case "id":
		env.hasID, env.id = true, val
	case "method":
		env.hasMethod = true
		env.method, env.methodEsc = jsonbytes.StringContents(val)
	case "params":
		env.params = val
	default:
		if foldCheck && folded(name) {
			env.folded = true
		}
	}
}

// folded reports an envelope member spelled in another case, folding as
// encoding/json does (Unicode simple folding).
func folded(name []byte) bool {
	for _, n := range [...]string{"jsonrpc", "id", "method", "params"} {
		if bytes.EqualFold([]byte(n), name) {
			return true
		}
	}
	return false
}

// judge turns what the object said into a request, or its problem.
func (env *envelope) judge(rules Rules) (Request, Problem) {
	var q Request
	if env.hasID {
		if !ValidID(env.id, rules.NullID) {
			return q, BadID
		}
		q.ID = env.id
	}
	params := env.params
	switch {
	case env.folded:
		return q, FoldedMember
	case !env.hasVersion || !jsonbytes.StringIs(env.version, env.versionEsc, "2.0"):
		return q, BadVersion
	case !env.hasMethod || env.method == nil:
		return q, BadMethod
	case params != nil && params[0] != '{' && !bytes.Equal(params, null):
		return q, BadParams
	}
	if params != nil && params[0] == '{' {
		q.Params = params
	}
	q.Method, q.MethodEscaped = env.method, env.methodEsc
	return q, OK
}

var null = []byte("null")

// ValidID reports whether raw is a JSON-RPC id: a string or a number, or
// null when nullOK.
func ValidID(raw []byte, nullOK bool) bool {
	if len(raw) == 0 {
		return false
	}
	switch c := raw[0]; {
	case c == '"', c == '-', '0' <= c && c <= '9':
		return jsonbytes.Valid(raw)
	}
	return nullOK && bytes.Equal(raw, null)
}

// ErrBatchTooLarge reports a batch of more elements than allowed.
var ErrBatchTooLarge = errors.New("jsonrpc: batch too large")

// SplitBatch returns the raw elements of a batch (raw is valid JSON
// starting with '['; JSON-RPC 2.0 §6), or ErrBatchTooLarge as soon as it
// finds more than max of them. A surface that serves no batches never
// calls it.
func SplitBatch(raw []byte, max int) ([][]byte, error) {
	sc := jsonbytes.Scanner{Data: raw}
	return sc.Elements(max, ErrBatchTooLarge)
}

// IDForm is how a response names a request whose id is unknown.
type IDForm uint8

const (
	// NullID writes "id":null (JSON-RPC 2.0 §5).
	NullID IDForm = iota
	// OmitID leaves the id member out, as MCP allows.
	OmitID
)

// AppendResultStart appends the head of a success response,
//
//	{"jsonrpc":"2.0","id":<id>,"result":
//
// after which the caller appends the result value and a closing '}'.
func AppendResultStart(dst, id []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id...)
	return append(dst, `,"result":`...)
}

// AppendErrorStart appends the head of an error response up to its
// message (JSON-RPC 2.0 §5.1),
//
//	{"jsonrpc":"2.0","id":<id>,"error":{"code":<code>,"message":<message>
//
// with an unknown (nil) id written as form says and the message escaped
// as encoding/json does (escapeHTML as json.Marshal; without it as an
// Encoder with SetEscapeHTML(false)). The caller may append a data member
// (`,"data":…`), then [AppendErrorEnd].
func AppendErrorStart(dst, id []byte, form IDForm, code int, message string, escapeHTML bool) []byte {
	dst = append(dst, `{"jsonrpc":"2.0",`...)
	switch {
	case id != nil:
		dst = append(dst, `"id":`...)
		dst = append(dst, id...)
		dst = append(dst, ',')
	case form == NullID:
		dst = append(dst, `"id":null,`...)
	}
	dst = append(dst, `"error":{"code":`...)
	dst = strconv.AppendInt(dst, int64(code), 10)
	dst = append(dst, `,"message":`...)
	return jsonbytes.AppendString(dst, message, escapeHTML)
}

// AppendErrorEnd closes an error response begun with AppendErrorStart.
func AppendErrorEnd(dst []byte) []byte { return append(dst, "}}"...) }

// AppendNotification appends a notification with params, an encoded JSON
// object: {"jsonrpc":"2.0","method":<method>,"params":<params>}.
func AppendNotification(dst []byte, method string, params []byte, escapeHTML bool) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","method":`...)
	dst = jsonbytes.AppendString(dst, method, escapeHTML)
	dst = append(dst, `,"params":`...)
	dst = append(dst, params...)
	return append(dst, '}')
}
