package a2apeers

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

// TestGoPeerScript: every scripted command, through a2a-go's stock
// client, over both bindings of the a2a-go peer.
func TestGoPeerScript(t *testing.T) {
	p := StartGo(t, Script{})
	for _, b := range []wire.TransportProtocol{wire.TransportProtocolJSONRPC, wire.TransportProtocolHTTPJSON} {
		t.Run(string(b), func(t *testing.T) { testScript(t, p, b) })
	}
}

// TestGoPeerCard: the card a resolver reads is the A2A 1.0 card the peer
// reports, with both interfaces at protocolVersion 1.0 and the tenant.
func TestGoPeerCard(t *testing.T) {
	p := StartGo(t, Script{Tenant: "acme"})
	if diff := cmp.Diff(DefaultSkills(), p.Card.Skills); diff != "" {
		t.Fatalf("skills (-want +got):\n%s", diff)
	}
	custom := []wire.AgentSkill{{ID: "summarise", Name: "Summarise", Description: "Summarises a text.", Tags: []string{"text"}}}
	if got := StartGo(t, Script{Skills: custom}).Card.Skills; !cmp.Equal(custom, got) {
		t.Fatalf("Script.Skills %v gave %v", custom, got)
	}
	got, err := agentcard.NewResolver(http.DefaultClient).Resolve(t.Context(), p.URL)
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	if diff := cmp.Diff(p.Card, got); diff != "" {
		t.Fatalf("resolved card differs from Peer.Card (-want +got):\n%s", diff)
	}
	var raw struct {
		SupportedInterfaces []map[string]string `json:"supportedInterfaces"`
		Skills              []map[string]any    `json:"skills"`
		Capabilities        map[string]bool     `json:"capabilities"`
	}
	if err := json.Unmarshal(p.CardJSON, &raw); err != nil {
		t.Fatal(err)
	}
	want := []map[string]string{
		{"url": p.URL + JSONRPCPath, "protocolBinding": "JSONRPC", "protocolVersion": "1.0", "tenant": "acme"},
		{"url": p.URL + RESTPath, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0", "tenant": "acme"},
	}
	if diff := cmp.Diff(want, raw.SupportedInterfaces); diff != "" {
		t.Fatalf("supportedInterfaces (-want +got):\n%s", diff)
	}
	if len(raw.Skills) != 1 || raw.Skills[0]["id"] != "scripted" || !raw.Capabilities["streaming"] {
		t.Fatalf("skills %v, capabilities %v: want the scripted skill and streaming", raw.Skills, raw.Capabilities)
	}
	if calls := p.Calls(); len(calls) != 0 {
		t.Fatalf("a card fetch is not a call, got %+v", calls)
	}
	if reqs := p.Requests(); len(reqs) != 1 || reqs[0].Binding != BindingCard {
		t.Fatalf("Requests = %+v, want the one card fetch", reqs)
	}
}

// TestGoPeerRecords: every call is recorded with the headers, tenant,
// method and ids a client assertion needs, on both bindings.
func TestGoPeerRecords(t *testing.T) {
	for _, b := range []wire.TransportProtocol{wire.TransportProtocolJSONRPC, wire.TransportProtocolHTTPJSON} {
		t.Run(string(b), func(t *testing.T) {
			p := StartGo(t, Script{Tenant: "acme", BearerToken: "s3cret"})
			c := newClient(t, p, b)
			ctx := a2aclient.AttachServiceParams(callCtx(t), a2aclient.ServiceParams{
				"Authorization":  {"Bearer s3cret"},
				"A2A-Extensions": {"https://example.com/ext/v1"},
			})
			req := sendText(Complete)
			task := sendTask(ctx, t, c, req)
			if _, err := c.GetTask(ctx, &wire.GetTaskRequest{ID: task.ID}); err != nil {
				t.Fatalf("GetTask: %v", err)
			}
			calls := p.Calls()
			if len(calls) != 2 {
				t.Fatalf("recorded %d calls, want 2: %+v", len(calls), calls)
			}
			type seen struct{ Binding, Method, Version, Authorization, Extensions, Tenant, MessageID, TaskID string }
			got := []seen{}
			for _, q := range calls {
				got = append(got, seen{q.Binding, q.Method, q.Version, q.Authorization, q.Extensions, q.Tenant, q.MessageID, q.TaskID})
				if len(q.Body) == 0 && q.HTTPMethod == http.MethodPost {
					t.Errorf("%s: body not recorded", q.Method)
				}
			}
			want := []seen{
				{string(b), "SendMessage", "1.0", "Bearer s3cret", "https://example.com/ext/v1", "acme", req.Message.ID, ""},
				{string(b), "GetTask", "1.0", "Bearer s3cret", "https://example.com/ext/v1", "acme", "", string(task.ID)},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("recorded calls (-want +got):\n%s", diff)
			}
		})
	}
}

// TestGoPeerRequiresBearer: with a BearerToken, a call without it is
// refused 401 and never reaches the agent.
func TestGoPeerRequiresBearer(t *testing.T) {
	p := StartGo(t, Script{BearerToken: "s3cret"})
	if len(p.Card.SecurityRequirements) != 1 || p.Card.SecuritySchemes["bearer"] == nil {
		t.Fatalf("card declares no bearer scheme: %+v", p.Card.SecuritySchemes)
	}
	for _, b := range []wire.TransportProtocol{wire.TransportProtocolJSONRPC, wire.TransportProtocolHTTPJSON} {
		t.Run(string(b), func(t *testing.T) {
			c := newClient(t, p, b)
			_, err := c.SendMessage(callCtx(t), sendText(Complete))
			if err == nil {
				t.Fatal("SendMessage without the token succeeded")
			}
			t.Logf("a2a-go's client reports: %v", err)
		})
	}
	res, body := post(t, p.URL+JSONRPCPath, `{"jsonrpc":"2.0","id":"r1","method":"GetTask","params":{"id":"x"}}`)
	want := `{"jsonrpc":"2.0","id":"r1","error":{"code":-31401,"message":"unauthenticated","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","domain":"a2a-protocol.org","reason":"UNAUTHENTICATED"}]}}`
	if res.StatusCode != http.StatusUnauthorized || body != want || res.Header.Get("WWW-Authenticate") == "" {
		t.Fatalf("got %d %q %s\nwant 401 with WWW-Authenticate and %s", res.StatusCode, res.Header.Get("WWW-Authenticate"), body, want)
	}
}

// TestGoPeerUnknownStateAndSubscribe: a subscriber to a live task sees
// the task, then the state no A2A version defines, then the cancel.
func TestGoPeerUnknownStateAndSubscribe(t *testing.T) {
	p := StartGo(t, Script{})
	c := newClient(t, p, wire.TransportProtocolJSONRPC)
	ctx := callCtx(t)
	var taskID wire.TaskID
	for e, err := range c.SendStreamingMessage(ctx, sendText(UnknownStateCommand)) {
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		taskID = e.TaskInfo().TaskID
		if s, ok := e.(*wire.TaskStatusUpdateEvent); ok && s.Status.State == UnknownState {
			break // the client walks away; the task stays
		}
	}
	got, err := c.GetTask(ctx, &wire.GetTaskRequest{ID: taskID})
	if err != nil || got.Status.State != UnknownState {
		t.Fatalf("GetTask = %v, %v; want state %s", got, err, UnknownState)
	}
	var lines []string
	for e, err := range c.SubscribeToTask(ctx, &wire.SubscribeToTaskRequest{ID: taskID}) {
		if err != nil {
			t.Fatalf("subscribe: %v", err)
		}
		lines = append(lines, eventLine(e))
		if len(lines) == 1 {
			if _, err := c.CancelTask(ctx, &wire.CancelTaskRequest{ID: taskID}); err != nil {
				t.Fatalf("CancelTask: %v", err)
			}
		}
	}
	if diff := cmp.Diff([]string{"task " + string(UnknownState), "status TASK_STATE_CANCELED"}, lines); diff != "" {
		t.Fatalf("subscription (-want +got):\n%s", diff)
	}
	wantSubscribeNotFound(ctx, t, c, taskID)
}

// wantSubscribeNotFound: a2a-go v2.4.0's server answers a subscription to
// a task with no live execution with TaskNotFound. Right after an
// interrupt or a cancel it may still be winding the execution down, and a
// subscription then sees the task; so this retries until the answer is
// TaskNotFound, failing at ctx's deadline.
func wantSubscribeNotFound(ctx context.Context, t *testing.T, c *a2aclient.Client, id wire.TaskID) {
	t.Helper()
	for {
		var err error
		for _, err = range c.SubscribeToTask(ctx, &wire.SubscribeToTaskRequest{ID: id}) {
			break
		}
		if errors.Is(err, wire.ErrTaskNotFound) {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("subscribe to task %s: %v, want TaskNotFound", id, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestGoPeerStopsHeldTasks: tasks still held when the test ends (slow,
// auth-required, unknown-state, cancel-races-complete) stop with the peer,
// leaving no goroutine behind.
func TestGoPeerStopsHeldTasks(t *testing.T) {
	before := goleak.IgnoreCurrent()
	t.Run("peer", func(t *testing.T) {
		p := StartGo(t, Script{})
		c := newClient(t, p, wire.TransportProtocolJSONRPC)
		for _, cmd := range []string{"slow:1h", AuthRequired, UnknownStateCommand, CancelRacesComplete} {
			startTask(callCtx(t), t, c, cmd)
		}
	})
	goleak.VerifyNone(t, before)
}

// TestGoPeerQuirks pins the stock a2a-go server behaviours the package
// documentation promises a client will meet (a2a-go v2.4.0).
func TestGoPeerQuirks(t *testing.T) {
	p := StartGo(t, Script{})
	c := newClient(t, p, wire.TransportProtocolJSONRPC)
	ctx := callCtx(t)

	working := startTask(ctx, t, c, "slow:1m")
	followUp := &wire.SendMessageRequest{Message: wire.NewMessageForTask(wire.MessageRoleUser, working, wire.NewTextPart("more"))}
	if _, err := c.SendMessage(ctx, followUp); !errors.Is(err, wire.ErrInternalError) {
		t.Fatalf("a message to a working task: %v, want -32603", err)
	}

	waiting := sendTask(ctx, t, c, sendText(AskInput))
	wantSubscribeNotFound(ctx, t, c, waiting.ID)

	res, body := postVersion(t, p.URL+JSONRPCPath, "0.1", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"`+string(waiting.ID)+`"}}`)
	if res.StatusCode != http.StatusOK || !strings.Contains(body, `"TASK_STATE_INPUT_REQUIRED"`) {
		t.Fatalf("A2A-Version 0.1: %d %s, want the task (a2a-go checks no version)", res.StatusCode, body)
	}
}
