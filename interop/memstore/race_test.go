//go:build race

package memstore

// raceEnabled: the race detector changes what the runtime allocates, so
// byte budgets are not checked under it.
const raceEnabled = true
