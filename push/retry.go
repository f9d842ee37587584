package push

import (
	"errors"
	"fmt"
	"math/rand/v2"
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
	// BackoffExponential waits Delay, 2·Delay, 4·Delay, ... up to
	// MaxDelay, each wait drawn uniformly from its upper half so that
	// receivers coming back are not hit by every sender at once.
	BackoffExponential Backoff = "exponential"
)

// RetryPolicy bounds the attempts of one push. The zero value is the
// default: 5 attempts, exponential backoff from 1s up to 1m, 10s per
// attempt.
type RetryPolicy struct {
	// MaxAttempts is how many attempts a push gets before it is
	// dead-lettered; at least 1 (0 means 5).
	MaxAttempts int
	// Backoff is none, fixed or exponential ("" means exponential).
	Backoff Backoff
	// Delay is the fixed wait, or the first exponential one (0 means 1s).
	Delay time.Duration
	// MaxDelay caps an exponential wait (0 means 1m).
	MaxDelay time.Duration
	// AttemptTimeout bounds one attempt: the DNS check, the connection,
	// the request and the response headers (0 means 10s).
	AttemptTimeout time.Duration
}

func (p RetryPolicy) withDefaults() (RetryPolicy, error) {
	if p.MaxAttempts == 0 {
		p.MaxAttempts = 5
	}
	if p.Backoff == "" {
		p.Backoff = BackoffExponential
	}
	if p.Delay == 0 {
		p.Delay = time.Second
	}
	if p.MaxDelay == 0 {
		p.MaxDelay = time.Minute
	}
	if p.AttemptTimeout == 0 {
		p.AttemptTimeout = 10 * time.Second
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

// wait is the pause after failed attempt n (1-based).
func (p RetryPolicy) wait(n int) time.Duration {
	switch p.Backoff {
	case BackoffNone:
		return 0
	case BackoffFixed:
		return p.Delay
	}
	d := p.Delay
	for i := 1; i < n && d < p.MaxDelay; i++ {
		d *= 2
	}
	d = min(d, p.MaxDelay)
	// Equal jitter: half fixed, half random, so waits still grow.
	half := d / 2
	return half + rand.N(d-half+1)
}
