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

// idForms lists the spellings of id an error text might carry (projected,
// bound, bare opaque), most specific first, so that placeholders replace
// whichever form a store chose.
func idForms(id string) []string {
	_, opaque, _ := isolation.Split(id)
	return []string{isolation.Project(id), id, opaque}
}

func checkForeignRunIsUnknown(ctx context.Context, k *kit) error {
	a, b := k.h.TenantA, k.h.TenantB
	contextID := unique("ctx")
	run, in, err := k.startSuspended(ctx, a, contextID)
	if err != nil {
		return err
	}
	// Two never-minted references: one with the owner's tenant segment (what
	// a guessing caller would send) and one in the caller's own tenant (what
	// a tenant-mismatch shortcut would be compared with; OpenWOP interop.md §Isolation).
	type ref struct{ run, interrupt string }
	var unknown []ref
	for _, tenant := range []string{"", b.Tenant} {
		r, err := sameShape(run.ID, tenant)
		if err != nil {
			return err
		}
		i, err := sameShape(in.ID, tenant)
		if err != nil {
			return err
		}
		unknown = append(unknown, ref{r, i})
	}
	forms := func(r ref) []string { return append(idForms(r.run), idForms(r.interrupt)...) }
	owned := ref{run.ID, in.ID}

	probes := []struct {
		op   string
		call func(r ref) error
	}{
		{"GetRun", func(r ref) error {
			_, err := k.s.GetRun(ctx, b, r.run)
			return err
		}},
		{"CancelRun", func(r ref) error {
			_, err := k.s.CancelRun(ctx, b, r.run, "interoptest-foreign")
			return err
		}},
		{"ResolveInterrupt", func(r ref) error {
			_, err := k.s.ResolveInterrupt(ctx, b, interop.ResolveRequest{
				RunID: r.run, InterruptID: r.interrupt, Outcome: interop.OutcomeAccept, Value: json.RawMessage(acceptValue),
			})
			return err
		}},
		{"WatchRun", func(r ref) error {
			seq, err := k.s.WatchRun(ctx, b, r.run, -1)
			if seq != nil {
				if err == nil {
					return nil
				}
				// Not wrapped: a sequence next to the error is itself the
				// violation, whatever the error says.
				return fmt.Errorf("returned a sequence along with its error %q", err)
			}
			return err
		}},
	}
	for _, p := range probes {
		foreignErr := p.call(owned)
		if e := isNotFound(p.op+" by another tenant", foreignErr); e != nil {
			return e
		}
		if err := k.unchanged(ctx, a, run, p.op+" by another tenant"); err != nil {
			return err
		}
		for _, u := range unknown {
			unknownErr := p.call(u)
			if e := isNotFound(p.op+" of a never-minted id", unknownErr); e != nil {
				return e
			}
			if diff := sameAnswer(foreignErr, unknownErr, forms(owned), forms(u)); diff != "" {
				return fmt.Errorf("%s of another tenant's run answers unlike a never-minted id %s: %s", p.op, u.run, diff)
			}
		}
	}

	// Listing: never shown, not even when filtering by the owner's contextId.
	page, err := k.s.ListRuns(ctx, b, interop.ListRunsQuery{ContextID: contextID})
	if err != nil {
		return fmt.Errorf("ListRuns(owner's contextId) by another tenant: %w", err)
	}
	if len(page.Runs) != 0 || page.Total != 0 {
		return fmt.Errorf("ListRuns(owner's contextId) by another tenant = %d runs, Total %d; want none", len(page.Runs), page.Total)
	}
	all, _, err := k.listAll(ctx, b, interop.ListRunsQuery{PageSize: 100})
	if err != nil {
		return err
	}
	if slices.Contains(ids(all), run.ID) {
		return fmt.Errorf("ListRuns() by another tenant lists run %s", run.ID)
	}
	if err := k.unchanged(ctx, a, run, "ListRuns by another tenant"); err != nil {
		return err
	}

	// The owner still sees and resolves its run: the foreign calls consumed
	// nothing.
	mine, err := k.s.ListRuns(ctx, a, interop.ListRunsQuery{ContextID: contextID})
	if err != nil {
		return fmt.Errorf("ListRuns(contextId) by the owner: %w", err)
	}
	if mine.Total != 1 || len(mine.Runs) != 1 || mine.Runs[0].ID != run.ID {
		return fmt.Errorf("ListRuns(contextId) by the owner = %v (Total %d), want exactly %s", ids(mine.Runs), mine.Total, run.ID)
	}
	if _, err := k.s.ResolveInterrupt(ctx, a, interop.ResolveRequest{
		RunID: run.ID, InterruptID: in.ID, Outcome: interop.OutcomeAccept, Value: json.RawMessage(acceptValue),
	}); err != nil {
		if errors.Is(err, interop.ErrAlreadyResolved) {
			return fmt.Errorf("the owner cannot resolve interrupt %s after another tenant tried: %w", in.ID, err)
		}
		return fmt.Errorf("ResolveInterrupt by the owner after the foreign attempts: %w", err)
	}
	_, err = k.waitStatus(ctx, a, run.ID, interop.StatusCompleted)
	return err
}
