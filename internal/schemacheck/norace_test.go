//go:build !race

package schemacheck

const raceEnabled = false
