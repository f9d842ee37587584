package pushservice

import (
	"context"
	"errors"
	"iter"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"

	"github.com/wopinterop/wopinterop/egress"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/push"
)

// panicValue is what the host code in these tests panics with: a secret
// and a push body, neither of which may reach a log line.
const panicValue = "host code broke: " + secretToken + ` {"statusUpdate":{"taskId":"body-must-not-leak"}}`

// trap makes host code panic once, the first time it is reached while
// armed.
type trap struct{ armed atomic.Bool }

func (tr *trap) spring() {
	if tr.armed.CompareAndSwap(true, false) {
		panic(panicValue)
	}
}

type trapConfigs struct {
	push.ConfigStore
	tr *trap
}

func (c trapConfigs) Get(ctx context.Context, taskID, id string) (push.Record, error) {
	c.tr.spring()
	return c.ConfigStore.Get(ctx, taskID, id)
}

type trapVault struct {
	push.Vault
	tr *trap
}

func (v trapVault) Open(ctx context.Context, ref string) (push.Secret, error) {
	v.tr.spring()
	return v.Vault.Open(ctx, ref)
}

type trapOutbox struct {
	push.Outbox
	tr *trap
}

func (o trapOutbox) Remove(ctx context.Context, id string) error {
	o.tr.spring()
	return o.Outbox.Remove(ctx, id)
}

type trapSink struct {
	interop.EventSink
	tr *trap
}

func (s trapSink) PublishHostEvent(ctx context.Context, tenant string, ev interop.HostEvent) error {
	s.tr.spring()
	return s.EventSink.PublishHostEvent(ctx, tenant, ev)
}

type trapResolver struct {
	egress.Resolver
	tr *trap
}

func (r trapResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	r.tr.spring()
	return r.Resolver.LookupNetIP(ctx, network, host)
}

type trapClock struct {
	push.Clock
	tr *trap
}

func (c trapClock) After(d time.Duration) <-chan time.Time {
	c.tr.spring()
	return c.Clock.After(d)
}

// faultyStore makes the RunStore misbehave for one task ("*": every
// task), call by call:
// watch[i] is what the i-th WatchRun does, getRun[i] the i-th GetRun.
type faultyStore struct {
	interop.RunStore
	mu     sync.Mutex
	task   string
	watch  []storeFault
	getRun []storeFault
}

type storeFault int

const (
	behave         storeFault = iota
	panicNow                  // the call panics with panicValue
	failNow                   // the call returns an error
	yieldThenPanic            // one event, then a runtime panic inside the sequence
	yieldThenEnd              // one event, then the sequence ends early
)

func (s *faultyStore) next(list *[]storeFault, taskID string) storeFault {
	s.mu.Lock()
	defer s.mu.Unlock()
	if (s.task != "*" && taskID != s.task) || len(*list) == 0 {
		return behave
	}
	f := (*list)[0]
	*list = (*list)[1:]
	return f
}

func (s *faultyStore) WatchRun(ctx context.Context, sub interop.Subject, runID string, after int64) (iter.Seq2[interop.RunEvent, error], error) {
	f := s.next(&s.watch, runID)
	switch f {
	case panicNow:
		panic(panicValue)
	case failNow:
		return nil, errors.New("store unavailable")
	}
	seq, err := s.RunStore.WatchRun(ctx, sub, runID, after)
	if err != nil || f == behave {
		return seq, err
	}
	return func(yield func(interop.RunEvent, error) bool) {
		for ev, err := range seq {
			if !yield(ev, err) {
				return
			}
			break // leaves the store's own sequence cleanly
		}
		if f == yieldThenPanic {
			var m map[string]int
			m["boom"]++ // a runtime error: its text is the runtime's
		}
	}, nil
}

func (s *faultyStore) GetRun(ctx context.Context, sub interop.Subject, runID string) (interop.Run, error) {
	if s.next(&s.getRun, runID) == panicNow {
		panic(panicValue)
	}
	return s.RunStore.GetRun(ctx, sub, runID)
}

func withFaultyStore(fs *faultyStore) envOption {
	return func(c *envConfig) {
		c.store = func(m *memstore.Store) interop.RunStore { fs.RunStore = m; return fs }
	}
}

// errorLines returns the error-level log lines.
func errorLines(logs string) []string {
	var out []string
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, `"level":"ERROR"`) {
			out = append(out, line)
		}
	}
	return out
}

// TestPanickingRunStoreCostsOnlyItsTask: WatchRun panicking, its event
// sequence panicking half-way and GetRun panicking cost the process
// nothing; the task's delivery resumes from the last event queued, with
// nothing lost or repeated, and another task is not held up. Each panic
// is logged once, at error level, without its value.
func TestPanickingRunStoreCostsOnlyItsTask(t *testing.T) {
	a, b := newReceiver(t, nil), newReceiver(t, nil)
	fs := &faultyStore{
		watch:  []storeFault{panicNow, yieldThenPanic, yieldThenEnd},
		getRun: []storeFault{panicNow},
	}
	e := newPushEnv(t, withAllow(a.origin(), b.origin()), withFaultyStore(fs))
	const chunks = 4
	runA, runB := e.suspended(t, e.alice, chunks), e.suspended(t, e.alice, chunks)
	fs.mu.Lock()
	fs.task = runA.ID
	fs.mu.Unlock()
	e.register(t, e.alice, runA, Spec{URL: a.origin(), Token: secretToken})
	e.register(t, e.alice, runB, Spec{URL: b.origin(), Token: secretToken})
	e.accept(t, e.alice, runB)
	if diff := cmp.Diff(wantLabels(chunks), b.collect(t, chunks+2)); diff != "" {
		t.Fatalf("the other task's pushes (-want +got):\n%s", diff)
	}
	e.accept(t, e.alice, runA)
	if diff := cmp.Diff(wantLabels(chunks), a.collect(t, chunks+2)); diff != "" {
		t.Fatalf("the panicking task's pushes (-want +got):\n%s", diff)
	}
	a.none(t, 50*time.Millisecond)
	logs := e.logs.String()
	lines := panicLines(t, logs)
	if len(lines) != 3 || len(errorLines(logs)) != 3 {
		t.Fatalf("%d panic lines, %d error lines, want 3 of each:\n%s", len(lines), len(errorLines(logs)), strings.Join(errorLines(logs), "\n"))
	}
	for _, line := range lines {
		if !strings.Contains(line, `"in":"following the run","task":"`+runA.ID+`"`) || !strings.Contains(line, `"stack":"goroutine `) {
			t.Errorf("panic line %s", line)
		}
	}
	if !strings.Contains(lines[1], "assignment to entry in nil map") {
		t.Errorf("a runtime error's text is kept: %s", lines[1])
	}
	mustNotContain(t, "logs", logs, secretToken, "body-must-not-leak")
}

// TestPanickingProjectorCostsOnlyItsTask: a Projector that panics is a
// failed pass over the run; the event is projected again and nothing is
// lost or repeated.
func TestPanickingProjectorCostsOnlyItsTask(t *testing.T) {
	a, b := newReceiver(t, nil), newReceiver(t, nil)
	var panicky atomic.Value
	panicky.Store("")
	var calls atomic.Int32
	inner := testProjector()
	project := ProjectorFunc(func(ctx context.Context, sub interop.Subject, task TaskRef, ev *interop.RunEvent, prev interop.RunStatus) ([]wire.Event, error) {
		if task.ID == panicky.Load().(string) {
			if n := calls.Add(1); n == 1 || n == 3 {
				panic(panicValue)
			}
		}
		return inner.Project(ctx, sub, task, ev, prev)
	})
	e := newPushEnv(t, withAllow(a.origin(), b.origin()), func(c *envConfig) { c.project = project })
	const chunks = 3
	runA, runB := e.suspended(t, e.alice, chunks), e.suspended(t, e.alice, chunks)
	panicky.Store(runA.ID)
	e.register(t, e.alice, runA, Spec{URL: a.origin(), Token: secretToken})
	e.register(t, e.alice, runB, Spec{URL: b.origin()})
	e.accept(t, e.alice, runA)
	e.accept(t, e.alice, runB)
	if diff := cmp.Diff(wantLabels(chunks), b.collect(t, chunks+2)); diff != "" {
		t.Fatalf("the other task's pushes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantLabels(chunks), a.collect(t, chunks+2)); diff != "" {
		t.Fatalf("the panicking task's pushes (-want +got):\n%s", diff)
	}
	a.none(t, 50*time.Millisecond)
	logs := e.logs.String()
	lines := panicLines(t, logs)
	if len(lines) != 2 || len(errorLines(logs)) != 2 {
		t.Fatalf("%d panic lines, %d error lines, want 2 of each", len(lines), len(errorLines(logs)))
	}
	for _, line := range lines {
		if !strings.Contains(line, `"in":"queueing a run event","task":"`+runA.ID+`"`) {
			t.Errorf("panic line %s", line)
		}
	}
	mustNotContain(t, "logs", logs, secretToken, "body-must-not-leak")
}

// TestPanickingHostCodeInDelivery: every piece of host code a delivery
// goroutine calls may panic once; the push still arrives (or, refused
// for good, is dead-lettered), in order, the panic is logged once at
// error level without its value, and the process lives on.
func TestPanickingHostCodeInDelivery(t *testing.T) {
	cases := []struct {
		name string
		// install puts the trap in place.
		install func(c *envConfig, tr *trap)
		// armEarly arms the trap before the registration (the default is
		// after it, which also calls some host code).
		armEarly bool
		status   func(call int) int
		want     []string
		where    string
		letters  int
	}{
		{
			name: "resolver",
			install: func(c *envConfig, tr *trap) {
				c.guard.Resolver = trapResolver{Resolver: c.guard.Resolver, tr: tr}
			},
			want:  []string{"TASK_STATE_WORKING", "TASK_STATE_COMPLETED"},
			where: "attempting a push",
		},
		{
			name: "dialer, in the transport's goroutine",
			install: func(c *envConfig, tr *trap) {
				dial := c.guard.Dial
				c.guard.Dial = func(ctx context.Context, network, address string) (net.Conn, error) {
					tr.spring()
					return dial(ctx, network, address)
				}
			},
			want:  []string{"TASK_STATE_WORKING", "TASK_STATE_COMPLETED"},
			where: "dialling",
		},
		{
			name:    "vault",
			install: func(c *envConfig, tr *trap) { c.opts.Vault = trapVault{Vault: c.opts.Vault, tr: tr} },
			want:    []string{"TASK_STATE_WORKING", "TASK_STATE_COMPLETED"},
			where:   "reading the config",
		},
		{
			name:    "config store",
			install: func(c *envConfig, tr *trap) { c.opts.Configs = trapConfigs{ConfigStore: c.opts.Configs, tr: tr} },
			want:    []string{"TASK_STATE_WORKING", "TASK_STATE_COMPLETED"},
			where:   "reading the config",
		},
		{
			name:    "outbox",
			install: func(c *envConfig, tr *trap) { c.opts.Outbox = trapOutbox{Outbox: c.opts.Outbox, tr: tr} },
			want:    []string{"TASK_STATE_WORKING", "TASK_STATE_COMPLETED"},
			where:   "the outbox",
		},
		{
			name:    "event sink",
			install: func(c *envConfig, tr *trap) { c.opts.Events = trapSink{EventSink: c.opts.Events, tr: tr} },
			status:  func(int) int { return http.StatusNotFound },
			want:    []string{"TASK_STATE_WORKING", "TASK_STATE_COMPLETED"},
			where:   "the event sink",
			letters: 2,
		},
		{
			name: "clock, between attempts",
			install: func(c *envConfig, tr *trap) {
				c.opts.Clock = trapClock{Clock: newJumpClock(), tr: tr}
				c.opts.Retry = push.RetryPolicy{MaxAttempts: 3, Backoff: push.BackoffFixed, Delay: time.Millisecond}
			},
			status: func(call int) int {
				if call == 1 {
					return http.StatusServiceUnavailable
				}
				return http.StatusNoContent
			},
			want:  []string{"TASK_STATE_WORKING", "TASK_STATE_WORKING", "TASK_STATE_COMPLETED"},
			where: "delivering",
		},
		{
			name: "clock, while the watcher waits",
			install: func(c *envConfig, tr *trap) {
				c.opts.Clock = trapClock{Clock: newJumpClock(), tr: tr}
				withFaultyStore(&faultyStore{task: "*", watch: []storeFault{failNow}})(c)
			},
			armEarly: true,
			want:     []string{"TASK_STATE_WORKING", "TASK_STATE_COMPLETED"},
			where:    "watching",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var calls atomic.Int32
			rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {
				n := int(calls.Add(1))
				if c.status != nil {
					w.WriteHeader(c.status(n))
					return
				}
				w.WriteHeader(http.StatusNoContent)
			})
			// A DNS name on the allowlist, so that the resolver is asked.
			origin := "http://hooks.partner.net:" + rc.port()
			tr := &trap{}
			e := newPushEnv(t, withAllow(origin), func(cfg *envConfig) { c.install(cfg, tr) })
			e.resolver.set("hooks.partner.net", "127.0.0.1")
			run := e.suspended(t, e.alice, 0)
			tr.armed.Store(c.armEarly)
			e.register(t, e.alice, run, Spec{URL: origin + "/hook", Token: secretToken})
			if !c.armEarly {
				tr.armed.Store(true)
			}
			e.accept(t, e.alice, run)
			if diff := cmp.Diff(c.want, rc.collect(t, len(c.want))); diff != "" {
				t.Fatalf("pushes (-want +got):\n%s", diff)
			}
			rc.none(t, 50*time.Millisecond)
			if c.letters > 0 {
				e.events.wait(t, c.letters)
			}
			waitFor(t, "the trap sprung", func() bool { return !tr.armed.Load() })
			waitFor(t, "the panic logged", func() bool { return len(panicLines(t, e.logs.String())) > 0 })
			logs := e.logs.String()
			lines := panicLines(t, logs)
			if len(lines) != 1 || len(errorLines(logs)) != 1 {
				t.Fatalf("%d panic lines, %d error lines, want one of each:\n%s", len(lines), len(errorLines(logs)), strings.Join(errorLines(logs), "\n"))
			}
			if !strings.Contains(lines[0], `"in":"`+c.where+`","task":"`+run.ID+`"`) {
				t.Fatalf("panic line %s, want it in %q", lines[0], c.where)
			}
			mustNotContain(t, "logs", logs, secretToken, "body-must-not-leak")
		})
	}
}
