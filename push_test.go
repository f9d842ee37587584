package wopinterop_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop"
	"github.com/wopinterop/wopinterop/egress"
	"github.com/wopinterop/wopinterop/push"
)

// TestPushWiring: with A2A.Push the host advertises
// pushNotifications and the dead-letter host-event type, serves the
// push-config rows, delivers pushes, and drains delivery on Close.
func TestPushWiring(t *testing.T) {
	pushes := make(chan string, 8)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		pushes <- r.Header.Get("Content-Type") + " " + r.Header.Get("Authorization") + " " + string(b)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(receiver.Close)
	guard, err := egress.NewGuard(egress.GuardOptions{AllowOrigins: []string{receiver.URL}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := validConfig(newStore(t))
	cfg.A2A.Push = &push.Options{Guard: guard}
	h := newHost(t, cfg)

	var a struct {
		Push bool `json:"pushNotifications"`
	}
	if err := json.Unmarshal(h.Records()["a2a"], &a); err != nil || !a.Push {
		t.Fatalf("a2a record %s", h.Records()["a2a"])
	}
	var he hostEventsRecord
	if err := json.Unmarshal(h.Records()["hostEvents"], &he); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(he.Types, func(x struct {
		Type     string `json:"type"`
		Delivery string `json:"delivery"`
	}) bool {
		return x.Type == push.DeadLetterEventType && x.Delivery == "durable"
	}) {
		t.Fatalf("hostEvents record %s does not list the dead-letter type", h.Records()["hostEvents"])
	}

	srv := server(t, h)
	card := send(t, http.MethodGet, srv.URL+wopinterop.DefaultCardPath, "", "")
	var c wire.AgentCard
	if err := json.Unmarshal(card.body, &c); err != nil || !c.Capabilities.PushNotifications {
		t.Fatalf("card capabilities %s", card.body)
	}
	rpc := srv.URL + wopinterop.DefaultA2APath
	started := send(t, http.MethodPost, rpc, acmeKey, sendApproval)
	var res struct {
		Result struct {
			Task wire.Task `json:"task"`
		} `json:"result"`
	}
	if err := json.Unmarshal(started.body, &res); err != nil || res.Result.Task.ID == "" {
		t.Fatalf("SendMessage: %s", started.body)
	}
	task := string(res.Result.Task.ID)
	created := send(t, http.MethodPost, rpc, acmeKey, `{"jsonrpc":"2.0","id":1,"method":"CreateTaskPushNotificationConfig","params":{"taskId":"`+task+`","id":"c1","url":"`+receiver.URL+`/hook","token":"tok-root"}}`)
	if !strings.Contains(string(created.body), `"result":{"taskId":"`+task+`","id":"c1","url":"`+receiver.URL+`/hook"}`) {
		t.Fatalf("create: %s", created.body)
	}
	refused := send(t, http.MethodPost, rpc, acmeKey, `{"jsonrpc":"2.0","id":2,"method":"CreateTaskPushNotificationConfig","params":{"taskId":"`+task+`","url":"https://169.254.169.254/"}}`)
	if !strings.Contains(string(refused.body), `"code":-32602`) || strings.Contains(string(refused.body), `"result"`) {
		t.Fatalf("metadata URL: %s", refused.body)
	}
	accept := `{"jsonrpc":"2.0","id":3,"method":"SendMessage","params":{"message":{"messageId":"m-acc","taskId":"` + task + `","role":"ROLE_USER","parts":[{"data":{"action":"accept"}}]}}}`
	send(t, http.MethodPost, rpc, acmeKey, accept)
	for _, want := range []string{"TASK_STATE_WORKING", `"artifactId":"openwop.output"`, "TASK_STATE_COMPLETED"} {
		select {
		case got := <-pushes:
			if !strings.HasPrefix(got, "application/a2a+json Bearer tok-root ") || !strings.Contains(got, want) {
				t.Fatalf("push %q, want %s", got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no %s push", want)
		}
	}
	if err := h.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}
