package mapping

import "github.com/wopinterop/wopinterop/internal/interopmap"

// Map is a validated interop map, as [Builtin] or [Load] return it. A host
// chooses the map and hands it to its bindings (a2a.Deps.Map,
// mcp.Options.Map); they consult its rows through the library's own index
// (internal/interopmap), so the rows are data here, not API.
//
// A Map is read-only: nothing changes it after Load, so one Map may be
// shared by any number of goroutines and bindings.
type Map interopmap.Map

// JSON returns the map in canonical form: two-space indentation, members
// in schema order, no HTML escaping, a final newline. data/interopmap.json
// is stored in this form, so Builtin().JSON() returns it byte for byte.
func (m *Map) JSON() ([]byte, error) { return (*interopmap.Map)(m).JSON() }

// MarshalJSON encodes the map compactly.
func (m *Map) MarshalJSON() ([]byte, error) { return (*interopmap.Map)(m).MarshalJSON() }
