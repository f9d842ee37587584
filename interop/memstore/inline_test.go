package memstore

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/interop"
)

// goroutineID is the id in the current goroutine's stack header, so a
// test can tell which goroutine ran a workflow body.
func goroutineID() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	buf = bytes.TrimPrefix(buf, []byte("goroutine "))
	return string(buf[:bytes.IndexByte(buf, ' ')])
}

// An inline workflow runs on CreateRun's goroutine and has finished when
// CreateRun returns; what CreateRun returns and the run's log are those of
// the same body on a goroutine of its own.
func TestInlineWorkflow(t *testing.T) {
	s := newStore(t)
	alice := subject(tenantA, "alice")
	var ranOn string
	body := func(ctx context.Context, rc *RunContext) (json.RawMessage, error) {
		ranOn = goroutineID()
		return runNoop(ctx, rc)
	}
	for _, def := range []WorkflowDef{
		{Workflow: interop.Workflow{ID: "inline"}, Run: body, Inline: true},
		{Workflow: interop.Workflow{ID: "spawned"}, Run: body},
	} {
		if err := s.Register(tenantA, def); err != nil {
			t.Fatal(err)
		}
	}

	inline := mustCreate(t, s, alice, interop.CreateRunRequest{WorkflowID: "inline"})
	if ranOn != goroutineID() {
		t.Fatalf("the inline body ran on goroutine %q, not on CreateRun's %q", ranOn, goroutineID())
	}
	if got, _ := s.GetRun(testCtx(t), alice, inline.ID); got.Status != interop.StatusCompleted {
		t.Fatalf("after CreateRun returned, the inline run is %q; want completed", got.Status)
	}
	spawned := mustCreate(t, s, alice, interop.CreateRunRequest{WorkflowID: "spawned"})

	// CreateRun's answer: the run as created, whichever goroutine runs it.
	for _, r := range []interop.Run{inline, spawned} {
		if r.Status != interop.StatusRunning || r.LastSequence != 0 || r.Output != nil || r.Artifacts != nil {
			t.Fatalf("CreateRun(%s) = status %q, lastSequence %d, output %s, %d artifacts; want the run as created", r.WorkflowID, r.Status, r.LastSequence, r.Output, len(r.Artifacts))
		}
	}
	// The log: the same events, in the same order, with the same payloads
	// and statuses.
	strip := func(evs []interop.RunEvent) []interop.RunEvent {
		for i := range evs {
			evs[i].EventID, evs[i].RunID, evs[i].Timestamp = "", "", time.Time{}
			evs[i].Payload = bytes.ReplaceAll(evs[i].Payload, []byte(`"spawned"`), []byte(`"inline"`))
		}
		return evs
	}
	a, b := strip(events(t, s, alice, inline.ID)), strip(events(t, s, alice, spawned.ID))
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("inline log %v\ndiffers from spawned log %v", describeEvents(a), describeEvents(b))
	}
}

func describeEvents(evs []interop.RunEvent) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = string(ev.Type) + " " + string(ev.Status) + " " + string(ev.Payload)
	}
	return out
}
