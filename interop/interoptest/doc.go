// Package interoptest is the conformance kit for [interop.RunStore]
// implementations, in the style of go-cloud's drivertest: a host fills a
// [Harness] describing how to build its store, which callers to use and which
// fixture workflows it offers, and runs [RunConformance] from one of its own
// tests:
//
//	func TestConformance(t *testing.T) {
//		interoptest.RunConformance(t, interoptest.Harness{
//			NewStore:    func(t testing.TB) interop.RunStore { return newStoreForTest(t) },
//			TenantA:     interop.Subject{Tenant: "acme", Principal: "alice", Authenticated: true},
//			TenantA2:    interop.Subject{Tenant: "acme", Principal: "bob", Authenticated: true},
//			TenantB:     interop.Subject{Tenant: "globex", Principal: "carol", Authenticated: true},
//			Noop:        "my-noop-workflow",
//			Approval:    "my-approval-workflow",
//			Cancellable: "my-sleep-workflow",
//		})
//	}
//
// Each guarantee the library relies on (see the interop package
// documentation) is one named [Check]. A check returns an error describing
// the first violation it finds instead of failing a test itself, so a single
// check can be run on its own, from a benchmark or a command, and so this
// package can prove that every check fails against a store that breaks
// exactly its guarantee. A check that needs a fixture the harness leaves empty
// is skipped by RunConformance and refused by [Check.Run] with
// [ErrMissingFixture]; a host without fixture workflows still runs the
// fixture-free checks.
//
// The checks never assume a fresh store is empty: everything they create is
// scoped by a random contextId, key or message id, so a host may point the
// kit at a shared database and even run the checks concurrently. The two
// refuse-* checks that compare a tenant's unfiltered run count before and
// after a refusal are the exception: nothing else may create runs in
// TenantA's tenant while they run.
//
// Spec coverage (OpenWOP v2; each item names its source):
//   - interop.md §Isolation, RFC 0198 §C.6: a foreign tenant's run answers
//     exactly as an unknown id (check "foreign-run-is-unknown").
//   - identity.md §5, interop.md §MCP tasks and cancellation: run ids are
//     tenant-bound with an opaque segment of at least 22 characters
//     ("create-and-read").
//   - interop map a2a.operations (SendMessage): the idempotency key dedupes
//     per tenant and principal, also under concurrency ("idempotent-create").
//   - interop map a2a.operations (ListTasks): list order, filters (contextId,
//     status, inclusive statusTimestampAfter), totals and page sizes
//     ("list-order-and-filters"), stable cursors ("list-cursor-stability").
//   - interop map a2a.operations (CancelTask) and mcp.tasks: cancellation
//     passes through cancelling; cancel of a terminal run is refused and
//     appends nothing ("cancel").
//   - interrupt.md §Resolve surfaces, §Approver enforcement, RFC 0198 §E: an
//     interrupt is resolved at most once, with exactly one interrupt.resolved
//     event ("resolve-at-most-once"); a non-approver changes nothing
//     ("resolve-eligibility").
//   - interop.md §MCP tasks and cancellation (a read appends nothing) and the
//     contract's "refusals change nothing" ("create-and-read", "refuse-*"
//     checks).
//   - The ordered-watch guarantee behind A2A streaming (interop map
//     a2a.operations, SendStreamingMessage and SubscribeToTask) ("watch").
//   - interop.md §The audit event: an audit record of an exchange that
//     belongs to a run joins the run's log through interop.EventSink,
//     without changing the run; a finished run's log ends at its terminal
//     event ("audit-events", with HostEvents).
//
// [RunBenchmarks] gives every driver the same create/get/list benchmarks so
// their numbers compare.
package interoptest
