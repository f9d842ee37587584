package interoptest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/isolation"
)

// minOpaqueLen is the shortest opaque segment the OpenWOP conformance suite
// accepts as carrying 128 bits of entropy (OpenWOP interop.md §MCP tasks and
// cancellation).
const minOpaqueLen = 22

func checkUnknownIDs(ctx context.Context, k *kit) error {
	a := k.h.TenantA
	runID := neverMinted(a.Tenant, 26)
	interruptID := neverMinted(a.Tenant, 26)
	_, err := k.s.GetRun(ctx, a, runID)
	if e := isNotFound("GetRun(never-minted id)", err); e != nil {
		return e
	}
	_, err = k.s.CancelRun(ctx, a, runID, "interoptest")
	if e := isNotFound("CancelRun(never-minted id)", err); e != nil {
		return e
	}
	_, err = k.s.ResolveInterrupt(ctx, a, interop.ResolveRequest{
		RunID: runID, InterruptID: interruptID, Outcome: interop.OutcomeAccept, Value: json.RawMessage(acceptValue),
	})
	if e := isNotFound("ResolveInterrupt(never-minted ids)", err); e != nil {
		return e
	}
	seq, err := k.s.WatchRun(ctx, a, runID, -1)
	if e := isNotFound("WatchRun(never-minted id)", err); e != nil {
		return e
	}
	if seq != nil {
		return errors.New("WatchRun(never-minted id) returned a non-nil sequence with its error")
	}
	page, err := k.s.ListRuns(ctx, a, interop.ListRunsQuery{ContextID: unique("ctx")})
	if err != nil {
		return fmt.Errorf("ListRuns(unused contextId): %w", err)
	}
	if len(page.Runs) != 0 || page.Total != 0 || page.NextCursor != "" {
		return fmt.Errorf("ListRuns(unused contextId) = %d runs, Total %d, NextCursor %q; want an empty last page",
			len(page.Runs), page.Total, page.NextCursor)
	}
	return nil
}

func checkCreateAndRead(ctx context.Context, k *kit) error {
	a := k.h.TenantA
	wfs, err := k.s.ListWorkflows(ctx, a)
	if err != nil {
		return fmt.Errorf("ListWorkflows: %w", err)
	}
	if !slices.ContainsFunc(wfs, func(w interop.Workflow) bool { return w.ID == k.h.Noop }) {
		return fmt.Errorf("ListWorkflows as %s does not offer the Noop fixture %q", who(a), k.h.Noop)
	}

	contextID := unique("ctx")
	msg := &interop.Message{ID: unique("msg"), Role: interop.RoleUser, Parts: []interop.Part{interop.TextPart("hello")}}
	run, created, err := k.s.CreateRun(ctx, a, interop.CreateRunRequest{
		WorkflowID:    k.h.Noop,
		Inputs:        json.RawMessage(emptyInputs),
		Transport:     interop.TransportMCP,
		ContextID:     contextID,
		TrustBoundary: interop.TrustUntrusted,
		Message:       msg,
	})
	if err != nil {
		return fmt.Errorf("CreateRun(Noop): %w", err)
	}
	if !created {
		return errors.New("CreateRun(Noop) without idempotency key returned created=false")
	}
	tenant, opaque, err := isolation.Split(run.ID)
	if err != nil {
		return fmt.Errorf("run id %q is not a tenant-bound id (OpenWOP identity.md §5)", run.ID)
	}
	if tenant != a.Tenant {
		return fmt.Errorf("run id %q carries tenant segment %q, want the creator's tenant %q", run.ID, tenant, a.Tenant)
	}
	if len(opaque) < minOpaqueLen {
		return fmt.Errorf("run id %q has a %d-character opaque segment, want at least %d (OpenWOP interop.md §MCP tasks and cancellation)", run.ID, len(opaque), minOpaqueLen)
	}
	if err := sameFields("CreateRun", run, a, k.h.Noop, contextID, interop.TransportMCP); err != nil {
		return err
	}

	done, err := k.waitStatus(ctx, a, run.ID, interop.StatusCompleted)
	if err != nil {
		return err
	}
	if done.ID != run.ID {
		return fmt.Errorf("GetRun(%s) returned run %s", run.ID, done.ID)
	}
	if err := sameFields("GetRun", done, a, k.h.Noop, contextID, interop.TransportMCP); err != nil {
		return err
	}
	if len(done.Messages) == 0 || done.Messages[0].ID != msg.ID || done.Messages[0].Role != interop.RoleUser {
		return fmt.Errorf("GetRun: first exchanged message = %v, want the starting message %q", firstMessage(done), msg.ID)
	}
	if done.StatusAt.IsZero() || done.CreatedAt.IsZero() {
		return fmt.Errorf("GetRun: zero StatusAt (%v) or CreatedAt (%v)", done.StatusAt, done.CreatedAt)
	}
	if done.LastSequence < 0 {
		return fmt.Errorf("GetRun: completed run has LastSequence %d, want the sequence of its last event", done.LastSequence)
	}
	// A read appends nothing (OpenWOP interop.md §MCP tasks and cancellation).
	if err := k.unchanged(ctx, a, done, "GetRun"); err != nil {
		return err
	}

	other, err := k.create(ctx, a, k.h.Noop, emptyInputs, contextID)
	if err != nil {
		return err
	}
	if other.ID == run.ID {
		return fmt.Errorf("two CreateRun calls without idempotency key returned the same run %s", run.ID)
	}
	return nil
}

func sameFields(op string, run interop.Run, s interop.Subject, workflow, contextID string, tr interop.Transport) error {
	switch {
	case run.Tenant != s.Tenant:
		return fmt.Errorf("%s: Tenant = %q, want %q", op, run.Tenant, s.Tenant)
	case run.Principal != s.Principal:
		return fmt.Errorf("%s: Principal = %q, want %q", op, run.Principal, s.Principal)
	case run.WorkflowID != workflow:
		return fmt.Errorf("%s: WorkflowID = %q, want %q", op, run.WorkflowID, workflow)
	case run.ContextID != contextID:
		return fmt.Errorf("%s: ContextID = %q, want the contextId given to CreateRun %q", op, run.ContextID, contextID)
	case run.Transport != tr:
		return fmt.Errorf("%s: Transport = %q, want %q", op, run.Transport, tr)
	case !run.Status.Valid():
		return fmt.Errorf("%s: Status %q is not a run status", op, run.Status)
	}
	return nil
}

func firstMessage(r interop.Run) any {
	if len(r.Messages) == 0 {
		return "none"
	}
	return r.Messages[0].ID
}

// runCount returns how many runs a caller sees in one contextId, and the
// Total of an unfiltered listing.
func (k *kit) runCount(ctx context.Context, s interop.Subject, contextID string) (inContext, total int, err error) {
	p, err := k.s.ListRuns(ctx, s, interop.ListRunsQuery{ContextID: contextID, PageSize: 100})
	if err != nil {
		return 0, 0, fmt.Errorf("ListRuns(contextId): %w", err)
	}
	all, err := k.s.ListRuns(ctx, s, interop.ListRunsQuery{PageSize: 1})
	if err != nil {
		return 0, 0, fmt.Errorf("ListRuns(): %w", err)
	}
	return max(len(p.Runs), p.Total), all.Total, nil
}

func checkRefuseUnknownWorkflow(ctx context.Context, k *kit) error {
	a := k.h.TenantA
	contextID := unique("ctx")
	_, before, err := k.runCount(ctx, a, contextID)
	if err != nil {
		return err
	}
	run, created, err := k.s.CreateRun(ctx, a, interop.CreateRunRequest{
		WorkflowID: unique("no-such-workflow"), Inputs: json.RawMessage(emptyInputs),
		Transport: interop.TransportA2A, ContextID: contextID, TrustBoundary: interop.TrustUntrusted,
	})
	if e := isNotFound("CreateRun(unknown workflow)", err); e != nil {
		return e
	}
	if created || run.ID != "" {
		return fmt.Errorf("CreateRun(unknown workflow) failed but returned created=%v, run %q", created, run.ID)
	}
	in, after, err := k.runCount(ctx, a, contextID)
	if err != nil {
		return err
	}
	if in != 0 || after != before {
		return fmt.Errorf("refused CreateRun(unknown workflow) left a run behind: %d runs in its contextId, Total %d -> %d", in, before, after)
	}
	return nil
}

func checkRefuseInvalidInputs(ctx context.Context, k *kit) error {
	a := k.h.TenantA
	contextID := unique("ctx")
	key := unique("key")
	_, before, err := k.runCount(ctx, a, contextID)
	if err != nil {
		return err
	}
	for _, inputs := range []string{`{"delayMs":"soon"}`, `[1,2]`} {
		run, created, err := k.s.CreateRun(ctx, a, interop.CreateRunRequest{
			WorkflowID: k.h.Cancellable, Inputs: json.RawMessage(inputs), IdempotencyKey: key,
			Transport: interop.TransportA2A, ContextID: contextID, TrustBoundary: interop.TrustUntrusted,
		})
		if err == nil {
			return fmt.Errorf("CreateRun(Cancellable, %s) succeeded (run %s), want ErrInvalidInput", inputs, run.ID)
		}
		if !errors.Is(err, interop.ErrInvalidInput) {
			return fmt.Errorf("CreateRun(Cancellable, %s) = %v, want ErrInvalidInput", inputs, err)
		}
		if created || run.ID != "" {
			return fmt.Errorf("refused CreateRun(Cancellable, %s) returned created=%v, run %q", inputs, created, run.ID)
		}
		in, after, err := k.runCount(ctx, a, contextID)
		if err != nil {
			return err
		}
		if in != 0 || after != before {
			return fmt.Errorf("refused CreateRun(Cancellable, %s) left a run behind: %d runs in its contextId, Total %d -> %d", inputs, in, before, after)
		}
	}
	// The refusals must not have taken the idempotency key.
	run, created, err := k.s.CreateRun(ctx, a, interop.CreateRunRequest{
		WorkflowID: k.h.Cancellable, Inputs: json.RawMessage(delayInputs(0)), IdempotencyKey: key,
		Transport: interop.TransportA2A, ContextID: contextID, TrustBoundary: interop.TrustUntrusted,
	})
	if err != nil {
		return fmt.Errorf("CreateRun(Cancellable, valid inputs) after refusals with the same key: %w", err)
	}
	if !created {
		return fmt.Errorf("CreateRun with a key only refused calls used returned created=false (run %s): a refusal took the key", run.ID)
	}
	return nil
}
