// Package schemacheck validates a JSON document against a compiled JSON
// Schema and describes the first failure the way the library reports it
// to callers: the JSON pointer of the offending value and the validator's
// short keyword text, never a schema URL or location. memstore (run
// inputs, resume values), the MCP mount (tool arguments) and the A2A
// surface (SendMessage inputs) share it; the last two also share a
// [Cache] of compiled input schemas.
package schemacheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/wopinterop/wopinterop/internal/jsonbytes"
)

// Failure describes why a document was refused.
type Failure struct {
	// Malformed is set when the document is not JSON at all.
	Malformed bool
	// Pointer is the JSON pointer of the first failing value ("/delayMs"),
	// "" for the document itself.
	Pointer string
	// Reason is the keyword failure ("maximum: got 700000, want 600000"),
	// "" when the validator gave none.
	Reason string
}

// Check validates doc against s and returns nil when it conforms.
func Check(s *jsonschema.Schema, doc []byte) *Failure {
	if everyObject(s) && isObject(doc) {
		return nil
	}
	return validate(s, doc)
}

// validate is Check through the validator.
func validate(s *jsonschema.Schema, doc []byte) *Failure {
	v, err := decode(doc)
	if err != nil {
		return &Failure{Malformed: true}
	}
	err = s.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return &Failure{}
	}
	// The first cause down to a concrete keyword failure.
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	f := &Failure{Pointer: Pointer(ve.InstanceLocation)}
	only := &jsonschema.ValidationError{ErrorKind: ve.ErrorKind}
	if out := only.BasicOutput(); out != nil && out.Error != nil {
		f.Reason = out.Error.String()
	}
	return f
}

// isObject reports whether doc is one JSON object, as the decoder would
// read it (surrounding white space allowed, nothing after it).
func isObject(doc []byte) bool {
	doc = jsonbytes.TrimSpace(doc)
	return len(doc) > 0 && doc[0] == '{' && json.Valid(doc)
}

// decode reads doc as the validator wants it (numbers as json.Number).
// The empty object — the arguments of most tool calls and the inputs of
// a message without a data part — is answered without a decoder, whose
// buffers cost more than the validation itself.
func decode(doc []byte) (any, error) {
	if string(jsonbytes.TrimSpace(doc)) == "{}" { // JSON whitespace only
		return map[string]any{}, nil
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(doc))
}

// Pointer renders instance-location tokens as a JSON pointer (RFC 6901).
func Pointer(tokens []string) string {
	var b strings.Builder
	for _, tok := range tokens {
		b.WriteByte('/')
		tok = strings.ReplaceAll(tok, "~", "~0")
		b.WriteString(strings.ReplaceAll(tok, "/", "~1"))
	}
	return b.String()
}
