package pushservice_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/egress"
	"github.com/wopinterop/wopinterop/internal/pushservice"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/push"
)

// ExampleService registers a config on a waiting task and receives the
// push its next status change produces, on a loopback receiver admitted by
// the allowlist.
func ExampleService() {
	got := make(chan string, 8)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var sr wire.StreamResponse
		_ = json.NewDecoder(r.Body).Decode(&sr)
		if u, ok := sr.Event.(*wire.TaskStatusUpdateEvent); ok {
			got <- fmt.Sprint(r.Header.Get("Content-Type"), " | ", r.Header.Get("Authorization"), " | ", u.Status.State)
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer receiver.Close()

	store := memstore.New()
	defer store.Close()
	_ = store.RegisterFixtures("acme")
	guard, _ := egress.NewGuard(egress.GuardOptions{AllowOrigins: []string{receiver.URL}})
	// The A2A server supplies the real projector; this one renders status
	// changes only.
	project := pushservice.ProjectorFunc(func(_ context.Context, _ interop.Subject, task pushservice.TaskRef, ev *interop.RunEvent, prev interop.RunStatus) ([]wire.Event, error) {
		if ev.Status == prev {
			return nil, nil
		}
		state := wire.TaskStateWorking
		if ev.Status == interop.StatusCompleted {
			state = wire.TaskStateCompleted
		}
		return []wire.Event{&wire.TaskStatusUpdateEvent{TaskID: wire.TaskID(task.ID), ContextID: task.ContextID, Status: wire.TaskStatus{State: state}}}, nil
	})
	svc, err := pushservice.New(store, project, push.Options{Events: store, Guard: guard})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	_ = svc.Start(ctx)
	defer svc.Close(ctx)

	alice := interop.Subject{Tenant: "acme", Principal: "user:alice", Authenticated: true}
	run, _, _ := store.CreateRun(ctx, alice, interop.CreateRunRequest{WorkflowID: memstore.FixtureApproval, Inputs: json.RawMessage(`{}`)})
	for !run.Status.Suspended() {
		time.Sleep(time.Millisecond)
		run, _ = store.GetRun(ctx, alice, run.ID)
	}
	cfg, err := svc.Register(ctx, alice, &run, pushservice.Spec{URL: receiver.URL + "/a2a", Token: "tok-123"})
	if err != nil {
		panic(err)
	}
	fmt.Println("registered:", cfg.URL == receiver.URL+"/a2a")
	in, _ := run.OpenInterrupt()
	_, _ = store.ResolveInterrupt(ctx, alice, interop.ResolveRequest{RunID: run.ID, InterruptID: in.ID, Outcome: interop.OutcomeAccept, Value: json.RawMessage(`{"action":"accept"}`)})
	fmt.Println(<-got)
	fmt.Println(<-got)
	// Output:
	// registered: true
	// application/a2a+json | Bearer tok-123 | TASK_STATE_WORKING
	// application/a2a+json | Bearer tok-123 | TASK_STATE_COMPLETED
}
