package push

import "time"

// Clock is the time delivery runs on: the waits between attempts and
// after store faults, and "now" for a Retry-After date. Nil means the
// system clock. A test runs an hour-long retry schedule in milliseconds
// with a clock that runs faster; the delivery code is the same.
type Clock interface {
	Now() time.Time
	// After is time.After on this clock.
	After(d time.Duration) <-chan time.Time
}
