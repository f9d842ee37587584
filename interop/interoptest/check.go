package interoptest

import (
	"context"
	"fmt"
	"testing"

	"github.com/wopinterop/wopinterop/interop"
)

// Check is one named guarantee of the RunStore contract.
type Check struct {
	// Name is stable and usable as a subtest name.
	Name string
	// Guarantee says in one line what a store must do to pass.
	Guarantee string
	// Needs lists the harness fields the check uses beyond NewStore and
	// TenantA.
	Needs []Need

	run func(ctx context.Context, k *kit) error
}

// Run runs the check against store and returns the first violation found,
// or nil. It returns an error wrapping [ErrMissingFixture] when h lacks one
// of c.Needs, and one wrapping [ErrInvalidHarness] when h is invalid. ctx
// bounds the check: every wait of the kit's own (for a status, for the
// next watch event, for a watch to end) gives up when ctx is done and
// reports what did not happen; store calls receive ctx and must honour it.
func (c Check) Run(ctx context.Context, store interop.RunStore, h Harness) error {
	if err := h.Validate(); err != nil {
		return err
	}
	if missing := h.Missing(c.Needs); len(missing) > 0 {
		return fmt.Errorf("%w: %s needs %v", ErrMissingFixture, c.Name, missing)
	}
	if store == nil {
		return fmt.Errorf("%w: nil store", ErrInvalidHarness)
	}
	if c.run == nil {
		return fmt.Errorf("interoptest: check %q was not obtained from Checks", c.Name)
	}
	return c.run(ctx, &kit{h: h, s: store})
}

// Checks returns every check of the kit in a fixed order. Each call returns a
// new slice.
func Checks() []Check {
	return []Check{
		{
			Name:      "unknown-ids",
			Guarantee: "every operation on a never-minted run id is ErrNotFound; a watch on one has no sequence",
			run:       checkUnknownIDs,
		},
		{
			Name:      "create-and-read",
			Guarantee: "CreateRun mints a tenant-bound id and persists contextId, principal and the first message; GetRun appends nothing",
			Needs:     []Need{NeedNoop},
			run:       checkCreateAndRead,
		},
		{
			Name:      "foreign-run-is-unknown",
			Guarantee: "another tenant's run answers Get, Cancel, ResolveInterrupt and WatchRun exactly as a never-minted id, is never listed, and is left unchanged",
			Needs:     []Need{NeedTenantB, NeedApproval},
			run:       checkForeignRunIsUnknown,
		},
		{
			Name:      "idempotent-create",
			Guarantee: "one idempotency key yields one run per tenant and principal, also under concurrent callers; a refused create does not use up the key",
			Needs:     []Need{NeedNoop, NeedTenantA2, NeedTenantB},
			run:       checkIdempotentCreate,
		},
		{
			Name:      "list-order-and-filters",
			Guarantee: "ListRuns orders by status time descending then id descending, applies contextId, statuses, workflow and inclusive statusAfter filters, and reports Total and page size",
			Needs:     []Need{NeedNoop, NeedApproval, NeedTenantB},
			run:       checkListOrderAndFilters,
		},
		{
			Name:      "list-cursor-stability",
			Guarantee: "paging visits every run once, runs created between pages cause no duplicate or skip, and a cursor the store did not issue to this caller is ErrInvalidInput",
			Needs:     []Need{NeedNoop, NeedTenantB},
			run:       checkListCursorStability,
		},
		{
			Name:      "cancel",
			Guarantee: "CancelRun moves a live run through cancelling to cancelled, whose run.cancelled carries the reason; on a terminal run it is ErrRunTerminal and appends nothing",
			Needs:     []Need{NeedCancellable, NeedNoop},
			run:       checkCancel,
		},
		{
			Name:      "resolve-at-most-once",
			Guarantee: "of concurrent resolutions of one interrupt exactly one succeeds, the rest are ErrAlreadyResolved, and the log holds one interrupt.resolved",
			Needs:     []Need{NeedApproval},
			run:       checkResolveAtMostOnce,
		},
		{
			Name:      "resolve-eligibility",
			Guarantee: "a principal outside the interrupt's approvers is ErrNotEligible and changes nothing",
			Needs:     []Need{NeedApproval, NeedNonApprover},
			run:       checkResolveEligibility,
		},
		{
			Name:      "event-documents",
			Guarantee: "every event is an OpenWOP RunEventDoc: eventId, runId, sequence, timestamp, schemaVersion, a registered or vendor type, and the registered payload (run.started workflowId and transport, node.suspended and interrupt.resolved naming the node and interrupt, run.completed outputs, run.cancelled reason)",
			Needs:     []Need{NeedNoop, NeedApproval, NeedCancellable},
			run:       checkEventDocuments,
		},
		{
			Name:      "watch",
			Guarantee: "WatchRun yields every event in order with consecutive sequences, starts with run.started, ends right after the terminal event, resumes exactly, and ends on ctx cancellation",
			Needs:     []Need{NeedApproval, NeedTenantB},
			run:       checkWatch,
		},
		{
			Name:      "refuse-unknown-workflow",
			Guarantee: "CreateRun of an unknown workflow is ErrNotFound and creates no run",
			run:       checkRefuseUnknownWorkflow,
		},
		{
			Name:      "refuse-invalid-inputs",
			Guarantee: "CreateRun with inputs the workflow refuses is ErrInvalidInput and creates no run",
			Needs:     []Need{NeedCancellable},
			run:       checkRefuseInvalidInputs,
		},
		{
			Name:      "host-events",
			Guarantee: "host events reach only subscribers of their tenant, an event naming a workspace only subscribers of that workspace (never tenant-wide ones), durable events resume after Last-Event-ID, ephemeral ones never replay",
			Needs:     []Need{NeedTenantB, NeedHostEvents},
			run:       checkHostEvents,
		},
		{
			Name:      "refuse-bad-resolution",
			Guarantee: "a refused resolution (bad resume value, unknown interrupt) changes nothing and leaves the interrupt resolvable",
			Needs:     []Need{NeedApproval},
			run:       checkRefuseBadResolution,
		},
		{
			Name:      "wait-run",
			Guarantee: "a store implementing interop.RunWaiter answers WaitRun with the run GetRun reads once settled holds, ends at a terminal run whatever settled says and with its ctx, and answers a foreign run exactly as a never-minted id",
			Needs:     []Need{NeedApproval, NeedCancellable, NeedTenantB},
			run:       checkWaitRun,
		},
		{
			Name:      "audit-events",
			Guarantee: "EventSink.AppendRunEvent puts an audit event on a live run's log at the next sequence, with an eventId and the run's status, changing nothing else; a finished run is ErrRunTerminal and unchanged; a never-minted run is ErrNotFound",
			Needs:     []Need{NeedHostEvents, NeedApproval, NeedNoop},
			run:       checkAuditEvents,
		},
	}
}

// RunConformance runs every check as a subtest of t, each on a fresh store
// from h.NewStore and bounded by h.Timeout. A check whose needs h does not
// meet is skipped with the missing fields named.
func RunConformance(t *testing.T, h Harness) {
	t.Helper()
	if err := h.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range Checks() {
		t.Run(c.Name, func(t *testing.T) {
			if missing := h.Missing(c.Needs); len(missing) > 0 {
				t.Skipf("harness lacks %v", missing)
			}
			store := h.NewStore(t)
			ctx, cancel := context.WithTimeout(t.Context(), h.timeout())
			defer cancel()
			if err := c.Run(ctx, store, h); err != nil {
				t.Errorf("%s (%s): %v", c.Name, c.Guarantee, err)
			}
		})
	}
}

// kit is the state one check run works with.
type kit struct {
	h Harness
	s interop.RunStore
}
