package workunit

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/wopinterop/wopinterop/internal/jsonbytes"
)

// ArgumentName is the reserved member of a tool's arguments that carries a
// unit on MCP. It is namespaced like an MCP _meta key (a reverse-DNS
// prefix of the module's own namespace, MCP 2025-11-25 §General fields),
// so that it never collides with a workflow's own inputs; a breaking change
// of the encoding gets a new name, as it gets a new [ExtensionURI].
const ArgumentName = "io.github.wopinterop/workunit-v1"

// unitMember is the member of the MCP argument that holds the canonical
// JSON text.
const unitMember = "unit"

// InputSchema is the JSON Schema of the [ArgumentName] member, for a
// tool's inputSchema.properties. A tool whose input schema declares the
// member activates the extension for its calls ([Declares]); its
// arguments are checked against it before any run starts (a malformed
// envelope is refused in the protocol's own shape), and the unit is then
// opened by [FromMCPArguments].
func InputSchema() json.RawMessage {
	return json.RawMessage(`{"type":"object","description":"A work unit: its RFC 8785 canonical JSON text and the lowercase hex SHA-256 of that text (` + ExtensionURI + `).","properties":{"sha256":{"type":"string","pattern":"^[0-9a-f]{64}$"},"unit":{"type":"string","minLength":2}},"required":["sha256","unit"],"additionalProperties":false}`)
}

// Declares reports whether a tool's input schema declares the envelope:
// its top-level properties name [ArgumentName]. On MCP that declaration
// is the activation: a tool that declares it reads a unit from its
// arguments, one that does not never does, whatever the arguments hold.
func Declares(inputSchema json.RawMessage) bool {
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(inputSchema, &schema) != nil {
		return false
	}
	_, ok := schema.Properties[ArgumentName]
	return ok
}

// MCPArgument is the value of [ArgumentName] in a tool's arguments:
// {"sha256": digest, "unit": the canonical JSON as a string}. A string
// survives every JSON re-encoding an MCP client or server may apply to
// the arguments (member order, number spelling), so the receiver gets the
// canonical bytes exactly.
func (e Envelope) MCPArgument() json.RawMessage {
	out := make([]byte, 0, len(e.canonical)+len(e.digest)+32)
	out = append(out, `{"sha256":"`...)
	out = append(out, e.digest...)
	out = append(out, `","unit":`...)
	out = jsonbytes.AppendString(out, string(e.canonical), false)
	return append(out, '}')
}

// FromMCPArguments reads the unit that a tool call's arguments carry under
// [ArgumentName] and opens it ([Open]). activated says whether the tool
// declares the envelope ([Declares] of its input schema). It fails closed:
// not activated, arguments that are not a JSON object, the member absent
// or repeated, its value not exactly {"sha256": string, "unit": string},
// and every refusal of Open.
func FromMCPArguments(args json.RawMessage, activated bool) (Envelope, error) {
	if !activated {
		return Envelope{}, fmt.Errorf("%w: the tool does not declare %s", ErrNotActivated, ArgumentName)
	}
	var value []byte
	err := members(args, "the arguments", func(name string, v []byte) error {
		if name != ArgumentName {
			return nil
		}
		if value != nil {
			return fmt.Errorf("%w: %s is repeated", ErrMalformed, ArgumentName)
		}
		value = v
		return nil
	})
	switch {
	case err != nil:
		return Envelope{}, err
	case value == nil:
		return Envelope{}, fmt.Errorf("%w: the arguments have no %s", ErrNoUnit, ArgumentName)
	}
	var unit, digest []byte
	err = members(value, ArgumentName, func(name string, v []byte) error {
		var dst *[]byte
		switch name {
		case unitMember:
			dst = &unit
		case digestMember:
			dst = &digest
		default:
			return fmt.Errorf("%w: %s has a member other than sha256 and unit", ErrMalformed, ArgumentName)
		}
		if *dst != nil {
			return fmt.Errorf("%w: a member of %s is repeated", ErrMalformed, ArgumentName)
		}
		*dst = v
		return nil
	})
	if err != nil {
		return Envelope{}, err
	}
	text, ok := jsonString(unit)
	if !ok {
		return Envelope{}, fmt.Errorf("%w: %s.unit is not a string", ErrMalformed, ArgumentName)
	}
	sum, ok := jsonString(digest)
	if !ok {
		return Envelope{}, fmt.Errorf("%w: %s.sha256 is not a string", ErrMalformed, ArgumentName)
	}
	return Open([]byte(text), sum)
}

// errNotObject marks a value members cannot read as an object.
var errNotObject = errors.New("not a JSON object")

// members calls member with each member of the JSON object raw (what
// names it in errors), names
// decoded and matched exactly (encoding/json would match them case
// insensitively and keep the last of a repeated one).
func members(raw []byte, what string, member func(name string, value []byte) error) error {
	if !json.Valid(raw) {
		return fmt.Errorf("%w: %s must be a JSON object", ErrMalformed, what)
	}
	sc := jsonbytes.Scanner{Data: raw}
	err := sc.Members(func(name []byte, escaped bool, value []byte) error {
		n, err := jsonbytes.Unquote(name, escaped)
		if err != nil {
			return errNotObject
		}
		return member(n, value)
	})
	if err == nil || (!errors.Is(err, jsonbytes.ErrMalformed) && !errors.Is(err, errNotObject)) {
		return err
	}
	return fmt.Errorf("%w: %s must be a JSON object", ErrMalformed, what)
}

// jsonString decodes raw when it is a JSON string. Decoding replaces an
// unpaired surrogate or invalid UTF-8 with U+FFFD, as encoding/json does;
// the digest then no longer matches, so such a unit is refused by Open.
func jsonString(raw []byte) (string, bool) {
	contents, escaped := jsonbytes.StringContents(raw)
	if contents == nil {
		return "", false
	}
	s, err := jsonbytes.Unquote(contents, escaped)
	return s, err == nil
}
