package hostapp

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/push"
)

func TestParsePushAllow(t *testing.T) {
	got, err := parsePushAllow(" http://127.0.0.1:9999 ,https://receiver.test.lan:8443,")
	if err != nil || strings.Join(got, "|") != "http://127.0.0.1:9999|https://receiver.test.lan:8443" {
		t.Fatalf("%q %v", got, err)
	}
	if got, err := parsePushAllow(""); err != nil || got != nil {
		t.Fatalf("empty: %q %v", got, err)
	}
	for _, bad := range []string{"127.0.0.1:9999", "http://127.0.0.1:9999/hook", "http://u@127.0.0.1:1", "ftp://127.0.0.1"} {
		if _, err := parsePushAllow(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"-push-allow", "127.0.0.1:9"}, &stdout, &stderr, nil); code != exitUsage || !strings.Contains(stderr.String(), "invalid -push-allow") {
		t.Fatalf("exit %d %q", code, stderr.String())
	}
}

// TestPushToAnAllowedLocalReceiver: the card advertises pushNotifications,
// a -push-allow origin on loopback receives the task's pushes, and a
// loopback URL outside the allowlist is refused at registration.
func TestPushToAnAllowedLocalReceiver(t *testing.T) {
	got := make(chan string, 8)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- r.Header.Get("Content-Type") + " " + r.Header.Get("Authorization") + " " + string(b)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(receiver.Close)
	h := newTestHost(t, func(c *config) { c.PushAllow = []string{receiver.URL} })
	task := rpcTask(t, h.rpc(acmeKey, "1.0", sendMessage(1, "push-1", "")))
	refused := h.rpc(acmeKey, "1.0", `{"jsonrpc":"2.0","id":2,"method":"CreateTaskPushNotificationConfig","params":{"taskId":"`+string(task.ID)+`","url":"http://127.0.0.1:1/hook"}}`)
	if !bytes.Contains(refused.Body, []byte(`"code":-32602`)) || bytes.Contains(refused.Body, []byte(`"result"`)) {
		t.Fatalf("a loopback URL outside -push-allow: %s", refused.Body)
	}
	created := h.rpc(acmeKey, "1.0", `{"jsonrpc":"2.0","id":3,"method":"CreateTaskPushNotificationConfig","params":{"taskId":"`+string(task.ID)+`","url":"`+receiver.URL+`/hook","token":"push-tok"}}`)
	if !bytes.Contains(created.Body, []byte(`"result"`)) || bytes.Contains(created.Body, []byte("push-tok")) {
		t.Fatalf("create: %s", created.Body)
	}
	h.rpc(acmeKey, "1.0", `{"jsonrpc":"2.0","id":4,"method":"SendMessage","params":{"message":{"messageId":"push-2","taskId":"`+
		string(task.ID)+`","role":"ROLE_USER","parts":[{"data":{"action":"accept"}}]}}}`)
	for _, want := range []string{"TASK_STATE_WORKING", `"artifactId":"openwop.output"`, "TASK_STATE_COMPLETED"} {
		select {
		case p := <-got:
			if !strings.HasPrefix(p, "application/a2a+json Bearer push-tok ") || !strings.Contains(p, want) {
				t.Fatalf("push %q, want %s", p, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no %s push", want)
		}
	}
	if strings.Contains(h.logs.String(), "push-tok") {
		t.Fatal("the push token reached the log")
	}
}

// countingOutbox counts the deliveries Put into a memory outbox.
type countingOutbox struct {
	*push.MemoryOutbox
	puts atomic.Int64
}

func (o *countingOutbox) Put(ctx context.Context, d push.Delivery) error {
	o.puts.Add(1)
	return o.MemoryOutbox.Put(ctx, d)
}

// TestPushStoresFromTheBackend: the push stores a backend opens
// (Opened.Push, shared by replicas) are the ones the A2A section uses —
// the registered config lands in its config store, the token in its
// vault, the pushes in its outbox — not in-memory stores of its own.
func TestPushStoresFromTheBackend(t *testing.T) {
	got := make(chan string, 8)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- string(b)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(receiver.Close)
	stores := &PushStores{Configs: push.NewMemoryConfigs(), Vault: push.NewMemoryVault(), Outbox: &countingOutbox{MemoryOutbox: push.NewMemoryOutbox()}}
	h := newTestHost(t, func(c *config) { c.PushAllow, c.Push = []string{receiver.URL}, stores })
	task := rpcTask(t, h.rpc(acmeKey, "1.0", sendMessage(1, "push-stores-1", "")))
	created := h.rpc(acmeKey, "1.0", `{"jsonrpc":"2.0","id":3,"method":"CreateTaskPushNotificationConfig","params":{"taskId":"`+string(task.ID)+`","url":"`+receiver.URL+`/hook","token":"push-tok"}}`)
	if !bytes.Contains(created.Body, []byte(`"result"`)) {
		t.Fatalf("create: %s", created.Body)
	}
	recs, err := stores.Configs.List(t.Context(), string(task.ID))
	if err != nil || len(recs) != 1 {
		t.Fatalf("the backend's config store holds %v (%v), want the registered config", recs, err)
	}
	secret, err := stores.Vault.Open(t.Context(), recs[0].SecretRef)
	if err != nil || secret.Token != "push-tok" {
		t.Fatalf("the backend's vault opens ref %q as a token of %d bytes (%v), want the registered token", recs[0].SecretRef, len(secret.Token), err)
	}
	h.rpc(acmeKey, "1.0", `{"jsonrpc":"2.0","id":4,"method":"SendMessage","params":{"message":{"messageId":"push-stores-2","taskId":"`+
		string(task.ID)+`","role":"ROLE_USER","parts":[{"data":{"action":"accept"}}]}}}`)
	select {
	case p := <-got:
		if !strings.Contains(p, "TASK_STATE_WORKING") {
			t.Fatalf("first push %q, want the working status", p)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no push")
	}
	if n := stores.Outbox.(*countingOutbox).puts.Load(); n == 0 {
		t.Fatal("the push was not queued in the backend's outbox")
	}
}
