package pushservice

import (
	"context"
	"time"
)

// systemClock is the real time.
type systemClock struct{}

func (systemClock) Now() time.Time                         { return time.Now() }
func (systemClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// sleep waits d on the service's clock or until ctx ends; it reports
// whether d passed.
func (s *Service) sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	select {
	case <-s.clock.After(d):
		return ctx.Err() == nil
	case <-ctx.Done():
		return false
	}
}

// backoff is the wait between two attempts of one push: sleep, except that
// Close ends it at once. A receiver that is down when the host shuts down
// must not hold the shutdown for the rest of a schedule that spans hours;
// the push stays in the outbox (a durable push.Outbox resumes it at the next
// Start), while pushes whose receivers answer are still delivered.
func (s *Service) backoff(ctx context.Context, d time.Duration) bool {
	select {
	case <-s.watchCtx.Done(): // Close has begun
		return false
	default:
	}
	select {
	case <-s.clock.After(d):
		return ctx.Err() == nil && s.watchCtx.Err() == nil
	case <-ctx.Done():
		return false
	case <-s.watchCtx.Done():
		return false
	}
}
