package postgres

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/postgres/internal/pgtest"
)

const (
	tenantA = "acme"
	tenantB = "globex"
)

func subject(tenant, principal string) interop.Subject {
	return interop.Subject{Tenant: tenant, Principal: principal, Authenticated: true}
}

func alice() interop.Subject   { return subject(tenantA, "alice") }
func bob() interop.Subject     { return subject(tenantA, "bob") }
func mallory() interop.Subject { return subject(tenantA, "mallory") }
func carol() interop.Subject   { return subject(tenantB, "carol") }

// restrictedApproval is an approval workflow only alice and bob may
// resolve, so that the kit's eligibility check has a non-approver to try.
const restrictedApproval = "restricted-approval"

// migratedPool is a fresh database with the schema applied.
func migratedPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	pool := pgtest.NewPool(t)
	if _, err := Migrate(context.Background(), pool); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return pool
}

// openStore opens a Store on pool with the fixtures in both tenants,
// closed when t ends.
func openStore(t testing.TB, pool *pgxpool.Pool, opts ...Option) *Store {
	t.Helper()
	s, err := New(context.Background(), pool, opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	for _, tenant := range []string{tenantA, tenantB} {
		if err := s.RegisterFixtures(tenant); err != nil {
			t.Fatalf("RegisterFixtures(%s): %v", tenant, err)
		}
		if err := s.Register(tenant, WorkflowDef{
			Workflow: interop.Workflow{ID: restrictedApproval, Name: "Restricted approval",
				InputSchema: json.RawMessage(`{"type":"object"}`)},
			Run: ApprovalFixture("gate", []string{"alice", "bob"}),
		}); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// newStore is a Store on a fresh database.
func newStore(t testing.TB, opts ...Option) *Store {
	t.Helper()
	return openStore(t, migratedPool(t), opts...)
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// events reads a run's whole log, waiting for its end.
func events(t testing.TB, s *Store, sub interop.Subject, runID string) []interop.RunEvent {
	t.Helper()
	seq, err := s.WatchRun(testCtx(t), sub, runID, -1)
	if err != nil {
		t.Fatalf("WatchRun: %v", err)
	}
	var out []interop.RunEvent
	for ev, err := range seq {
		if err != nil {
			t.Fatalf("watch: %v (after %d events)", err, len(out))
		}
		out = append(out, ev)
	}
	return out
}

func mustCreate(t testing.TB, s *Store, sub interop.Subject, req interop.CreateRunRequest) interop.Run {
	t.Helper()
	run, created, err := s.CreateRun(testCtx(t), sub, req)
	if err != nil || !created {
		t.Fatalf("CreateRun(%s) = created %v, %v", req.WorkflowID, created, err)
	}
	return run
}

// waitStatus polls GetRun until the run has status want.
func waitStatus(t testing.TB, s *Store, sub interop.Subject, runID string, want interop.RunStatus) interop.Run {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		run, err := s.GetRun(testCtx(t), sub, runID)
		if err != nil {
			t.Fatalf("GetRun: %v", err)
		}
		if run.Status == want {
			return run
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s is %s, want %s", runID, run.Status, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func typesOf(evs []interop.RunEvent) []interop.EventType {
	out := make([]interop.EventType, len(evs))
	for i, ev := range evs {
		out[i] = ev.Type
	}
	return out
}

// replicaSet opens a driver for a kit's harness: first on a fresh migrated
// database, replica on the database of a driver first opened, through a
// pool of its own, as a second replica of the host would.
type replicaSet[D comparable] struct {
	open func(t testing.TB, pool *pgxpool.Pool) D

	mu    sync.Mutex
	dsnOf map[D]string
}

func newReplicaSet[D comparable](open func(t testing.TB, pool *pgxpool.Pool) D) *replicaSet[D] {
	return &replicaSet[D]{open: open, dsnOf: map[D]string{}}
}

func (r *replicaSet[D]) first(t testing.TB) D {
	dsn := pgtest.NewDSN(t)
	if _, err := Migrate(testCtx(t), pgtest.Pool(t, dsn)); err != nil {
		t.Fatal(err)
	}
	return r.on(t, dsn)
}

func (r *replicaSet[D]) replica(t testing.TB, first D) D {
	r.mu.Lock()
	dsn := r.dsnOf[first]
	r.mu.Unlock()
	return r.on(t, dsn)
}

func (r *replicaSet[D]) on(t testing.TB, dsn string) D {
	d := r.open(t, pgtest.Pool(t, dsn))
	r.mu.Lock()
	r.dsnOf[d] = dsn
	r.mu.Unlock()
	return d
}
