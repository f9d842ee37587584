package mapping

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/wopinterop/wopinterop/internal/interopmap"
)

// Our own description of the map format. The strings are immutable, so
// embedding them keeps the package free of mutable state.
//
//go:embed data/interopmap.schema.json
var schemaJSON string

// schemaURL is the $id of data/interopmap.schema.json.
const schemaURL = "https://github.com/wopinterop/wopinterop/mapping/data/interopmap.schema.json"

// loader validates interop-map files against data/interopmap.schema.json
// (2020-12), which accepts the published OpenWOP v2 interop map and this
// package's newer one. It holds the compiled schema and is safe for
// concurrent use.
type loader struct {
	schema *jsonschema.Schema
}

// newLoader compiles the embedded schema.
func newLoader() (*loader, error) {
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schemaJSON))
	if err != nil {
		return nil, fmt.Errorf("mapping: embedded schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, fmt.Errorf("mapping: embedded schema: %w", err)
	}
	s, err := c.Compile(schemaURL)
	if err != nil {
		return nil, fmt.Errorf("mapping: embedded schema: %w", err)
	}
	return &loader{schema: s}, nil
}

// Load reads an interop-map file: it parses data strictly, validates it
// against the map format's JSON Schema (data/interopmap.schema.json), runs
// the consistency checks and returns the map. The error wraps [ErrDecode],
// [ErrSchema] (a [*SchemaError]) or [ErrInconsistent] (one [*RowError] per
// broken rule, joined). Each call compiles the schema (a few
// milliseconds); a host loads its map once.
func Load(data []byte) (*Map, error) {
	l, err := newLoader()
	if err != nil {
		return nil, err
	}
	return l.load(data)
}

func (l *loader) load(data []byte) (*Map, error) {
	if err := checkStrictJSON(data); err != nil {
		return nil, err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrDecode, err)
	}
	if err := l.schema.Validate(inst); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return nil, newSchemaError(ve)
		}
		return nil, fmt.Errorf("%w: %w", ErrSchema, err)
	}
	return decodeChecked(data)
}

// decodeChecked is the part of Load after schema validation: decode, the
// consistency checks, the index.
func decodeChecked(data []byte) (*Map, error) {
	m, problems, err := interopmap.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrDecode, err)
	}
	if len(problems) > 0 {
		errs := make([]error, len(problems))
		for i, p := range problems {
			errs[i] = &RowError{Section: p.Section, Index: p.Index, Key: p.Key, Problem: string(p.Problem)}
		}
		return nil, errors.Join(errs...)
	}
	return (*Map)(m), nil
}

// checkStrictJSON refuses what encoding/json would silently accept: a
// member name repeated in one object (the last one would win) and data
// after the document.
func checkStrictJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	type frame struct {
		object   bool
		keys     map[string]struct{}
		wantsKey bool
	}
	var stack []frame
	values := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("%w: %w", ErrDecode, err)
		}
		if len(stack) == 0 {
			values++
			if values > 1 {
				return fmt.Errorf("%w: data after the document", ErrDecode)
			}
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{':
				stack = append(stack, frame{object: true, keys: map[string]struct{}{}, wantsKey: true})
				continue
			case '[':
				stack = append(stack, frame{})
				continue
			default: // '}' or ']' closes the innermost container, a value of its parent
				stack = stack[:len(stack)-1]
			}
		} else if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].wantsKey {
			key := tok.(string) // the decoder only yields strings in key position
			if _, dup := stack[n-1].keys[key]; dup {
				return fmt.Errorf("%w: member %q repeated", ErrDecode, key)
			}
			stack[n-1].keys[key] = struct{}{}
			stack[n-1].wantsKey = false
			continue
		}
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].wantsKey = true
		}
	}
	if values == 0 {
		return fmt.Errorf("%w: empty input", ErrDecode)
	}
	return nil
}
