package postgres

import (
	"context"
	"encoding/json"
	"regexp"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/internal/sharedspec"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
)

// scenarioStore is what the event scenarios need of a store: the contract
// plus the audit sink.
type scenarioStore interface {
	interop.RunStore
	interop.EventSink
}

// eventLogs runs every kind of run a store can produce and returns their
// logs: completed with an artifact, accepted, rejected, failed, a host
// fault, a non-object output, an interrupt withdrawn by its workflow, and
// a run cancelled while suspended after an audit record was appended.
func eventLogs(t *testing.T, s scenarioStore) map[string][]interop.RunEvent {
	t.Helper()
	ctx := testCtx(t)
	sub := alice()
	logOf := func(runID string) []interop.RunEvent {
		seq, err := s.WatchRun(ctx, sub, runID, -1)
		if err != nil {
			t.Fatal(err)
		}
		var out []interop.RunEvent
		for ev, err := range seq {
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, ev)
		}
		return out
	}
	start := func(workflow string) interop.Run {
		run, _, err := s.CreateRun(ctx, sub, interop.CreateRunRequest{WorkflowID: workflow, Transport: interop.TransportMCP})
		if err != nil {
			t.Fatal(err)
		}
		return run
	}
	suspended := func(runID string) interop.Interrupt {
		for {
			run, err := s.GetRun(ctx, sub, runID)
			if err != nil {
				t.Fatal(err)
			}
			if in, ok := run.OpenInterrupt(); ok {
				return in
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	logs := map[string][]interop.RunEvent{}
	for name, wf := range map[string]string{"noop": FixtureNoop, "failure": FixtureFailure, "fault": "fault", "text": "text", "withdrawn": "impatient"} {
		logs[name] = logOf(start(wf).ID)
	}
	for name, value := range map[string]string{"approved": `{"action":"accept"}`, "rejected": `{"action":"reject"}`} {
		run := start(FixtureApproval)
		in := suspended(run.ID)
		if _, err := s.ResolveInterrupt(ctx, sub, interop.ResolveRequest{RunID: run.ID, InterruptID: in.ID, Value: json.RawMessage(value)}); err != nil {
			t.Fatal(err)
		}
		logs[name] = logOf(run.ID)
	}
	run := start(FixtureApproval)
	suspended(run.ID)
	audit := json.RawMessage(`{"protocol":"mcp","outcome":"accepted","at":"2026-10-05T12:00:00Z","version":"2026-07-28","reason":"ok"}`)
	if err := s.AppendRunEvent(ctx, run.ID, interop.RunEvent{Type: interop.EventNegotiationDecided, Payload: audit, SchemaVersion: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CancelRun(ctx, sub, run.ID, "mcp-request-cancelled"); err != nil {
		t.Fatal(err)
	}
	logs["cancelled"] = logOf(run.ID)
	return logs
}

// impatient gives up waiting for its clarification after 10 ms.
func impatient(ctx context.Context, interrupt func(context.Context, interop.Interrupt) error) (json.RawMessage, error) {
	wctx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	if err := interrupt(wctx, interop.Interrupt{Kind: interop.InterruptClarification, Key: "question"}); err == nil {
		return nil, Fail("answered too soon")
	}
	return nil, nil
}

func pgScenarioStore(t *testing.T) *Store {
	s := newStore(t)
	for id, run := range map[string]WorkflowFunc{
		"fault": func(context.Context, *RunContext) (json.RawMessage, error) {
			return nil, Fault("the engine lost its worker")
		},
		"text": func(context.Context, *RunContext) (json.RawMessage, error) {
			return json.RawMessage(`"plain text"`), nil
		},
		"impatient": func(ctx context.Context, rc *RunContext) (json.RawMessage, error) {
			return impatient(ctx, func(ctx context.Context, in interop.Interrupt) error { _, err := rc.Interrupt(ctx, in); return err })
		},
	} {
		if err := s.Register(tenantA, WorkflowDef{Workflow: interop.Workflow{ID: id}, Run: run}); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func memScenarioStore(t *testing.T) *memstore.Store {
	s := memstore.New()
	t.Cleanup(func() { _ = s.Close() })
	if err := s.RegisterFixtures(tenantA); err != nil {
		t.Fatal(err)
	}
	for id, run := range map[string]memstore.WorkflowFunc{
		"fault": func(context.Context, *memstore.RunContext) (json.RawMessage, error) {
			return nil, memstore.Fault("the engine lost its worker")
		},
		"text": func(context.Context, *memstore.RunContext) (json.RawMessage, error) {
			return json.RawMessage(`"plain text"`), nil
		},
		"impatient": func(ctx context.Context, rc *memstore.RunContext) (json.RawMessage, error) {
			return impatient(ctx, func(ctx context.Context, in interop.Interrupt) error { _, err := rc.Interrupt(ctx, in); return err })
		},
	} {
		if err := s.Register(tenantA, memstore.WorkflowDef{Workflow: interop.Workflow{ID: id}, Run: run}); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// TestEventsValidateAgainstUpstreamSchemas holds every event the store
// writes to the upstream RunEventDoc envelope and registered payloads.
func TestEventsValidateAgainstUpstreamSchemas(t *testing.T) {
	// sharedspec finds ../shared/spec beside the root of the module the test
	// runs in; the upstream files sit beside the core module's root.
	t.Chdir("..")
	validate := sharedspec.RunEventValidator(t)
	n := 0
	for name, log := range eventLogs(t, pgScenarioStore(t)) {
		t.Run(name, func(t *testing.T) {
			for _, ev := range log {
				doc, err := json.Marshal(ev)
				if err != nil {
					t.Fatal(err)
				}
				if err := validate(doc); err != nil {
					t.Errorf("%v\n%s", err, doc)
				}
				if err := ev.Validate(); err != nil {
					t.Error(err)
				}
				n++
			}
		})
	}
	if n < 25 {
		t.Fatalf("only %d events validated", n)
	}
}

// Ids and timestamps vary per run; everything else of a document does not.
var volatile = regexp.MustCompile(`"evt-[A-Z2-7]{26}(\.[0-9a-z]+)?"|acme/[A-Z2-7]{26}|"20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z"`)

// TestEventsMatchMemstore: for every scenario, the PostgreSQL store writes
// the very documents (and statuses) the embedded memstore writes, ids and
// timestamps aside, so a host and its clients see no difference between
// the two.
func TestEventsMatchMemstore(t *testing.T) {
	mem, pg := eventLogs(t, memScenarioStore(t)), eventLogs(t, pgScenarioStore(t))
	for name, want := range mem {
		got := pg[name]
		if len(got) != len(want) {
			t.Errorf("%s: %d events on PostgreSQL, %d on memstore: %v vs %v", name, len(got), len(want), typesOf(got), typesOf(want))
			continue
		}
		for i := range want {
			w, _ := json.Marshal(want[i])
			g, _ := json.Marshal(got[i])
			w, g = volatile.ReplaceAll(w, []byte("<v>")), volatile.ReplaceAll(g, []byte("<v>"))
			if string(w) != string(g) || want[i].Status != got[i].Status {
				t.Errorf("%s event %d:\n memstore   %s (%s)\n postgres   %s (%s)", name, i, w, want[i].Status, g, got[i].Status)
			}
		}
	}
}
