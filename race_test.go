//go:build race

package wopinterop_test

// raceEnabled: the race detector shadows memory, so byte budgets are not
// measured under it.
const raceEnabled = true
