package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopinterop/wopinterop/postgres"
	"github.com/wopinterop/wopinterop/postgres/internal/pgtest"
)

// Two replicas as one: two hosts on one database behind a round-robin
// balancer, driven by the SDKs' own clients, which know nothing of the
// replicas. Every step says which replica served it.

const acmeKey = "demo-acme"

// bearer adds a host key to every request.
type bearer struct {
	key  string
	next http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return b.next.RoundTrip(r)
}

// twoReplicas starts two replicas on a fresh database behind a balancer
// and returns it with the replicas' own origins.
func twoReplicas(t *testing.T) (*roundRobin, []string) {
	t.Helper()
	dsn := pgtest.NewDSN(t)
	rr := newRoundRobin(t)
	origins := []string{startReplica(t, dsn, "-public-url", rr.url), startReplica(t, dsn, "-public-url", rr.url)}
	rr.attach(origins...)
	return rr, origins
}

// away makes sure the balancer's next request goes to a replica other
// than replica: when it would not, one card read through the balancer
// moves it on. The balancer stays round-robin.
func (rr *roundRobin) away(t *testing.T, replica int) {
	t.Helper()
	if rr.upcoming() != replica {
		return
	}
	resp, err := http.Get(rr.url + "/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
}

// servedBy is the replica that served the last request of JSON-RPC method
// rpc.
func (rr *roundRobin) servedBy(t *testing.T, rpc string) int {
	t.Helper()
	log := rr.log()
	for i := len(log) - 1; i >= 0; i-- {
		if log[i].RPC == rpc {
			return log[i].Replica
		}
	}
	t.Fatalf("no %s was served", rpc)
	return -1
}

// TestReplicasServeA2AClient: a2a-go's client, through the balancer, starts
// a task on one replica, and reads, subscribes to, continues and cancels
// it on the other (OpenWOP interop map, a2a.operations; interop.md §A2A
// multi-turn): the task is the run in the shared database, and a
// subscription on either replica sees what the other appends.
func TestReplicasServeA2AClient(t *testing.T) {
	rr, _ := twoReplicas(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	httpClient := &http.Client{Transport: bearer{acmeKey, http.DefaultTransport}}
	card, err := agentcard.NewResolver(httpClient).Resolve(ctx, rr.url)
	if err != nil {
		t.Fatalf("card: %v", err)
	}
	client, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithDefaultsDisabled(),
		a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []wire.TransportProtocol{wire.TransportProtocolJSONRPC}, DisableTenantPropagation: true}),
		a2aclient.WithJSONRPCTransport(httpClient))
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	defer func() { _ = client.Destroy() }()
	send := func(m *wire.Message) *wire.Task {
		t.Helper()
		res, err := client.SendMessage(ctx, &wire.SendMessageRequest{Message: m})
		if err != nil {
			t.Fatalf("SendMessage: %v", err)
		}
		task, ok := res.(*wire.Task)
		if !ok {
			t.Fatalf("SendMessage answered %T", res)
		}
		return task
	}
	approve := func() *wire.Message { return wire.NewMessage(wire.MessageRoleUser, wire.NewTextPart("please approve")) }

	// Start: the approval run waits for input.
	task := send(approve())
	creator := rr.servedBy(t, "SendMessage")
	if task.Status.State != wire.TaskStateInputRequired {
		t.Fatalf("send on replica %d: %+v", creator, task.Status)
	}

	// Read on the other replica.
	rr.away(t, creator)
	got, err := client.GetTask(ctx, &wire.GetTaskRequest{ID: task.ID})
	if err != nil || got.Status.State != wire.TaskStateInputRequired || got.ContextID != task.ContextID {
		t.Fatalf("get on replica %d: %+v %v", rr.servedBy(t, "GetTask"), got, err)
	}
	if r := rr.servedBy(t, "GetTask"); r == creator {
		t.Fatalf("get served by the creating replica %d", r)
	}

	// Subscribe on both replicas, then continue on the one that did not
	// start the task: both subscriptions end at COMPLETED.
	type subscription struct {
		replica int
		events  chan wire.Event
		err     chan error
	}
	subscribe := func() subscription {
		s := subscription{events: make(chan wire.Event, 16), err: make(chan error, 1)}
		go func() {
			defer close(s.events)
			for ev, err := range client.SubscribeToTask(ctx, &wire.SubscribeToTaskRequest{ID: task.ID}) {
				if err != nil {
					s.err <- err
					return
				}
				s.events <- ev
			}
		}()
		// The subscription is open once its first event (the task) came.
		select {
		case ev := <-s.events:
			if at, ok := ev.(*wire.Task); !ok || at.Status.State != wire.TaskStateInputRequired {
				t.Fatalf("subscribe: first event %#v", ev)
			}
		case err := <-s.err:
			t.Fatalf("subscribe: %v", err)
		case <-ctx.Done():
			t.Fatal("subscribe: no first event")
		}
		s.replica = rr.servedBy(t, "SubscribeToTask")
		return s
	}
	subs := []subscription{subscribe(), subscribe()}
	if subs[0].replica == subs[1].replica {
		t.Fatalf("both subscriptions on replica %d", subs[0].replica)
	}
	rr.away(t, creator)
	accept := wire.NewMessage(wire.MessageRoleUser, wire.NewDataPart(map[string]any{"action": "accept"}))
	accept.TaskID = task.ID
	done := send(accept)
	if r := rr.servedBy(t, "SendMessage"); r == creator || done.ID != task.ID || done.Status.State != wire.TaskStateCompleted {
		t.Fatalf("continue on replica %d (creator %d): %+v", r, creator, done.Status)
	}
	for _, s := range subs {
		var last wire.Event
		for ev := range s.events {
			last = ev
		}
		select {
		case err := <-s.err:
			t.Fatalf("subscription on replica %d: %v", s.replica, err)
		default:
		}
		if end, ok := last.(*wire.TaskStatusUpdateEvent); !ok || end.Status.State != wire.TaskStateCompleted {
			t.Fatalf("subscription on replica %d ended with %#v", s.replica, last)
		}
	}

	// Cancel on the other replica: the replica running the run ends it;
	// every replica then reads it canceled.
	victim := send(approve())
	victimCreator := rr.servedBy(t, "SendMessage")
	rr.away(t, victimCreator)
	if _, err := client.CancelTask(ctx, &wire.CancelTaskRequest{ID: victim.ID}); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	if r := rr.servedBy(t, "CancelTask"); r == victimCreator {
		t.Fatalf("cancel served by the creating replica %d", r)
	}
	seen := map[int]bool{}
	for deadline := time.Now().Add(20 * time.Second); len(seen) < 2; time.Sleep(20 * time.Millisecond) {
		got, err := client.GetTask(ctx, &wire.GetTaskRequest{ID: victim.ID})
		if err != nil {
			t.Fatalf("get after cancel: %v", err)
		}
		switch got.Status.State {
		case wire.TaskStateCanceled:
			seen[rr.servedBy(t, "GetTask")] = true
		case wire.TaskStateInputRequired, wire.TaskStateWorking:
			if time.Now().After(deadline) {
				t.Fatalf("after cancel the task reads %s", got.Status.State)
			}
		default:
			t.Fatalf("after cancel the task reads %s", got.Status.State)
		}
	}
	if _, err := client.CancelTask(ctx, &wire.CancelTaskRequest{ID: victim.ID}); !errors.Is(err, wire.ErrTaskNotCancelable) {
		t.Errorf("cancel again: %v, want TaskNotCancelable", err)
	}

	// More tasks, each started on one replica and answered on the other.
	const more = 20
	for i := range more {
		started := send(approve())
		on := rr.servedBy(t, "SendMessage")
		rr.away(t, on)
		answer := wire.NewMessage(wire.MessageRoleUser, wire.NewDataPart(map[string]any{"action": "accept"}))
		answer.TaskID = started.ID
		if done := send(answer); rr.servedBy(t, "SendMessage") == on || done.Status.State != wire.TaskStateCompleted {
			t.Fatalf("task %d: started on replica %d, answered on %d: %s", i, on, rr.servedBy(t, "SendMessage"), done.Status.State)
		}
	}

	// Every task is listed, on either replica.
	for range 2 {
		list, err := client.ListTasks(ctx, &wire.ListTasksRequest{PageSize: 100})
		if err != nil || list.TotalSize != 2+more || len(list.Tasks) != 2+more {
			t.Fatalf("list on replica %d: %d of %d tasks, %v", rr.servedBy(t, "ListTasks"), len(list.Tasks), list.TotalSize, err)
		}
	}
	per := [2]int{}
	for _, s := range rr.log() {
		per[s.Replica]++
	}
	t.Logf("%d tasks: %d started on one replica and continued on the other (the first also read and subscribed to on both), 1 cancelled on the other; requests per replica %v",
		2+more, 1+more, per)
}

// TestReplicasServeMCPRounds: go-sdk's client, through the balancer, calls
// conformance-approval; its multi-round loop answers each input request
// on the replica that did not issue it (MCP 2026-07-28 multi-round-trip
// requests; OpenWOP interop map, mcp.mrtr), since the sealed requestState
// opens on any replica sharing the key and the ledger. Every requestState
// the client used is then refused, identically, on both replicas.
func TestReplicasServeMCPRounds(t *testing.T) {
	rr, origins := twoReplicas(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	asked := 0
	client := sdk.NewClient(&sdk.Implementation{Name: "replica-test", Version: "1.0.0"}, &sdk.ClientOptions{
		Capabilities: &sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{Form: &sdk.FormElicitationCapabilities{}}},
		ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			asked++
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"action": "accept"}}, nil
		},
	})
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{
		Endpoint:             rr.url + "/mcp",
		HTTPClient:           &http.Client{Transport: bearer{acmeKey, http.DefaultTransport}},
		DisableStandaloneSSE: true,
		MaxRetries:           -1,
	}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer func() { _ = cs.Close() }()
	const calls = 10
	for i := range calls {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: postgres.FixtureApproval})
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if text, _ := res.Content[0].(*sdk.TextContent); res.IsError || text == nil || text.Text != `{"approved":true}` || asked != i+1 {
			t.Fatalf("call %d: %+v after %d elicitations", i, res, asked)
		}
	}

	// Each retry carrying a requestState went to the replica that did not
	// answer the call before it.
	var toolCalls, retries []served
	for _, s := range rr.log() {
		if s.RPC == "tools/call" {
			toolCalls = append(toolCalls, s)
		}
	}
	for i, c := range toolCalls {
		if _, ok := c.params()["requestState"].(string); !ok {
			continue
		}
		if i == 0 || toolCalls[i-1].Replica == c.Replica {
			t.Fatalf("tools/call %d with a requestState served by replica %d, like the call that issued it", i, c.Replica)
		}
		retries = append(retries, c)
	}
	answered := 0
	for _, c := range retries {
		if c.params()["inputResponses"] != nil {
			answered++
		}
	}
	if len(retries) < calls || answered < calls {
		t.Fatalf("%d rounds answered in %d tools/call, want %d", answered, len(toolCalls), calls)
	}

	// Replays: the same bytes, to each replica directly.
	refused := 0
	for _, c := range retries {
		var env struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(c.Body, &env)
		want := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"Invalid params: requestState is not valid for this request"}}`, env.ID)
		for i, origin := range origins {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, origin+"/mcp", bytes.NewReader(c.Body))
			req.Header = c.Header.Clone()
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusBadRequest || strings.TrimSpace(string(body)) != want {
				t.Errorf("replayed requestState on replica %d: %d %s", i, resp.StatusCode, body)
				continue
			}
			refused++
		}
	}
	t.Logf("%d tools/call, %d retries with a requestState (%d answering an input request), each on the other replica; %d of %d replays refused (each replayed on both replicas)",
		len(toolCalls), len(retries), answered, refused, 2*len(retries))
}
