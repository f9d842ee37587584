package negotiate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/interop"
)

// scriptedSink answers each delivery with the error its script returns for
// that call (1-based), recording what it was given; a nil script accepts
// everything.
type scriptedSink struct {
	script func(ctx context.Context, call int) error

	mu        sync.Mutex
	calls     int
	eventIDs  []string // host event ids, one per call
	delivered []interop.HostEvent
	runEvents []interop.RunEvent
}

func (s *scriptedSink) answer(ctx context.Context) error {
	s.mu.Lock()
	s.calls++
	call := s.calls
	s.mu.Unlock()
	if s.script == nil {
		return nil
	}
	return s.script(ctx, call)
}

func (s *scriptedSink) AppendRunEvent(ctx context.Context, _ string, ev interop.RunEvent) error {
	if err := s.answer(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runEvents = append(s.runEvents, ev)
	return nil
}

func (s *scriptedSink) PublishHostEvent(ctx context.Context, _ string, ev interop.HostEvent) error {
	s.mu.Lock()
	s.eventIDs = append(s.eventIDs, ev.EventID)
	s.mu.Unlock()
	if err := s.answer(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delivered = append(s.delivered, ev)
	return nil
}

func (s *scriptedSink) snapshot() (calls int, ids []string, delivered []interop.HostEvent, runEvents []interop.RunEvent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls, append([]string(nil), s.eventIDs...), append([]interop.HostEvent(nil), s.delivered...), append([]interop.RunEvent(nil), s.runEvents...)
}

// logBuffer is a concurrency-safe slog text sink.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) lines(substr string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, l := range strings.Split(b.buf.String(), "\n") {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return out
}

func (b *logBuffer) logger() *slog.Logger {
	// No time attribute: the checks below look for record content in the
	// lines, and a clock reading could contain anything.
	dropTime := func(groups []string, a slog.Attr) slog.Attr {
		if len(groups) == 0 && a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug, ReplaceAttr: dropTime}))
}

// eventually polls cond for up to 5 s: the worker finishes a record it had
// in flight after Close has returned.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

var errSinkDown = errors.New("sink down")

// TestAuditorRetriesUntilTheSinkRecovers: a sink that fails its first
// deliveries loses nothing; every record arrives once, with the event id
// it had on the failed attempts.
func TestAuditorRetriesUntilTheSinkRecovers(t *testing.T) {
	const failures = 3
	sink := &scriptedSink{script: func(_ context.Context, call int) error {
		if call <= failures {
			return errSinkDown
		}
		return nil
	}}
	var logs logBuffer
	a := NewAuditor(sink, AuditorOptions{Logger: logs.logger(), RetryBackoff: time.Millisecond})
	a.Start()
	p := a2aPolicy(t, true)
	const n = 5
	for range n {
		if err := a.Record(context.Background(), p.Inbound("1.0", Peer{Authenticated: true}), Scope{Tenant: "acme"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	calls, ids, delivered, _ := sink.snapshot()
	if len(delivered) != n || calls != n+failures {
		t.Fatalf("delivered %d records in %d calls, want %d in %d", len(delivered), calls, n, n+failures)
	}
	for i := 1; i <= failures; i++ {
		if ids[i] != ids[0] {
			t.Fatalf("retry %d carried event id %q, the first attempt %q", i, ids[i], ids[0])
		}
	}
	if delivered[0].EventID != ids[0] {
		t.Fatalf("delivered event id %q, attempted %q", delivered[0].EventID, ids[0])
	}
	if st := a.Stats(); st != (AuditStats{Delivered: n, Retried: failures}) {
		t.Fatalf("stats = %+v", st)
	}
	if got := len(logs.lines("sink failing")); got != 1 {
		t.Fatalf("%d 'sink failing' lines, want 1 per outage:\n%s", got, logs.buf.String())
	}
	if got := len(logs.lines("sink recovered")); got != 1 {
		t.Fatalf("%d 'sink recovered' lines, want 1", got)
	}
}

// TestAuditorCountsWhatNeverArrives: a sink that never recovers makes each
// record a drop after MaxAttempts, counted and logged once with nothing of
// the record but protocol and outcome; Close still returns.
func TestAuditorCountsWhatNeverArrives(t *testing.T) {
	sink := &scriptedSink{script: func(context.Context, int) error { return errSinkDown }}
	var logs logBuffer
	a := NewAuditor(sink, AuditorOptions{Logger: logs.logger(), MaxAttempts: 3, RetryBackoff: time.Millisecond})
	a.Start()
	p := a2aPolicy(t, true)
	peer := Peer{Authenticated: true, Origin: "https://peer.example"}
	decisions := []Decision{p.Inbound("1.0", peer), p.Inbound("0.1", peer)}
	for _, d := range decisions {
		if err := a.Record(context.Background(), d, Scope{Tenant: "tenant-secret", Workspace: "ws-secret"}); err != nil {
			t.Fatalf("asynchronous Record returned the sink's failure: %v", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if st := a.Stats(); st != (AuditStats{Dropped: 2, Retried: 4}) {
		t.Fatalf("stats = %+v, want 2 dropped after 3 attempts each", st)
	}
	drops := logs.lines("record dropped")
	if len(drops) != 2 {
		t.Fatalf("%d drop lines, want one per record:\n%s", len(drops), logs.buf.String())
	}
	for i, want := range []string{"outcome=accepted", "outcome=refused"} {
		if !strings.Contains(drops[i], "protocol=a2a") || !strings.Contains(drops[i], want) || !strings.Contains(drops[i], `cause="sink failed 3 times"`) {
			t.Errorf("drop line %q lacks protocol, %s or the cause", drops[i], want)
		}
	}
	all := logs.lines("")
	for _, secret := range []string{"tenant-secret", "ws-secret", "peer.example", peerDigest("https://peer.example"), "0.1", "below-floor"} {
		for _, l := range all {
			if strings.Contains(l, secret) {
				t.Errorf("log line carries record content %q: %s", secret, l)
			}
		}
	}
}

// TestCloseGivesUpOnASinkThatNeverRecovers: Close bounded by its context
// abandons the retries, drops (and counts) what is left and returns.
func TestCloseGivesUpOnASinkThatNeverRecovers(t *testing.T) {
	sink := &scriptedSink{script: func(context.Context, int) error { return errSinkDown }}
	a := NewAuditor(sink, AuditorOptions{MaxAttempts: 1000, RetryBackoff: time.Hour, QueueSize: 8})
	a.Start()
	d := a2aPolicy(t, true).Inbound("1.0", Peer{Authenticated: true})
	for range 5 {
		if err := a.Record(context.Background(), d, Scope{Tenant: "acme"}); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := a.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close = %v, want the context's error", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("Close took %v", took)
	}
	eventually(t, "all five records are counted as dropped", func() bool { return a.Stats().Dropped == 5 })
	if st := a.Stats(); st.Delivered != 0 || st.Queued != 0 {
		t.Fatalf("stats = %+v", st)
	}
}

// TestFailingSinkDoesNotHoldRequests: with the queue full of records
// waiting for a failing sink, Record drops at once instead of waiting.
func TestFailingSinkDoesNotHoldRequests(t *testing.T) {
	sink := &scriptedSink{script: func(context.Context, int) error { return errSinkDown }}
	a := NewAuditor(sink, AuditorOptions{QueueSize: 1, EnqueueWait: time.Hour, RetryBackoff: time.Hour, MaxAttempts: 1000})
	a.Start()
	d := a2aPolicy(t, true).Inbound("1.0", Peer{Authenticated: true})
	// The first record reaches the worker and fails; the second fills the queue.
	if err := a.Record(context.Background(), d, Scope{Tenant: "acme"}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the sink has failed once", func() bool { calls, _, _, _ := sink.snapshot(); return calls == 1 })
	if err := a.Record(context.Background(), d, Scope{Tenant: "acme"}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := a.Record(context.Background(), d, Scope{Tenant: "acme"}); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > time.Second {
		t.Fatalf("Record waited %v on a failing sink", took)
	}
	if st := a.Stats(); st.Dropped != 1 || st.Queued != 1 {
		t.Fatalf("stats = %+v, want the third record dropped and one queued", st)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_ = a.Close(ctx)
	eventually(t, "every record is accounted for", func() bool { return a.Stats().Dropped == 3 })
}

// TestBlockingSink: a sink that hangs until its context ends costs each
// request at most EnqueueWait; each attempt is cut at AttemptTimeout, and
// Close returns on its context.
func TestBlockingSink(t *testing.T) {
	sink := &scriptedSink{script: func(ctx context.Context, _ int) error {
		<-ctx.Done()
		return ctx.Err()
	}}
	a := NewAuditor(sink, AuditorOptions{
		QueueSize: 2, EnqueueWait: 20 * time.Millisecond, AttemptTimeout: 30 * time.Millisecond,
		MaxAttempts: 2, RetryBackoff: time.Millisecond,
	})
	a.Start()
	d := a2aPolicy(t, true).Inbound("1.0", Peer{Authenticated: true})
	const n = 10
	start := time.Now()
	for range n {
		if err := a.Record(context.Background(), d, Scope{Tenant: "acme"}); err != nil {
			t.Fatal(err)
		}
	}
	if took := time.Since(start); took > n*20*time.Millisecond+time.Second {
		t.Fatalf("%d records took %v against a blocking sink", n, took)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_ = a.Close(ctx) // nil if the retries ran out first, else the context's error
	eventually(t, "every record is accounted for", func() bool { return a.Stats().Dropped == n })
	if calls, _, _, _ := sink.snapshot(); calls == 0 {
		t.Fatal("the sink was never tried")
	}
}

// TestSinkIgnoringItsContext: Close returns on its own context even while
// the worker is stuck in a sink that ignores cancellation; the worker
// finishes once the sink returns.
func TestSinkIgnoringItsContext(t *testing.T) {
	release := make(chan struct{})
	sink := &scriptedSink{script: func(context.Context, int) error {
		<-release
		return errSinkDown
	}}
	a := NewAuditor(sink, AuditorOptions{QueueSize: 4, RetryBackoff: time.Millisecond})
	a.Start()
	d := a2aPolicy(t, true).Inbound("1.0", Peer{Authenticated: true})
	for range 3 {
		if err := a.Record(context.Background(), d, Scope{Tenant: "acme"}); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := a.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close = %v", err)
	}
	close(release)
	<-a.done // the worker is owned: it ends once the sink lets go
	if st := a.Stats(); st.Dropped != 3 {
		t.Fatalf("stats = %+v, want all three dropped", st)
	}
}

type panickingSink struct{ calls int }

func (s *panickingSink) AppendRunEvent(context.Context, string, interop.RunEvent) error { return nil }
func (s *panickingSink) PublishHostEvent(context.Context, string, interop.HostEvent) error {
	s.calls++
	if s.calls == 1 {
		panic("sink bug")
	}
	return nil
}

// TestPanickingSinkDoesNotKillTheWorker: a panic is one failed attempt.
func TestPanickingSinkDoesNotKillTheWorker(t *testing.T) {
	sink := &panickingSink{}
	a := NewAuditor(sink, AuditorOptions{RetryBackoff: time.Millisecond})
	a.Start()
	if err := a.Record(context.Background(), a2aPolicy(t, true).Inbound("", Peer{}), Scope{}); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := a.Stats(); st != (AuditStats{Delivered: 1, Retried: 1}) {
		t.Fatalf("stats = %+v", st)
	}
}

// TestInvalidRecordIsNotRetried: a sink refusing the record itself
// (interop.ErrInvalidInput) would refuse every retry too.
func TestInvalidRecordIsNotRetried(t *testing.T) {
	sink := &scriptedSink{script: func(context.Context, int) error {
		return fmt.Errorf("store: %w", &interop.InputError{Field: "payload", Reason: "nope"})
	}}
	a := NewAuditor(sink, AuditorOptions{RetryBackoff: time.Millisecond})
	a.Start()
	if err := a.Record(context.Background(), a2aPolicy(t, true).Inbound("", Peer{}), Scope{}); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := a.Stats(); st != (AuditStats{Dropped: 1}) {
		t.Fatalf("stats = %+v", st)
	}
}

// unknownRunSink answers run events as a store does for a run past its
// retention.
type unknownRunSink struct{ *recordingSink }

func (unknownRunSink) AppendRunEvent(context.Context, string, interop.RunEvent) error {
	return fmt.Errorf("append: %w", interop.ErrNotFound)
}

func TestRecordOnPurgedRunBecomesHostEvent(t *testing.T) {
	sink := unknownRunSink{newSink()}
	a := NewAuditor(sink, AuditorOptions{Synchronous: true})
	d := a2aPolicy(t, true).Inbound("1.0", Peer{Authenticated: true})
	if err := a.Record(context.Background(), d, Scope{RunID: "acme/RUN0000000000000000000", Tenant: "acme"}); err != nil {
		t.Fatal(err)
	}
	if len(sink.host) != 1 || sink.host[0].tenant != "acme" || string(sink.host[0].ev.Payload) != string(d.Record()) {
		t.Fatalf("host events = %+v", sink.host)
	}
}
