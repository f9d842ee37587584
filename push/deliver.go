package push

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/wopinterop/wopinterop/interop"
)

// Delivering. Each config of a task is a lane: its deliveries are
// attempted strictly in order, one at a time, so a receiver sees a task's
// pushes in run order; lanes run concurrently up to Options.Concurrency
// attempts in flight. A lane's goroutine exists while it has work.

// ContentType is the media type of every push body (OpenWOP RFC 0214 §C).
const ContentType = "application/a2a+json"

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
)

// maxDrain bounds how much of a response body is read (and discarded) so
// the connection can be reused.
const maxDrain = 64 << 10

type laneKey struct{ task, config string }

// lane is one config's queue; guarded by Service.mu.
type lane struct {
	queue []Delivery
}

// enqueue records d in the outbox, then hands it to its lane.
func (s *Service) enqueue(ctx context.Context, d Delivery) error {
	if err := s.outbox.Put(ctx, d); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queueLocked(d)
	return nil
}

// queueLocked appends d to its lane, starting the lane if it was idle.
// s.mu is held.
func (s *Service) queueLocked(d Delivery) {
	if s.state != stateStarted && s.state != stateClosing {
		return // stays in the outbox for the next Start
	}
	k := laneKey{d.TaskID, d.ConfigID}
	l := s.lanes[k]
	if l != nil {
		l.queue = append(l.queue, d)
		return
	}
	l = &lane{queue: []Delivery{d}}
	s.lanes[k] = l
	s.laneWG.Add(1)
	go s.runLane(k, l)
}

func (s *Service) runLane(k laneKey, l *lane) {
	defer s.laneWG.Done()
	ctx := s.laneCtx
	for {
		s.mu.Lock()
		if len(l.queue) == 0 || ctx.Err() != nil {
			delete(s.lanes, k)
			s.mu.Unlock()
			return
		}
		d := l.queue[0]
		l.queue[0] = Delivery{} // release the body
		l.queue = l.queue[1:]
		s.mu.Unlock()
		if s.deliver(ctx, &d) {
			if err := s.outbox.Remove(context.WithoutCancel(ctx), d.ID); err != nil {
				s.log.ErrorContext(ctx, "push: removing a delivery from the outbox failed", "task", d.TaskID, "config", d.ConfigID)
			}
		}
	}
}

// deliver attempts d until it is delivered, dead-lettered or dropped, and
// reports whether it is finished; false means it was abandoned on Close
// and stays in the outbox.
func (s *Service) deliver(ctx context.Context, d *Delivery) bool {
	rec, secret, st := s.target(ctx, d)
	if st != targetReady {
		return s.dropped(ctx, d, &rec, st)
	}
	if d.Body == nil {
		s.finish(ctx, &rec)
		return true
	}
	for attempt := 1; ; attempt++ {
		class, delivered := s.attempt(ctx, &rec, secret, d.Body)
		if delivered {
			break
		}
		if ctx.Err() != nil {
			return false
		}
		s.log.WarnContext(ctx, "push: delivery attempt failed", "task", d.TaskID, "config", d.ConfigID, "attempt", attempt, "class", class)
		if attempt >= s.retry.MaxAttempts {
			s.deadLetter(ctx, &rec, attempt, class)
			break
		}
		if !sleep(ctx, s.retry.wait(attempt)) {
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
func (s *Service) dropped(ctx context.Context, d *Delivery, rec *Record, st targetState) bool {
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
func (s *Service) target(ctx context.Context, d *Delivery) (Record, Secret, targetState) {
	for failures := 0; ; failures++ {
		if failures > 0 && !sleep(ctx, watchRetry(failures)) {
			return Record{}, Secret{}, targetAbandoned
		}
		rec, err := s.configs.Get(ctx, d.TaskID, d.ConfigID)
		switch {
		case ctx.Err() != nil:
			return Record{}, Secret{}, targetAbandoned
		case errors.Is(err, interop.ErrNotFound):
			return Record{}, Secret{}, targetGone
		case err != nil:
			s.log.ErrorContext(ctx, "push: reading a config failed", "task", d.TaskID, "config", d.ConfigID)
			continue
		case rec.Done:
			return Record{}, Secret{}, targetGone
		case rec.SecretRef == "":
			return rec, Secret{}, targetReady
		}
		secret, err := s.vault.Open(ctx, rec.SecretRef)
		switch {
		case ctx.Err() != nil:
			return Record{}, Secret{}, targetAbandoned
		case errors.Is(err, ErrSecretNotFound):
			return rec, Secret{}, targetNoSecret
		case err != nil:
			s.log.ErrorContext(ctx, "push: opening a secret failed", "task", d.TaskID, "config", d.ConfigID)
			continue
		}
		return rec, secret, targetReady
	}
}

// attempt sends one push and classifies the outcome.
func (s *Service) attempt(ctx context.Context, rec *Record, secret Secret, body []byte) (class string, delivered bool) {
	select {
	case s.sem <- struct{}{}:
		defer func() { <-s.sem }()
	case <-ctx.Done():
		return classTimeout, false
	}
	actx, cancel := context.WithTimeout(ctx, s.retry.AttemptTimeout)
	defer cancel()
	// The guard judges the URL exactly as registered, re-resolving it now
	// (OpenWOP RFC 0214 §B); the request then carries the checked destination, so the
	// client dials those addresses without another lookup.
	dest, err := s.guard.Check(actx, rec.URL)
	if err != nil {
		if errors.Is(err, ErrRefused) {
			return classRefused, false
		}
		return classTimeout, false
	}
	req, err := http.NewRequestWithContext(withDestination(actx, dest), http.MethodPost, dest.URL.String(), bytes.NewReader(body))
	if err != nil {
		return classRefused, false
	}
	// Header maps are written directly: the names are canonical already.
	req.Header["Content-Type"] = []string{ContentType}
	req.Header["User-Agent"] = []string{"wopinterop-push"}
	if auth := authorization(rec.Scheme, secret); auth != "" {
		req.Header["Authorization"] = []string{auth}
	}
	resp, err := s.client.Do(req)
	if err != nil {
		switch {
		case errors.Is(err, ErrRefused):
			return classRefused, false
		case actx.Err() != nil && ctx.Err() == nil:
			return classTimeout, false
		}
		return classNetwork, false
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxDrain))
	_ = resp.Body.Close()
	switch c := resp.StatusCode; {
	case 200 <= c && c < 300:
		return "", true
	case 300 <= c && c < 400:
		return class3xx, false
	case 400 <= c && c < 500:
		return class4xx, false
	case 500 <= c && c < 600:
		return class5xx, false
	}
	return classOther, false
}

// authorization is the Authorization header of a push (OpenWOP RFC 0214 §C):
// "{scheme} {credentials}" from the registered authentication, else
// "Bearer {token}" when only a token was given, else nothing.
func authorization(scheme string, secret Secret) string {
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
// task's tenant (OpenWOP RFC 0214 §C; webhooks.md §Durability). It is never sent to A2A clients. The
// sink is retried a few times; a dead letter the sink keeps refusing is
// logged, content-free.
func (s *Service) deadLetter(ctx context.Context, rec *Record, attempts int, class string) {
	payload, err := json.Marshal(deadLetterPayload{TaskID: rec.TaskID, ConfigID: rec.ID, Attempts: attempts, LastStatus: class})
	if err != nil {
		s.log.ErrorContext(ctx, "push: encoding a dead letter failed", "task", rec.TaskID, "config", rec.ID)
		return
	}
	ev := interop.HostEvent{
		Type:        DeadLetterEventType,
		Timestamp:   s.now().UTC(),
		Delivery:    interop.DeliveryDurable,
		WorkspaceID: rec.Workspace,
		Payload:     payload,
	}
	sinkCtx := context.WithoutCancel(ctx)
	for try := 1; ; try++ {
		err := s.events.PublishHostEvent(sinkCtx, rec.Tenant, ev)
		if err == nil {
			return
		}
		if try == 3 {
			s.log.ErrorContext(ctx, "push: recording a dead letter failed", "task", rec.TaskID, "config", rec.ID, "attempts", strconv.Itoa(attempts), "class", class)
			return
		}
		if !sleep(ctx, time.Duration(try)*100*time.Millisecond) {
			return
		}
	}
}
