//go:build race

package schemacheck

// raceEnabled: the race detector's instrumentation makes values escape
// that do not otherwise, so allocation counts are not asserted under it.
const raceEnabled = true
