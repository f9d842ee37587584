package mapping

import (
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Sentinel errors. Load wraps exactly one of the first three; match them
// with errors.Is and read details with errors.As.
var (
	// ErrDecode reports bytes that are not one strict JSON document: a
	// syntax error, a duplicate member name, trailing data, or a value that
	// does not fit its Go type.
	ErrDecode = errors.New("mapping: malformed interop map")
	// ErrSchema reports a document the interop-map schema refuses; the
	// error is a [*SchemaError].
	ErrSchema = errors.New("mapping: interop map violates the schema")
	// ErrInconsistent reports a document that passes the schema but breaks
	// a consistency rule; each broken rule is a [*RowError].
	ErrInconsistent = errors.New("mapping: interop map is inconsistent")
)

// SchemaError is a schema violation. Locations are the JSON pointers of the
// offending values (e.g. "/a2a/taskState/3/runStatus"), deepest first.
type SchemaError struct {
	Locations []string
	cause     *jsonschema.ValidationError
}

func (e *SchemaError) Error() string {
	msg := "mapping: schema violation"
	if len(e.Locations) > 0 {
		msg += " at " + strings.Join(e.Locations, ", ")
	}
	return msg + ": " + e.cause.Error()
}

// Unwrap exposes ErrSchema and the validator's own error.
func (e *SchemaError) Unwrap() []error { return []error{ErrSchema, e.cause} }

func newSchemaError(v *jsonschema.ValidationError) *SchemaError {
	e := &SchemaError{cause: v}
	var walk func(*jsonschema.ValidationError)
	walk = func(v *jsonschema.ValidationError) {
		if len(v.Causes) == 0 {
			loc := "/" + strings.Join(v.InstanceLocation, "/")
			for _, l := range e.Locations {
				if l == loc {
					return
				}
			}
			e.Locations = append(e.Locations, loc)
			return
		}
		for _, c := range v.Causes {
			walk(c)
		}
	}
	walk(v)
	return e
}

// RowError names one broken consistency rule and the row that breaks it.
// Load joins one per broken rule; errors.As finds the first.
type RowError struct {
	Section string // e.g. "a2a.taskState"
	Index   int    // row index in Section, or -1 when a row is missing
	Key     string // what identifies the row: a status, code, facet, ...
	Problem string // the rule, in words, e.g. "duplicate JSON-RPC code"
}

func (e *RowError) Error() string {
	if e.Index < 0 {
		return fmt.Sprintf("mapping: %s: %s %q", e.Section, e.Problem, e.Key)
	}
	return fmt.Sprintf("mapping: %s[%d]: %s %q", e.Section, e.Index, e.Problem, e.Key)
}

// Unwrap makes errors.Is(err, ErrInconsistent) true.
func (e *RowError) Unwrap() error { return ErrInconsistent }
