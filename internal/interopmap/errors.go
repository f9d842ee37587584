package interopmap

import (
	"errors"
	"fmt"
)

// ErrUnknownOperation reports a method no operation row serves.
var ErrUnknownOperation = errors.New("mapping: no operation row for method")

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
