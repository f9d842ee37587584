package pushservice

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/egress"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/push"
)

// errNXDomain is the fake resolver's answer for a name it does not know.
var errNXDomain = errors.New("no such host")

// fakeResolver answers from a table keyed by absolute name ("name.") and
// records every lookup, so tests control DNS completely.
type fakeResolver struct {
	mu      sync.Mutex
	answers map[string][]netip.Addr
	calls   []string
	// next, when set, answers instead of the table (and may change it).
	next func(host string) ([]netip.Addr, error)
}

func newResolver(table map[string][]string) *fakeResolver {
	r := &fakeResolver{answers: map[string][]netip.Addr{}}
	for name, addrs := range table {
		r.set(name, addrs...)
	}
	return r
}

func (r *fakeResolver) set(name string, addrs ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var as []netip.Addr
	for _, a := range addrs {
		as = append(as, netip.MustParseAddr(a))
	}
	r.answers[name+"."] = as
}

func (r *fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	r.calls = append(r.calls, host)
	next := r.next
	as, ok := r.answers[host]
	r.mu.Unlock()
	if next != nil {
		return next(host)
	}
	if !ok {
		return nil, errNXDomain
	}
	return as, nil
}

// dialLog records every address a guard dialled. Its dial function
// connects only to 127.0.0.1 and fails the test on anything else, so no
// test can send a packet off the machine whatever the guard decides.
type dialLog struct {
	t     testing.TB
	mu    sync.Mutex
	addrs []string
}

func newDialLog(t testing.TB) *dialLog { return &dialLog{t: t} }

func (l *dialLog) dial(ctx context.Context, network, address string) (net.Conn, error) {
	l.mu.Lock()
	l.addrs = append(l.addrs, address)
	l.mu.Unlock()
	host, _, err := net.SplitHostPort(address)
	if err != nil || host != "127.0.0.1" {
		l.t.Errorf("dial of %q: only 127.0.0.1 may ever be dialled in tests", address)
		return nil, errors.New("test dialer: off-machine address")
	}
	var d net.Dialer
	return d.DialContext(ctx, network, address)
}

func (l *dialLog) dialled() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.addrs...)
}

// received is one request a receiver saw.
type received struct {
	method     string
	path       string
	header     http.Header
	body       []byte
	serverName string // TLS SNI, when served over TLS
}

// receiver is a loopback push receiver that records every request and
// answers with its handler (204 when nil).
type receiver struct {
	srv  *httptest.Server
	reqs chan received
	mu   sync.Mutex
	h    http.HandlerFunc
}

func newReceiver(t testing.TB, h http.HandlerFunc) *receiver {
	rc := &receiver{reqs: make(chan received, 1024), h: h}
	rc.srv = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	got := received{method: r.Method, path: r.URL.Path, header: r.Header.Clone(), body: body}
	if r.TLS != nil {
		got.serverName = r.TLS.ServerName
	}
	rc.reqs <- got
	rc.mu.Lock()
	h := rc.h
	rc.mu.Unlock()
	if h == nil {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	h(w, r)
}

func (rc *receiver) setHandler(h http.HandlerFunc) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.h = h
}

// origin is "http://127.0.0.1:port".
func (rc *receiver) origin() string { return rc.srv.URL }

func (rc *receiver) port() string {
	_, p, _ := net.SplitHostPort(rc.srv.Listener.Addr().String())
	return p
}

// next waits for the next request.
func (rc *receiver) next(t testing.TB) received {
	t.Helper()
	select {
	case r := <-rc.reqs:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("no push arrived within 10s")
		return received{}
	}
}

// none checks that no request arrives within d.
func (rc *receiver) none(t testing.TB, d time.Duration) {
	t.Helper()
	select {
	case r := <-rc.reqs:
		t.Fatalf("unexpected push %s %s: %s", r.method, r.path, r.body)
	case <-time.After(d):
	}
}

// syncBuffer is a log destination safe for concurrent writers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// sinkEvent is one host event the sink received.
type sinkEvent struct {
	tenant string
	ev     interop.HostEvent
}

// eventSink records host events; fail makes the next n publishes fail.
type eventSink struct {
	mu     sync.Mutex
	events []sinkEvent
	fail   int
	added  chan struct{}
}

func newEventSink() *eventSink { return &eventSink{added: make(chan struct{}, 1024)} }

func (s *eventSink) AppendRunEvent(context.Context, string, interop.RunEvent) error {
	return errors.New("push tests: no run events expected")
}

func (s *eventSink) PublishHostEvent(_ context.Context, tenant string, ev interop.HostEvent) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail > 0 {
		s.fail--
		return errors.New("sink unavailable")
	}
	s.events = append(s.events, sinkEvent{tenant: tenant, ev: ev})
	s.added <- struct{}{}
	return nil
}

func (s *eventSink) all() []sinkEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]sinkEvent(nil), s.events...)
}

// wait blocks until n events were recorded in total.
func (s *eventSink) wait(t testing.TB, n int) []sinkEvent {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		if evs := s.all(); len(evs) >= n {
			return evs
		}
		select {
		case <-s.added:
		case <-deadline:
			t.Fatalf("%d host events after 10s, want %d", len(s.all()), n)
		}
	}
}

// Test workflow: waits for an approval, then publishes inputs.n artifact
// chunks of artifact "out", then completes. Registering while it waits
// makes every later event a push.
const stepsWorkflow = "push-steps"

func stepsDef() memstore.WorkflowDef {
	return memstore.WorkflowDef{
		Workflow: interop.Workflow{
			ID: stepsWorkflow, Name: stepsWorkflow,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","minimum":0}}}`),
		},
		Run: func(ctx context.Context, rc *memstore.RunContext) (json.RawMessage, error) {
			var in struct{ N int }
			if err := json.Unmarshal(rc.Inputs(), &in); err != nil {
				return nil, err
			}
			res, err := rc.Interrupt(ctx, interop.Interrupt{Kind: interop.InterruptApproval, Key: "go", Message: "go?", Actions: []string{"accept"}})
			if err != nil {
				return nil, err
			}
			if res.Outcome != interop.OutcomeAccept {
				return nil, memstore.Fail("declined")
			}
			for i := range in.N {
				a := interop.Artifact{ID: "out", Parts: []interop.Part{interop.TextPart(fmt.Sprintf("chunk %d", i))}}
				if err := rc.PublishArtifact(a, i > 0, i == in.N-1); err != nil {
					return nil, err
				}
			}
			return json.RawMessage(`{}`), nil
		},
	}
}

// testState is a small projection of run statuses for these tests; the
// A2A server supplies the real one.
func testState(st interop.RunStatus) wire.TaskState {
	switch st {
	case interop.StatusPending:
		return wire.TaskStateSubmitted
	case interop.StatusWaitingApproval, interop.StatusWaitingInput, interop.StatusWaitingExternal:
		return wire.TaskStateInputRequired
	case interop.StatusCompleted:
		return wire.TaskStateCompleted
	case interop.StatusFailed:
		return wire.TaskStateFailed
	case interop.StatusCancelled:
		return wire.TaskStateCanceled
	}
	return wire.TaskStateWorking
}

// testProjector renders a statusUpdate per status change and an
// artifactUpdate per chunk.
func testProjector() Projector {
	return ProjectorFunc(func(_ context.Context, _ interop.Subject, task TaskRef, ev *interop.RunEvent, prev interop.RunStatus) ([]wire.Event, error) {
		var out []wire.Event
		if c := ev.Chunk; c != nil {
			parts := make(wire.ContentParts, 0, len(c.Artifact.Parts))
			for _, p := range c.Artifact.Parts {
				parts = append(parts, wire.NewTextPart(p.Text))
			}
			out = append(out, &wire.TaskArtifactUpdateEvent{
				TaskID: wire.TaskID(task.ID), ContextID: task.ContextID,
				Artifact: &wire.Artifact{ID: wire.ArtifactID(c.Artifact.ID), Parts: parts},
				Append:   c.Append, LastChunk: c.LastChunk,
			})
		}
		if ev.Status != prev {
			at := ev.Timestamp.UTC()
			out = append(out, &wire.TaskStatusUpdateEvent{
				TaskID: wire.TaskID(task.ID), ContextID: task.ContextID,
				Status: wire.TaskStatus{State: testState(ev.Status), Timestamp: &at},
			})
		}
		return out, nil
	})
}

// pushEnv is a Service over a memstore with tenant "acme" (and "globex"),
// the steps workflow, a fake resolver, the loopback-only dialer, and
// captured logs and host events.
type pushEnv struct {
	store    *memstore.Store
	svc      *Service
	resolver *fakeResolver
	dials    *dialLog
	events   *eventSink
	logs     *syncBuffer
	configs  *push.MemoryConfigs
	vault    *push.MemoryVault
	outbox   *push.MemoryOutbox
	alice    interop.Subject
	gina     interop.Subject
}

// envConfig is what a pushEnv is built from; envOptions change it.
type envConfig struct {
	opts  push.Options
	guard egress.GuardOptions
	// store wraps the memstore as the service's RunStore (nil: itself).
	store func(*memstore.Store) interop.RunStore
	// project replaces testProjector (nil: testProjector).
	project Projector
}

type envOption func(*envConfig)

func withRetry(p push.RetryPolicy) envOption { return func(c *envConfig) { c.opts.Retry = p } }

func withAllow(origins ...string) envOption {
	return func(c *envConfig) { c.guard.AllowOrigins = append(c.guard.AllowOrigins, origins...) }
}

func withClock(clock push.Clock) envOption { return func(c *envConfig) { c.opts.Clock = clock } }

// fastRetry: 3 attempts, no backoff, 2s per attempt.
func fastRetry() push.RetryPolicy {
	return push.RetryPolicy{MaxAttempts: 3, Backoff: push.BackoffNone, AttemptTimeout: 2 * time.Second}
}

func newPushEnv(t testing.TB, opts ...envOption) *pushEnv {
	t.Helper()
	store := memstore.New()
	t.Cleanup(func() { _ = store.Close() })
	for _, tenant := range []string{"acme", "globex"} {
		if err := store.RegisterFixtures(tenant); err != nil {
			t.Fatal(err)
		}
		if err := store.Register(tenant, stepsDef()); err != nil {
			t.Fatal(err)
		}
	}
	e := &pushEnv{
		store:    store,
		resolver: newResolver(nil),
		dials:    newDialLog(t),
		events:   newEventSink(),
		logs:     &syncBuffer{},
		configs:  push.NewMemoryConfigs(),
		vault:    push.NewMemoryVault(),
		outbox:   push.NewMemoryOutbox(),
		alice:    interop.Subject{Tenant: "acme", Principal: "user:alice", Authenticated: true},
		gina:     interop.Subject{Tenant: "globex", Principal: "user:gina", Authenticated: true},
	}
	c := envConfig{
		opts: push.Options{
			Events:  e.events,
			Configs: e.configs,
			Vault:   e.vault,
			Outbox:  e.outbox,
			Retry:   fastRetry(),
			Logger:  slog.New(slog.NewJSONHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		},
		guard:   egress.GuardOptions{Resolver: e.resolver, Dial: e.dials.dial},
		project: testProjector(),
	}
	for _, opt := range opts {
		opt(&c)
	}
	guard, err := egress.NewGuard(c.guard)
	if err != nil {
		t.Fatal(err)
	}
	c.opts.Guard = guard
	var runs interop.RunStore = store
	if c.store != nil {
		runs = c.store(store)
	}
	svc, err := New(runs, c.project, c.opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = svc.Close(ctx)
	})
	e.svc = svc
	return e
}

// suspended starts the steps workflow for sub with n chunks and returns
// the run once it waits for its approval.
func (e *pushEnv) suspended(t testing.TB, sub interop.Subject, n int) interop.Run {
	t.Helper()
	return e.suspendedOf(t, sub, stepsWorkflow, n)
}

// suspendedOf is suspended for another workflow that takes n and first
// waits for an approval.
func (e *pushEnv) suspendedOf(t testing.TB, sub interop.Subject, workflow string, n int) interop.Run {
	t.Helper()
	ctx := context.Background()
	run, _, err := e.store.CreateRun(ctx, sub, interop.CreateRunRequest{
		WorkflowID: workflow, Inputs: json.RawMessage(fmt.Sprintf(`{"n":%d}`, n)),
		Transport: interop.TransportA2A, ContextID: "ctx-push", TrustBoundary: interop.TrustUntrusted,
	})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !run.Status.Suspended() {
		if time.Now().After(deadline) {
			t.Fatalf("run never suspended: %s", run.Status)
		}
		time.Sleep(time.Millisecond)
		if run, err = e.store.GetRun(ctx, sub, run.ID); err != nil {
			t.Fatal(err)
		}
	}
	return run
}

// accept resolves the run's open interrupt.
func (e *pushEnv) accept(t testing.TB, sub interop.Subject, run interop.Run) {
	t.Helper()
	in, ok := run.OpenInterrupt()
	if !ok {
		t.Fatal("no open interrupt")
	}
	if _, err := e.store.ResolveInterrupt(context.Background(), sub, interop.ResolveRequest{
		RunID: run.ID, InterruptID: in.ID, Outcome: interop.OutcomeAccept, Value: json.RawMessage(`{"action":"accept"}`),
	}); err != nil {
		t.Fatal(err)
	}
}

// register registers spec on run for sub and fails the test on error.
func (e *pushEnv) register(t testing.TB, sub interop.Subject, run interop.Run, spec Spec) Config {
	t.Helper()
	cfg, err := e.svc.Register(context.Background(), sub, &run, spec)
	if err != nil {
		t.Fatalf("Register: %v", err)
	}
	return cfg
}

// statusOf decodes a push body's statusUpdate state ("" when the body is
// not a statusUpdate).
func statusOf(t testing.TB, body []byte) wire.TaskState {
	t.Helper()
	var sr wire.StreamResponse
	if err := json.Unmarshal(body, &sr); err != nil {
		t.Fatalf("push body is not a StreamResponse: %v: %s", err, body)
	}
	if u, ok := sr.Event.(*wire.TaskStatusUpdateEvent); ok {
		return u.Status.State
	}
	return ""
}

// mustNotContain fails when any of the secrets occurs in text.
func mustNotContain(t testing.TB, where, text string, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(text, s) {
			t.Errorf("%s contains the secret %q", where, s)
		}
	}
}

// jumpClock is virtual time that moves only when delivery waits: After(d)
// advances it by d at once and fires. An hour-long retry schedule runs in
// milliseconds through the same code as in production; with one lane
// waiting at a time, the clock's advance is the time the schedule took.
type jumpClock struct {
	mu    sync.Mutex
	now   time.Time
	waits []time.Duration
	// panics, when above zero, makes the next After calls panic.
	panics int
}

func newJumpClock() *jumpClock {
	return &jumpClock{now: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)}
}

func (c *jumpClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *jumpClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.panics > 0 {
		c.panics--
		panic("clock broke: " + secretToken)
	}
	c.now = c.now.Add(d)
	c.waits = append(c.waits, d)
	ch := make(chan time.Time, 1)
	ch <- c.now
	return ch
}

// recorded returns the waits so far.
func (c *jumpClock) recorded() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.waits...)
}

// scaledClock runs factor times faster than real time: every wait of the
// service is its real wait divided by factor, and Now moves accordingly,
// so concurrent lanes share one consistent, compressed timeline.
type scaledClock struct {
	start  time.Time // real
	origin time.Time // clock time at start
	factor time.Duration
}

func newScaledClock(factor int) *scaledClock {
	return &scaledClock{start: time.Now(), origin: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC), factor: time.Duration(factor)}
}

func (c *scaledClock) Now() time.Time { return c.origin.Add(time.Since(c.start) * c.factor) }

func (c *scaledClock) After(d time.Duration) <-chan time.Time { return time.After(d / c.factor) }

// panicLines returns the log lines that report a recovered panic, failing
// the test when one is not at error level.
func panicLines(t testing.TB, logs string) []string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(logs, "\n") {
		if !strings.Contains(line, `"msg":"push: recovered from a panic"`) {
			continue
		}
		if !strings.Contains(line, `"level":"ERROR"`) {
			t.Errorf("a panic logged below error level: %s", line)
		}
		out = append(out, line)
	}
	return out
}

// labels decodes push bodies into what a receiver saw, in order: the
// state of a statusUpdate, the text of an artifactUpdate.
func label(t testing.TB, body []byte) string {
	t.Helper()
	var sr wire.StreamResponse
	if err := json.Unmarshal(body, &sr); err != nil {
		t.Errorf("push body is not a StreamResponse: %v: %s", err, body)
		return ""
	}
	switch ev := sr.Event.(type) {
	case *wire.TaskStatusUpdateEvent:
		return string(ev.Status.State)
	case *wire.TaskArtifactUpdateEvent:
		return fmt.Sprint(ev.Artifact.Parts[0].Content)
	}
	return ""
}

// wantLabels is what the steps workflow with n chunks pushes after a
// registration while it waits: WORKING, the chunks, COMPLETED.
func wantLabels(n int) []string {
	want := []string{string(wire.TaskStateWorking)}
	for i := range n {
		want = append(want, fmt.Sprintf("chunk %d", i))
	}
	return append(want, string(wire.TaskStateCompleted))
}

// collect waits for n pushes at rc and returns their labels.
func (rc *receiver) collect(t testing.TB, n int) []string {
	t.Helper()
	var got []string
	for len(got) < n {
		got = append(got, label(t, rc.next(t).body))
	}
	return got
}
