package a2a

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/wopinterop/wopinterop/interop/memstore"
)

// rpcPeer is a2a-go's JSON-RPC client transport talking to the test host
// over real HTTP.
func rpcPeer(t *testing.T, opts ...rpcOption) (a2aclient.Transport, *rpcEnv) {
	t.Helper()
	e := newRPCEnv(t, opts...)
	srv := httptest.NewServer(e.mux)
	t.Cleanup(srv.Close)
	return a2aclient.NewJSONRPCTransport(srv.URL+rpcPath, srv.Client()), e
}

func rpcPeerParams(key, version string) a2aclient.ServiceParams {
	return a2aclient.ServiceParams{"A2A-Version": {version}, "Authorization": {"Bearer " + key}}
}

func skillMessage(skill string, parts ...*wire.Part) *wire.Message {
	m := wire.NewMessage(wire.MessageRoleUser, parts...)
	m.Metadata = map[string]any{"skillId": skill}
	return m
}

// TestRPCWithA2AGoClient: a2a-go's JSON-RPC client drives every method and
// reads every answer, successes and errors alike (OpenWOP RFC 0211 §A, §F).
func TestRPCWithA2AGoClient(t *testing.T) {
	tr, e := rpcPeer(t)
	ctx := t.Context()
	acme := rpcPeerParams(rpcKeyAcme, "1.0")

	res, err := tr.SendMessage(ctx, acme, &wire.SendMessageRequest{Message: skillMessage(memstore.FixtureNoop, wire.NewTextPart("go"))})
	if err != nil {
		t.Fatal(err)
	}
	if task, ok := res.(*wire.Task); !ok || task.Status.State != wire.TaskStateCompleted || len(task.Artifacts) != 1 {
		t.Fatalf("SendMessage noop: %#v", res)
	}

	res, err = tr.SendMessage(ctx, acme, &wire.SendMessageRequest{Message: skillMessage(memstore.FixtureApproval, wire.NewTextPart("approve?"))})
	if err != nil {
		t.Fatal(err)
	}
	task, ok := res.(*wire.Task)
	if !ok || task.Status.State != wire.TaskStateInputRequired {
		t.Fatalf("SendMessage approval: %#v", res)
	}
	got, err := tr.GetTask(ctx, acme, &wire.GetTaskRequest{ID: task.ID, HistoryLength: new(1)})
	if err != nil || got.ID != task.ID || len(got.History) != 1 {
		t.Fatalf("GetTask: %+v %v", got, err)
	}
	list, err := tr.ListTasks(ctx, acme, &wire.ListTasksRequest{ContextID: task.ContextID})
	if err != nil || len(list.Tasks) != 1 || list.Tasks[0].ID != task.ID {
		t.Fatalf("ListTasks: %+v %v", list, err)
	}

	// Subscribe, then accept from another request.
	subCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	events := make(chan wire.Event, 16)
	subErr := make(chan error, 1)
	go func() {
		defer close(events)
		for ev, err := range tr.SubscribeToTask(subCtx, acme, &wire.SubscribeToTaskRequest{ID: task.ID}) {
			if err != nil {
				subErr <- err
				return
			}
			events <- ev
		}
	}()
	if first, ok := (<-events).(*wire.Task); !ok || first.ID != task.ID {
		t.Fatalf("first subscribed event %#v", first)
	}
	reply := wire.NewMessageForTask(wire.MessageRoleUser, task, wire.NewDataPart(map[string]any{"action": "accept"}))
	reply.ContextID = ""
	if res, err := tr.SendMessage(ctx, acme, &wire.SendMessageRequest{Message: reply}); err != nil {
		t.Fatal(err)
	} else if done, _ := res.(*wire.Task); done == nil || done.ContextID != task.ContextID {
		t.Fatalf("reply answered %#v", res)
	}
	var last wire.Event
	for ev := range events {
		last = ev
	}
	select {
	case err := <-subErr:
		t.Fatalf("subscription: %v", err)
	default:
	}
	if upd, ok := last.(*wire.TaskStatusUpdateEvent); !ok || upd.Status.State != wire.TaskStateCompleted {
		t.Fatalf("last subscribed event %#v", last)
	}

	var kinds []string
	for ev, err := range tr.SendStreamingMessage(ctx, acme, &wire.SendMessageRequest{Message: skillMessage(memstore.FixtureNoop, wire.NewTextPart("stream"))}) {
		if err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, eventKind(ev))
	}
	if len(kinds) != 3 || kinds[0] != "task" || kinds[2] != "statusUpdate:TASK_STATE_COMPLETED" {
		t.Fatalf("streamed %v", kinds)
	}

	res, err = tr.SendMessage(ctx, acme, &wire.SendMessageRequest{Message: skillMessage(memstore.FixtureApproval, wire.NewTextPart("cancel me"))})
	if err != nil {
		t.Fatal(err)
	}
	canceled, err := tr.CancelTask(ctx, acme, &wire.CancelTaskRequest{ID: res.(*wire.Task).ID})
	if err != nil || (canceled.Status.State != wire.TaskStateWorking && canceled.Status.State != wire.TaskStateCanceled) {
		t.Fatalf("CancelTask: %+v %v", canceled, err)
	}

	card, err := tr.GetExtendedAgentCard(ctx, acme, &wire.GetExtendedAgentCardRequest{Tenant: e.agentR["agent-ada"]})
	if err != nil || card.Name != "Ada" {
		t.Fatalf("GetExtendedAgentCard: %+v %v", card, err)
	}

	// Errors, identified by a2a-go from code and ErrorInfo reason.
	unknown := wire.TaskID("acme/AAAAAAAAAAAAAAAAAAAAAAAAAA")
	errCases := []struct {
		name string
		call func() error
		want error
	}{
		{"unknown task", func() error { _, err := tr.GetTask(ctx, acme, &wire.GetTaskRequest{ID: unknown}); return err }, wire.ErrTaskNotFound},
		{"foreign task", func() error {
			_, err := tr.GetTask(ctx, rpcPeerParams(rpcKeyGlobex, "1.0"), &wire.GetTaskRequest{ID: task.ID})
			return err
		}, wire.ErrTaskNotFound},
		{"cancel a completed task", func() error { _, err := tr.CancelTask(ctx, acme, &wire.CancelTaskRequest{ID: task.ID}); return err }, wire.ErrTaskNotCancelable},
		{"message to a completed task", func() error {
			_, err := tr.SendMessage(ctx, acme, &wire.SendMessageRequest{Message: wire.NewMessageForTask(wire.MessageRoleUser, task, wire.NewTextPart("late"))})
			return err
		}, wire.ErrUnsupportedOperation},
		{"push config", func() error {
			_, err := tr.CreateTaskPushConfig(ctx, acme, &wire.PushConfig{TaskID: task.ID, URL: "https://hooks.example"})
			return err
		}, wire.ErrPushNotificationNotSupported},
		{"push delete", func() error {
			return tr.DeleteTaskPushConfig(ctx, acme, &wire.DeleteTaskPushConfigRequest{TaskID: task.ID, ID: "c"})
		}, wire.ErrPushNotificationNotSupported},
		{"extended card", func() error {
			_, err := tr.GetExtendedAgentCard(ctx, acme, &wire.GetExtendedAgentCardRequest{})
			return err
		}, wire.ErrExtendedCardNotConfigured},
		{"version", func() error {
			_, err := tr.GetTask(ctx, rpcPeerParams(rpcKeyAcme, "9.9"), &wire.GetTaskRequest{ID: unknown})
			return err
		}, wire.ErrVersionNotSupported},
		{"contextId mismatch", func() error {
			m := wire.NewMessageForTask(wire.MessageRoleUser, task, wire.NewTextPart("x"))
			m.ContextID = "ctx-elsewhere"
			_, err := tr.SendMessage(ctx, acme, &wire.SendMessageRequest{Message: m})
			return err
		}, wire.ErrInvalidParams},
	}
	for _, tc := range errCases {
		if err := tc.call(); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}

	// A refusal before a stream starts is a plain application/json
	// JSON-RPC error, as the A2A TCK reads it (STREAM-SUB-003). a2a-go
	// v2.4.0 reads every streaming answer through its SSE parser only, so
	// to it such a refusal looks like an empty stream: no event, no error.
	// This pins that known client limitation; the wire form itself is
	// pinned by testdata/jsonrpc/error_unsupported_subscribe_terminal.txt.
	for ev, err := range tr.SubscribeToTask(ctx, acme, &wire.SubscribeToTaskRequest{ID: task.ID}) {
		t.Fatalf("a2a-go read %v, %v from a pre-stream refusal", ev, err)
	}
}
