package a2apeers

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/google/go-cmp/cmp"
)

// TestNodePeerScript: every scripted command, through a2a-go's stock
// client, against the @a2a-js/sdk server.
func TestNodePeerScript(t *testing.T) {
	testScript(t, StartNode(t, Script{}), wire.TransportProtocolJSONRPC)
}

// TestNodePeerCard: the SDK serves an A2A 1.0 card with one JSON-RPC
// interface at protocolVersion 1.0, naming the recording proxy, and the
// Script's skills.
func TestNodePeerCard(t *testing.T) {
	skills := []wire.AgentSkill{
		{ID: "summarise", Name: "Summarise", Description: "Summarises a text.", Tags: []string{"text"}},
		{ID: "translate", Name: "Translate", Description: "Translates a text.", Tags: []string{"text"}, InputModes: []string{"text/plain"}},
	}
	p := StartNode(t, Script{Tenant: "acme", Skills: skills})
	want := []*wire.AgentInterface{{URL: p.URL + JSONRPCPath, ProtocolBinding: wire.TransportProtocolJSONRPC, ProtocolVersion: "1.0", Tenant: "acme"}}
	if diff := cmp.Diff(want, p.Card.SupportedInterfaces); diff != "" {
		t.Fatalf("supportedInterfaces (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(skills, p.Card.Skills); diff != "" || !p.Card.Capabilities.Streaming {
		t.Fatalf("skills (-want +got):\n%s\nstreaming %v", diff, p.Card.Capabilities.Streaming)
	}
	res, body := get(t, p.CardURL)
	if res.StatusCode != http.StatusOK || body != string(p.CardJSON) {
		t.Fatalf("card through the proxy: %d %s\nwant %s", res.StatusCode, body, p.CardJSON)
	}
}

// TestNodePeerBearerCard documents an interop gap between the SDKs: the
// security requirement @a2a-js/sdk writes (a StringList object) is not
// what a2a-go v2.4.0 decodes (an array), so Peer.Card is nil, and the SDK
// refuses a call without the token.
func TestNodePeerBearerCard(t *testing.T) {
	p := StartNode(t, Script{BearerToken: "s3cret"})
	if p.Card != nil {
		t.Fatalf("a2a-go decoded the SDK's card: the gap is fixed; make Card non-nil in the docs")
	}
	if !strings.Contains(string(p.CardJSON), `"securityRequirements":[{"schemes":{"bearer":{}}}]`) {
		t.Fatalf("card %s: want the SDK's StringList security requirement", p.CardJSON)
	}
	res, body := post(t, p.URL+JSONRPCPath, `{"jsonrpc":"2.0","id":7,"method":"GetTask","params":{"id":"x"}}`)
	want := `{"jsonrpc":"2.0","id":7,"error":{"code":-31401,"message":"unauthenticated","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"UNAUTHENTICATED","domain":"a2a-protocol.org"}]}}`
	if res.StatusCode != http.StatusUnauthorized || body != want {
		t.Fatalf("got %d %s\nwant 401 %s", res.StatusCode, body, want)
	}
}

// TestNodePeerRecords: the proxy records what the client sent, and the
// SDK answers through it.
func TestNodePeerRecords(t *testing.T) {
	p := StartNode(t, Script{Tenant: "acme"})
	c := newClient(t, p, wire.TransportProtocolJSONRPC)
	ctx := a2aclient.AttachServiceParams(callCtx(t), a2aclient.ServiceParams{"Authorization": {"Bearer tok"}})
	req := sendText(Complete)
	task := sendTask(ctx, t, c, req)
	calls := p.Calls()
	if len(calls) != 1 {
		t.Fatalf("recorded %d calls, want 1: %+v", len(calls), calls)
	}
	q := calls[0]
	got := []string{q.Binding, q.Method, q.Version, q.Authorization, q.Tenant, q.MessageID}
	want := []string{BindingJSONRPC, "SendMessage", "1.0", "Bearer tok", "acme", req.Message.ID}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("recorded call (-want +got):\n%s", diff)
	}
	wantState(t, task, wire.TaskStateCompleted, "")
}

// TestNodePeerChecksVersion: unlike a2a-go's server, the SDK refuses a
// version its card does not list with -32009 (A2A 1.0 §3.6.2), and an
// absent A2A-Version means 0.3. Its ErrorInfo carries no
// supportedVersions.
func TestNodePeerChecksVersion(t *testing.T) {
	p := StartNode(t, Script{})
	res, body := postVersion(t, p.URL+JSONRPCPath, "", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}`)
	var got struct {
		Error struct {
			Code int              `json:"code"`
			Data []map[string]any `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("got %d %s", res.StatusCode, body)
	}
	wantData := []map[string]any{{"@type": ErrorInfoType, "reason": "VERSION_NOT_SUPPORTED", "domain": "a2a-protocol.org"}}
	if got.Error.Code != -32009 || !cmp.Equal(wantData, got.Error.Data) {
		t.Fatalf("no A2A-Version: %s, want -32009 VERSION_NOT_SUPPORTED", body)
	}
}

// TestNodePeerUnknownState: the SDK keeps task states as an enum, so the
// unknown-state command reaches the wire as "UNRECOGNIZED"; a subscriber
// to the live task then sees the cancel.
func TestNodePeerUnknownState(t *testing.T) {
	p := StartNode(t, Script{})
	c := newClient(t, p, wire.TransportProtocolJSONRPC)
	ctx := callCtx(t)
	var lines []string
	var taskID wire.TaskID
	for e, err := range c.SendStreamingMessage(ctx, sendText(UnknownStateCommand)) {
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		taskID = e.TaskInfo().TaskID
		lines = append(lines, eventLine(e))
		if len(lines) == 3 {
			break
		}
	}
	want := []string{"task TASK_STATE_SUBMITTED", "status TASK_STATE_WORKING", "status UNRECOGNIZED"}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Fatalf("stream (-want +got):\n%s", diff)
	}
	lines = nil
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
	if diff := cmp.Diff([]string{"task UNRECOGNIZED", "status TASK_STATE_CANCELED"}, lines); diff != "" {
		t.Fatalf("subscription (-want +got):\n%s", diff)
	}
}
