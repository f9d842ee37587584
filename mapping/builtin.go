package mapping

import (
	_ "embed"
	"fmt"
)

// The library's own interop map. A string, because strings are immutable:
// embedding it adds no mutable package state.
//
//go:embed data/interopmap.json
var builtinJSON string

// Builtin returns the library's own interop map (data/interopmap.json): the
// published OpenWOP v2 map's facts plus the newer credential override row
// (RFC 0199) and the ErrorInfo reasons (RFC 0211).
//
// Each call decodes the embedded file afresh and returns a Map nobody else
// holds, so the package keeps no global state; a caller builds it once and
// shares it. The schema step is skipped here because a test runs the
// embedded file through the full [Load]; the consistency checks still run.
func Builtin() *Map {
	m, err := decodeChecked([]byte(builtinJSON))
	if err != nil {
		// Unreachable while TestBuiltinPassesLoad passes.
		panic(fmt.Sprintf("mapping: embedded interop map: %v", err))
	}
	return m
}
