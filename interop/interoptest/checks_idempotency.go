package interoptest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/isolation"
)

// concurrentCallers is how many goroutines race on one idempotency key or
// one interrupt.
const concurrentCallers = 16

type createResult struct {
	run     interop.Run
	created bool
	err     error
}

// createRace issues the same CreateRun from n goroutines released together.
func (k *kit) createRace(ctx context.Context, s interop.Subject, req interop.CreateRunRequest, n int) []createResult {
	results := make([]createResult, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			run, created, err := k.s.CreateRun(ctx, s, req)
			results[i] = createResult{run, created, err}
		})
	}
	close(start)
	wg.Wait()
	return results
}

func checkIdempotentCreate(ctx context.Context, k *kit) error {
	a, a2, b := k.h.TenantA, k.h.TenantA2, k.h.TenantB
	key := unique("key")
	request := func(contextID string) interop.CreateRunRequest {
		return interop.CreateRunRequest{
			WorkflowID: k.h.Noop, Inputs: json.RawMessage(emptyInputs), IdempotencyKey: key,
			Transport: interop.TransportA2A, ContextID: contextID, TrustBoundary: interop.TrustUntrusted,
		}
	}

	contextA := unique("ctx")
	results := k.createRace(ctx, a, request(contextA), concurrentCallers)
	first, creators := "", 0
	for i, r := range results {
		if r.err != nil {
			return fmt.Errorf("concurrent CreateRun #%d with one idempotency key: %w", i, r.err)
		}
		if r.created {
			creators++
		}
		if first == "" {
			first = r.run.ID
		}
		if r.run.ID != first {
			return fmt.Errorf("concurrent CreateRun with one idempotency key returned different runs %s and %s", first, r.run.ID)
		}
	}
	if creators != 1 {
		return fmt.Errorf("%d of %d concurrent CreateRun calls with one idempotency key reported created=true, want exactly 1", creators, concurrentCallers)
	}
	if n, _, err := k.runCount(ctx, a, contextA); err != nil {
		return err
	} else if n != 1 {
		return fmt.Errorf("%d runs exist after %d concurrent CreateRun calls with one idempotency key, want 1", n, concurrentCallers)
	}

	// A later repeat by the same principal returns the same run.
	again, created, err := k.s.CreateRun(ctx, a, request(contextA))
	if err != nil {
		return fmt.Errorf("repeated CreateRun with the idempotency key: %w", err)
	}
	if created || again.ID != first {
		return fmt.Errorf("repeated CreateRun with the idempotency key = (%s, created=%v), want (%s, created=false)", again.ID, created, first)
	}

	// Another principal of the same tenant, and another tenant, each get
	// their own run for the same key (the key is scoped per tenant and
	// principal).
	seen := map[string]string{first: who(a)}
	for _, s := range []interop.Subject{a2, b} {
		contextID := unique("ctx")
		run, created, err := k.s.CreateRun(ctx, s, request(contextID))
		if err != nil {
			return fmt.Errorf("CreateRun as %s with a key %s already used: %w", who(s), who(a), err)
		}
		if owner, dup := seen[run.ID]; dup {
			return fmt.Errorf("CreateRun as %s with the key %s used returned %s's run %s", who(s), who(a), owner, run.ID)
		}
		if !created {
			return fmt.Errorf("first CreateRun as %s with the key %s used returned created=false", who(s), who(a))
		}
		if t := isolation.TenantOf(run.ID); t != s.Tenant {
			return fmt.Errorf("CreateRun as %s returned run %s of tenant %q", who(s), run.ID, t)
		}
		seen[run.ID] = who(s)
		repeat, created, err := k.s.CreateRun(ctx, s, request(contextID))
		if err != nil {
			return fmt.Errorf("repeated CreateRun as %s: %w", who(s), err)
		}
		if created || repeat.ID != run.ID {
			return fmt.Errorf("repeated CreateRun as %s = (%s, created=%v), want (%s, created=false)", who(s), repeat.ID, created, run.ID)
		}
	}

	// A refused create does not take the key.
	fresh := unique("key")
	_, _, err = k.s.CreateRun(ctx, a, interop.CreateRunRequest{
		WorkflowID: unique("no-such-workflow"), Inputs: json.RawMessage(emptyInputs), IdempotencyKey: fresh,
		Transport: interop.TransportA2A, ContextID: contextA, TrustBoundary: interop.TrustUntrusted,
	})
	if e := isNotFound("CreateRun(unknown workflow)", err); e != nil {
		return e
	}
	req := request(unique("ctx"))
	req.IdempotencyKey = fresh
	run, created, err := k.s.CreateRun(ctx, a, req)
	if err != nil {
		return fmt.Errorf("CreateRun with a key only a refused call used: %w", err)
	}
	if !created {
		return fmt.Errorf("CreateRun with a key only a refused call used returned created=false (run %s)", run.ID)
	}
	return nil
}
