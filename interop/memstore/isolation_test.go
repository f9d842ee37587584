package memstore

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/isolation"
)

// TestUnreadableIsUnknown checks unreadable-is-unknown (OpenWOP interop.md
// §Isolation) on every run-addressed method:
// a run of another tenant, or of another workspace, fails exactly like an
// id that never existed — same sentinel, same text.
func TestUnreadableIsUnknown(t *testing.T) {
	s := newStore(t)
	owner := inWorkspace(subject(tenantA, "alice"), "ws-1")
	run := mustCreate(t, s, owner, interop.CreateRunRequest{WorkflowID: FixtureApproval})
	waitStatus(t, s, owner, run.ID, interop.StatusWaitingApproval)
	got, _ := s.GetRun(testCtx(t), owner, run.ID)
	in, _ := got.OpenInterrupt()

	_, opaque, _ := isolation.Split(run.ID)
	readers := map[string]interop.Subject{
		"other tenant":                 subject(tenantB, "bob"),
		"other tenant, same principal": subject(tenantB, "alice"),
		"other workspace":              inWorkspace(subject(tenantA, "alice"), "ws-2"),
		"no tenant":                    {},
		"unknown tenant":               subject("initech", "alice"),
	}
	// What each method answers for ids that never existed, read by the
	// owner: in its own tenant, and with the reader's tenant segment.
	unknownIDs := []string{tenantA + "/" + isolation.NewOpaque(), tenantB + "/" + opaque, "not-an-id"}

	ops := map[string]func(sub interop.Subject, id string) error{
		"GetRun": func(sub interop.Subject, id string) error {
			_, err := s.GetRun(testCtx(t), sub, id)
			return err
		},
		"CancelRun": func(sub interop.Subject, id string) error {
			_, err := s.CancelRun(testCtx(t), sub, id, "x")
			return err
		},
		"ResolveInterrupt": func(sub interop.Subject, id string) error {
			_, err := s.ResolveInterrupt(testCtx(t), sub, interop.ResolveRequest{RunID: id, InterruptID: in.ID, Value: json.RawMessage(`{"action":"accept"}`)})
			return err
		},
		"WatchRun": func(sub interop.Subject, id string) error {
			seq, err := s.WatchRun(testCtx(t), sub, id, -1)
			if seq != nil {
				t.Errorf("WatchRun returned a sequence with error %v", err)
			}
			return err
		},
		"WaitRun": func(sub interop.Subject, id string) error {
			_, err := s.WaitRun(testCtx(t), sub, id, func(interop.RunStatus) bool { return true })
			return err
		},
		"PollEvents": func(sub interop.Subject, id string) error {
			_, _, err := s.PollEvents(testCtx(t), sub, id, -1, time.Millisecond)
			return err
		},
	}
	for opName, op := range ops {
		var want string
		for _, id := range unknownIDs {
			err := op(owner, id)
			wantErrIs(t, err, interop.ErrNotFound)
			if want == "" {
				want = err.Error()
			} else if err.Error() != want {
				t.Fatalf("%s: unknown ids answer differently: %q vs %q", opName, err.Error(), want)
			}
		}
		for who, reader := range readers {
			t.Run(opName+"/"+who, func(t *testing.T) {
				err := op(reader, run.ID)
				wantErrIs(t, err, interop.ErrNotFound)
				if err.Error() != want {
					t.Fatalf("foreign run answers %q, unknown id answers %q", err.Error(), want)
				}
			})
		}
	}

	// Nothing the foreign callers did changed the run.
	after, err := s.GetRun(testCtx(t), owner, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if after.Status != interop.StatusWaitingApproval || after.LastSequence != got.LastSequence {
		t.Fatalf("foreign calls changed the run: %s, last sequence %d -> %d", after.Status, got.LastSequence, after.LastSequence)
	}
	// A tenant-wide Subject (no workspace) reads the workspace's run.
	if _, err := s.GetRun(testCtx(t), subject(tenantA, "carol"), run.ID); err != nil {
		t.Fatalf("tenant-wide reader: %v", err)
	}
	// ListRuns: the foreign callers see none of it, even filtering by its
	// contextId.
	for who, reader := range readers {
		page, err := s.ListRuns(testCtx(t), reader, interop.ListRunsQuery{})
		if err != nil || page.Total != 0 || len(page.Runs) != 0 {
			t.Fatalf("%s lists %d runs (err %v)", who, page.Total, err)
		}
	}
}

func TestCreateRunInOwnTenantOnly(t *testing.T) {
	s := newStore(t)
	var runs counter
	register(t, s, tenantB, "only-in-b", runs.noop)
	// Tenant A cannot start tenant B's workflow, whatever it sends.
	_, _, err := s.CreateRun(testCtx(t), subject(tenantA, "alice"), interop.CreateRunRequest{WorkflowID: "only-in-b", ContextID: tenantB})
	wantErrIs(t, err, interop.ErrNotFound)
	_, _, unknownErr := s.CreateRun(testCtx(t), subject(tenantA, "alice"), interop.CreateRunRequest{WorkflowID: "never-registered"})
	if err.Error() != unknownErr.Error() {
		t.Fatalf("foreign workflow answers %q, unknown workflow %q", err, unknownErr)
	}
	run := mustCreate(t, s, subject(tenantB, "bob"), interop.CreateRunRequest{WorkflowID: "only-in-b"})
	if isolation.TenantOf(run.ID) != tenantB || run.Tenant != tenantB {
		t.Fatalf("run %s of tenant %s", run.ID, run.Tenant)
	}
	events(t, s, subject(tenantB, "bob"), run.ID)
	if n := runs.n.Load(); n != 1 {
		t.Fatalf("workflow ran %d times, want 1 (the refused calls must start nothing)", n)
	}
}
