//go:build !race

package wopinterop_test

const raceEnabled = false
