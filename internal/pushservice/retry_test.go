package pushservice

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wopinterop/wopinterop/push"
)

func TestRetryWaits(t *testing.T) {
	none, _ := withDefaults(push.RetryPolicy{Backoff: push.BackoffNone})
	fixed, _ := withDefaults(push.RetryPolicy{Backoff: push.BackoffFixed, Delay: 30 * time.Millisecond})
	exp, _ := withDefaults(push.RetryPolicy{Backoff: push.BackoffExponential, Delay: 100 * time.Millisecond, MaxDelay: 1 * time.Second})
	for n := 1; n <= 8; n++ {
		if w := none.wait(n, 0); w != 0 {
			t.Errorf("none: wait %d = %v", n, w)
		}
		if w := fixed.wait(n, 0); w != 30*time.Millisecond {
			t.Errorf("fixed: wait %d = %v", n, w)
		}
		ceil := min(100*time.Millisecond<<(n-1), time.Second)
		low := 0
		for range 200 {
			w := exp.wait(n, 0)
			if w < 0 || w > ceil {
				t.Fatalf("exponential: wait %d = %v, want within [0, %v]", n, w, ceil)
			}
			if w < ceil/2 {
				low++
			}
		}
		// Full jitter: the whole range below the ceiling is used (equal
		// jitter would never go below its half).
		if low == 0 || low == 200 {
			t.Errorf("exponential: wait %d fell below half its ceiling %d times in 200", n, low)
		}
	}
	def, err := withDefaults(push.RetryPolicy{})
	want := retryPolicy{MaxAttempts: 60, Backoff: push.BackoffExponential, Delay: time.Second, MaxDelay: 5 * time.Minute, AttemptTimeout: 10 * time.Second}
	if err != nil || def != want {
		t.Fatalf("defaults %+v %v, want %+v", def, err, want)
	}
}

// TestRetryAfterLengthensWaits: a Retry-After raises a wait to what it
// asks, up to MaxDelay, and never shortens one.
func TestRetryAfterLengthensWaits(t *testing.T) {
	def, _ := withDefaults(push.RetryPolicy{})
	fixed, _ := withDefaults(push.RetryPolicy{Backoff: push.BackoffFixed, Delay: 10 * time.Second, MaxDelay: time.Minute})
	none, _ := withDefaults(push.RetryPolicy{Backoff: push.BackoffNone})
	cases := []struct {
		name       string
		p          retryPolicy
		n          int
		retryAfter time.Duration
		lo, hi     time.Duration
	}{
		{"longer than the backoff", def, 1, 2 * time.Minute, 2 * time.Minute, 2 * time.Minute},
		{"beyond the cap", def, 1, 24 * time.Hour, 5 * time.Minute, 5 * time.Minute},
		{"shorter than a fixed wait", fixed, 1, time.Second, 10 * time.Second, 10 * time.Second},
		{"none honours it", none, 3, 45 * time.Second, 45 * time.Second, 45 * time.Second},
		{"zero changes nothing", def, 3, 0, 0, 4 * time.Second},
	}
	for _, c := range cases {
		for range 50 {
			if w := c.p.wait(c.n, c.retryAfter); w < c.lo || w > c.hi {
				t.Fatalf("%s: wait %v, want within [%v, %v]", c.name, w, c.lo, c.hi)
			}
		}
	}
}

// TestDefaultScheduleSpansAnHour draws the default schedule many times:
// every wait stays under 5 minutes, and every draw keeps a push alive for
// more than an hour before it is dead-lettered.
func TestDefaultScheduleSpansAnHour(t *testing.T) {
	p, _ := withDefaults(push.RetryPolicy{})
	if p.ceiling(1) != time.Second || p.ceiling(9) != 256*time.Second || p.ceiling(10) != 5*time.Minute || p.ceiling(p.MaxAttempts-1) != 5*time.Minute {
		t.Fatalf("ceilings %v %v %v %v", p.ceiling(1), p.ceiling(9), p.ceiling(10), p.ceiling(p.MaxAttempts-1))
	}
	var most time.Duration
	for n := 1; n < p.MaxAttempts; n++ {
		most += p.ceiling(n)
	}
	if most != 4*time.Hour+18*time.Minute+31*time.Second {
		t.Fatalf("the longest schedule is %v", most)
	}
	const draws = 2000
	var shortest, sum time.Duration
	for i := range draws {
		var total time.Duration
		for n := 1; n < p.MaxAttempts; n++ {
			w := p.wait(n, 0)
			if w > 5*time.Minute {
				t.Fatalf("wait %d = %v, above the 5m cap", n, w)
			}
			total += w
		}
		if i == 0 || total < shortest {
			shortest = total
		}
		sum += total
	}
	if shortest < time.Hour {
		t.Fatalf("a schedule spanned only %v", shortest)
	}
	if mean := sum / draws; mean < 2*time.Hour || mean > 2*time.Hour+20*time.Minute {
		t.Fatalf("mean span %v, want about 2h09m", mean)
	}
}

func TestRetryableStatuses(t *testing.T) {
	for _, c := range []int{100, 199, 300, 301, 302, 307, 308, 408, 425, 429, 500, 502, 503, 504, 599, 600, 999} {
		if !retryable(c) {
			t.Errorf("%d is final, want retried", c)
		}
	}
	for _, c := range []int{400, 401, 403, 404, 405, 409, 410, 413, 415, 422, 451, 499} {
		if retryable(c) {
			t.Errorf("%d is retried, want final", c)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	cases := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"120", 2 * time.Minute, true},
		{"0", 0, true},
		{"007", 7 * time.Second, true},
		{"99999999999999999999999", maxRetryAfterSeconds * time.Second, true},
		{"Mon, 30 Nov 2026 09:01:30 GMT", 90 * time.Second, true},
		{"Monday, 30-Nov-26 09:00:10 GMT", 10 * time.Second, true},
		{"Mon Nov 30 09:00:05 2026", 5 * time.Second, true},
		{"Sun, 29 Nov 2026 09:00:00 GMT", 0, true}, // in the past
		{"", 0, false},
		{"-1", 0, false},
		{"1.5", 0, false},
		{"12 ", 0, false},
		{"+5", 0, false},
		{"soon", 0, false},
		{"2026-11-30T09:01:00Z", 0, false},
	}
	for _, c := range cases {
		got, ok := parseRetryAfter(c.in, now)
		if got != c.want || ok != c.ok {
			t.Errorf("%q: (%v, %v), want (%v, %v)", c.in, got, ok, c.want, c.ok)
		}
	}
}

// FuzzRetryAfter: whatever a receiver sends, the parse never panics, a
// delay is never negative, delay-seconds are read exactly, and the wait
// it leads to stays within the policy's cap.
func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{"120", "0", "Mon, 30 Nov 2026 09:01:30 GMT", "Monday, 30-Nov-26 09:00:10 GMT", "Mon Nov 30 09:00:05 2026", "-1", "1e3", "99999999999999999999", ""} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	p, _ := withDefaults(push.RetryPolicy{})
	f.Fuzz(func(t *testing.T, v string) {
		d, ok := parseRetryAfter(v, now)
		if d < 0 || (!ok && d != 0) {
			t.Fatalf("%q: (%v, %v)", v, d, ok)
		}
		if n, err := strconv.ParseUint(v, 10, 64); err == nil && n < maxRetryAfterSeconds && (!ok || d != time.Duration(n)*time.Second) {
			t.Fatalf("%q: (%v, %v), want %ds", v, d, ok, n)
		}
		if w := p.wait(1, d); w < 0 || w > p.MaxDelay {
			t.Fatalf("%q: wait %v outside [0, %v]", v, w, p.MaxDelay)
		}
	})
}

// TestOutageOfAnHourLosesNothing: with the default policy, a receiver
// that answers 503 for 59 minutes loses no push; they arrive in run
// order once it is back. The clock jumps over every wait, so the hour
// passes in milliseconds through the production schedule.
func TestOutageOfAnHourLosesNothing(t *testing.T) {
	clock := newJumpClock()
	back := clock.Now().Add(59 * time.Minute)
	var failed atomic.Int32
	delivered := make(chan []byte, 16)
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if clock.Now().Before(back) {
			failed.Add(1)
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		delivered <- body
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rc.Close)
	e := newPushEnv(t, withAllow(rc.URL), withRetry(push.RetryPolicy{}), withClock(clock))
	run := e.suspended(t, e.alice, 3)
	e.register(t, e.alice, run, Spec{URL: rc.URL})
	start := clock.Now()
	e.accept(t, e.alice, run)
	var got []string
	began := time.Now()
	for len(got) < 5 {
		select {
		case b := <-delivered:
			got = append(got, label(t, b))
		case <-time.After(10 * time.Millisecond):
			if n := len(e.events.all()); n > 0 || time.Since(began) > 10*time.Second {
				t.Fatalf("%d pushes delivered, %d dead-lettered: %v", len(got), n, got)
			}
		}
	}
	if diff := cmp.Diff(wantLabels(3), got); diff != "" {
		t.Fatalf("pushes after the outage (-want +got):\n%s", diff)
	}
	waitFor(t, "the outbox drained", func() bool { return e.outbox.Len() == 0 })
	if n := len(e.events.all()); n != 0 {
		t.Fatalf("%d dead letters after a 59-minute outage", n)
	}
	t.Logf("59-minute outage: %d failed attempts over %v of clock time, 5 pushes delivered in order", failed.Load(), clock.Now().Sub(start).Round(time.Second))
}

// TestExhaustedScheduleDeadLetters: a receiver that never recovers gets
// exactly MaxAttempts attempts per push, spread over more than an hour,
// then the push is dead-lettered and the next one gets its own schedule.
func TestExhaustedScheduleDeadLetters(t *testing.T) {
	clock := newJumpClock()
	var attempts atomic.Int32
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		attempts.Add(1)
		w.WriteHeader(http.StatusBadGateway)
	})
	e := newPushEnv(t, withAllow(rc.origin()), withRetry(push.RetryPolicy{}), withClock(clock))
	run := e.suspended(t, e.alice, 0)
	cfg := e.register(t, e.alice, run, Spec{URL: rc.origin()})
	e.accept(t, e.alice, run)
	evs := e.events.wait(t, 2)
	// The first push's schedule is the first MaxAttempts-1 waits (the
	// watcher never waits here).
	var span time.Duration
	for _, w := range clock.recorded()[:push.DefaultMaxAttempts-1] {
		span += w
	}
	if span < time.Hour || span > 4*time.Hour+19*time.Minute {
		t.Fatalf("the first push was dead-lettered after %v of clock time", span)
	}
	for _, se := range evs {
		var p deadLetterPayload
		if err := json.Unmarshal(se.ev.Payload, &p); err != nil {
			t.Fatal(err)
		}
		if p != (deadLetterPayload{TaskID: run.ID, ConfigID: cfg.ID, Attempts: push.DefaultMaxAttempts, LastStatus: "5xx"}) {
			t.Fatalf("dead letter %+v", p)
		}
	}
	if n := attempts.Load(); n != 2*push.DefaultMaxAttempts {
		t.Fatalf("%d attempts, want %d", n, 2*push.DefaultMaxAttempts)
	}
	for _, w := range clock.recorded() {
		if w > push.DefaultMaxDelay {
			t.Fatalf("a wait of %v", w)
		}
	}
	t.Logf("two pushes dead-lettered after %d attempts each; the first after %v of clock time", push.DefaultMaxAttempts, span.Round(time.Second))
}

// TestFinal4xxIsDeadLetteredAtOnce: a 4xx other than 408, 425 and 429 is
// the receiver's final answer: one attempt, then the dead letter. 408,
// 425 and 429 are retried.
func TestFinal4xxIsDeadLetteredAtOnce(t *testing.T) {
	for _, code := range []int{400, 401, 403, 404, 410, 422} {
		t.Run(strconv.Itoa(code), func(t *testing.T) {
			rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(code) })
			e := newPushEnv(t, withAllow(rc.origin()), withRetry(push.RetryPolicy{}), withClock(newJumpClock()))
			run := e.suspended(t, e.alice, 0)
			cfg := e.register(t, e.alice, run, Spec{URL: rc.origin()})
			e.accept(t, e.alice, run)
			evs := e.events.wait(t, 2) // WORKING and COMPLETED, one attempt each
			for _, se := range evs {
				var p deadLetterPayload
				if err := json.Unmarshal(se.ev.Payload, &p); err != nil {
					t.Fatal(err)
				}
				if p != (deadLetterPayload{TaskID: run.ID, ConfigID: cfg.ID, Attempts: 1, LastStatus: "4xx"}) {
					t.Fatalf("dead letter %+v", p)
				}
			}
			rc.next(t)
			rc.next(t)
			rc.none(t, 50*time.Millisecond)
		})
	}
	for _, code := range []int{408, 425, 429} {
		t.Run(strconv.Itoa(code), func(t *testing.T) {
			var calls atomic.Int32
			rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {
				if calls.Add(1) <= 2 {
					w.WriteHeader(code)
					return
				}
				w.WriteHeader(http.StatusNoContent)
			})
			e := newPushEnv(t, withAllow(rc.origin()), withRetry(push.RetryPolicy{}), withClock(newJumpClock()))
			run := e.suspended(t, e.alice, 0)
			e.register(t, e.alice, run, Spec{URL: rc.origin()})
			e.accept(t, e.alice, run)
			got := rc.collect(t, 4) // WORKING twice refused, then WORKING, COMPLETED
			if diff := cmp.Diff([]string{"TASK_STATE_WORKING", "TASK_STATE_WORKING", "TASK_STATE_WORKING", "TASK_STATE_COMPLETED"}, got); diff != "" {
				t.Fatalf("attempts (-want +got):\n%s", diff)
			}
			waitFor(t, "the outbox drained", func() bool { return e.outbox.Len() == 0 })
			if n := len(e.events.all()); n != 0 {
				t.Fatalf("%d dead letters", n)
			}
		})
	}
}

// TestRetryAfterIsHonoured: Retry-After in seconds and as an HTTP-date
// sets the next wait; beyond MaxDelay it is capped.
func TestRetryAfterIsHonoured(t *testing.T) {
	clock := newJumpClock()
	var calls atomic.Int32
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		switch calls.Add(1) {
		case 1:
			w.Header().Set("Retry-After", "120")
			w.WriteHeader(http.StatusServiceUnavailable)
		case 2:
			w.Header().Set("Retry-After", clock.Now().Add(90*time.Second).Format(http.TimeFormat))
			w.WriteHeader(http.StatusTooManyRequests)
		case 3:
			w.Header().Set("Retry-After", "86400")
			w.WriteHeader(http.StatusMovedPermanently)
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	})
	e := newPushEnv(t, withAllow(rc.origin()), withRetry(push.RetryPolicy{}), withClock(clock))
	run := e.suspended(t, e.alice, 0)
	e.register(t, e.alice, run, Spec{URL: rc.origin()})
	e.accept(t, e.alice, run)
	if got := rc.collect(t, 5); got[3] != "TASK_STATE_WORKING" || got[4] != "TASK_STATE_COMPLETED" {
		t.Fatalf("pushes %v", got)
	}
	waits := clock.recorded()
	if len(waits) != 3 || waits[0] != 120*time.Second || waits[1] <= 89*time.Second || waits[1] > 90*time.Second || waits[2] != 5*time.Minute {
		t.Fatalf("waits %v, want [2m0s, ~1m30s, 5m0s]", waits)
	}
}

// TestDeadLetterIsNeverDropped: a sink that refuses the dead letter many
// times is tried until it takes it.
func TestDeadLetterIsNeverDropped(t *testing.T) {
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusGone) })
	e := newPushEnv(t, withAllow(rc.origin()), withClock(newJumpClock()))
	e.events.fail = 8
	run := e.suspended(t, e.alice, 0)
	e.register(t, e.alice, run, Spec{URL: rc.origin()})
	e.accept(t, e.alice, run)
	evs := e.events.wait(t, 2)
	for _, se := range evs {
		if se.ev.Type != push.DeadLetterEventType {
			t.Fatalf("event %+v", se.ev)
		}
	}
	if n := strings.Count(e.logs.String(), "recording a dead letter failed"); n != 8 {
		t.Fatalf("%d sink failures logged, want 8", n)
	}
	waitFor(t, "the outbox drained", func() bool { return e.outbox.Len() == 0 })
}

// Close does not wait out a retry schedule: a push whose receiver is down
// at shutdown stops at its failed attempt, stays in the outbox for the
// next Start, and Close returns at once without its context's error.
func TestCloseCutsRetryWaitsShort(t *testing.T) {
	rc := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) })
	e := newPushEnv(t, withAllow(rc.origin()), withRetry(push.RetryPolicy{MaxAttempts: 60, Backoff: push.BackoffFixed, Delay: time.Hour, AttemptTimeout: 5 * time.Second}))
	run := e.suspended(t, e.alice, 1)
	e.register(t, e.alice, run, Spec{URL: rc.origin(), Token: secretToken})
	e.accept(t, e.alice, run)
	rc.next(t) // the first attempt failed; the next waits an hour
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	if err := e.svc.Close(ctx); err != nil {
		t.Fatalf("Close = %v, want nil: no attempt was in flight", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("Close took %v with a receiver down", took)
	}
	if e.outbox.Len() == 0 {
		t.Fatal("the undelivered push left the outbox: the next Start could not resume it")
	}
	if n := len(e.events.all()); n != 0 {
		t.Fatalf("%d dead letters at Close; the schedule was not spent", n)
	}
}
