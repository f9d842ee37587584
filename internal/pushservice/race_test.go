//go:build race

package pushservice

// raceEnabled: the race detector shadows memory, so heap budgets are not
// measured under it.
const raceEnabled = true
