package postgres

import (
	"context"
	"encoding/json"
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
