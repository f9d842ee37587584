package memstore

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/internal/golden"
	"github.com/wopinterop/wopinterop/internal/sharedspec"
	"github.com/wopinterop/wopinterop/interop"
)

// eventLogs runs every kind of run the store can produce and returns their
// logs: completed with an artifact, suspended then accepted, rejected,
// failed, a host fault, cancelled while suspended, an interrupt withdrawn by
// its workflow, a non-object output, and an audit record appended by the
// library.
func eventLogs(t *testing.T, opts ...Option) map[string][]interop.RunEvent {
	t.Helper()
	s := newStore(t, opts...)
	sub := subject(tenantA, "alice")
	register(t, s, tenantA, "fault", func(context.Context, *RunContext) (json.RawMessage, error) {
		return nil, Fault("the engine lost its worker")
	})
	register(t, s, tenantA, "text", func(context.Context, *RunContext) (json.RawMessage, error) {
		return json.RawMessage(`"plain text"`), nil
	})
	register(t, s, tenantA, "impatient", func(ctx context.Context, rc *RunContext) (json.RawMessage, error) {
		wctx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
		defer cancel()
		if _, err := rc.Interrupt(wctx, interop.Interrupt{Kind: interop.InterruptClarification, Key: "question"}); err == nil {
			return nil, Fail("answered too soon")
		}
		return nil, nil
	})
	logs := map[string][]interop.RunEvent{}
	start := func(workflow string) interop.Run {
		return mustCreate(t, s, sub, interop.CreateRunRequest{WorkflowID: workflow, Transport: interop.TransportMCP})
	}
	for name, wf := range map[string]string{"noop": FixtureNoop, "failure": FixtureFailure, "fault": "fault", "text": "text", "withdrawn": "impatient"} {
		logs[name] = events(t, s, sub, start(wf).ID)
	}
	for name, value := range map[string]string{"approved": `{"action":"accept"}`, "rejected": `{"action":"reject"}`} {
		run := start(FixtureApproval)
		in := waitSuspended(t, s, sub, run.ID)
		if _, err := s.ResolveInterrupt(testCtx(t), sub, interop.ResolveRequest{RunID: run.ID, InterruptID: in.ID, Value: json.RawMessage(value)}); err != nil {
			t.Fatal(err)
		}
		logs[name] = events(t, s, sub, run.ID)
	}
	run := start(FixtureApproval)
	waitSuspended(t, s, sub, run.ID)
	audit := json.RawMessage(`{"protocol":"mcp","outcome":"accepted","at":"2026-10-05T12:00:00Z","version":"2026-07-28","reason":"ok"}`)
	if err := s.AppendRunEvent(testCtx(t), run.ID, interop.RunEvent{Type: interop.EventNegotiationDecided, Payload: audit, SchemaVersion: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CancelRun(testCtx(t), sub, run.ID, "mcp-request-cancelled"); err != nil {
		t.Fatal(err)
	}
	logs["cancelled"] = events(t, s, sub, run.ID)
	return logs
}

func waitSuspended(t *testing.T, s *Store, sub interop.Subject, runID string) interop.Interrupt {
	t.Helper()
	waitStatus(t, s, sub, runID, interop.StatusWaitingApproval)
	run, err := s.GetRun(testCtx(t), sub, runID)
	if err != nil {
		t.Fatal(err)
	}
	in, ok := run.OpenInterrupt()
	if !ok {
		t.Fatal("suspended run has no open interrupt")
	}
	return in
}

// TestEventsValidateAgainstUpstreamSchemas holds every event the store
// writes to the upstream RunEventDoc envelope and registered payloads.
func TestEventsValidateAgainstUpstreamSchemas(t *testing.T) {
	validate := sharedspec.RunEventValidator(t)
	n := 0
	for name, log := range eventLogs(t) {
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

// TestUpstreamValidatorRefuses proves the upstream check above can fail:
// each document breaks one rule the schemas state.
func TestUpstreamValidatorRefuses(t *testing.T) {
	validate := sharedspec.RunEventValidator(t)
	const ok = `{"eventId":"evt-AAAAAAAAAAAAAAAAAAAAAAAAAA","runId":"acme/AAAAAAAAAAAAAAAAAAAAAAAAAA","sequence":0,"type":"run.completed","timestamp":"2026-10-05T12:00:00Z","schemaVersion":1,"payload":{"outputs":{}}}`
	if err := validate([]byte(ok)); err != nil {
		t.Fatalf("a valid document is refused: %v", err)
	}
	for name, doc := range map[string]string{
		"short eventId":          `{"eventId":"e1","runId":"acme/AAAAAAAAAAAAAAAAAAAAAAAAAA","sequence":0,"type":"run.completed","timestamp":"2026-10-05T12:00:00Z","schemaVersion":1,"payload":{"outputs":{}}}`,
		"first sequence -1":      `{"eventId":"evt-AAAAAAAAAAAAAAAAAAAAAAAAAA","runId":"acme/AAAAAAAAAAAAAAAAAAAAAAAAAA","sequence":-1,"type":"run.completed","timestamp":"2026-10-05T12:00:00Z","schemaVersion":1,"payload":{"outputs":{}}}`,
		"flattened status":       `{"eventId":"evt-AAAAAAAAAAAAAAAAAAAAAAAAAA","runId":"acme/AAAAAAAAAAAAAAAAAAAAAAAAAA","sequence":0,"type":"run.completed","timestamp":"2026-10-05T12:00:00Z","schemaVersion":1,"status":"completed","payload":{"outputs":{}}}`,
		"no outputs":             `{"eventId":"evt-AAAAAAAAAAAAAAAAAAAAAAAAAA","runId":"acme/AAAAAAAAAAAAAAAAAAAAAAAAAA","sequence":0,"type":"run.completed","timestamp":"2026-10-05T12:00:00Z","schemaVersion":1,"payload":{}}`,
		"singular output":        `{"eventId":"evt-AAAAAAAAAAAAAAAAAAAAAAAAAA","runId":"acme/AAAAAAAAAAAAAAAAAAAAAAAAAA","sequence":0,"type":"run.completed","timestamp":"2026-10-05T12:00:00Z","schemaVersion":1,"payload":{"outputs":{},"output":1}}`,
		"suspended without id":   `{"eventId":"evt-AAAAAAAAAAAAAAAAAAAAAAAAAA","runId":"acme/AAAAAAAAAAAAAAAAAAAAAAAAAA","sequence":0,"type":"node.suspended","timestamp":"2026-10-05T12:00:00Z","schemaVersion":1,"payload":{"nodeId":"n"}}`,
		"failed without a code":  `{"eventId":"evt-AAAAAAAAAAAAAAAAAAAAAAAAAA","runId":"acme/AAAAAAAAAAAAAAAAAAAAAAAAAA","sequence":0,"type":"run.failed","timestamp":"2026-10-05T12:00:00Z","schemaVersion":1,"payload":{"error":{"message":"m"}}}`,
		"reserved prefix":        `{"eventId":"evt-AAAAAAAAAAAAAAAAAAAAAAAAAA","runId":"acme/AAAAAAAAAAAAAAAAAAAAAAAAAA","sequence":0,"type":"openwop.thing","timestamp":"2026-10-05T12:00:00Z","schemaVersion":1,"payload":{}}`,
		"transport not in enum":  `{"eventId":"evt-AAAAAAAAAAAAAAAAAAAAAAAAAA","runId":"acme/AAAAAAAAAAAAAAAAAAAAAAAAAA","sequence":0,"type":"run.started","timestamp":"2026-10-05T12:00:00Z","schemaVersion":1,"payload":{"workflowId":"w","transport":"grpc"}}`,
		"negotiation not closed": `{"eventId":"evt-AAAAAAAAAAAAAAAAAAAAAAAAAA","runId":"acme/AAAAAAAAAAAAAAAAAAAAAAAAAA","sequence":0,"type":"negotiation.decided","timestamp":"2026-10-05T12:00:00Z","schemaVersion":1,"payload":{"protocol":"a2a","outcome":"accepted","at":"2026-10-05T12:00:00Z","peer":"x"}}`,
	} {
		if err := validate([]byte(doc)); err == nil {
			t.Errorf("%s: the upstream check accepted %s", name, doc)
		}
	}
}

// Ids and timestamps vary per run; the golden file keeps everything else.
var (
	volatileEventID = regexp.MustCompile(`"evt-[A-Z2-7]{26}\.[0-9a-z]+"`)
	volatileID      = regexp.MustCompile(`acme/[A-Z2-7]{26}`)
)

// TestEventDocumentGolden pins the exact bytes of each log, as a host
// serving RunEventDocs sends them.
func TestEventDocumentGolden(t *testing.T) {
	at := time.Date(2026, 10, 5, 12, 0, 0, 0, time.UTC)
	logs := eventLogs(t, WithClock(func() time.Time { return at }))
	var b bytes.Buffer
	for _, name := range []string{"noop", "approved", "rejected", "failure", "fault", "text", "withdrawn", "cancelled"} {
		b.WriteString("# " + name + "\n")
		for _, ev := range logs[name] {
			doc, err := json.Marshal(ev)
			if err != nil {
				t.Fatal(err)
			}
			doc = volatileEventID.ReplaceAll(doc, []byte(`"evt-EVENTID"`))
			doc = volatileID.ReplaceAll(doc, []byte(`acme/ID`))
			b.Write(doc)
			b.WriteByte('\n')
		}
	}
	golden.Check(t, "events.jsonl", b.Bytes())
}

// Run event ids are unique within a tenant and across tenants (and
// stores), and well-formed (OpenWOP ids.schema.json#/$defs/eventId).
func TestRunEventIDsUniqueAndWellFormed(t *testing.T) {
	eventID := regexp.MustCompile(`^evt-[A-Za-z0-9._~-]{12,124}$`)
	seen := map[string]bool{}
	for _, ten := range []*tenantState{newTenantState(tenantA), newTenantState(tenantA), newTenantState("globex")} {
		for count := range uint64(100) {
			id := ten.eventID(count + 1)
			if !eventID.MatchString(id) || seen[id] {
				t.Fatalf("event id %q: malformed or repeated", id)
			}
			seen[id] = true
		}
	}
}
