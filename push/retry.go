package push

import "time"

// Backoff is how the wait between attempts grows (the retryPolicy
// backoff of OpenWOP webhooks.md §Durability; RFC 0214 §C).
type Backoff string

// Backoff kinds.
const (
	// BackoffNone retries at once.
	BackoffNone Backoff = "none"
	// BackoffFixed waits Delay between attempts.
	BackoffFixed Backoff = "fixed"
	// BackoffExponential waits up to Delay, 2·Delay, 4·Delay, ... capped
	// at MaxDelay, each wait drawn uniformly from zero to that ceiling
	// ("full jitter"), so that senders whose receiver comes back do not
	// all retry at the same instant.
	BackoffExponential Backoff = "exponential"
)

// The default retry policy: a push outlives a receiver outage of an hour
// and more. Its 59 waits have ceilings 1s, 2s, 4s, ... 256s, then 5m;
// with full jitter they add up to 2h09m on average, at most 4h19m, and
// to less than an hour with a probability below 10⁻¹⁰ (a Chernoff bound
// on the sum of the uniform waits; the attempts' own durations only add
// to it).
const (
	DefaultMaxAttempts    = 60
	DefaultDelay          = time.Second
	DefaultMaxDelay       = 5 * time.Minute
	DefaultAttemptTimeout = 10 * time.Second
)

// RetryPolicy bounds the attempts of one push (the retryPolicy of OpenWOP
// webhooks.md §Durability: maxAttempts and backoff). The zero value is the
// default: 60 attempts, exponential backoff with full jitter from 1s up to
// 5m per wait — retries span about two hours — and 10s per attempt.
//
// A failed attempt is retried — a connection or TLS failure, a timeout, a
// destination the guard refuses now, a 3xx (never followed, and a failed
// delivery retried under this same policy: webhooks.md §Durability), a
// 5xx, and the 4xx statuses that say "later": 408, 425 and 429. Any other
// 4xx (400, 401, 403, 404, 410, ...) is the receiver's final answer about
// this push: it is dead-lettered at once, without further attempts.
// A Retry-After on a failed response (RFC 9110 §10.2.3, in seconds or as
// an HTTP-date) lengthens the next wait to what it asks, never beyond
// MaxDelay; it never shortens a wait.
type RetryPolicy struct {
	// MaxAttempts is how many attempts a push gets before it is
	// dead-lettered; at least 1 (0 means 60).
	MaxAttempts int
	// Backoff is none, fixed or exponential ("" means exponential).
	Backoff Backoff
	// Delay is the fixed wait, or the ceiling of the first exponential
	// one (0 means 1s).
	Delay time.Duration
	// MaxDelay caps an exponential wait and a Retry-After (0 means 5m).
	MaxDelay time.Duration
	// AttemptTimeout bounds one attempt: the DNS check, the connection,
	// the request and the response headers (0 means 10s). It is measured
	// on the system clock, whatever Options.Clock is.
	AttemptTimeout time.Duration
}
