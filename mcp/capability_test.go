package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
)

// Client capabilities of the tests below: the Tasks extension without any
// elicitation, and with URL-mode elicitation only.
const (
	tasksNoElicitation = `{"extensions":{"io.modelcontextprotocol/tasks":{}}}`
	tasksURLOnly       = `{"elicitation":{"url":{}},"extensions":{"io.modelcontextprotocol/tasks":{}}}`
)

const (
	bodyMissingElicitation = `{"jsonrpc":"2.0","id":1,"error":{"code":-32021,"message":"Missing required client capability","data":{"requiredCapabilities":{"elicitation":{}}}}}`
	bodyMissingForm        = `{"jsonrpc":"2.0","id":1,"error":{"code":-32021,"message":"Missing required client capability","data":{"requiredCapabilities":{"elicitation":{"form":{}}}}}}`
)

// wantBody checks a whole error response.
func wantBody(t *testing.T, rec *httptest.ResponseRecorder, status int, body string) {
	t.Helper()
	if rec.Code != status || rec.Body.String() != body {
		t.Fatalf("got %d %s\nwant %d %s", rec.Code, rec.Body, status, body)
	}
}

// TestBlockingCallMissingCapabilityCancelsRun: a blocking call whose run
// suspends on input the request declared no capability for is -32021, and
// the run, which that answer hands to nobody, is cancelled with the reason
// naming the capability instead of waiting forever.
func TestBlockingCallMissingCapabilityCancelsRun(t *testing.T) {
	cases := []struct {
		name, tool, caps, body, reason string
	}{
		{"no elicitation", "conformance-approval", `{}`, bodyMissingElicitation, ReasonMissingElicitation},
		{"URL mode only, a form needed", wfAskName, `{"elicitation":{"url":{}}}`, bodyMissingForm, ReasonMissingFormElicitation},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			wantBody(t, e.do(rpc{method: "tools/call", caps: tc.caps, params: map[string]any{"name": tc.tool}}), http.StatusBadRequest, tc.body)
			run := e.onlyRun(alice)
			if got := e.waitStatus(alice, run.ID, interop.StatusCancelled); got.CancelReason != tc.reason {
				t.Fatalf("cancel reason = %q, want %q", got.CancelReason, tc.reason)
			}
		})
	}
}

// TestTaskCallMissingCapability: a call that declared the Tasks extension
// and whose run suspends, while the call waits (TaskWait), on input the
// call declared no capability for is refused up front with the same
// -32021 as a blocking call — not answered with a task that would wait
// forever — and its run is cancelled.
func TestTaskCallMissingCapability(t *testing.T) {
	cases := []struct {
		name, tool, caps, body, reason string
	}{
		{"no elicitation", "conformance-approval", tasksNoElicitation, bodyMissingElicitation, ReasonMissingElicitation},
		{"URL mode only, a form needed", wfAskName, tasksURLOnly, bodyMissingForm, ReasonMissingFormElicitation},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, withTasks, func(c *testConfig) { c.TaskWait = 5 * time.Second })
			wantBody(t, e.do(rpc{method: "tools/call", caps: tc.caps, params: map[string]any{"name": tc.tool}}), http.StatusBadRequest, tc.body)
			run := e.onlyRun(alice)
			if got := e.waitStatus(alice, run.ID, interop.StatusCancelled); got.CancelReason != tc.reason {
				t.Fatalf("cancel reason = %q, want %q", got.CancelReason, tc.reason)
			}
		})
	}
	// The same call declaring form elicitation is an input_required task
	// whose run keeps waiting for the answer.
	e := newEnv(t, withTasks, func(c *testConfig) { c.TaskWait = 5 * time.Second })
	res := result(t, e.do(rpc{method: "tools/call", caps: tasksCaps, params: map[string]any{"name": "conformance-approval"}}))
	if res["resultType"] != "task" || res["status"] != "input_required" {
		t.Fatalf("want an input_required task, got %v", res)
	}
}

// registerAskLater registers a workflow that waits for release, then asks
// for a credential (answerable in URL mode) and then for a name in a form.
func registerAskLater(t *testing.T, e *env) chan<- struct{} {
	t.Helper()
	release := make(chan struct{})
	cd := &interop.CredentialData{Provider: "github", Reason: "missing", ConnectURL: "https://host.example/connect/github"}
	data, _ := json.Marshal(cd)
	err := e.store.Register(tenantA, memstore.WorkflowDef{Workflow: interop.Workflow{ID: "ask-later", Name: "Asks later"}, Run: func(ctx context.Context, rc *memstore.RunContext) (json.RawMessage, error) {
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if _, err := rc.Interrupt(ctx, interop.Interrupt{Kind: interop.InterruptCredential, Key: "github", NodeID: "auth", Data: data, Credential: cd}); err != nil {
			return nil, err
		}
		if _, err := rc.Interrupt(ctx, interop.Interrupt{Kind: interop.InterruptClarification, Key: "name", NodeID: "name", Message: "Name?", ResumeSchema: json.RawMessage(nameSchema)}); err != nil {
			return nil, err
		}
		return json.RawMessage(`{"done":true}`), nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	return release
}

// TestTaskFailsClosedOnLaterInput: when the run of a task suspends only
// after the task was handed to the client, on input the call that created
// it declared no capability for, the mount cancels the run rather than
// leave it waiting for an answer nobody holding the task can give, and
// tasks/get reports the task failed with the -32021 the blocking call
// would have got. An input request the call can answer (a credential in
// URL mode) leaves the run waiting as usual.
func TestTaskFailsClosedOnLaterInput(t *testing.T) {
	t.Run("no elicitation", func(t *testing.T) {
		e := newEnv(t, withTasks)
		release := registerAskLater(t, e)
		res := result(t, e.do(rpc{method: "tools/call", caps: tasksNoElicitation, params: map[string]any{"name": "ask-later"}}))
		if res["resultType"] != "task" || res["status"] != "working" {
			t.Fatalf("want a working task, got %v", res)
		}
		taskID := res["taskId"].(string)
		run := e.onlyRun(alice)
		close(release)
		if got := e.waitStatus(alice, run.ID, interop.StatusCancelled); got.CancelReason != ReasonMissingElicitation {
			t.Fatalf("cancel reason = %q", got.CancelReason)
		}
		rec := e.do(taskReq("tasks/get", taskID, nil))
		got := result(t, rec)
		if got["status"] != "failed" || got["result"] != nil {
			t.Fatalf("task = %v", got)
		}
		checkGolden(t, "tasks_get_missing_capability", rec.Body.Bytes())
	})
	t.Run("URL mode only", func(t *testing.T) {
		e := newEnv(t, withTasks)
		release := registerAskLater(t, e)
		res := result(t, e.do(rpc{method: "tools/call", caps: tasksURLOnly, params: map[string]any{"name": "ask-later"}}))
		taskID := res["taskId"].(string)
		run := e.onlyRun(alice)
		close(release)
		// The credential can be asked in URL mode: the run waits for it.
		run = e.waitStatus(alice, run.ID, interop.StatusWaitingInput)
		task := result(t, e.do(rpc{method: "tasks/get", caps: tasksURLOnly, params: map[string]any{"taskId": taskID}}))
		if task["status"] != "input_required" {
			t.Fatalf("task = %v", task)
		}
		key := run.Interrupts[0].ID
		result(t, e.do(rpc{method: "tasks/update", caps: tasksURLOnly, params: map[string]any{"taskId": taskID, "inputResponses": map[string]any{key: map[string]any{"action": "accept"}}}}))
		// The form that follows cannot be.
		if got := e.waitStatus(alice, run.ID, interop.StatusCancelled); got.CancelReason != ReasonMissingFormElicitation {
			t.Fatalf("cancel reason = %q", got.CancelReason)
		}
		task = result(t, e.do(rpc{method: "tasks/get", caps: tasksURLOnly, params: map[string]any{"taskId": taskID}}))
		if mustJSON(t, task["error"]) != `{"code":-32021,"data":{"requiredCapabilities":{"elicitation":{"form":{}}}},"message":"Missing required client capability"}` {
			t.Fatalf("task = %v", task)
		}
	})
}
