package memstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/interop"
)

const (
	tenantA = "acme"
	tenantB = "globex"
)

func subject(tenant, principal string) interop.Subject {
	return interop.Subject{Tenant: tenant, Principal: principal, Authenticated: true}
}

func inWorkspace(s interop.Subject, ws string) interop.Subject {
	s.Workspace = ws
	return s
}

// newStore returns a store with the fixtures registered in tenantA and
// tenantB, closed at the end of the test.
func newStore(t testing.TB, opts ...Option) *Store {
	t.Helper()
	s := New(opts...)
	t.Cleanup(func() { _ = s.Close() })
	for _, tenant := range []string{tenantA, tenantB} {
		if err := s.RegisterFixtures(tenant); err != nil {
			t.Fatalf("RegisterFixtures(%s): %v", tenant, err)
		}
	}
	return s
}

// testCtx is a context that bounds a test that would otherwise hang.
func testCtx(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func mustCreate(t testing.TB, s *Store, sub interop.Subject, req interop.CreateRunRequest) interop.Run {
	t.Helper()
	run, created, err := s.CreateRun(testCtx(t), sub, req)
	if err != nil {
		t.Fatalf("CreateRun(%s): %v", req.WorkflowID, err)
	}
	if !created {
		t.Fatalf("CreateRun(%s): created = false", req.WorkflowID)
	}
	return run
}

// events follows the run from the start until its terminal event.
func events(t testing.TB, s *Store, sub interop.Subject, runID string) []interop.RunEvent {
	t.Helper()
	seq, err := s.WatchRun(testCtx(t), sub, runID, -1)
	if err != nil {
		t.Fatalf("WatchRun: %v", err)
	}
	var out []interop.RunEvent
	for ev, err := range seq {
		if err != nil {
			t.Fatalf("WatchRun yielded %v after %d events", err, len(out))
		}
		out = append(out, ev)
	}
	return out
}

// waitFor watches the run until an event satisfies ok and returns it.
func waitFor(t testing.TB, s *Store, sub interop.Subject, runID string, ok func(interop.RunEvent) bool) interop.RunEvent {
	t.Helper()
	seq, err := s.WatchRun(testCtx(t), sub, runID, -1)
	if err != nil {
		t.Fatalf("WatchRun: %v", err)
	}
	for ev, err := range seq {
		if err != nil {
			t.Fatalf("WatchRun: %v", err)
		}
		if ok(ev) {
			return ev
		}
	}
	t.Fatalf("run %s ended without the awaited event", runID)
	return interop.RunEvent{}
}

func waitStatus(t testing.TB, s *Store, sub interop.Subject, runID string, st interop.RunStatus) interop.RunEvent {
	t.Helper()
	return waitFor(t, s, sub, runID, func(ev interop.RunEvent) bool { return ev.Status == st })
}

func typesOf(evs []interop.RunEvent) []interop.EventType {
	out := make([]interop.EventType, len(evs))
	for i, ev := range evs {
		out[i] = ev.Type
	}
	return out
}

func statusesOf(evs []interop.RunEvent) []interop.RunStatus {
	out := make([]interop.RunStatus, len(evs))
	for i, ev := range evs {
		out[i] = ev.Status
	}
	return out
}

// checkSequences asserts sequences 0, 1, 2, ... and the run id on each.
func checkSequences(t testing.TB, runID string, evs []interop.RunEvent) {
	t.Helper()
	for i, ev := range evs {
		if ev.Sequence != int64(i) || ev.RunID != runID {
			t.Fatalf("event %d: sequence %d run %q, want sequence %d run %q", i, ev.Sequence, ev.RunID, i, runID)
		}
	}
}

// wantErrIs fails unless err wraps target.
func wantErrIs(t testing.TB, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error = %v, want one wrapping %v", err, target)
	}
}

// wantInputError fails unless err is an *interop.InputError on field.
func wantInputError(t testing.TB, err error, field string) {
	t.Helper()
	var ie *interop.InputError
	if !errors.As(err, &ie) {
		t.Fatalf("error = %v, want *interop.InputError", err)
	}
	if ie.Field != field {
		t.Fatalf("InputError.Field = %q (reason %q), want %q", ie.Field, ie.Reason, field)
	}
	if ie.Reason == "" {
		t.Fatalf("InputError on %q has no reason", field)
	}
	wantErrIs(t, err, interop.ErrInvalidInput)
}

// gate is a controllable workflow: each run announces itself on started and
// returns what the test sends on its release channel.
type gate struct {
	started chan string
	release chan gateResult
}

type gateResult struct {
	out json.RawMessage
	err error
}

func newGate() *gate {
	return &gate{started: make(chan string, 64), release: make(chan gateResult, 64)}
}

func (g *gate) run(ctx context.Context, rc *RunContext) (json.RawMessage, error) {
	g.started <- rc.RunID()
	select {
	case r := <-g.release:
		return r.out, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func register(t testing.TB, s *Store, tenant, id string, fn WorkflowFunc) {
	t.Helper()
	if err := s.Register(tenant, WorkflowDef{Workflow: interop.Workflow{ID: id, Name: id}, Run: fn}); err != nil {
		t.Fatalf("Register(%s): %v", id, err)
	}
}

// stepClock is a deterministic clock: every reading is step after the
// previous one. step 0 makes every timestamp equal.
type stepClock struct {
	mu   sync.Mutex
	now  time.Time
	step time.Duration
}

func newStepClock(step time.Duration) *stepClock {
	return &stepClock{now: time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC), step: step}
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(c.step)
	return c.now
}

// logBuffer is a concurrency-safe sink for slog output.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *logBuffer) logger() *slog.Logger { return slog.New(slog.NewTextHandler(b, nil)) }

// counter counts workflow executions.
type counter struct{ n atomic.Int64 }

func (c *counter) noop(context.Context, *RunContext) (json.RawMessage, error) {
	c.n.Add(1)
	return nil, nil
}

// payloadOf decodes an event's payload into a map of its members.
func payloadOf(t testing.TB, ev interop.RunEvent) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(ev.Payload, &m); err != nil {
		t.Fatalf("%s payload %s: %v", ev.Type, ev.Payload, err)
	}
	return m
}

// reasonOf is the human reason an event carries: run.failed's
// error.message, else the payload's reason.
func reasonOf(t testing.TB, ev interop.RunEvent) string {
	t.Helper()
	var p struct {
		Reason string `json:"reason"`
		Error  struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := ev.DecodePayload(&p); err != nil {
		t.Fatal(err)
	}
	if ev.Type == interop.EventRunFailed {
		return p.Error.Message
	}
	return p.Reason
}

// interruptIDOf is the interruptId of a node.suspended or
// interrupt.resolved payload.
func interruptIDOf(t testing.TB, ev interop.RunEvent) string {
	t.Helper()
	var p interop.NodeSuspended
	if err := ev.DecodePayload(&p); err != nil {
		t.Fatal(err)
	}
	return p.InterruptID
}

// checkDocs asserts that every event is a valid RunEventDoc.
func checkDocs(t testing.TB, evs []interop.RunEvent) {
	t.Helper()
	for _, ev := range evs {
		if err := ev.Validate(); err != nil {
			t.Errorf("event %d (%s): %v", ev.Sequence, ev.Type, err)
		}
	}
}
