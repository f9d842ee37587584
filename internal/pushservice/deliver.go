package pushservice

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/wopinterop/wopinterop/egress"
	"github.com/wopinterop/wopinterop/internal/recovery"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/push"
)

// Delivering. The outbox is a leased work queue (push.Outbox): every
// queued push is Put there first, and this worker — one owner among the
// replicas that share the outbox — leases lane heads from it (lease.go),
// attempts each until it is finished, and removes it. Each config of a
// task is a lane whose pushes the outbox hands out one at a time, in
// order, so a receiver sees a task's pushes in run order whichever
// replica sends them; lanes run concurrently up to
// push.Options.Concurrency attempts in flight.

// contentType is the media type of every push body (OpenWOP RFC 0214 §C).
const contentType = "application/a2a+json"

// userAgent names the sender of every push.
const userAgent = "wopinterop-push"

// Status classes of a failed attempt, as the dead letter reports the
// last one.
const (
	class3xx     = "3xx"     // a redirect, never followed (OpenWOP RFC 0214 §B)
	class4xx     = "4xx"     //
	class5xx     = "5xx"     //
	classOther   = "other"   // 1xx or a status outside 100–599
	classTimeout = "timeout" // the attempt timed out
	classRefused = "refused" // the guard refused the destination
	classNetwork = "network" // DNS, connection or TLS failure
	classFault   = "fault"   // host code (resolver, dialer) panicked
)

// maxDrain bounds how much of a response body is read (and discarded) so
// the connection can be reused.
const maxDrain = 64 << 10

// enqueue records d in the outbox and wakes the worker to lease it. A
// delivery queued before Start or after Close stays there for the next
// Start (or another replica).
func (s *Service) enqueue(ctx context.Context, d push.Delivery) error {
	if err := s.outbox.Put(ctx, d); err != nil {
		return err
	}
	s.wakePump()
	return nil
}

// faultPause is how long a lane or a watcher rests after a panic that
// escaped the recovery around host code, before trying again.
const faultPause = time.Second

// pause waits d on the system clock (never a host's, which may be what
// panicked) or until ctx ends.
func pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// deliver attempts d until it is delivered, dead-lettered or dropped, and
// reports whether it is finished; false means it was abandoned — on
// Close, or because its lease was lost — and stays in the outbox.
func (s *Service) deliver(ctx context.Context, d *push.Delivery) bool {
	rec, secret, st := s.target(ctx, d)
	if st != targetReady {
		return s.dropped(ctx, d, &rec, st)
	}
	if d.Body == nil {
		s.finish(ctx, &rec)
		return true
	}
	key := idempotencyKey(d.ID)
	for attempt := 1; ; attempt++ {
		out := s.attempt(ctx, &rec, secret, key, d.Body)
		if out.delivered {
			break
		}
		if ctx.Err() != nil {
			return false
		}
		s.log.WarnContext(ctx, "push: delivery attempt failed", "task", d.TaskID, "config", d.ConfigID, "attempt", attempt, "class", out.class)
		// A dead letter only when the schedule is spent (OpenWOP
		// webhooks.md §Durability) or the receiver refused this push for
		// good: a 4xx that does not ask for a later try (RFC 9110 §15.5).
		if out.final || attempt >= s.retry.MaxAttempts {
			if !s.deadLetter(ctx, &rec, attempt, out.class) {
				return false
			}
			break
		}
		if !s.backoff(ctx, s.retry.wait(attempt, out.retryAfter)) {
			return false
		}
		// A delete between attempts stops delivery; a replacement takes
		// effect at the next attempt.
		if rec, secret, st = s.target(ctx, d); st != targetReady {
			return s.dropped(ctx, d, &rec, st)
		}
	}
	if d.Final {
		s.finish(ctx, &rec)
	}
	return true
}

// targetState is what target found for a delivery.
type targetState int

const (
	targetReady     targetState = iota
	targetGone                  // the config was deleted or is done: drop
	targetNoSecret              // the config's secret is gone: drop, never send without it
	targetAbandoned             // ctx ended
)

// dropped finishes a delivery that will not be sent, and reports whether
// it is finished (false: abandoned on Close). A config whose last push
// cannot be sent without its secret is finished all the same.
func (s *Service) dropped(ctx context.Context, d *push.Delivery, rec *push.Record, st targetState) bool {
	switch st {
	case targetAbandoned:
		return false
	case targetNoSecret:
		s.log.ErrorContext(ctx, "push: a config's secret is gone; its push is dropped", "task", d.TaskID, "config", d.ConfigID)
		if d.Final {
			s.finish(ctx, rec)
		}
	}
	return true
}

// target reads the config and secret a delivery goes to. A store fault is
// retried until ctx ends.
func (s *Service) target(ctx context.Context, d *push.Delivery) (push.Record, push.Secret, targetState) {
	for failures := 0; ; failures++ {
		if failures > 0 && !s.sleep(ctx, watchRetry(failures)) {
			return push.Record{}, push.Secret{}, targetAbandoned
		}
		rec, secret, st, err := s.readTarget(ctx, d)
		switch {
		case ctx.Err() != nil:
			return push.Record{}, push.Secret{}, targetAbandoned
		case err == nil:
			return rec, secret, st
		}
	}
}

// readTarget reads the config and secret once; an error is a fault of
// the config store or the vault, logged here.
func (s *Service) readTarget(ctx context.Context, d *push.Delivery) (rec push.Record, secret push.Secret, st targetState, err error) {
	defer s.recovered(ctx, "reading the config", d.TaskID, &err)
	rec, err = s.configs.Get(ctx, d.TaskID, d.ConfigID)
	switch {
	case errors.Is(err, interop.ErrNotFound):
		return push.Record{}, push.Secret{}, targetGone, nil
	case err != nil:
		if ctx.Err() == nil {
			s.log.ErrorContext(ctx, "push: reading a config failed", "task", d.TaskID, "config", d.ConfigID)
		}
		return push.Record{}, push.Secret{}, targetGone, err
	case rec.Done:
		return push.Record{}, push.Secret{}, targetGone, nil
	case rec.SecretRef == "":
		return rec, push.Secret{}, targetReady, nil
	}
	secret, err = s.vault.Open(ctx, rec.SecretRef)
	switch {
	case errors.Is(err, push.ErrSecretNotFound):
		return rec, push.Secret{}, targetNoSecret, nil
	case err != nil:
		if ctx.Err() == nil {
			s.log.ErrorContext(ctx, "push: opening a secret failed", "task", d.TaskID, "config", d.ConfigID)
		}
		return push.Record{}, push.Secret{}, targetGone, err
	}
	return rec, secret, targetReady, nil
}

// outcome is how one attempt ended.
type outcome struct {
	delivered bool
	// class is the status class of a failed attempt.
	class string
	// final: the receiver refused this push for good; it is not retried.
	final bool
	// retryAfter is the receiver's Retry-After, 0 when it sent none.
	retryAfter time.Duration
}

// attempt sends one push and classifies the outcome. A panic of host
// code on the way (the resolver, the dialer) is a failed attempt.
func (s *Service) attempt(ctx context.Context, rec *push.Record, secret push.Secret, key []string, body []byte) (out outcome) {
	defer func() {
		if v := recover(); v != nil {
			s.logPanic(ctx, "attempting a push", rec.TaskID, recovery.Contain(v))
			out = outcome{class: classFault}
		}
	}()
	select {
	case s.sem <- struct{}{}:
		defer func() { <-s.sem }()
	case <-ctx.Done():
		return outcome{class: classTimeout}
	}
	actx, cancel := context.WithTimeout(ctx, s.retry.AttemptTimeout)
	defer cancel()
	// The guard judges the URL exactly as registered, re-resolving it now
	// (OpenWOP RFC 0214 §B); the request then carries the checked destination, so the
	// client dials those addresses without another lookup.
	req, err := s.guard.Request(actx, http.MethodPost, rec.URL, bytes.NewReader(body))
	if err != nil {
		if errors.Is(err, egress.ErrRefused) {
			return outcome{class: classRefused}
		}
		return outcome{class: classTimeout}
	}
	// Header maps are written directly: the names are canonical already.
	req.Header["Content-Type"] = s.fixedHeader.contentType
	req.Header["User-Agent"] = s.fixedHeader.userAgent
	req.Header["Idempotency-Key"] = key
	if auth := authorization(rec.Scheme, secret); auth != "" {
		req.Header["Authorization"] = []string{auth}
	}
	// The client's transport itself: http.Client.Do would copy the URL
	// and headers for redirects, which a push never follows.
	resp, err := s.client.Transport.RoundTrip(req)
	if err != nil {
		var pe *recovery.Panic
		switch {
		case errors.As(err, &pe):
			s.logPanic(ctx, "dialling", rec.TaskID, pe)
			return outcome{class: classFault}
		case errors.Is(err, egress.ErrRefused):
			return outcome{class: classRefused}
		case actx.Err() != nil && ctx.Err() == nil:
			return outcome{class: classTimeout}
		}
		return outcome{class: classNetwork}
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxDrain))
	_ = resp.Body.Close()
	c := resp.StatusCode
	if 200 <= c && c < 300 {
		return outcome{delivered: true}
	}
	out = outcome{class: statusClass(c), final: !retryable(c)}
	if !out.final {
		if vs := resp.Header["Retry-After"]; len(vs) > 0 {
			out.retryAfter, _ = parseRetryAfter(vs[0], s.clock.Now())
		}
	}
	return out
}

// statusClass is the class of a failed attempt's status code.
func statusClass(c int) string {
	switch {
	case 300 <= c && c < 400:
		return class3xx
	case 400 <= c && c < 500:
		return class4xx
	case 500 <= c && c < 600:
		return class5xx
	}
	return classOther
}

// authorization is the Authorization header of a push (OpenWOP RFC 0214 §C):
// "{scheme} {credentials}" from the registered authentication, else
// "Bearer {token}" when only a token was given, else nothing.
func authorization(scheme string, secret push.Secret) string {
	switch {
	case scheme != "" && secret.Credentials != "":
		return scheme + " " + secret.Credentials
	case secret.Token != "":
		return "Bearer " + secret.Token
	}
	return ""
}

// deadLetterPayload is the content-free body of a dead letter: which
// config of which task, how many attempts, the last status class. Never
// the URL, a header or a secret.
type deadLetterPayload struct {
	TaskID     string `json:"taskId"`
	ConfigID   string `json:"configId"`
	Attempts   int    `json:"attempts"`
	LastStatus string `json:"lastStatus"`
}

// deadLetter records an exhausted push as a durable host event of the
// task's tenant (OpenWOP RFC 0214 §C; webhooks.md §Durability). It is never sent to A2A clients.
// A dead letter is never dropped: a sink that refuses it is tried again,
// with growing pauses, until it takes it. It reports false when ctx ended
// first; the delivery then stays in the outbox, and the next Start
// attempts the push again.
func (s *Service) deadLetter(ctx context.Context, rec *push.Record, attempts int, class string) bool {
	payload, err := json.Marshal(deadLetterPayload{TaskID: rec.TaskID, ConfigID: rec.ID, Attempts: attempts, LastStatus: class})
	if err != nil {
		s.log.ErrorContext(ctx, "push: encoding a dead letter failed", "task", rec.TaskID, "config", rec.ID)
		return true
	}
	for try := 1; ; try++ {
		err := s.contained(ctx, "the event sink", rec.TaskID, func() error {
			ev := interop.HostEvent{
				Type:        push.DeadLetterEventType,
				Timestamp:   s.now().UTC(),
				Delivery:    interop.DeliveryDurable,
				WorkspaceID: rec.Workspace,
				Payload:     payload,
			}
			return s.events.PublishHostEvent(context.WithoutCancel(ctx), rec.Tenant, ev)
		})
		if err == nil {
			return true
		}
		if !errors.Is(err, errPanicked) {
			s.log.ErrorContext(ctx, "push: recording a dead letter failed; trying again", "task", rec.TaskID, "config", rec.ID, "try", try)
		}
		if !s.sleep(ctx, watchRetry(try)) {
			return false
		}
	}
}
