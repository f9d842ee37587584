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
	// ErrUnknownOperation reports a method no operation row serves.
	ErrUnknownOperation = errors.New("mapping: no operation row for method")
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

// Problem is the closed set of consistency rules [Load] enforces.
type Problem string

// The consistency problems.
const (
	// ProblemMissingStatus: a status projection is not total; Key is the
	// run status without a default row.
	ProblemMissingStatus Problem = "no row for run status"
	// ProblemDuplicateStatus: a run status has two default rows.
	ProblemDuplicateStatus Problem = "second row for run status"
	// ProblemDuplicateOverride: two override rows share (runStatus, interruptKind).
	ProblemDuplicateOverride Problem = "second override for run status and interrupt kind"
	// ProblemOverrideKind: an override names an interrupt kind that never
	// produces its run status, so the row could never apply.
	ProblemOverrideKind Problem = "interrupt kind never produces this run status"
	// ProblemUnknownFacet: a requires entry names no facet of the a2a or
	// mcp family record.
	ProblemUnknownFacet Problem = "requires names an unknown facet"
	// ProblemDuplicateCode: two error rows share a JSON-RPC code.
	ProblemDuplicateCode Problem = "duplicate JSON-RPC code"
	// ProblemDuplicateReason: two error rows share an ErrorInfo reason.
	ProblemDuplicateReason Problem = "duplicate ErrorInfo reason"
	// ProblemDuplicateName: two error rows share an upstream name.
	ProblemDuplicateName Problem = "duplicate error name"
	// ProblemDuplicateWire: two reverse rows share a wire state.
	ProblemDuplicateWire Problem = "duplicate reverse wire state"
	// ProblemNoReverse: a forward row emits a wire state that no reverse
	// row reads back.
	ProblemNoReverse Problem = "forward wire state has no reverse row"
	// ProblemDuplicateFeature: two mcp.features entries share an id.
	ProblemDuplicateFeature Problem = "duplicate feature id"
)

// RowError names one broken consistency rule and the row that breaks it.
type RowError struct {
	Section string  // e.g. "a2a.taskState"
	Index   int     // row index in Section, or -1 when a row is missing
	Key     string  // what identifies the row: a status, code, facet, ...
	Problem Problem // which rule
}

func (e *RowError) Error() string {
	if e.Index < 0 {
		return fmt.Sprintf("mapping: %s: %s %q", e.Section, e.Problem, e.Key)
	}
	return fmt.Sprintf("mapping: %s[%d]: %s %q", e.Section, e.Index, e.Problem, e.Key)
}

// Unwrap makes errors.Is(err, ErrInconsistent) true.
func (e *RowError) Unwrap() error { return ErrInconsistent }

// RowErrors returns every [*RowError] in err (Load joins them).
func RowErrors(err error) []*RowError {
	var out []*RowError
	var walk func(error)
	walk = func(err error) {
		if err == nil {
			return
		}
		if re, ok := err.(*RowError); ok {
			out = append(out, re)
			return
		}
		switch u := err.(type) {
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				walk(e)
			}
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		}
	}
	walk(err)
	return out
}

// FacetOffError is an operation refused because a facet its row requires
// is not advertised (OpenWOP interop.md §The operation mappings; interop map, a2a.operations). A binding answers it with Refusal.
type FacetOffError struct {
	Method string // the requested method
	Facet  string // the first requires entry that is not advertised
	// Refusal is the A2A error row to answer with; zero for MCP rows,
	// whose binding picks its own answer.
	Refusal ErrorRow
}

func (e *FacetOffError) Error() string {
	return fmt.Sprintf("mapping: %s needs facet %s, which is not advertised", e.Method, e.Facet)
}
