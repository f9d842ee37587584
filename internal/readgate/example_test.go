package readgate_test

import (
	"fmt"

	"github.com/wopinterop/wopinterop/internal/readgate"
	"github.com/wopinterop/wopinterop/interop"
)

// The read gate answers a foreign id and a malformed one with the same
// error, and folds a store's 403 into it.
func ExampleCheckReadable() {
	caller := interop.Subject{Tenant: "acme", Authenticated: true}

	fmt.Println(readgate.CheckReadable(caller, "acme/r-9f3cAB12cd34EF56"))
	fmt.Println(readgate.CheckReadable(caller, "globex/r-9f3cAB12cd34EF56"))
	fmt.Println(readgate.CheckReadable(caller, "not an id"))

	storeErr := fmt.Errorf("run belongs to globex: %w", interop.ErrForbidden)
	fmt.Println(readgate.GateError(storeErr))
	fmt.Println(readgate.GateError(interop.ErrRunTerminal))
	// Output:
	// <nil>
	// isolation: interop: not found
	// isolation: interop: not found
	// isolation: interop: not found
	// interop: run is terminal
}
