package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wopinterop/wopinterop/internal/settle"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/postgres/internal/pgtest"
)

// waiterOf is s as an interop.RunWaiter, which the library's blocking
// calls look for (internal/settle).
func waiterOf(t testing.TB, s *Store) interop.RunWaiter {
	t.Helper()
	w, ok := any(s).(interop.RunWaiter)
	if !ok {
		t.Fatal("*postgres.Store does not implement interop.RunWaiter: blocking calls follow WatchRun")
	}
	return w
}

// queryLog records the SQL of the queries made with a traced context
// (traced): a store hook that sees exactly one call's queries.
type queryLog struct {
	mu       sync.Mutex
	sql      []string
	finished chan struct{} // if set, signalled (without blocking) as a traced query ends
}

type tracedKey struct{}

func traced(ctx context.Context) context.Context { return context.WithValue(ctx, tracedKey{}, true) }

func (l *queryLog) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if ctx.Value(tracedKey{}) != nil {
		l.mu.Lock()
		l.sql = append(l.sql, data.SQL)
		l.mu.Unlock()
	}
	return ctx
}

func (l *queryLog) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryEndData) {
	if ctx.Value(tracedKey{}) != nil && l.finished != nil {
		select {
		case l.finished <- struct{}{}:
		default:
		}
	}
}

func (l *queryLog) queries() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.sql...)
}

// tracedPool is a pool on dsn whose traced queries log records.
func tracedPool(t testing.TB, dsn string, log *queryLog) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.Tracer = log
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// readsEvents reports the queries that read a run's event log.
func readsEvents(queries []string) []string {
	var out []string
	for _, q := range queries {
		if strings.Contains(q, "wopinterop_run_events") {
			out = append(out, q)
		}
	}
	return out
}

// TestBlockingWaitReadsNoEvents: the wait behind a blocking SendMessage
// or tools/call (internal/settle) asks the store for the run's status, and
// answers the completed run without reading one event of its log.
func TestBlockingWaitReadsNoEvents(t *testing.T) {
	dsn := pgtest.NewDSN(t)
	if _, err := Migrate(testCtx(t), pgtest.Pool(t, dsn)); err != nil {
		t.Fatal(err)
	}
	log := &queryLog{}
	s := openStore(t, tracedPool(t, dsn, log))
	sub := alice()
	run := mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: FixtureNoop})
	if run.Status.Terminal() {
		t.Fatalf("CreateRun answered the noop run %s already; the wait would not be asked", run.Status)
	}
	got, err := settle.Run(traced(testCtx(t)), s, sub, run, settle.Wait{Settled: interop.RunStatus.Terminal, Limit: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != interop.StatusCompleted || len(got.Artifacts) != 1 {
		t.Fatalf("settled run = %s with %d artifacts; want completed with its artifact", got.Status, len(got.Artifacts))
	}
	queries := log.queries()
	if len(queries) == 0 {
		t.Fatal("the wait made no traced query")
	}
	if reads := readsEvents(queries); len(reads) > 0 {
		t.Fatalf("the wait read the event log (%d of %d queries):\n%s", len(reads), len(queries), strings.Join(reads, "\n"))
	}

	// A run already settled costs a status read and the run's read.
	log.mu.Lock()
	log.sql = nil
	log.mu.Unlock()
	again, err := waiterOf(t, s).WaitRun(traced(testCtx(t)), sub, run.ID, interop.RunStatus.Terminal)
	if err != nil {
		t.Fatal(err)
	}
	if read, err := s.GetRun(testCtx(t), sub, run.ID); err != nil || !jsonEqual(t, again, read) {
		t.Fatalf("WaitRun of a completed run = %+v; GetRun reads %+v, %v", again, read, err)
	}
	if n := len(log.queries()); n != 2 {
		t.Fatalf("WaitRun of a completed run made %d queries, want 2 (status, run):\n%s", n, strings.Join(log.queries(), "\n"))
	}
}

func jsonEqual(t testing.TB, a, b any) bool {
	t.Helper()
	x, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(x) == string(y)
}

// TestWaitRunWokenByAnotherReplica: a run changed through another pool
// (another replica) wakes the wait — by its notification, well before this
// replica's minute-long poll, and, with notifications off, by the poll.
func TestWaitRunWokenByAnotherReplica(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []Option
	}{
		{"notified", []Option{WithPollInterval(time.Minute)}},
		{"polling", []Option{WithoutNotifications(), WithPollInterval(20 * time.Millisecond)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dsn := pgtest.NewDSN(t)
			if _, err := Migrate(testCtx(t), pgtest.Pool(t, dsn)); err != nil {
				t.Fatal(err)
			}
			log := &queryLog{finished: make(chan struct{}, 1)}
			waiting := openStore(t, tracedPool(t, dsn, log), tc.opts...)
			other := openStore(t, pgtest.Pool(t, dsn))
			sub := alice()

			run := mustCreate(t, other, sub, interop.CreateRunRequest{WorkflowID: FixtureApproval})
			suspended := waitStatus(t, other, sub, run.ID, interop.StatusWaitingApproval)
			ctx, cancel := context.WithTimeout(traced(context.Background()), 10*time.Second)
			defer cancel()
			type answer struct {
				run interop.Run
				err error
			}
			w := waiterOf(t, waiting)
			done := make(chan answer, 1)
			go func() {
				r, err := w.WaitRun(ctx, sub, run.ID, interop.RunStatus.Terminal)
				done <- answer{r, err}
			}()
			// The first look has found the run suspended before the other
			// replica resolves it: only a wake-up ends this wait.
			select {
			case <-log.finished:
			case a := <-done:
				t.Fatalf("WaitRun returned before the run settled: %s, %v", a.run.Status, a.err)
			}
			in, _ := suspended.OpenInterrupt()
			if _, err := other.ResolveInterrupt(testCtx(t), sub, interop.ResolveRequest{
				RunID: run.ID, InterruptID: in.ID, Value: json.RawMessage(`{"action":"accept"}`),
			}); err != nil {
				t.Fatal(err)
			}
			a := <-done
			if a.err != nil {
				t.Fatalf("WaitRun across replicas: %v", a.err)
			}
			if a.run.Status != interop.StatusCompleted {
				t.Fatalf("WaitRun across replicas = %s, want completed", a.run.Status)
			}
			if reads := readsEvents(log.queries()); len(reads) > 0 {
				t.Fatalf("the wait read the event log:\n%s", strings.Join(reads, "\n"))
			}
		})
	}
}

// TestWaitRunEndsWithItsContext: a wait for a run that does not settle
// ends with its ctx's error, and a done ctx asks the database nothing.
func TestWaitRunEndsWithItsContext(t *testing.T) {
	dsn := pgtest.NewDSN(t)
	if _, err := Migrate(testCtx(t), pgtest.Pool(t, dsn)); err != nil {
		t.Fatal(err)
	}
	log := &queryLog{}
	s := openStore(t, tracedPool(t, dsn, log))
	w := waiterOf(t, s)
	sub := alice()
	live := mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: FixtureCancellable})
	never := func(interop.RunStatus) bool { return false }

	short, cancel := context.WithTimeout(testCtx(t), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if got, err := w.WaitRun(short, sub, live.ID, never); !errors.Is(err, context.DeadlineExceeded) || got.ID != "" {
		t.Fatalf("WaitRun(live run) with an expiring ctx = %q, %v; want no run and context.DeadlineExceeded", got.ID, err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("WaitRun outlived its ctx by %v", took)
	}

	gone, cancelGone := context.WithCancel(traced(testCtx(t)))
	cancelGone()
	if got, err := w.WaitRun(gone, sub, live.ID, never); !errors.Is(err, context.Canceled) || got.ID != "" {
		t.Fatalf("WaitRun with a cancelled ctx = %q, %v; want no run and context.Canceled", got.ID, err)
	}
	if q := log.queries(); len(q) > 0 {
		t.Fatalf("WaitRun with a cancelled ctx queried the database:\n%s", strings.Join(q, "\n"))
	}

	// Cancelled meanwhile: terminal ends the wait whatever settled says.
	go func() {
		time.Sleep(20 * time.Millisecond)
		_, _ = s.CancelRun(testCtx(t), sub, live.ID, "stop")
	}()
	got, err := w.WaitRun(testCtx(t), sub, live.ID, never)
	if err != nil || got.Status != interop.StatusCancelled || got.CancelReason != "stop" {
		t.Fatalf("WaitRun across a cancel = %s (%q), %v; want cancelled", got.Status, got.CancelReason, err)
	}
}

// TestWaitRunIsolation: a run the Subject may not read — another
// tenant's, or its tenant's in another workspace — is refused exactly as
// an id never minted, and as GetRun refuses it.
func TestWaitRunIsolation(t *testing.T) {
	s := newStore(t)
	w := waiterOf(t, s)
	run := mustCreate(t, s, alice(), interop.CreateRunRequest{WorkflowID: FixtureApproval})
	waitStatus(t, s, alice(), run.ID, interop.StatusWaitingApproval)
	suspended := func(st interop.RunStatus) bool { return st.Suspended() }
	if _, err := w.WaitRun(testCtx(t), alice(), run.ID, suspended); err != nil {
		t.Fatalf("WaitRun by its owner: %v", err)
	}

	unknownID := strings.TrimSuffix(run.ID, run.ID[len(run.ID)-4:]) + "zzzz"
	_, unknown := w.WaitRun(testCtx(t), carol(), unknownID, suspended)
	if !errors.Is(unknown, interop.ErrNotFound) {
		t.Fatalf("WaitRun of a never-minted id = %v; want ErrNotFound", unknown)
	}
	_, getUnknown := s.GetRun(testCtx(t), carol(), unknownID)
	otherWorkspace := alice()
	otherWorkspace.Workspace = "elsewhere"
	for name, sub := range map[string]interop.Subject{"another tenant": carol(), "another workspace": otherWorkspace} {
		got, err := w.WaitRun(testCtx(t), sub, run.ID, suspended)
		if err == nil || got.ID != "" || err.Error() != unknown.Error() || err.Error() != getUnknown.Error() || !errors.Is(err, interop.ErrNotFound) {
			t.Errorf("WaitRun by %s = %q, %v; want no run and %q, as for a never-minted id", name, got.ID, err, unknown)
		}
	}
}
