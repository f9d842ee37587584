package hostapp

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/wopinterop/wopinterop/interop/memstore"
)

// The Go peer: a2a-go v2.4.0's own client (card resolver, factory,
// transport, bearer AuthInterceptor) drives the demo host over real HTTP,
// once per binding, through the scenario a peer runs: card, send, the
// multi-turn approval, get, list, cancel, stream and subscribe, with a
// second tenant that must see nothing (OpenWOP interop map, a2a.card and
// a2a.operations; interop.md §A2A multi-turn, §Isolation; RFC 0211 §A–§D).
func TestGoPeer(t *testing.T) {
	for _, binding := range []wire.TransportProtocol{wire.TransportProtocolJSONRPC, wire.TransportProtocolHTTPJSON} {
		t.Run(string(binding), func(t *testing.T) { goPeerScenario(t, binding) })
	}
}

// wireLog records what the peer put on the wire.
type wireLog struct {
	mu       sync.Mutex
	paths    []string
	versions []string
	base     http.RoundTripper
}

func (l *wireLog) RoundTrip(r *http.Request) (*http.Response, error) {
	l.mu.Lock()
	l.paths = append(l.paths, r.Method+" "+r.URL.EscapedPath())
	l.versions = append(l.versions, r.Header.Get("A2A-Version"))
	l.mu.Unlock()
	return l.base.RoundTrip(r)
}

func (l *wireLog) snapshot() (paths, versions []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.paths...), append([]string(nil), l.versions...)
}

func goPeerScenario(t *testing.T, binding wire.TransportProtocol) {
	h := newTestHost(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	log := &wireLog{base: h.client.Transport}
	httpClient := &http.Client{Transport: log}

	// Step: card. a2a-go's resolver reads the public card (no credential).
	card, err := agentcard.NewResolver(httpClient).Resolve(ctx, h.url)
	if err != nil {
		t.Fatalf("card: %v", err)
	}
	if len(card.Skills) != 1 || card.Skills[0].ID != memstore.FixtureApproval || !card.Capabilities.Streaming {
		t.Fatalf("card: skills %+v capabilities %+v", card.Skills, card.Capabilities)
	}
	t.Logf("card: %d interfaces, skill %s", len(card.SupportedInterfaces), card.Skills[0].ID)

	// The bearer keys travel through a2a-go's AuthInterceptor, which reads
	// the card's security scheme: the card describes the authentication
	// the host enforces (OpenWOP interop map, a2a.card).
	creds := a2aclient.NewInMemoryCredentialsStore()
	creds.Set("acme", bearerScheme, acmeKey)
	creds.Set("globex", bearerScheme, globexKey)
	acme := a2aclient.AttachSessionID(ctx, "acme")
	globex := a2aclient.AttachSessionID(ctx, "globex")
	newClient := func() *a2aclient.Client {
		t.Helper()
		opts := []a2aclient.FactoryOption{
			a2aclient.WithDefaultsDisabled(),
			a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []wire.TransportProtocol{binding}, DisableTenantPropagation: true}),
			a2aclient.WithCallInterceptors(&a2aclient.AuthInterceptor{Service: creds}),
		}
		if binding == wire.TransportProtocolJSONRPC {
			opts = append(opts, a2aclient.WithJSONRPCTransport(httpClient))
		} else {
			opts = append(opts, a2aclient.WithRESTTransport(httpClient))
		}
		c, err := a2aclient.NewFromCard(ctx, card, opts...)
		if err != nil {
			t.Fatalf("client: %v", err)
		}
		t.Cleanup(func() { _ = c.Destroy() })
		return c
	}
	client, other := newClient(), newClient()

	send := func(ctx context.Context, c *a2aclient.Client, m *wire.Message) *wire.Task {
		t.Helper()
		res, err := c.SendMessage(ctx, &wire.SendMessageRequest{Message: m})
		if err != nil {
			t.Fatalf("SendMessage: %v", err)
		}
		task, ok := res.(*wire.Task)
		if !ok {
			t.Fatalf("SendMessage answered %T, want a Task", res)
		}
		return task
	}
	approve := func() *wire.Message { return wire.NewMessage(wire.MessageRoleUser, wire.NewTextPart("please approve")) }
	accept := func(task *wire.Task) *wire.Message {
		m := wire.NewMessage(wire.MessageRoleUser, wire.NewDataPart(map[string]any{"action": "accept"}))
		m.TaskID = task.ID // no contextId: the host infers it (OpenWOP interop.md §A2A multi-turn)
		m.Metadata = map[string]any{"openwop": map[string]any{"interrupt": map[string]any{"action": "accept"}}}
		return m
	}

	// Step: send. The approval run answers INPUT_REQUIRED with the bound id.
	task := send(acme, client, approve())
	if !strings.HasPrefix(string(task.ID), "acme/") || task.ContextID == "" || task.Status.State != wire.TaskStateInputRequired {
		t.Fatalf("send: %+v", task)
	}
	if kind := interruptKind(task); kind != "approval" {
		t.Errorf("send: metadata.openwop.interrupt.kind = %q", kind)
	}
	t.Logf("send: %s %s", task.ID, task.Status.State)

	// Step: multi-turn. The accept reply by taskId completes the task in
	// the same context.
	done := send(acme, client, accept(task))
	if done.ID != task.ID || done.ContextID != task.ContextID || done.Status.State != wire.TaskStateCompleted {
		t.Fatalf("multi-turn: %+v", done)
	}
	// A chat client's plain-text answer: other text is refused and changes
	// nothing; the text of an offered action resolves the approval as the
	// data part would ("reject" fails the fixture).
	chat := send(acme, client, approve())
	say := func(text string) *wire.Message {
		m := wire.NewMessage(wire.MessageRoleUser, wire.NewTextPart(text))
		m.TaskID = chat.ID
		return m
	}
	if _, err := client.SendMessage(acme, &wire.SendMessageRequest{Message: say("sounds good")}); err == nil {
		t.Errorf("multi-turn: free text resolved the approval")
	}
	if still, err := client.GetTask(acme, &wire.GetTaskRequest{ID: chat.ID}); err != nil || still.Status.State != wire.TaskStateInputRequired {
		t.Fatalf("multi-turn: after refused text %+v %v", still, err)
	}
	if rejected := send(acme, client, say(" reject ")); rejected.ID != chat.ID || rejected.Status.State != wire.TaskStateFailed {
		t.Fatalf("multi-turn: plain-text reject answered %+v", rejected)
	}
	t.Logf("multi-turn: %s; plain-text reject: %s", done.Status.State, wire.TaskStateFailed)

	// Step: get. The exchanged messages are the history.
	got, err := client.GetTask(acme, &wire.GetTaskRequest{ID: task.ID})
	if err != nil || got.Status.State != wire.TaskStateCompleted || len(got.History) != 2 {
		t.Fatalf("get: %+v %v", got, err)
	}
	if one, err := client.GetTask(acme, &wire.GetTaskRequest{ID: task.ID, HistoryLength: new(1)}); err != nil || len(one.History) != 1 {
		t.Errorf("get historyLength 1: %+v %v", one, err)
	}
	// A tenant that is none of acme's routing values is a hint the host
	// ignores on an existing task.
	if hinted, err := client.GetTask(acme, &wire.GetTaskRequest{ID: task.ID, Tenant: "globex"}); err != nil || hinted.ID != task.ID || hinted.Status.State != wire.TaskStateCompleted {
		t.Errorf("get with tenant globex: %+v %v", hinted, err)
	}
	t.Logf("get: %s, %d history messages", got.Status.State, len(got.History))

	// Step: list. acme's task is listed; globex sees nothing of acme's,
	// also when it names acme's context or acme as tenant (OpenWOP interop.md §Isolation).
	list, err := client.ListTasks(acme, &wire.ListTasksRequest{ContextID: task.ContextID})
	if err != nil || len(list.Tasks) != 1 || list.Tasks[0].ID != task.ID || list.TotalSize != 1 {
		t.Fatalf("list: %+v %v", list, err)
	}
	for _, q := range []*wire.ListTasksRequest{{}, {ContextID: task.ContextID}, {Tenant: "acme", ContextID: task.ContextID}} {
		res, err := client.ListTasks(globex, q)
		if err != nil || len(res.Tasks) != 0 || res.TotalSize != 0 {
			t.Errorf("list as globex %+v: %+v %v, want an empty list", q, res, err)
		}
	}
	if _, err := client.GetTask(globex, &wire.GetTaskRequest{ID: task.ID}); !errors.Is(err, wire.ErrTaskNotFound) {
		t.Errorf("get as globex: %v, want TaskNotFound", err)
	}
	if _, err := client.CancelTask(globex, &wire.CancelTaskRequest{ID: task.ID}); !errors.Is(err, wire.ErrTaskNotFound) {
		t.Errorf("cancel as globex: %v, want TaskNotFound", err)
	}
	t.Logf("list: acme 1 task, globex none")

	// Step: cancel. A waiting approval task cancels; a second cancel is
	// refused as not cancelable (OpenWOP interop map, a2a.operations).
	victim := send(acme, client, approve())
	canceled, err := client.CancelTask(acme, &wire.CancelTaskRequest{ID: victim.ID})
	if err != nil || (canceled.Status.State != wire.TaskStateCanceled && canceled.Status.State != wire.TaskStateWorking) {
		t.Fatalf("cancel: %+v %v", canceled, err)
	}
	t.Logf("cancel: %s", canceled.Status.State)
	waitState(t, acme, client, victim.ID, wire.TaskStateCanceled)
	if _, err := client.CancelTask(acme, &wire.CancelTaskRequest{ID: victim.ID}); !errors.Is(err, wire.ErrTaskNotCancelable) {
		t.Errorf("cancel again: %v, want TaskNotCancelable", err)
	}
	if _, err := client.SendMessage(acme, &wire.SendMessageRequest{Message: accept(victim)}); !errors.Is(err, wire.ErrUnsupportedOperation) {
		t.Errorf("message to a canceled task: %v, want UnsupportedOperation", err)
	}

	// Step: stream. Task first, then status updates, ending at the
	// interrupt (OpenWOP interop map, a2a.operations).
	var streamed []wire.Event
	for ev, err := range client.SendStreamingMessage(acme, &wire.SendMessageRequest{Message: approve()}) {
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		streamed = append(streamed, ev)
	}
	first, ok := eventAt(streamed, 0).(*wire.Task)
	if !ok {
		t.Fatalf("stream: first event %T, want a Task", eventAt(streamed, 0))
	}
	last, ok := eventAt(streamed, len(streamed)-1).(*wire.TaskStatusUpdateEvent)
	if !ok || last.Status.State != wire.TaskStateInputRequired || last.TaskID != first.ID || len(streamed) < 2 {
		t.Fatalf("stream: %s", kinds(streamed))
	}
	t.Logf("stream: %s", kinds(streamed))

	// Step: subscribe. A subscription to the input-required task stays
	// open until another client resolves it, then ends at COMPLETED
	// (OpenWOP interop map, a2a.operations).
	events := make(chan wire.Event, 16)
	subErr := make(chan error, 1)
	go func() {
		defer close(events)
		for ev, err := range client.SubscribeToTask(acme, &wire.SubscribeToTaskRequest{ID: first.ID}) {
			if err != nil {
				subErr <- err
				return
			}
			events <- ev
		}
	}()
	var subscribed []wire.Event
	select {
	case ev, ok := <-events:
		if !ok {
			t.Fatalf("subscribe: ended before any event")
		}
		subscribed = append(subscribed, ev)
	case <-ctx.Done():
		t.Fatal("subscribe: no first event")
	}
	if at, ok := subscribed[0].(*wire.Task); !ok || at.ID != first.ID || at.Status.State != wire.TaskStateInputRequired {
		t.Fatalf("subscribe: first event %#v", subscribed[0])
	}
	if resolved := send(acme, other, accept(first)); resolved.Status.State != wire.TaskStateCompleted {
		t.Fatalf("subscribe: resolving from another client: %+v", resolved)
	}
	for ev := range events {
		subscribed = append(subscribed, ev)
	}
	select {
	case err := <-subErr:
		t.Fatalf("subscribe: %v", err)
	default:
	}
	end, ok := subscribed[len(subscribed)-1].(*wire.TaskStatusUpdateEvent)
	if !ok || end.Status.State != wire.TaskStateCompleted {
		t.Fatalf("subscribe: %s", kinds(subscribed))
	}
	t.Logf("subscribe: %s", kinds(subscribed))

	// Every call went to the chosen interface, at A2A-Version 1.0.
	paths, versions := log.snapshot()
	for i, p := range paths[1:] { // paths[0] is the card
		wantPrefix := "POST " + a2aPath
		if binding == wire.TransportProtocolHTTPJSON {
			wantPrefix = a2aRESTPath + "/"
		}
		if !strings.Contains(p, wantPrefix) || versions[i+1] != "1.0" || (binding == wire.TransportProtocolJSONRPC && p != "POST "+a2aPath) {
			t.Errorf("call %d went to %s with A2A-Version %q", i+1, p, versions[i+1])
		}
	}
}

// waitState polls GetTask until the task reaches state.
func waitState(t *testing.T, ctx context.Context, c *a2aclient.Client, id wire.TaskID, state wire.TaskState) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		task, err := c.GetTask(ctx, &wire.GetTaskRequest{ID: id})
		if err != nil {
			t.Fatalf("get %s: %v", id, err)
		}
		if task.Status.State == state {
			return
		}
	}
	t.Fatalf("task %s never reached %s", id, state)
}

func interruptKind(task *wire.Task) string {
	ow, _ := task.Metadata["openwop"].(map[string]any)
	in, _ := ow["interrupt"].(map[string]any)
	kind, _ := in["kind"].(string)
	return kind
}

func eventAt(evs []wire.Event, i int) wire.Event {
	if i < 0 || i >= len(evs) {
		return nil
	}
	return evs[i]
}

// kinds names a stream's events: task, statusUpdate:STATE, artifactUpdate.
func kinds(evs []wire.Event) string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		switch e := ev.(type) {
		case *wire.Task:
			out[i] = "task:" + string(e.Status.State)
		case *wire.TaskStatusUpdateEvent:
			out[i] = "statusUpdate:" + string(e.Status.State)
		case *wire.TaskArtifactUpdateEvent:
			out[i] = "artifactUpdate"
		default:
			out[i] = "?"
		}
	}
	return strings.Join(out, " ")
}

// TestGoPeerSeesRunOutput: a2a-go's client sees a completed run's output.
// conformance-approval publishes no artifact and completes with
// {"approved":true}; the peer finds it as the artifact openwop.output, one
// data part, in the SendMessage answer, GetTask, ListTasks with
// includeArtifacts and, streamed, just before the terminal statusUpdate —
// what an MCP client reads as structuredContent.
func TestGoPeerSeesRunOutput(t *testing.T) {
	for _, binding := range []wire.TransportProtocol{wire.TransportProtocolJSONRPC, wire.TransportProtocolHTTPJSON} {
		t.Run(string(binding), func(t *testing.T) { goPeerOutput(t, binding) })
	}
}

func goPeerOutput(t *testing.T, binding wire.TransportProtocol) {
	h := newTestHost(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	card, err := agentcard.NewResolver(h.client).Resolve(ctx, h.url)
	if err != nil {
		t.Fatalf("card: %v", err)
	}
	creds := a2aclient.NewInMemoryCredentialsStore()
	creds.Set("acme", bearerScheme, acmeKey)
	acme := a2aclient.AttachSessionID(ctx, "acme")
	opts := []a2aclient.FactoryOption{
		a2aclient.WithDefaultsDisabled(),
		a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []wire.TransportProtocol{binding}, DisableTenantPropagation: true}),
		a2aclient.WithCallInterceptors(&a2aclient.AuthInterceptor{Service: creds}),
	}
	if binding == wire.TransportProtocolJSONRPC {
		opts = append(opts, a2aclient.WithJSONRPCTransport(h.client))
	} else {
		opts = append(opts, a2aclient.WithRESTTransport(h.client))
	}
	client, err := a2aclient.NewFromCard(ctx, card, opts...)
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	t.Cleanup(func() { _ = client.Destroy() })

	wantOutput := func(where string, arts []*wire.Artifact) {
		t.Helper()
		if len(arts) != 1 || arts[0].ID != "openwop.output" || len(arts[0].Parts) != 1 {
			t.Fatalf("%s: artifacts %+v, want only openwop.output", where, arts)
		}
		data, ok := arts[0].Parts[0].Data().(map[string]any)
		if !ok || len(data) != 1 || data["approved"] != true {
			t.Fatalf("%s: output part %#v, want the data {\"approved\":true}", where, arts[0].Parts[0].Content)
		}
	}
	approval := func() *wire.Task {
		t.Helper()
		res, err := client.SendMessage(acme, &wire.SendMessageRequest{Message: wire.NewMessage(wire.MessageRoleUser, wire.NewTextPart("please approve"))})
		task, ok := res.(*wire.Task)
		if err != nil || !ok || task.Status.State != wire.TaskStateInputRequired {
			t.Fatalf("send: %+v %v", res, err)
		}
		return task
	}
	accept := func(task *wire.Task) *wire.Message {
		m := wire.NewMessage(wire.MessageRoleUser, wire.NewDataPart(map[string]any{"action": "accept"}))
		m.TaskID = task.ID
		return m
	}

	task := approval()
	res, err := client.SendMessage(acme, &wire.SendMessageRequest{Message: accept(task)})
	done, ok := res.(*wire.Task)
	if err != nil || !ok || done.Status.State != wire.TaskStateCompleted {
		t.Fatalf("accept: %+v %v", res, err)
	}
	wantOutput("SendMessage", done.Artifacts)
	got, err := client.GetTask(acme, &wire.GetTaskRequest{ID: task.ID})
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	wantOutput("GetTask", got.Artifacts)
	list, err := client.ListTasks(acme, &wire.ListTasksRequest{ContextID: task.ContextID, IncludeArtifacts: true})
	if err != nil || len(list.Tasks) != 1 {
		t.Fatalf("list: %+v %v", list, err)
	}
	wantOutput("ListTasks", list.Tasks[0].Artifacts)

	var streamed []wire.Event
	for ev, err := range client.SendStreamingMessage(acme, &wire.SendMessageRequest{Message: accept(approval())}) {
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		streamed = append(streamed, ev)
	}
	if k := kinds(streamed); !strings.HasSuffix(k, "artifactUpdate statusUpdate:TASK_STATE_COMPLETED") {
		t.Fatalf("stream: %s, want the output just before the end", k)
	}
	upd := streamed[len(streamed)-2].(*wire.TaskArtifactUpdateEvent)
	wantOutput("stream", []*wire.Artifact{upd.Artifact})
	t.Logf("output: %s, seen in the answer, GetTask, ListTasks and the stream", upd.Artifact.ID)
}
