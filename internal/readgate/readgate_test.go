package readgate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/isolation"
)

// op is a well-formed opaque segment, op15 one character too short.
var (
	op   = "r-9f3cAB12cd34EF56"
	op15 = strings.Repeat("o", 15)
)

func TestCheckReadable(t *testing.T) {
	acme := interop.Subject{Tenant: "acme", Authenticated: true}
	anon := interop.Subject{Tenant: "anon:acme"}
	tests := []struct {
		name string
		s    interop.Subject
		id   string
		want bool
	}{
		{"own", acme, "acme/" + op, true},
		{"own legacy tilde", acme, "acme/ab~" + op, true},
		{"foreign", acme, "other/" + op, false},
		{"tenant is case-sensitive", acme, "ACME/" + op, false},
		{"tenant prefix is not the tenant", acme, "acm/" + op, false},
		{"tenant extension is not the tenant", acme, "acme2/" + op, false},
		{"anon tenant of the same name", acme, "anon:acme/" + op, false},
		{"anon caller own", anon, "anon:acme/" + op, true},
		{"anon caller plain tenant", anon, "acme/" + op, false},
		{"projected form must be parsed first", acme, "acme~2F" + op, false},
		{"percent form must be parsed first", acme, "acme%2F" + op, false},
		{"malformed", acme, "acme/" + op15, false},
		{"empty", acme, "", false},
		{"subject without tenant", interop.Subject{}, "acme/" + op, false},
		{"subject without tenant, empty tenant segment", interop.Subject{}, "/" + op, false},
	}
	for _, tc := range tests {
		err := CheckReadable(tc.s, tc.id)
		if tc.want && err != nil {
			t.Errorf("%s: CheckReadable = %v, want nil", tc.name, err)
		}
		if !tc.want && err != isolation.ErrNotFound {
			t.Errorf("%s: CheckReadable = %v, want exactly isolation.ErrNotFound", tc.name, err)
		}
	}
}

func TestCheckReadableMessageIsIndependentOfTheID(t *testing.T) {
	s := interop.Subject{Tenant: "acme"}
	var msgs []string
	for _, id := range []string{"other/" + op, "secret-tenant/" + op, "acme/" + op15, "", "x"} {
		err := CheckReadable(s, id)
		if !errors.Is(err, interop.ErrNotFound) {
			t.Fatalf("Checkreadable(%q) = %v, want isolation.ErrNotFound", id, err)
		}
		if id != "" && strings.Contains(err.Error(), id) || strings.Contains(err.Error(), "secret-tenant") {
			t.Fatalf("message %q names the id", err)
		}
		msgs = append(msgs, err.Error())
	}
	for _, m := range msgs[1:] {
		if m != msgs[0] {
			t.Fatalf("messages differ: %q vs %q", msgs[0], m)
		}
	}
}

func TestGateError(t *testing.T) {
	terminal := fmt.Errorf("run acme/x: %w", interop.ErrRunTerminal)
	input := &interop.InputError{Field: "inputs/x", Reason: "bad"}
	fold := []error{
		interop.ErrForbidden,
		fmt.Errorf("run other/%s belongs to tenant other: %w", op, interop.ErrForbidden),
		isolation.ErrTenantMismatch,
		fmt.Errorf("getRun: %w", isolation.ErrTenantMismatch),
		interop.ErrNotFound,
		fmt.Errorf("run acme/%s does not exist: %w", op, interop.ErrNotFound),
		isolation.ErrNotFound,
		errors.Join(errors.New("store detail"), interop.ErrForbidden),
	}
	for _, err := range fold {
		if got := GateError(err); got != isolation.ErrNotFound {
			t.Errorf("GateError(%v) = %v, want exactly isolation.ErrNotFound", err, got)
		}
	}
	pass := []error{
		terminal,
		input,
		interop.ErrAlreadyResolved,
		interop.ErrNotEligible,
		interop.ErrUnauthenticated,
		isolation.ErrMalformedID,
		isolation.ErrBareID,
		context.Canceled,
		errors.New("database is down"),
	}
	for _, err := range pass {
		if got := GateError(err); got != err {
			t.Errorf("GateError(%v) = %v, want it unchanged", err, got)
		}
	}
	if GateError(nil) != nil {
		t.Error("GateError(nil) != nil")
	}
}

// fakeRuns is a store the way a careless host might write one: its refusals
// say whose run it is and whether it exists.
type fakeRuns struct{ runs map[string]string } // id -> owning tenant

func (f fakeRuns) GetRun(_ context.Context, s interop.Subject, id string) (interop.Run, error) {
	owner, ok := f.runs[id]
	switch {
	case !ok:
		return interop.Run{}, fmt.Errorf("run %s does not exist: %w", id, interop.ErrNotFound)
	case owner != s.Tenant:
		return interop.Run{}, fmt.Errorf("run %s belongs to %s: %w", id, owner, interop.ErrForbidden)
	}
	return interop.Run{ID: id, Tenant: owner}, nil
}

// getTask is how a protocol surface composes the helpers: resolve the
// parameter, gate it, ask the store, gate the store's answer.
func getTask(ctx context.Context, store fakeRuns, s interop.Subject, raw string) (interop.Run, error) {
	id, err := isolation.ResolveParam(s, raw, isolation.RefuseBare)
	if err != nil {
		return interop.Run{}, err
	}
	if err := CheckReadable(s, id); err != nil {
		return interop.Run{}, err
	}
	run, err := store.GetRun(ctx, s, id)
	return run, GateError(err)
}

// TestForeignAndUnknownReadTheSame is unreadable-is-unknown (OpenWOP
// interop.md §Isolation) end to end: a foreign run that
// exists, a foreign id that does not, and an own id that does not all give
// the same error with the same message, whether the gate or the store
// refused (the store check is reached by skipping the gate).
func TestForeignAndUnknownReadTheSame(t *testing.T) {
	ctx := context.Background()
	mine, theirs := "acme/"+op, "globex/"+strings.Repeat("g", 20)
	store := fakeRuns{runs: map[string]string{mine: "acme", theirs: "globex"}}
	acme := interop.Subject{Tenant: "acme", Authenticated: true}

	if run, err := getTask(ctx, store, acme, isolation.Project(mine)); err != nil || run.ID != mine {
		t.Fatalf("own run: %v, %v", run, err)
	}
	var msgs []string
	for _, raw := range []string{
		isolation.Project(theirs),                              // exists, foreign
		isolation.Project("globex/" + strings.Repeat("h", 20)), // foreign, unknown
		isolation.Project("acme/" + strings.Repeat("h", 20)),   // own tenant, unknown
	} {
		_, err := getTask(ctx, store, acme, raw)
		if err != isolation.ErrNotFound {
			t.Fatalf("getTask(%q) = %v, want exactly isolation.ErrNotFound", raw, err)
		}
		msgs = append(msgs, err.Error())
		// The same ids straight at the store, as if a surface forgot the
		// pre-filter: GateError alone must still hide the difference.
		id, _ := isolation.ParseID(raw)
		_, err = store.GetRun(ctx, acme, id)
		if GateError(err) != isolation.ErrNotFound {
			t.Fatalf("GateError(store %q) = %v", id, GateError(err))
		}
		msgs = append(msgs, GateError(err).Error())
	}
	for _, m := range msgs {
		if m != msgs[0] {
			t.Fatalf("messages differ: %q vs %q", msgs[0], m)
		}
		if strings.Contains(m, "globex") || strings.Contains(m, "acme") {
			t.Fatalf("message %q names a tenant", m)
		}
	}
}

func BenchmarkCheckReadable(b *testing.B) {
	s := interop.Subject{Tenant: "acme"}
	b.ReportAllocs()
	for b.Loop() {
		_ = CheckReadable(s, "acme/ABCDEFGHIJKLMNOPQRSTUVWXYZ")
	}
}

// The gate runs on every task-addressed request; it allocates nothing.
func TestCheckReadableDoesNotAllocate(t *testing.T) {
	s := interop.Subject{Tenant: "acme"}
	for _, id := range []string{"acme/ABCDEFGHIJKLMNOPQRSTUVWXYZ", "globex/ABCDEFGHIJKLMNOPQRSTUVWXYZ", "x"} {
		if n := testing.AllocsPerRun(100, func() { _ = CheckReadable(s, id) }); n != 0 {
			t.Errorf("CheckReadable(%q) allocates %.1f times", id, n)
		}
	}
}
