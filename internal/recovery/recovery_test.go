package recovery

import (
	"errors"
	"strings"
	"testing"
)

// A runtime error's text is the runtime's and is kept; any other panic
// value may be host data and is named by its type only.
func TestContainKeepsOnlyRuntimeText(t *testing.T) {
	var runtimeErr *Panic
	func() {
		defer func() { runtimeErr = Contain(recover()) }()
		var m map[string]int
		m["x"] = 1 // assignment to entry in nil map
	}()
	if !strings.Contains(runtimeErr.Value, "nil map") || !strings.Contains(string(runtimeErr.Stack), "TestContainKeepsOnlyRuntimeText") {
		t.Fatalf("runtime panic: value %q, stack without the panicking frame", runtimeErr.Value)
	}

	var hostErr *Panic
	func() {
		defer func() { hostErr = Contain(recover()) }()
		panic(errors.New("Bearer secret-token"))
	}()
	if strings.Contains(hostErr.Value, "secret-token") || hostErr.Value != "a *errors.errorString value (not logged)" {
		t.Fatalf("host panic value = %q", hostErr.Value)
	}
	if hostErr.Error() != "recovered from a panic" || strings.Contains(hostErr.Error(), "secret") {
		t.Fatalf("Error() = %q", hostErr.Error())
	}
}
