package interop

import (
	"errors"
	"fmt"
)

// Sentinel errors of the host contract. Implementations wrap them with %w;
// the library matches them with errors.Is. Their messages are never sent on
// the wire: each protocol binding maps them to its own fixed, scrubbed text.
var (
	// ErrNotFound reports a run, interrupt, workflow or agent that does not
	// exist or that the Subject may not read. The two cases are
	// indistinguishable by design (OpenWOP interop.md §Isolation).
	ErrNotFound = errors.New("interop: not found")
	// ErrRunTerminal reports an operation that needs a live run on a run that
	// is completed, failed or cancelled.
	ErrRunTerminal = errors.New("interop: run is terminal")
	// ErrAlreadyResolved reports an interrupt that was resolved before.
	ErrAlreadyResolved = errors.New("interop: interrupt already resolved")
	// ErrNotEligible reports a resolver who is not an eligible approver of
	// the interrupt (interrupt.md §Approver enforcement).
	ErrNotEligible = errors.New("interop: resolver not eligible")
	// ErrInvalidInput reports inputs or a resume value the host refuses.
	// Wrap it in an [*InputError] to name the offending field.
	ErrInvalidInput = errors.New("interop: invalid input")
	// ErrUnauthenticated reports a request without a valid credential.
	ErrUnauthenticated = errors.New("interop: unauthenticated")
	// ErrForbidden reports an authenticated caller that may not perform the
	// operation at all (as opposed to a resource it may not read, which is
	// ErrNotFound).
	ErrForbidden = errors.New("interop: forbidden")
)

// InputError is an [ErrInvalidInput] that names the field at fault. Field
// uses a JSON-pointer-like path ("inputs/delayMs", "resumeValue"); Reason is a
// short, safe explanation that may be shown to the caller.
type InputError struct {
	Field  string
	Reason string
}

func (e *InputError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("invalid input: %s", e.Reason)
	}
	return fmt.Sprintf("invalid input: %s: %s", e.Field, e.Reason)
}

// Unwrap makes errors.Is(err, ErrInvalidInput) true.
func (e *InputError) Unwrap() error { return ErrInvalidInput }
