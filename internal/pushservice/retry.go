package pushservice

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/wopinterop/wopinterop/push"
)

// retryPolicy is a push.RetryPolicy with its defaults filled and checked,
// and the schedule it implies (OpenWOP webhooks.md §Durability; RFC 0214 §C).
type retryPolicy push.RetryPolicy

// withDefaults fills p's defaults and validates it; the delivery waits by
// the result.
func withDefaults(o push.RetryPolicy) (retryPolicy, error) {
	p := retryPolicy(o)
	if p.MaxAttempts == 0 {
		p.MaxAttempts = push.DefaultMaxAttempts
	}
	if p.Backoff == "" {
		p.Backoff = push.BackoffExponential
	}
	if p.Delay == 0 {
		p.Delay = push.DefaultDelay
	}
	if p.MaxDelay == 0 {
		p.MaxDelay = push.DefaultMaxDelay
	}
	if p.AttemptTimeout == 0 {
		p.AttemptTimeout = push.DefaultAttemptTimeout
	}
	var problems []error
	if p.MaxAttempts < 1 {
		problems = append(problems, errors.New("MaxAttempts must be at least 1"))
	}
	switch p.Backoff {
	case push.BackoffNone, push.BackoffFixed, push.BackoffExponential:
	default:
		problems = append(problems, fmt.Errorf("Backoff %q is not none, fixed or exponential", p.Backoff))
	}
	if p.Delay < 0 || p.MaxDelay < 0 || p.AttemptTimeout < 0 {
		problems = append(problems, errors.New("durations must not be negative"))
	}
	if p.Backoff == push.BackoffExponential && p.MaxDelay < p.Delay {
		problems = append(problems, errors.New("MaxDelay must not be below Delay"))
	}
	if len(problems) > 0 {
		return p, fmt.Errorf("push: invalid retry policy: %w", errors.Join(problems...))
	}
	return p, nil
}

// ceiling is the longest wait after failed attempt n (1-based).
func (p retryPolicy) ceiling(n int) time.Duration {
	switch p.Backoff {
	case push.BackoffNone:
		return 0
	case push.BackoffFixed:
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
func (p retryPolicy) wait(n int, retryAfter time.Duration) time.Duration {
	d := p.ceiling(n)
	if p.Backoff == push.BackoffExponential && d > 0 {
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
