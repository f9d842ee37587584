package a2a

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
)

// unchanged asserts a refused message changed nothing on the run: same
// status, same last sequence, same interrupts, same exchanged messages.
func assertRunUnchanged(t *testing.T, env *coreEnv, sub interop.Subject, before interop.Run) {
	t.Helper()
	after := env.run(t, sub, wire.TaskID(before.ID))
	if after.Status != before.Status || after.LastSequence != before.LastSequence ||
		len(after.Interrupts) != len(before.Interrupts) || len(after.Messages) != len(before.Messages) {
		t.Fatalf("run changed: status %s→%s, lastSequence %d→%d, interrupts %d→%d, messages %d→%d",
			before.Status, after.Status, before.LastSequence, after.LastSequence,
			len(before.Interrupts), len(after.Interrupts), len(before.Messages), len(after.Messages))
	}
}

func TestCoreMultiTurnAcceptInfersContextID(t *testing.T) {
	cases := []struct {
		name  string
		reply func(wire.TaskID) *wire.Message
	}{
		{"metadata and data part", func(id wire.TaskID) *wire.Message { return acceptReply("m-2", id, "accept") }},
		{"data part only", func(id wire.TaskID) *wire.Message {
			m := userMessage("m-2", wire.NewDataPart(map[string]any{"action": "accept"}))
			m.TaskID = id
			return m
		}},
		{"metadata only", func(id wire.TaskID) *wire.Message {
			m := textMessage("m-2", "yes")
			m.TaskID = id
			m.Metadata = map[string]any{"openwop": map[string]any{"interrupt": map[string]any{"action": "accept"}}}
			return m
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := newCoreEnv(t)
			c := asCaller(coreTenantA, "alice")
			first := env.send(t, c, textMessage("m-1", "approve please"))
			done := env.send(t, c, tc.reply(first.ID))
			if done.ID != first.ID || done.ContextID != first.ContextID {
				t.Fatalf("reply answered %s/%s, want %s/%s", done.ID, done.ContextID, first.ID, first.ContextID)
			}
			if done.Status.State != wire.TaskStateCompleted || done.Metadata != nil {
				t.Fatalf("state %s metadata %v, want COMPLETED without interrupt", done.Status.State, done.Metadata)
			}
			if len(done.History) != 2 || done.History[1].ID != "m-2" || done.History[1].TaskID != first.ID || done.History[1].ContextID != first.ContextID {
				t.Fatalf("history = %+v", done.History)
			}
		})
	}
}

func TestCoreMultiTurnRejectFails(t *testing.T) {
	env := newCoreEnv(t)
	c := asCaller(coreTenantA, "alice")
	first := env.send(t, c, textMessage("m-1", "approve please"))
	m := acceptReply("m-2", first.ID, "reject")
	m.ContextID = first.ContextID
	done := env.send(t, c, m)
	if done.Status.State != wire.TaskStateFailed || statusText(done) != memstore.FixtureRejectedMessage {
		t.Fatalf("status = %s %q", done.Status.State, statusText(done))
	}
}

func TestCoreMultiTurnApprovalOutcomes(t *testing.T) {
	env := newCoreEnv(t, withRouted(probeOutcome))
	c := asCaller(coreTenantA, "alice")
	cases := []struct {
		reply *wire.Message
		want  string
	}{
		{acceptReply("", "", "accept"), `accept {"action":"accept"}`},
		{acceptReply("", "", "reject"), `decline {"action":"reject"}`},
		// Other offered actions resume with the value as given.
		{acceptReply("", "", "refine"), `accept {"action":"refine"}`},
	}
	for i, tc := range cases {
		first := env.send(t, c, textMessage(fmt.Sprintf("m-start-%d", i), "go"))
		tc.reply.ID, tc.reply.TaskID = fmt.Sprintf("m-reply-%d", i), first.ID
		tc.reply.Metadata["openwop"].(map[string]any)["interrupt"].(map[string]any)["note"] = "kept"
		env.send(t, c, tc.reply)
		got, _ := env.rec.get(string(first.ID))
		want := strings.Replace(tc.want, "}", `,"note":"kept"}`, 1)
		if strings.HasPrefix(tc.want, "decline") {
			want = tc.want // the store answers a declined approval with the reject action itself
		}
		if got != want {
			t.Errorf("reply %d: workflow saw %v, want %s", i, got, want)
		}
	}
}

func TestCoreMultiTurnContextMismatchChangesNothing(t *testing.T) {
	env := newCoreEnv(t)
	c := asCaller(coreTenantA, "alice")
	first := env.send(t, c, textMessage("m-1", "approve please"))
	before := env.run(t, c.subject, first.ID)
	m := acceptReply("m-2", first.ID, "accept")
	m.ContextID = "some-other-context"
	_, err := env.srv.sendMessage(coreCtx(t), c, &wire.SendMessageRequest{Message: m})
	wantError(t, err, -32602, "message.contextId")
	assertRunUnchanged(t, env, c.subject, before)
	if before.Status != interop.StatusWaitingApproval {
		t.Fatalf("status = %s", before.Status)
	}
	// The interrupt is still open: the right reply resolves it.
	if done := env.send(t, c, acceptReply("m-3", first.ID, "accept")); done.Status.State != wire.TaskStateCompleted {
		t.Fatalf("state after the refused reply = %s", done.Status.State)
	}
}

func TestCoreMultiTurnTerminalIsUnsupported(t *testing.T) {
	env := newCoreEnv(t, withRouted(memstore.FixtureNoop))
	c := asCaller(coreTenantA, "alice")
	first := env.send(t, c, textMessage("m-1", "go"))
	before := env.run(t, c.subject, first.ID)
	for i, m := range []*wire.Message{acceptReply("m-2", first.ID, "accept"), textMessage("m-3", "more")} {
		m.TaskID = first.ID
		if i == 1 {
			m.ContextID = first.ContextID
		}
		_, err := env.srv.sendMessage(coreCtx(t), c, &wire.SendMessageRequest{Message: m})
		wantRowError(t, env, err, -32004)
	}
	assertRunUnchanged(t, env, c.subject, before)
}

func TestCoreMultiTurnUnknownTask(t *testing.T) {
	env := newCoreEnv(t)
	alice := asCaller(coreTenantA, "alice")
	theirs := env.send(t, asCaller(coreTenantB, "gina"), textMessage("m-1", "approve"))
	var refusals []error
	for _, id := range []wire.TaskID{"acme/fabricatedfabricated0001", "zz-conformance-foreign/fabricatedfabricated01", "not an id", theirs.ID} {
		m := acceptReply("m-2", id, "accept")
		_, err := env.srv.sendMessage(coreCtx(t), alice, &wire.SendMessageRequest{Message: m})
		wantRowError(t, env, err, -32001)
		refusals = append(refusals, err)
	}
	for _, err := range refusals[1:] {
		sameCoreError(t, "not-found refusal", err, refusals[0])
	}
	if st := env.run(t, coreSubject(coreTenantB, "gina"), theirs.ID).Status; st != interop.StatusWaitingApproval {
		t.Fatalf("globex's run moved to %s", st)
	}
}

func TestCoreMultiTurnLiveRunWithoutInputPath(t *testing.T) {
	env := newCoreEnv(t, withRouted(memstore.FixtureCancellable), withBlock(10*time.Millisecond))
	c := asCaller(coreTenantA, "alice")
	first := env.send(t, c, textMessage("m-1", "go"))
	before := env.run(t, c.subject, first.ID)
	m := textMessage("m-2", "more")
	m.TaskID = first.ID
	_, err := env.srv.sendMessage(coreCtx(t), c, &wire.SendMessageRequest{Message: m})
	wantRowError(t, env, err, -32004)
	assertRunUnchanged(t, env, c.subject, before)

	// A cancelling run is not suspended either.
	if _, err := env.srv.cancelTask(coreCtx(t), c, &wire.CancelTaskRequest{ID: first.ID}); err != nil {
		t.Fatal(err)
	}
	_, err = env.srv.sendMessage(coreCtx(t), c, &wire.SendMessageRequest{Message: m})
	wantRowError(t, env, err, -32004)
}

// deliveringStore adds the optional input path to memstore.
type deliveringStore struct {
	*memstore.Store
	mu   sync.Mutex
	got  []interop.Message
	fail error
}

func (d *deliveringStore) DeliverInput(ctx context.Context, s interop.Subject, runID string, msg interop.Message) (interop.Run, error) {
	if d.fail != nil {
		return interop.Run{}, fmt.Errorf("deliveringStore: %w", d.fail)
	}
	run, err := d.GetRun(ctx, s, runID)
	if err != nil {
		return interop.Run{}, err
	}
	d.mu.Lock()
	d.got = append(d.got, msg)
	d.mu.Unlock()
	return run, nil
}

func TestCoreMultiTurnLiveRunUsesInputDeliverer(t *testing.T) {
	base := newCoreEnv(t, withRouted(memstore.FixtureCancellable))
	ds := &deliveringStore{Store: base.store}
	env := newCoreEnv(t, withRouted(memstore.FixtureCancellable), withStore(ds), withBlock(10*time.Millisecond))
	env.store = base.store
	c := asCaller(coreTenantA, "alice")
	first := env.send(t, c, textMessage("m-1", "go"))
	m := textMessage("m-2", "more input")
	m.TaskID = first.ID
	task := env.send(t, c, m)
	if task.ID != first.ID || task.Status.State != wire.TaskStateWorking {
		t.Fatalf("answer %s %s", task.ID, task.Status.State)
	}
	if len(ds.got) != 1 || ds.got[0].ID != "m-2" || ds.got[0].Role != interop.RoleUser || ds.got[0].Parts[0].Text != "more input" {
		t.Fatalf("delivered %+v", ds.got)
	}
	for _, tc := range []struct {
		fail  error
		code  int
		field string
	}{
		{interop.ErrRunTerminal, -32004, ""},
		{&interop.InputError{Field: "message/parts/0", Reason: "too long"}, -32602, "message/parts/0"},
		{interop.ErrNotFound, -32001, ""},
		{interop.ErrNotEligible, codeForbidden, ""},
	} {
		ds.fail = tc.fail
		_, err := env.srv.sendMessage(coreCtx(t), c, &wire.SendMessageRequest{Message: m})
		wantError(t, err, tc.code, tc.field)
	}
}

func TestCoreMultiTurnRefusedAnswers(t *testing.T) {
	t.Run("action outside the offered ones", func(t *testing.T) {
		env := newCoreEnv(t)
		c := asCaller(coreTenantA, "alice")
		first := env.send(t, c, textMessage("m-1", "approve"))
		before := env.run(t, c.subject, first.ID)
		_, err := env.srv.sendMessage(coreCtx(t), c, &wire.SendMessageRequest{Message: acceptReply("m-2", first.ID, "maybe")})
		wantError(t, err, -32602, "resumeValue")
		assertRunUnchanged(t, env, c.subject, before)
	})
	t.Run("no resume value", func(t *testing.T) {
		env := newCoreEnv(t)
		c := asCaller(coreTenantA, "alice")
		first := env.send(t, c, textMessage("m-1", "approve"))
		m := textMessage("m-2", "yes please")
		m.TaskID = first.ID
		_, err := env.srv.sendMessage(coreCtx(t), c, &wire.SendMessageRequest{Message: m})
		wantError(t, err, -32602, "resumeValue")
	})
	t.Run("not an eligible approver", func(t *testing.T) {
		env := newCoreEnv(t, withRouted(probeGuarded))
		alice := asCaller(coreTenantA, "alice")
		first := env.send(t, alice, textMessage("m-1", "approve"))
		before := env.run(t, alice.subject, first.ID)
		_, err := env.srv.sendMessage(coreCtx(t), alice, &wire.SendMessageRequest{Message: acceptReply("m-2", first.ID, "accept")})
		wantError(t, err, codeForbidden, "")
		assertRunUnchanged(t, env, alice.subject, before)
		done := env.send(t, asCaller(coreTenantA, "bob"), acceptReply("m-3", first.ID, "accept"))
		if done.Status.State != wire.TaskStateCompleted {
			t.Fatalf("bob's answer: %s", done.Status.State)
		}
	})
	t.Run("concurrent answers resolve once", func(t *testing.T) {
		env := newCoreEnv(t)
		c := asCaller(coreTenantA, "alice")
		first := env.send(t, c, textMessage("m-1", "approve"))
		const n = 8
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = env.srv.sendMessage(context.Background(), c, &wire.SendMessageRequest{Message: acceptReply(fmt.Sprintf("m-r%d", i), first.ID, "accept")})
			}()
		}
		wg.Wait()
		ok := 0
		for _, err := range errs {
			if err == nil {
				ok++
				continue
			}
			wantRowError(t, env, err, -32004)
		}
		if ok != 1 {
			t.Fatalf("%d answers succeeded, want 1", ok)
		}
		if msgs := env.run(t, c.subject, first.ID).Messages; len(msgs) != 2 {
			t.Fatalf("run holds %d messages, want the start and one answer", len(msgs))
		}
	})
}

func TestCoreMultiTurnClarificationFromText(t *testing.T) {
	env := newCoreEnv(t, withRouted(probeClarify))
	c := asCaller(coreTenantA, "alice")
	first := env.send(t, c, textMessage("m-1", "start"))
	if first.Status.State != wire.TaskStateInputRequired || statusText(first) != "Which branch?" {
		t.Fatalf("first answer %s %q", first.Status.State, statusText(first))
	}
	if meta := interruptMeta(t, first.Metadata); meta["kind"] != "clarification" || meta["actions"] != nil {
		t.Fatalf("interrupt metadata = %v", meta)
	}
	m := userMessage("m-2", wire.NewTextPart("main"), wire.NewTextPart("please"))
	m.TaskID = first.ID
	done := env.send(t, c, m)
	if done.Status.State != wire.TaskStateCompleted {
		t.Fatalf("state = %s", done.Status.State)
	}
	if got, _ := env.rec.get(string(first.ID)); got != `{"text":"main\nplease"}` {
		t.Fatalf("resume value = %v", got)
	}
}
