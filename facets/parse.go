package facets

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// ParseA2A strictly decodes an a2a record, e.g. from a host's
// configuration file. Strict means: one JSON document and nothing after it,
// no member repeated, no member this package does not know, and member
// names spelled exactly (encoding/json alone would accept "Versions").
// Defaults are not filled and nothing is validated beyond the shape: pass
// the result to [Validator.Declare]. Errors wrap [ErrMalformed].
func ParseA2A(data []byte) (*A2A, error) {
	var a A2A
	if err := strictDecode(data, &a); err != nil {
		return nil, err
	}
	return &a, nil
}

// ParseMCP is ParseA2A for an mcp record.
func ParseMCP(data []byte) (*MCP, error) {
	var m MCP
	if err := strictDecode(data, &m); err != nil {
		return nil, err
	}
	return &m, nil
}

// ParseDeclaration is ParseA2A for a whole declaration:
// {"a2a": {...}, "mcp": {...}, "hostEvents": {...}, "agents": {...}}, each
// optional.
func ParseDeclaration(data []byte) (Declaration, error) {
	var d Declaration
	if err := strictDecode(data, &d); err != nil {
		return Declaration{}, err
	}
	return d, nil
}

func strictDecode(data []byte, v any) error {
	keys, err := scanKeys(data)
	if err != nil {
		return err
	}
	known := memberNames()
	for _, k := range keys {
		if _, ok := known[k]; !ok {
			return fmt.Errorf("%w: unknown member %q", ErrMalformed, k)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return nil
}

// memberNames is every JSON member name of the decodable types. With
// DisallowUnknownFields refusing names unknown at their level, a name that
// decodes but is not in this set can only differ in case from a real one.
// No two names here differ only in case, so the check is exact.
func memberNames() map[string]struct{} {
	names := map[string]struct{}{}
	for _, v := range []any{Declaration{}, A2A{}, MCP{}, ServerMount{}, MRTR{}, HostEvents{}, HostEventType{}, Agents{}, ManifestRuntime{}} {
		t := reflect.TypeOf(v)
		for i := 0; i < t.NumField(); i++ {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
			if name != "" && name != "-" {
				names[name] = struct{}{}
			}
		}
	}
	return names
}

// scanKeys walks data as JSON tokens and returns every member name. It
// refuses what encoding/json silently accepts: a member repeated in one
// object (the last would win) and data after the document.
func scanKeys(data []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	type frame struct {
		object   bool
		wantsKey bool
		seen     map[string]struct{}
	}
	var (
		stack []frame
		keys  []string
		docs  int
	)
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
		}
		if len(stack) == 0 {
			if docs++; docs > 1 {
				return nil, fmt.Errorf("%w: data after the document", ErrMalformed)
			}
			if tok != json.Delim('{') {
				return nil, fmt.Errorf("%w: the document is not an object", ErrMalformed)
			}
		}
		n := len(stack)
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{':
				if n > 0 && stack[n-1].object {
					stack[n-1].wantsKey = true
				}
				stack = append(stack, frame{object: true, wantsKey: true, seen: map[string]struct{}{}})
			case '[':
				if n > 0 && stack[n-1].object {
					stack[n-1].wantsKey = true
				}
				stack = append(stack, frame{})
			default:
				stack = stack[:n-1]
			}
			continue
		}
		if n == 0 || !stack[n-1].object {
			continue
		}
		if stack[n-1].wantsKey {
			key := tok.(string) // the decoder yields only strings in key position
			if _, dup := stack[n-1].seen[key]; dup {
				return nil, fmt.Errorf("%w: member %q repeated", ErrMalformed, key)
			}
			stack[n-1].seen[key] = struct{}{}
			keys = append(keys, key)
			stack[n-1].wantsKey = false
		} else {
			stack[n-1].wantsKey = true
		}
	}
	if docs == 0 {
		return nil, fmt.Errorf("%w: empty document", ErrMalformed)
	}
	return keys, nil
}
