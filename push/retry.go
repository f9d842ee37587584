package push

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"
)

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

func (p RetryPolicy) withDefaults() (RetryPolicy, error) {
	if p.MaxAttempts == 0 {
		p.MaxAttempts = DefaultMaxAttempts
	}
	if p.Backoff == "" {
		p.Backoff = BackoffExponential
	}
	if p.Delay == 0 {
		p.Delay = DefaultDelay
	}
	if p.MaxDelay == 0 {
		p.MaxDelay = DefaultMaxDelay
	}
	if p.AttemptTimeout == 0 {
		p.AttemptTimeout = DefaultAttemptTimeout
	}
	var problems []error
	if p.MaxAttempts < 1 {
		problems = append(problems, errors.New("MaxAttempts must be at least 1"))
	}
	switch p.Backoff {
	case BackoffNone, BackoffFixed, BackoffExponential:
	default:
		problems = append(problems, fmt.Errorf("Backoff %q is not none, fixed or exponential", p.Backoff))
	}
	if p.Delay < 0 || p.MaxDelay < 0 || p.AttemptTimeout < 0 {
		problems = append(problems, errors.New("durations must not be negative"))
	}
	if p.Backoff == BackoffExponential && p.MaxDelay < p.Delay {
		problems = append(problems, errors.New("MaxDelay must not be below Delay"))
	}
	if len(problems) > 0 {
		return p, fmt.Errorf("push: invalid retry policy: %w", errors.Join(problems...))
	}
	return p, nil
}

// ceiling is the longest wait after failed attempt n (1-based).
func (p RetryPolicy) ceiling(n int) time.Duration {
	switch p.Backoff {
	case BackoffNone:
		return 0
	case BackoffFixed:
		return p.Delay
	}
	d := p.Delay
	for i := 1; i < n && d < p.MaxDelay; i++ {
		if d > p.MaxDelay/2 {
			return p.MaxDelay
		}
		d *= 2
	}
	return min(d, p.MaxDelay)
}

// wait is the pause after failed attempt n (1-based): the fixed delay, or
// a full-jitter draw below the exponential ceiling; a receiver's
// Retry-After (0: none) lengthens it up to MaxDelay.
func (p RetryPolicy) wait(n int, retryAfter time.Duration) time.Duration {
	d := p.ceiling(n)
	if p.Backoff == BackoffExponential && d > 0 {
		d = rand.N(d)
	}
	return max(d, min(retryAfter, p.MaxDelay))
}

// retryable reports whether a push answered with HTTP status code may be
// tried again: anything but a 4xx, and of the 4xx only 408 Request
// Timeout, 425 Too Early and 429 Too Many Requests (RFC 9110 §15.5.9,
// RFC 8470 §5.2, RFC 6585 §4), which ask for a later try. Every other 4xx
// is a final refusal of this request.
func retryable(code int) bool {
	if code < 400 || code > 499 {
		return true
	}
	switch code {
	case http.StatusRequestTimeout, http.StatusTooEarly, http.StatusTooManyRequests:
		return true
	}
	return false
}

// maxRetryAfterSeconds bounds a parsed delay-seconds so that it fits a
// time.Duration; MaxDelay caps what is actually waited.
const maxRetryAfterSeconds = 1 << 32

// parseRetryAfter reads a Retry-After value (RFC 9110 §10.2.3):
// delay-seconds (1*DIGIT) or an HTTP-date, which is turned into the time
// left from now. It reports false for anything else; a date in the past
// is a zero wait.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	if '0' <= v[0] && v[0] <= '9' {
		var secs uint64
		for i := 0; i < len(v); i++ {
			c := v[i]
			if c < '0' || c > '9' {
				return 0, false
			}
			if secs < maxRetryAfterSeconds {
				secs = secs*10 + uint64(c-'0')
			}
		}
		return time.Duration(min(secs, maxRetryAfterSeconds)) * time.Second, true
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(at.Sub(now), 0), true
}
