package mapping_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/wopinterop/wopinterop/mapping"
)

// The map is data: a host builds it once, hands it to its bindings
// (a2a.Deps.Map, mcp.Options.Map) and may read any row from its JSON.
func Example() {
	m := mapping.Builtin() // build once, share everywhere
	doc, err := m.JSON()
	if err != nil {
		panic(err)
	}
	var rows struct {
		Pins struct {
			A2A struct{ Release string }
			MCP struct{ Revision string }
		}
		A2A struct {
			TaskState []struct{ RunStatus, InterruptKind, Wire string }
		}
	}
	if err := json.Unmarshal(doc, &rows); err != nil {
		panic(err)
	}
	fmt.Println("A2A", rows.Pins.A2A.Release, "MCP", rows.Pins.MCP.Revision)

	// The one override of the forward projection (OpenWOP RFC 0199 §D.1):
	// a run waiting on a credential interrupt is AUTH_REQUIRED on A2A.
	for _, r := range rows.A2A.TaskState {
		if r.InterruptKind != "" {
			fmt.Println(r.RunStatus, r.InterruptKind, r.Wire)
		}
	}
	// Output:
	// A2A 1.0.1 MCP 2026-07-28
	// waiting-input credential TASK_STATE_AUTH_REQUIRED
}

func ExampleLoad() {
	_, err := mapping.Load([]byte(`{"version": 2}`))
	var se *mapping.SchemaError
	fmt.Println(errors.Is(err, mapping.ErrSchema), errors.As(err, &se))

	// A map that fits the schema but gives two errors one JSON-RPC code.
	doc, _ := mapping.Builtin().JSON()
	twice := strings.Replace(string(doc), `"jsonrpc": -32002`, `"jsonrpc": -32001`, 1)
	_, err = mapping.Load([]byte(twice))
	var re *mapping.RowError
	fmt.Println(errors.Is(err, mapping.ErrInconsistent), errors.As(err, &re))
	fmt.Println(re)
	// Output:
	// true true
	// true true
	// mapping: a2a.errors[1]: duplicate JSON-RPC code "-32001"
}
