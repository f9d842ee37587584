package facets

import (
	"errors"
	"fmt"
)

// ErrInvalidFacet is wrapped by every refusal of a declaration: each
// problem is a [*FieldError], and all of them are joined (errors.Join) so a
// host sees everything wrong at once.
var ErrInvalidFacet = errors.New("facets: invalid facet")

// ErrMalformed is wrapped by the Parse functions for bytes that are not one
// strict JSON document of the expected shape.
var ErrMalformed = errors.New("facets: malformed facet document")

// FieldError is one problem with one field.
type FieldError struct {
	// Field names the wire field at fault, family first:
	// "a2a.preferredVersion", "mcp.serverMount.transports[1]". A setting
	// that is not on the wire keeps its Go name ("a2a.RefreshWindow").
	Field string
	// Reason says what is wrong, starting with the offending value when
	// there is one.
	Reason string
	// Rule names the OpenWOP section whose requirement the check enforces
	// ("OpenWOP interop.md §The refresh SLA"), or "" for a plain shape
	// error from the schema.
	Rule string
}

func (e *FieldError) Error() string {
	if e.Rule == "" {
		return fmt.Sprintf("facets: %s %s", e.Field, e.Reason)
	}
	return fmt.Sprintf("facets: %s %s (%s)", e.Field, e.Reason, e.Rule)
}

// Unwrap makes errors.Is(err, ErrInvalidFacet) true.
func (e *FieldError) Unwrap() error { return ErrInvalidFacet }

// FieldErrors returns every *FieldError in err's tree, in order.
func FieldErrors(err error) []*FieldError {
	var out []*FieldError
	var walk func(error)
	walk = func(err error) {
		switch e := err.(type) {
		case nil:
		case *FieldError:
			out = append(out, e)
		case interface{ Unwrap() []error }:
			for _, c := range e.Unwrap() {
				walk(c)
			}
		case interface{ Unwrap() error }:
			walk(e.Unwrap())
		}
	}
	walk(err)
	return out
}

// problems collects field errors in the order checks find them.
type problems []*FieldError

func (p *problems) add(field, rule, format string, args ...any) {
	*p = append(*p, &FieldError{Field: field, Reason: fmt.Sprintf(format, args...), Rule: rule})
}

func (p problems) err() error {
	if len(p) == 0 {
		return nil
	}
	errs := make([]error, len(p))
	for i, e := range p {
		errs[i] = e
	}
	return errors.Join(errs...)
}
