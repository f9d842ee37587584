package memstore

import (
	"fmt"
	"sync"
	"testing"

	"github.com/wopinterop/wopinterop/interop"
)

func TestIdempotencyUnderConcurrency(t *testing.T) {
	s := newStore(t)
	var runs counter
	register(t, s, tenantA, "count", runs.noop)
	sub := subject(tenantA, "alice")

	// Many rounds, because a lost race needs the callers to interleave
	// between the lookup and the insert.
	const rounds, callers = 20, 64
	type result struct {
		run     interop.Run
		created bool
		err     error
	}
	for round := range rounds {
		key := fmt.Sprintf("msg-%d", round)
		results := make([]result, callers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range callers {
			wg.Go(func() {
				<-start
				run, created, err := s.CreateRun(testCtx(t), sub, interop.CreateRunRequest{
					WorkflowID: "count", IdempotencyKey: key, ContextID: key,
				})
				results[i] = result{run, created, err}
			})
		}
		close(start)
		wg.Wait()

		created := 0
		id := results[0].run.ID
		for i, r := range results {
			if r.err != nil {
				t.Fatalf("round %d caller %d: %v", round, i, r.err)
			}
			if r.created {
				created++
			}
			if r.run.ID != id || r.run.ContextID != key {
				t.Fatalf("round %d caller %d got run %s (context %q), caller 0 got %s", round, i, r.run.ID, r.run.ContextID, id)
			}
		}
		if created != 1 {
			t.Fatalf("round %d: %d callers saw created=true, want exactly 1", round, created)
		}
		events(t, s, sub, id)
	}
	if n := runs.n.Load(); n != rounds {
		t.Fatalf("workflow started %d times, want %d", n, rounds)
	}
	page, err := s.ListRuns(testCtx(t), sub, interop.ListRunsQuery{})
	if err != nil || page.Total != rounds {
		t.Fatalf("ListRuns total %d (err %v), want %d", page.Total, err, rounds)
	}
}

func TestIdempotencyScope(t *testing.T) {
	s := newStore(t)
	alice := subject(tenantA, "alice")
	first := mustCreate(t, s, alice, interop.CreateRunRequest{WorkflowID: FixtureNoop, IdempotencyKey: "k"})

	tests := []struct {
		name      string
		sub       interop.Subject
		req       interop.CreateRunRequest
		wantSame  bool
		wantField string
	}{
		{name: "same principal repeats", sub: alice, req: interop.CreateRunRequest{WorkflowID: FixtureNoop, IdempotencyKey: "k"}, wantSame: true},
		{name: "repeat with other inputs returns the first run", sub: alice, req: interop.CreateRunRequest{WorkflowID: FixtureNoop, IdempotencyKey: "k", Inputs: []byte(`{"message":"again"}`)}, wantSame: true},
		{name: "other principal", sub: subject(tenantA, "bob"), req: interop.CreateRunRequest{WorkflowID: FixtureNoop, IdempotencyKey: "k"}},
		{name: "other tenant same principal", sub: subject(tenantB, "alice"), req: interop.CreateRunRequest{WorkflowID: FixtureNoop, IdempotencyKey: "k"}},
		{name: "other key", sub: alice, req: interop.CreateRunRequest{WorkflowID: FixtureNoop, IdempotencyKey: "k2"}},
		{name: "no key", sub: alice, req: interop.CreateRunRequest{WorkflowID: FixtureNoop}},
		{name: "same principal in a workspace it cannot read the run from", sub: inWorkspace(alice, "ws-9"),
			req: interop.CreateRunRequest{WorkflowID: FixtureNoop, IdempotencyKey: "k"}, wantField: "idempotencyKey"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			run, created, err := s.CreateRun(testCtx(t), tc.sub, tc.req)
			switch {
			case tc.wantField != "":
				wantInputError(t, err, tc.wantField)
				if created || run.ID != "" {
					t.Fatalf("refusal returned run %q created %v", run.ID, created)
				}
			case err != nil:
				t.Fatal(err)
			case tc.wantSame && (created || run.ID != first.ID):
				t.Fatalf("repeat: created %v id %s, want the first run %s", created, run.ID, first.ID)
			case !tc.wantSame && (!created || run.ID == first.ID):
				t.Fatalf("created %v id %s, want a new run", created, run.ID)
			}
		})
	}
}
