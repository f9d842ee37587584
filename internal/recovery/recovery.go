// Package recovery carries a recovered panic as an error across code that
// has no logger at hand — the push guard's dial, which runs in the HTTP
// transport's own goroutine — to the code that logs it. The panic's value
// is kept only when it is a runtime error, whose text is the runtime's: a
// value of host code may hold a push body or a credential.
package recovery

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Panic is a recovered panic: a description of its value and the stack.
type Panic struct {
	Value string
	Stack []byte
}

func (p *Panic) Error() string { return "recovered from a panic" }

// Contain turns a recovered panic value into a *Panic. It must be called
// with the value recover() returned, in the deferred function, so the
// stack is the panicking goroutine's.
func Contain(v any) *Panic {
	return &Panic{Value: describe(v), Stack: debug.Stack()}
}

// describe describes a panic value without repeating host data.
func describe(v any) string {
	if re, ok := v.(runtime.Error); ok {
		return re.Error()
	}
	return fmt.Sprintf("a %T value (not logged)", v)
}
