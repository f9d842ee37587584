package push_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/push"
)

// exampleDNS answers from a table; a real host leaves Resolver nil.
type exampleDNS map[string]string

func (d exampleDNS) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	a, ok := d[host]
	if !ok {
		return nil, fmt.Errorf("no such host")
	}
	return []netip.Addr{netip.MustParseAddr(a)}, nil
}

func ExampleGuard_Check() {
	g, err := push.NewGuard(push.GuardOptions{Resolver: exampleDNS{
		"hooks.partner.net.":  "93.184.216.34",
		"rebind.partner.net.": "10.0.0.7",
	}})
	if err != nil {
		panic(err)
	}
	for _, u := range []string{
		"https://hooks.partner.net/a2a",
		"http://hooks.partner.net/a2a",
		"https://[::ffff:127.0.0.1]/",
		"https://0x7f.1/",
		"https://rebind.partner.net/",
	} {
		d, err := g.Check(context.Background(), u)
		if err != nil {
			fmt.Println(u, "->", err)
			continue
		}
		fmt.Println(u, "->", d.Origin, d.Addrs)
	}
	// Output:
	// https://hooks.partner.net/a2a -> https://hooks.partner.net:443 [93.184.216.34:443]
	// http://hooks.partner.net/a2a -> push: destination refused: scheme not allowed
	// https://[::ffff:127.0.0.1]/ -> push: destination refused: address not public
	// https://0x7f.1/ -> push: destination refused: host not allowed
	// https://rebind.partner.net/ -> push: destination refused: address not public
}

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
	guard, _ := push.NewGuard(push.GuardOptions{AllowOrigins: []string{receiver.URL}})
	// The A2A server supplies the real projector; this one renders status
	// changes only.
	project := push.ProjectorFunc(func(_ context.Context, _ interop.Subject, task push.TaskRef, ev *interop.RunEvent, prev interop.RunStatus) ([]wire.Event, error) {
		if ev.Status == prev {
			return nil, nil
		}
		state := wire.TaskStateWorking
		if ev.Status == interop.StatusCompleted {
			state = wire.TaskStateCompleted
		}
		return []wire.Event{&wire.TaskStatusUpdateEvent{TaskID: wire.TaskID(task.ID), ContextID: task.ContextID, Status: wire.TaskStatus{State: state}}}, nil
	})
	svc, err := push.New(store, project, push.Options{Events: store, Guard: guard})
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
	cfg, err := svc.Register(ctx, alice, &run, push.Spec{URL: receiver.URL + "/a2a", Token: "tok-123"})
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
