package sealed

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/wopinterop/wopinterop/interop"
)

// MaxArgumentDepth is the deepest nesting of arrays and objects
// [RequestDigest] accepts. It bounds the recursion a hostile request can
// cause; no tool input schema comes near it.
const MaxArgumentDepth = 256

// Domain labels keep the two digests of this package from ever colliding
// with each other or with a digest computed elsewhere over the same bytes.
const (
	requestDigestDomain   = "wopinterop/mcp/sealed/request/v1\x00"
	operationDigestDomain = "wopinterop/mcp/sealed/operation/v1\x00"
	principalDigestDomain = "wopinterop/mcp/sealed/principal/v1\x00"
)

// RequestDigest returns the SHA-256 digest that binds a requestState to the
// tools/call that caused it (OpenWOP interop map, mcp.mrtr: "the originating request
// digest").
// The mount computes it on the call that suspends and again on each retry;
// [Sealer.Open] refuses a state whose digest differs with [ErrMismatch].
//
// The digest covers a domain label, the length-prefixed tool name and the
// canonical form of arguments, so two calls get the same digest exactly when
// they name the same tool with the same JSON value:
//
//   - object members are sorted by the bytes of their UTF-8 names (after
//     unescaping); a duplicate name is refused with [ErrArguments], because
//     decoders disagree on which of the two wins;
//   - insignificant whitespace is dropped;
//   - strings are compared by their decoded value, so "\u0041" and "A" (and
//     "\/" and "/") are the same string. They are re-encoded with the fewest
//     escapes: \" \\ \b \f \n \r \t, \u00XX (lowercase hex) for the other
//     control characters, and every other character as literal UTF-8.
//     Invalid UTF-8 and unpaired surrogate escapes decode to U+FFFD, as
//     encoding/json decodes them for the schema validator and the run;
//   - numbers keep their literal text: 1, 1.0 and 1e0 are different
//     arguments, since a workflow may well tell them apart;
//   - absent arguments (an empty RawMessage) are the empty object {},
//     because MCP treats an omitted arguments member as no arguments.
//
// Anything that is not exactly one JSON value, and nesting deeper than
// [MaxArgumentDepth], is refused with an error wrapping [ErrArguments].
func RequestDigest(toolName string, arguments json.RawMessage) ([32]byte, error) {
	// One buffer holds the whole digest input: label, tool name, arguments.
	msg := make([]byte, 0, len(requestDigestDomain)+4+len(toolName)+len(arguments)+2)
	msg = append(msg, requestDigestDomain...)
	msg = appendLenPrefixed(msg, toolName)
	msg, err := appendCanonicalJSON(msg, arguments)
	if err != nil {
		return [32]byte{}, err
	}
	return sha256.Sum256(msg), nil
}

// OperationDigest is [RequestDigest] for a request other than tools/call
// that can answer input_required, such as prompts/get or resources/read: it
// binds a requestState to the method, the name the request addresses (the
// prompt name, the resource URI) and its arguments, canonicalised as
// RequestDigest does. Its own domain label keeps it from ever equalling a
// RequestDigest, so a state sealed for a tool never opens for a prompt of
// the same name, and the length-prefixed method keeps two methods apart.
func OperationDigest(method, name string, arguments json.RawMessage) ([32]byte, error) {
	msg := make([]byte, 0, len(operationDigestDomain)+8+len(method)+len(name)+len(arguments)+2)
	msg = append(msg, operationDigestDomain...)
	msg = appendLenPrefixed(msg, method)
	msg = appendLenPrefixed(msg, name)
	msg, err := appendCanonicalJSON(msg, arguments)
	if err != nil {
		return [32]byte{}, err
	}
	return sha256.Sum256(msg), nil
}

// appendLenPrefixed appends s with a 4-byte big-endian length, so adjacent
// fields cannot be re-split: ("ab", "c") and ("a", "bc") differ.
func appendLenPrefixed(dst []byte, s string) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(s)))
	return append(dst, s...)
}

// principalDigest is the principal binding sealed into a requestState: a
// digest over the Subject's tenant, workspace, principal and authentication
// flag. The state carries this digest rather than the names themselves so
// its size does not grow with long principal names, and so a state that is
// logged or leaks together with a key still does not spell out who it
// belongs to. The forwarding Actor is deliberately not bound: MCP has no
// forwarding peer, and the Subject alone is who retries.
func principalDigest(s interop.Subject) [32]byte {
	var stack [128]byte // enough for typical names; append grows past it
	msg := append(stack[:0], principalDigestDomain...)
	msg = appendLenPrefixed(msg, s.Tenant)
	msg = appendLenPrefixed(msg, s.Workspace)
	msg = appendLenPrefixed(msg, s.Principal)
	auth := byte(0)
	if s.Authenticated {
		auth = 1
	}
	return sha256.Sum256(append(msg, auth))
}

// errDuplicateMember is wrapped in ErrArguments; kept apart so tests can
// tell the reason.
var errDuplicateMember = errors.New("duplicate object member name")

// errTooDeep is wrapped in ErrArguments.
var errTooDeep = fmt.Errorf("nesting deeper than %d", MaxArgumentDepth)

// appendCanonicalJSON appends the canonical form of raw (see RequestDigest)
// to dst. It reads with encoding/json's tokenizer, which checks the syntax,
// and UseNumber, which keeps each number's literal text.
func appendCanonicalJSON(dst []byte, raw []byte) ([]byte, error) {
	if len(raw) == 0 {
		return append(dst, '{', '}'), nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	out, err := appendCanonicalValue(dst, dec, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrArguments, err)
	}
	// Exactly one value: trailing whitespace is fine, anything else is not.
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: data after the top-level value", ErrArguments)
	}
	return out, nil
}

type member struct {
	name  string
	value []byte
}

func appendCanonicalValue(dst []byte, dec *json.Decoder, depth int) ([]byte, error) {
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	switch v := tok.(type) {
	case json.Delim:
		if depth >= MaxArgumentDepth {
			return nil, errTooDeep
		}
		switch v {
		case '[':
			dst = append(dst, '[')
			for i := 0; dec.More(); i++ {
				if i > 0 {
					dst = append(dst, ',')
				}
				if dst, err = appendCanonicalValue(dst, dec, depth+1); err != nil {
					return nil, err
				}
			}
			if _, err := dec.Token(); err != nil { // ']'
				return nil, err
			}
			return append(dst, ']'), nil
		case '{':
			var members []member
			for dec.More() {
				nameTok, err := dec.Token()
				if err != nil {
					return nil, err
				}
				name, ok := nameTok.(string)
				if !ok { // the tokenizer already refuses this; keep it explicit
					return nil, errors.New("object member name is not a string")
				}
				val, err := appendCanonicalValue(nil, dec, depth+1)
				if err != nil {
					return nil, err
				}
				members = append(members, member{name: name, value: val})
			}
			if _, err := dec.Token(); err != nil { // '}'
				return nil, err
			}
			slices.SortFunc(members, func(a, b member) int { return strings.Compare(a.name, b.name) })
			dst = append(dst, '{')
			for i, m := range members {
				if i > 0 {
					if members[i-1].name == m.name {
						return nil, errDuplicateMember
					}
					dst = append(dst, ',')
				}
				dst = appendCanonicalString(dst, m.name)
				dst = append(dst, ':')
				dst = append(dst, m.value...)
			}
			return append(dst, '}'), nil
		}
		return nil, fmt.Errorf("unexpected delimiter %q", rune(v))
	case string:
		return appendCanonicalString(dst, v), nil
	case json.Number:
		return append(dst, v...), nil
	case bool:
		if v {
			return append(dst, "true"...), nil
		}
		return append(dst, "false"...), nil
	case nil:
		return append(dst, "null"...), nil
	}
	return nil, fmt.Errorf("unexpected token %T", tok)
}

// appendCanonicalString quotes s with the minimal escapes RequestDigest
// documents. s comes from encoding/json and is therefore valid UTF-8.
func appendCanonicalString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			dst = utf8.AppendRune(dst, r) // U+FFFD for any stray byte
			i += size
			continue
		}
		switch c {
		case '"':
			dst = append(dst, '\\', '"')
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			if c < 0x20 {
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			} else {
				dst = append(dst, c)
			}
		}
		i++
	}
	return append(dst, '"')
}
