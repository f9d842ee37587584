package a2a

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
)

// restPeer is a2a-go's REST transport pointed at the test host over real
// HTTP, with a2a-go's own card resolver in front of it.
type restPeer struct {
	env    *restEnv
	server *httptest.Server
	card   *wire.AgentCard
}

func newRESTPeer(t *testing.T) *restPeer {
	t.Helper()
	e := newRESTEnv(t)
	srv := httptest.NewServer(e.mux)
	t.Cleanup(srv.Close)
	// a2a-go's resolver sends no A2A-Version: it gets the preferred card.
	card, err := agentcard.NewResolver(srv.Client()).Resolve(t.Context(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return &restPeer{env: e, server: srv, card: card}
}

// transport is the REST transport of the card's HTTP+JSON interface,
// re-pointed from the public URL to the test server (same path).
func (p *restPeer) transport(t *testing.T) a2aclient.Transport {
	t.Helper()
	var iface *wire.AgentInterface
	for _, in := range p.card.SupportedInterfaces {
		if in.ProtocolBinding == wire.TransportProtocolHTTPJSON && in.ProtocolVersion == "1.0" {
			iface = in
		}
	}
	if iface == nil {
		t.Fatal("the card lists no HTTP+JSON 1.0 interface")
	}
	public, err := url.Parse(iface.URL)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(p.server.URL + public.Path)
	return a2aclient.NewRESTTransport(u, p.server.Client())
}

func peerParams(key string) a2aclient.ServiceParams {
	return a2aclient.ServiceParams{"A2A-Version": {"1.0"}, "Authorization": {"Bearer " + key}}
}

// a2a-go's REST client drives every route that is served, reads every
// answer, and recognises our errors by their reason (OpenWOP RFC 0211 §B).
func TestRESTWithA2AGoClient(t *testing.T) {
	p := newRESTPeer(t)
	tr := p.transport(t)
	ctx := t.Context()
	acme := peerParams("key-acme")

	res, err := tr.SendMessage(ctx, acme, &wire.SendMessageRequest{Message: wire.NewMessage(wire.MessageRoleUser, wire.NewTextPart("approve?"))})
	if err != nil {
		t.Fatal(err)
	}
	task, ok := res.(*wire.Task)
	if !ok || task.Status.State != wire.TaskStateInputRequired {
		t.Fatalf("SendMessage: %#v", res)
	}
	// a2a-go writes the bound id into the path as two segments.
	got, err := tr.GetTask(ctx, acme, &wire.GetTaskRequest{ID: task.ID})
	if err != nil || got.ID != task.ID {
		t.Fatalf("GetTask: %v %v", got, err)
	}
	list, err := tr.ListTasks(ctx, acme, &wire.ListTasksRequest{ContextID: task.ContextID, PageSize: 5, IncludeArtifacts: true,
		StatusTimestampAfter: new(restNow.Add(-time.Hour))})
	if err != nil || len(list.Tasks) != 1 || list.Tasks[0].ID != task.ID {
		t.Fatalf("ListTasks: %+v %v", list, err)
	}

	// Subscribe, then accept from another request: the subscriber sees
	// the task first and the stream ends after COMPLETED.
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
	first := <-events
	if ft, ok := first.(*wire.Task); !ok || ft.ID != task.ID {
		t.Fatalf("first subscribed event %#v", first)
	}
	reply := wire.NewMessageForTask(wire.MessageRoleUser, task, wire.NewDataPart(map[string]any{"action": "accept"}))
	reply.ContextID = ""
	if _, err := tr.SendMessage(ctx, acme, &wire.SendMessageRequest{Message: reply}); err != nil {
		t.Fatal(err)
	}
	var last wire.Event
	for ev := range events {
		last = ev
	}
	select {
	case err := <-subErr:
		t.Fatal(err)
	default:
	}
	if su, ok := last.(*wire.TaskStatusUpdateEvent); !ok || su.Status.State != wire.TaskStateCompleted {
		t.Fatalf("last subscribed event %#v", last)
	}

	// Streaming a new task: the task first, ending at the interrupt.
	var streamed []wire.Event
	for ev, err := range tr.SendStreamingMessage(ctx, acme, &wire.SendMessageRequest{Message: wire.NewMessage(wire.MessageRoleUser, wire.NewTextPart("stream"))}) {
		if err != nil {
			t.Fatal(err)
		}
		streamed = append(streamed, ev)
	}
	if len(streamed) < 2 {
		t.Fatalf("streamed %d events", len(streamed))
	}
	second := streamed[0].(*wire.Task)
	canceled, err := tr.CancelTask(ctx, acme, &wire.CancelTaskRequest{ID: second.ID})
	if err != nil || (canceled.Status.State != wire.TaskStateWorking && canceled.Status.State != wire.TaskStateCanceled) {
		t.Fatalf("CancelTask: %v %v", canceled, err)
	}

	// Errors arrive as a2a-go's sentinels.
	cases := []struct {
		name string
		err  error
		want error
	}{
		{"unknown task", func() error {
			_, err := tr.GetTask(ctx, acme, &wire.GetTaskRequest{ID: "acme/ZZZZZZZZZZZZZZZZZZZZZZZZZZ"})
			return err
		}(), wire.ErrTaskNotFound},
		{"foreign task", func() error {
			_, err := tr.GetTask(ctx, peerParams("key-globex"), &wire.GetTaskRequest{ID: task.ID})
			return err
		}(), wire.ErrTaskNotFound},
		{"terminal cancel", func() error {
			_, err := tr.CancelTask(ctx, acme, &wire.CancelTaskRequest{ID: task.ID})
			return err
		}(), wire.ErrTaskNotCancelable},
		{"message to terminal task", func() error {
			_, err := tr.SendMessage(ctx, acme, &wire.SendMessageRequest{Message: wire.NewMessageForTask(wire.MessageRoleUser, task, wire.NewTextPart("more"))})
			return err
		}(), wire.ErrUnsupportedOperation},
		{"push off", func() error {
			_, err := tr.ListTaskPushConfigs(ctx, acme, &wire.ListTaskPushConfigRequest{TaskID: task.ID})
			return err
		}(), wire.ErrPushNotificationNotSupported},
		{"extended card not configured", func() error {
			_, err := tr.GetExtendedAgentCard(ctx, acme, &wire.GetExtendedAgentCardRequest{})
			return err
		}(), wire.ErrExtendedCardNotConfigured},
		{"version", func() error {
			_, err := tr.GetTask(ctx, a2aclient.ServiceParams{"A2A-Version": {"9.9"}, "Authorization": {"Bearer key-acme"}}, &wire.GetTaskRequest{ID: task.ID})
			return err
		}(), wire.ErrVersionNotSupported},
		{"unauthenticated", func() error {
			_, err := tr.GetTask(ctx, a2aclient.ServiceParams{"A2A-Version": {"1.0"}}, &wire.GetTaskRequest{ID: task.ID})
			return err
		}(), wire.ErrUnauthenticated},
	}
	for _, tc := range cases {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, tc.err, tc.want)
		}
	}

	// A per-agent card through the tenant path segment.
	r := p.env.routing.Derive("agent-ada")
	card, err := tr.GetExtendedAgentCard(ctx, acme, &wire.GetExtendedAgentCardRequest{Tenant: r})
	if err != nil || card.Name != "Ada" || card.SupportedInterfaces[0].Tenant != r {
		t.Fatalf("per-agent card: %+v %v", card, err)
	}
}

// A refusal before a stream's first event is a plain non-200 status, which
// a2a-go's client reads as the error (not as a broken stream).
func TestRESTStreamRefusalIsPlain(t *testing.T) {
	p := newRESTPeer(t)
	tr := p.transport(t)
	for _, err := range tr.SubscribeToTask(t.Context(), peerParams("key-acme"), &wire.SubscribeToTaskRequest{ID: "acme/ZZZZZZZZZZZZZZZZZZZZZZZZZZ"}) {
		if !errors.Is(err, wire.ErrTaskNotFound) {
			t.Fatalf("%v", err)
		}
		return
	}
	t.Fatal("no error")
}

var _ http.Handler = (*restHandler)(nil)
