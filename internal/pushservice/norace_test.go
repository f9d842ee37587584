//go:build !race

package pushservice

const raceEnabled = false
