package pushservice

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"

	"github.com/wopinterop/wopinterop/egress"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/push"
)

// Secrets the service tests register; none may ever show up outside the
// Authorization header of a push.
const (
	secretCred  = "cred-7f3a9c1e-do-not-leak"
	secretToken = "tok-51b2d8e0-do-not-leak"
)

func TestRegisterRefusesBadSpecs(t *testing.T) {
	e := newPushEnv(t)
	run := e.suspended(t, e.alice, 0)
	long := strings.Repeat("x", maxSecretLen+1)
	cases := []struct {
		name  string
		spec  Spec
		field string
	}{
		{"private url", Spec{URL: "https://10.0.0.1/hook"}, "url"},
		{"http url", Spec{URL: "http://hooks.partner.net/hook"}, "url"},
		{"id with a slash", Spec{ID: "acme/1", URL: "https://hooks.partner.net/"}, "id"},
		{"id too long", Spec{ID: strings.Repeat("a", 65), URL: "https://hooks.partner.net/"}, "id"},
		{"scheme with a space", Spec{Scheme: "Bearer x", Credentials: "c", URL: "https://hooks.partner.net/"}, "authentication.scheme"},
		{"credentials without scheme", Spec{Credentials: "c", URL: "https://hooks.partner.net/"}, "authentication.scheme"},
		{"credentials with CRLF", Spec{Scheme: "Bearer", Credentials: "c\r\nX-Evil: 1", URL: "https://hooks.partner.net/"}, "authentication.credentials"},
		{"credentials too long", Spec{Scheme: "Bearer", Credentials: long, URL: "https://hooks.partner.net/"}, "authentication.credentials"},
		{"token with LF", Spec{Token: "t\nu", URL: "https://hooks.partner.net/"}, "token"},
		{"token with NUL", Spec{Token: "t\x00", URL: "https://hooks.partner.net/"}, "token"},
	}
	e.resolver.set("hooks.partner.net", "93.184.216.34")
	for _, c := range cases {
		_, err := e.svc.Register(context.Background(), e.alice, &run, c.spec)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%s: %v, want a FieldError on %q", c.name, err, c.field)
			continue
		}
		if c.field == "url" && !errors.Is(err, egress.ErrRefused) {
			t.Errorf("%s: a url refusal must wrap the guard's", c.name)
		}
		mustNotContain(t, c.name+" error", err.Error(), "c\r\n", "10.0.0.1", "partner.net")
	}
	if n := len(e.mustList(t, run.ID)); n != 0 {
		t.Fatalf("%d configs after refusals, want none", n)
	}
	if e.vault.Len() != 0 {
		t.Fatal("a refused registration kept a secret")
	}
}

func (e *pushEnv) mustList(t testing.TB, taskID string) []Config {
	t.Helper()
	cfgs, err := e.svc.List(context.Background(), taskID)
	if err != nil {
		t.Fatal(err)
	}
	return cfgs
}

func TestConfigOperationsNeverShowSecrets(t *testing.T) {
	rc := newReceiver(t, nil)
	e := newPushEnv(t, withAllow(rc.origin()))
	run := e.suspended(t, e.alice, 0)
	a := e.register(t, e.alice, run, Spec{URL: rc.origin() + "/a", Scheme: "Custom", Credentials: secretCred})
	b := e.register(t, e.alice, run, Spec{ID: "client-id-2", URL: rc.origin() + "/b", Token: secretToken})
	if !strings.HasPrefix(a.ID, "pc-") || b.ID != "client-id-2" {
		t.Fatalf("ids %q %q", a.ID, b.ID)
	}
	got, err := e.svc.Get(context.Background(), run.ID, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{TaskID: run.ID, ID: a.ID, URL: rc.origin() + "/a", Scheme: "Custom"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("Get (-want +got):\n%s", diff)
	}
	list := e.mustList(t, run.ID)
	if len(list) != 2 || list[0].ID != a.ID || list[1].ID != b.ID {
		t.Fatalf("List %+v, want both in registration order", list)
	}
	dump := fmt.Sprintf("%v %+v %#v %v", a, got, list, b)
	raw, _ := json.Marshal(list)
	mustNotContain(t, "configs", dump+string(raw), secretCred, secretToken)
	// The record holds a reference only.
	rec, _ := e.configs.Get(context.Background(), run.ID, a.ID)
	mustNotContain(t, "record", fmt.Sprintf("%#v", rec), secretCred)
	if rec.SecretRef == "" || e.vault.Len() != 2 {
		t.Fatalf("secret ref %q, vault %d: want both secrets sealed", rec.SecretRef, e.vault.Len())
	}
}

func TestMintedConfigIDsEncodeNothing(t *testing.T) {
	e := newPushEnv(t)
	e.resolver.set("hooks.partner.net", "93.184.216.34")
	run := e.suspended(t, e.alice, 0)
	seen := map[string]bool{}
	for range 5 {
		cfg := e.register(t, e.alice, run, Spec{URL: "https://hooks.partner.net/"})
		if seen[cfg.ID] {
			t.Fatalf("id %q minted twice", cfg.ID)
		}
		seen[cfg.ID] = true
		low := strings.ToLower(cfg.ID)
		for _, part := range []string{"acme", "alice", strings.ToLower(run.ID), "user"} {
			if strings.Contains(low, part) {
				t.Fatalf("config id %q contains %q", cfg.ID, part)
			}
		}
	}
}

func TestDeleteIsIdempotentAndDiscardsTheSecret(t *testing.T) {
	e := newPushEnv(t)
	e.resolver.set("hooks.partner.net", "93.184.216.34")
	run := e.suspended(t, e.alice, 0)
	cfg := e.register(t, e.alice, run, Spec{URL: "https://hooks.partner.net/", Token: secretToken})
	for i := range 2 {
		if err := e.svc.Delete(context.Background(), run.ID, cfg.ID); err != nil {
			t.Fatalf("delete %d: %v", i+1, err)
		}
	}
	if _, err := e.svc.Get(context.Background(), run.ID, cfg.ID); !errors.Is(err, push.ErrConfigNotFound) || !errors.Is(err, interop.ErrNotFound) {
		t.Fatalf("Get after delete: %v", err)
	}
	if e.vault.Len() != 0 {
		t.Fatal("the secret outlived its config")
	}
	// Another task's config id answers exactly like an unknown one.
	other := e.suspended(t, e.alice, 0)
	kept := e.register(t, e.alice, other, Spec{URL: "https://hooks.partner.net/"})
	if _, err := e.svc.Get(context.Background(), run.ID, kept.ID); !errors.Is(err, push.ErrConfigNotFound) {
		t.Fatalf("a config of another task: %v", err)
	}
	if err := e.svc.Delete(context.Background(), run.ID, kept.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Get(context.Background(), other.ID, kept.ID); err != nil {
		t.Fatalf("deleting through another task removed the config: %v", err)
	}
}

func TestReplacingAConfigDiscardsItsSecret(t *testing.T) {
	e := newPushEnv(t)
	e.resolver.set("hooks.partner.net", "93.184.216.34")
	run := e.suspended(t, e.alice, 0)
	e.register(t, e.alice, run, Spec{ID: "one", URL: "https://hooks.partner.net/a", Token: "first"})
	e.register(t, e.alice, run, Spec{ID: "one", URL: "https://hooks.partner.net/b", Token: "second"})
	list := e.mustList(t, run.ID)
	if len(list) != 1 || list[0].URL != "https://hooks.partner.net/b" {
		t.Fatalf("List %+v, want the replacement only", list)
	}
	if e.vault.Len() != 1 {
		t.Fatalf("vault holds %d secrets, want only the replacement's", e.vault.Len())
	}
}

func TestTooManyConfigs(t *testing.T) {
	e := newPushEnv(t)
	e.resolver.set("hooks.partner.net", "93.184.216.34")
	run := e.suspended(t, e.alice, 0)
	for range 10 {
		e.register(t, e.alice, run, Spec{URL: "https://hooks.partner.net/"})
	}
	if _, err := e.svc.Register(context.Background(), e.alice, &run, Spec{URL: "https://hooks.partner.net/", Token: "t"}); !errors.Is(err, push.ErrTooManyConfigs) {
		t.Fatalf("%v, want ErrTooManyConfigs", err)
	}
	if e.vault.Len() != 0 {
		t.Fatal("a refused registration kept its secret")
	}
}

// TestDeliveryFormat: a POST with the A2A content type, the registered
// authorization, no OpenWOP signature, one StreamResponse member per body,
// in run order, and the secret discarded after the final push.
func TestDeliveryFormat(t *testing.T) {
	cases := []struct {
		name string
		spec Spec
		auth string
	}{
		{"scheme and credentials", Spec{Scheme: "Custom", Credentials: secretCred, Token: secretToken}, "Custom " + secretCred},
		{"token only", Spec{Token: secretToken}, "Bearer " + secretToken},
		{"scheme without credentials", Spec{Scheme: "Basic", Token: secretToken}, "Bearer " + secretToken},
		{"nothing", Spec{}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rc := newReceiver(t, nil)
			e := newPushEnv(t, withAllow(rc.origin()))
			run := e.suspended(t, e.alice, 2)
			c.spec.URL = rc.origin() + "/hook"
			e.register(t, e.alice, run, c.spec)
			e.accept(t, e.alice, run)
			var kinds []string
			for {
				got := rc.next(t)
				if got.method != http.MethodPost || got.path != "/hook" {
					t.Fatalf("%s %s", got.method, got.path)
				}
				if ct := got.header.Get("Content-Type"); ct != contentType {
					t.Fatalf("Content-Type %q", ct)
				}
				if a := got.header.Values("Authorization"); (c.auth == "" && len(a) != 0) || (c.auth != "" && (len(a) != 1 || a[0] != c.auth)) {
					t.Fatalf("Authorization %q, want %q", a, c.auth)
				}
				for name := range got.header {
					if strings.Contains(strings.ToLower(name), "signature") || strings.Contains(strings.ToLower(name), "openwop") {
						t.Fatalf("header %s: pushes carry no OpenWOP signature", name)
					}
				}
				var members map[string]json.RawMessage
				if err := json.Unmarshal(got.body, &members); err != nil || len(members) != 1 {
					t.Fatalf("body %s: want exactly one StreamResponse member", got.body)
				}
				for k := range members {
					kinds = append(kinds, k)
				}
				if statusOf(t, got.body) == wire.TaskStateCompleted {
					break
				}
			}
			want := []string{"statusUpdate", "artifactUpdate", "artifactUpdate", "statusUpdate"}
			if diff := cmp.Diff(want, kinds); diff != "" {
				t.Fatalf("push order (-want +got):\n%s", diff)
			}
			waitFor(t, "the secret discarded after the final push", func() bool { return e.vault.Len() == 0 })
			waitFor(t, "the config done", func() bool {
				rec, err := e.configs.Get(context.Background(), run.ID, e.mustList(t, run.ID)[0].ID)
				return err == nil && rec.Done && rec.SecretRef == ""
			})
		})
	}
}

// waitFor polls cond (state reached by another goroutine) for up to 10s.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestRedirectIsAFailedDelivery(t *testing.T) {
	target := newReceiver(t, nil)
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.origin()+"/elsewhere", http.StatusTemporaryRedirect)
	})
	e := newPushEnv(t, withAllow(rc.origin(), target.origin()))
	run := e.suspended(t, e.alice, 0)
	cfg := e.register(t, e.alice, run, Spec{URL: rc.origin() + "/hook", Token: secretToken})
	e.accept(t, e.alice, run)
	// Two pushes (WORKING, COMPLETED), three attempts each, none followed.
	for range 6 {
		rc.next(t)
	}
	evs := e.events.wait(t, 2)
	for _, se := range evs {
		var p deadLetterPayload
		if err := json.Unmarshal(se.ev.Payload, &p); err != nil {
			t.Fatal(err)
		}
		if se.tenant != "acme" || se.ev.Type != push.DeadLetterEventType || se.ev.Delivery != interop.DeliveryDurable ||
			p != (deadLetterPayload{TaskID: run.ID, ConfigID: cfg.ID, Attempts: 3, LastStatus: "3xx"}) {
			t.Fatalf("dead letter %s %+v %+v", se.tenant, se.ev, p)
		}
	}
	target.none(t, 50*time.Millisecond)
	rc.none(t, 50*time.Millisecond)
}

func TestDeleteStopsDelivery(t *testing.T) {
	release := make(chan struct{})
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		<-release
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	e := newPushEnv(t, withAllow(rc.origin()), withRetry(push.RetryPolicy{MaxAttempts: 50, Backoff: push.BackoffFixed, Delay: 20 * time.Millisecond, AttemptTimeout: 5 * time.Second}))
	run := e.suspended(t, e.alice, 3)
	cfg := e.register(t, e.alice, run, Spec{URL: rc.origin(), Token: secretToken})
	e.accept(t, e.alice, run)
	rc.next(t) // the first attempt is in flight
	if err := e.svc.Delete(context.Background(), run.ID, cfg.ID); err != nil {
		t.Fatal(err)
	}
	close(release)
	rc.none(t, 200*time.Millisecond)
	waitFor(t, "the outbox drained", func() bool { return e.outbox.Len() == 0 })
	if n := len(e.events.all()); n != 0 {
		t.Fatalf("%d dead letters: a deleted config's pushes are dropped, not dead-lettered", n)
	}
	if e.vault.Len() != 0 {
		t.Fatal("the secret outlived the delete")
	}
}

// flakyListener drops every connection while down is set: a receiver
// that is down, on the same address it comes back on.
type flakyListener struct {
	net.Listener
	down atomic.Bool
}

func (l *flakyListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil || !l.down.Load() {
			return c, err
		}
		_ = c.Close()
	}
}

// TestReceiverDownThenUp: nothing is lost and nothing reordered while the
// receiver is away.
func TestReceiverDownThenUp(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := &flakyListener{Listener: raw}
	ln.down.Store(true)
	rc := &receiver{reqs: make(chan received, 64)}
	srv := &http.Server{Handler: http.HandlerFunc(rc.serve)}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	origin := "http://" + raw.Addr().String()
	e := newPushEnv(t, withAllow(origin), withRetry(push.RetryPolicy{MaxAttempts: 500, Backoff: push.BackoffFixed, Delay: 5 * time.Millisecond, AttemptTimeout: 2 * time.Second}))
	const chunks = 8
	run := e.suspended(t, e.alice, chunks)
	e.register(t, e.alice, run, Spec{URL: origin + "/hook"})
	e.accept(t, e.alice, run)
	waitFor(t, "failed attempts", func() bool { return strings.Count(e.logs.String(), `"class":"network"`) >= 3 })
	ln.down.Store(false)

	var got []string
	for {
		body := rc.next(t).body
		var sr wire.StreamResponse
		if err := json.Unmarshal(body, &sr); err != nil {
			t.Fatal(err)
		}
		switch ev := sr.Event.(type) {
		case *wire.TaskStatusUpdateEvent:
			got = append(got, string(ev.Status.State))
		case *wire.TaskArtifactUpdateEvent:
			got = append(got, fmt.Sprint(ev.Artifact.Parts[0].Content))
		}
		if len(got) == chunks+2 {
			break
		}
	}
	want := []string{string(wire.TaskStateWorking)}
	for i := range chunks {
		want = append(want, fmt.Sprintf("chunk %d", i))
	}
	want = append(want, string(wire.TaskStateCompleted))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("pushes after the receiver came back (-want +got):\n%s", diff)
	}
	if n := len(e.events.all()); n != 0 {
		t.Fatalf("%d dead letters", n)
	}
}

// TestConcurrencyBoundKeepsOtherTasksWaiting: with one attempt in flight
// allowed, a second task's push waits for the first task's attempt.
func TestConcurrencyBoundKeepsOtherTasksWaiting(t *testing.T) {
	release := make(chan struct{})
	var first atomic.Bool
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		if first.CompareAndSwap(false, true) {
			<-release
		}
		w.WriteHeader(http.StatusNoContent)
	})
	e := newPushEnv(t, withAllow(rc.origin()), func(c *envConfig) { c.opts.Concurrency = 1 })
	a, b := e.suspended(t, e.alice, 0), e.suspended(t, e.alice, 0)
	e.register(t, e.alice, a, Spec{URL: rc.origin() + "/a"})
	e.register(t, e.alice, b, Spec{URL: rc.origin() + "/b"})
	e.accept(t, e.alice, a)
	if got := rc.next(t); got.path != "/a" {
		t.Fatalf("first push to %s", got.path)
	}
	e.accept(t, e.alice, b)
	rc.none(t, 100*time.Millisecond) // the only slot is held by task a
	close(release)
	paths := map[string]int{}
	for range 3 {
		paths[rc.next(t).path]++
	}
	if paths["/a"] != 1 || paths["/b"] != 2 {
		t.Fatalf("pushes after the release: %v", paths)
	}
}

func TestSlowReceiverTimesOutThenRetries(t *testing.T) {
	var calls atomic.Int32
	slow := make(chan struct{})
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			select {
			case <-slow:
			case <-r.Context().Done():
			}
		}
		w.WriteHeader(http.StatusNoContent)
	})
	t.Cleanup(func() { close(slow) })
	e := newPushEnv(t, withAllow(rc.origin()), withRetry(push.RetryPolicy{MaxAttempts: 3, Backoff: push.BackoffNone, AttemptTimeout: 100 * time.Millisecond}))
	run := e.suspended(t, e.alice, 0)
	e.register(t, e.alice, run, Spec{URL: rc.origin()})
	e.accept(t, e.alice, run)
	first, second := rc.next(t), rc.next(t)
	if !bytesEqual(first.body, second.body) || statusOf(t, first.body) != wire.TaskStateWorking {
		t.Fatalf("the retry is not the same push: %s / %s", first.body, second.body)
	}
	if third := rc.next(t); statusOf(t, third.body) != wire.TaskStateCompleted {
		t.Fatalf("next push %s", third.body)
	}
	if !strings.Contains(e.logs.String(), `"class":"timeout"`) {
		t.Fatal("the slow attempt was not reported as a timeout")
	}
}

func bytesEqual(a, b []byte) bool { return string(a) == string(b) }

// TestDNSRebindingRefusedAtDelivery: public when registered, private when
// delivered — refused, nothing dialled.
func TestDNSRebindingRefusedAtDelivery(t *testing.T) {
	rc := newReceiver(t, nil)
	e := newPushEnv(t)
	e.resolver.set("rebind.partner.net", "93.184.216.34")
	run := e.suspended(t, e.alice, 0)
	url := "https://rebind.partner.net:" + rc.port() + "/hook"
	cfg := e.register(t, e.alice, run, Spec{URL: url, Token: secretToken})
	e.resolver.set("rebind.partner.net", "127.0.0.1")
	e.accept(t, e.alice, run)
	evs := e.events.wait(t, 2)
	var p deadLetterPayload
	if err := json.Unmarshal(evs[0].ev.Payload, &p); err != nil {
		t.Fatal(err)
	}
	if p != (deadLetterPayload{TaskID: run.ID, ConfigID: cfg.ID, Attempts: 3, LastStatus: "refused"}) {
		t.Fatalf("dead letter %+v", p)
	}
	rc.none(t, 20*time.Millisecond)
	if got := e.dials.dialled(); len(got) != 0 {
		t.Fatalf("dialled %v", got)
	}
	mustNotContain(t, "dead letter", string(evs[0].ev.Payload)+string(evs[1].ev.Payload), "rebind", "93.184", "127.0.0.1", secretToken)
}

// TestStoredBadURLsRefusedAtDelivery: a record that never passed
// registration (a store written by other code) is refused at delivery.
func TestStoredBadURLsRefusedAtDelivery(t *testing.T) {
	rc := newReceiver(t, nil)
	e := newPushEnv(t, withAllow(rc.origin()), withRetry(push.RetryPolicy{MaxAttempts: 1}))
	run := e.suspended(t, e.alice, 0)
	bad := []string{"http://127.0.0.1:9/", "https://169.254.169.254/", "https://[::ffff:10.0.0.1]/", "https://0x7f.1/", "https://localhost/"}
	for i, u := range bad {
		if _, _, err := e.configs.Put(context.Background(), push.Record{TaskID: run.ID, ID: fmt.Sprint("bad-", i), URL: u, Subject: e.alice, Tenant: "acme", After: run.LastSequence}, 0); err != nil {
			t.Fatal(err)
		}
	}
	e.register(t, e.alice, run, Spec{ID: "ok", URL: rc.origin()}) // starts the watch
	e.accept(t, e.alice, run)
	evs := e.events.wait(t, 2*len(bad))
	refusedByConfig := map[string]int{}
	for _, se := range evs {
		var p deadLetterPayload
		_ = json.Unmarshal(se.ev.Payload, &p)
		if p.LastStatus == "refused" {
			refusedByConfig[p.ConfigID]++
		}
	}
	for i := range bad {
		if refusedByConfig[fmt.Sprint("bad-", i)] != 2 {
			t.Errorf("%q: %d refused pushes, want 2", bad[i], refusedByConfig[fmt.Sprint("bad-", i)])
		}
	}
}

// TestOnlyEventsAfterRegistrationArePushed: history already in the log
// (a replay fork's re-emitted history included) is never pushed, and a
// config belongs to its task alone (OpenWOP RFC 0214 §D).
func TestOnlyEventsAfterRegistrationArePushed(t *testing.T) {
	rc := newReceiver(t, nil)
	e := newPushEnv(t, withAllow(rc.origin()))
	run := e.suspended(t, e.alice, 1) // run.started, node.suspended are history
	other := e.suspended(t, e.alice, 1)
	e.register(t, e.alice, run, Spec{URL: rc.origin()})
	e.accept(t, e.alice, other) // another task's events reach nobody
	waitFor(t, "the other run to finish", func() bool {
		r, err := e.store.GetRun(context.Background(), e.alice, other.ID)
		return err == nil && r.Status.Terminal()
	})
	rc.none(t, 50*time.Millisecond)
	e.accept(t, e.alice, run)
	first := rc.next(t)
	if statusOf(t, first.body) != wire.TaskStateWorking {
		t.Fatalf("first push %s, want the WORKING that followed registration", first.body)
	}
	var sr wire.StreamResponse
	_ = json.Unmarshal(first.body, &sr)
	if u := sr.Event.(*wire.TaskStatusUpdateEvent); string(u.TaskID) != run.ID {
		t.Fatalf("task %s", u.TaskID)
	}
}

func TestRegisterOnATerminalRunKeepsNoSecret(t *testing.T) {
	e := newPushEnv(t)
	e.resolver.set("hooks.partner.net", "93.184.216.34")
	run, _, err := e.store.CreateRun(context.Background(), e.alice, interop.CreateRunRequest{WorkflowID: memstore.FixtureNoop, Inputs: json.RawMessage(`{}`), Transport: interop.TransportA2A})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the run to complete", func() bool {
		run, err = e.store.GetRun(context.Background(), e.alice, run.ID)
		return err == nil && run.Status.Terminal()
	})
	cfg := e.register(t, e.alice, run, Spec{URL: "https://hooks.partner.net/", Token: secretToken})
	if e.vault.Len() != 0 {
		t.Fatal("a config of a finished task keeps its secret")
	}
	if _, err := e.svc.Get(context.Background(), run.ID, cfg.ID); err != nil {
		t.Fatal(err)
	}
}

// TestCloseDrainsAndStartResumes: Close drains the queue until its
// deadline; what is left stays in the outbox and a new service over the
// same stores delivers it.
func TestCloseDrainsAndStartResumes(t *testing.T) {
	hold := make(chan struct{})
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hold:
			w.WriteHeader(http.StatusNoContent)
		case <-r.Context().Done():
		}
	})
	e := newPushEnv(t, withAllow(rc.origin()), withRetry(push.RetryPolicy{MaxAttempts: 3, Backoff: push.BackoffNone, AttemptTimeout: 5 * time.Second}))
	run := e.suspended(t, e.alice, 2)
	e.register(t, e.alice, run, Spec{URL: rc.origin(), Token: secretToken})
	e.accept(t, e.alice, run)
	rc.next(t) // the first push is held by the receiver
	waitFor(t, "all four pushes queued", func() bool { return e.outbox.Len() == 4 })
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := e.svc.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close: %v, want the deadline", err)
	}
	if n := e.outbox.Len(); n != 4 {
		t.Fatalf("%d deliveries left in the outbox, want all 4 (the held one was abandoned)", n)
	}
	if _, err := e.svc.Register(context.Background(), e.alice, &run, Spec{URL: rc.origin()}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Register after Close: %v", err)
	}
	close(hold)

	guard, err := egress.NewGuard(egress.GuardOptions{AllowOrigins: []string{rc.origin()}, Resolver: e.resolver, Dial: e.dials.dial})
	if err != nil {
		t.Fatal(err)
	}
	again, err := New(e.store, testProjector(), push.Options{Events: e.events, Guard: guard, Configs: e.configs, Vault: e.vault, Outbox: e.outbox, Retry: fastRetry()})
	if err != nil {
		t.Fatal(err)
	}
	if err := again.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer again.Close(context.Background())
	var states []wire.TaskState
	for len(states) < 4 {
		states = append(states, statusOf(t, rc.next(t).body))
	}
	if diff := cmp.Diff([]wire.TaskState{wire.TaskStateWorking, "", "", wire.TaskStateCompleted}, states); diff != "" {
		t.Fatalf("resumed pushes (-want +got):\n%s", diff)
	}
	waitFor(t, "the outbox drained", func() bool { return e.outbox.Len() == 0 })
	waitFor(t, "the secret discarded", func() bool { return e.vault.Len() == 0 })
}

// TestSecretsNeverLeak runs every path — registration, reads, deliveries,
// failures, dead letters, delete — with debug logging and greps every log
// line, event and config for the secrets.
func TestSecretsNeverLeak(t *testing.T) {
	ok := newReceiver(t, nil)
	failing := newReceiver(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusInternalServerError) })
	e := newPushEnv(t, withAllow(ok.origin(), failing.origin()))
	run := e.suspended(t, e.alice, 1)
	a := e.register(t, e.alice, run, Spec{URL: ok.origin(), Scheme: "Bearer", Credentials: secretCred})
	e.register(t, e.alice, run, Spec{URL: failing.origin(), Token: secretToken})
	got, _ := e.svc.Get(context.Background(), run.ID, a.ID)
	list := e.mustList(t, run.ID)
	e.accept(t, e.alice, run)
	evs := e.events.wait(t, 3) // three pushes to the failing receiver, dead-lettered
	_ = e.svc.Delete(context.Background(), run.ID, a.ID)
	for _, r := range []*receiver{ok} {
		if h := r.next(t).header.Get("Authorization"); h != "Bearer "+secretCred {
			t.Fatalf("the receiver got %q", h)
		}
	}
	mustNotContain(t, "configs", fmt.Sprintf("%v %+v %#v", got, list, a), secretCred, secretToken)
	var text strings.Builder
	for _, se := range evs {
		b, _ := json.Marshal(se.ev)
		text.Write(b)
	}
	text.WriteString(e.logs.String())
	if !strings.Contains(e.logs.String(), "delivery attempt failed") {
		t.Fatal("no log lines captured: the grep would prove nothing")
	}
	// Logs and events name neither a secret nor the destination.
	mustNotContain(t, "logs and events", text.String(), secretCred, secretToken, ok.origin(), failing.origin())
}

func TestDeadLetterSurvivesAFlakySink(t *testing.T) {
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusBadGateway) })
	e := newPushEnv(t, withAllow(rc.origin()), withRetry(push.RetryPolicy{MaxAttempts: 1}))
	e.events.fail = 2
	run := e.suspended(t, e.alice, 0)
	cfg := e.register(t, e.alice, run, Spec{URL: rc.origin()})
	e.accept(t, e.alice, run)
	evs := e.events.wait(t, 2)
	var p deadLetterPayload
	_ = json.Unmarshal(evs[0].ev.Payload, &p)
	if p != (deadLetterPayload{TaskID: run.ID, ConfigID: cfg.ID, Attempts: 1, LastStatus: "5xx"}) {
		t.Fatalf("dead letter %+v", p)
	}
}

func TestNewRefusesBadOptions(t *testing.T) {
	store := memstore.New()
	cases := []struct {
		name    string
		store   interop.RunStore
		project Projector
		o       push.Options
	}{
		{"no store", nil, testProjector(), push.Options{Events: newEventSink()}},
		{"no projector", store, nil, push.Options{Events: newEventSink()}},
		{"no events", store, testProjector(), push.Options{}},
		{"zero attempts", store, testProjector(), push.Options{Events: newEventSink(), Retry: push.RetryPolicy{MaxAttempts: -1}}},
		{"unknown backoff", store, testProjector(), push.Options{Events: newEventSink(), Retry: push.RetryPolicy{Backoff: "linear"}}},
		{"max below delay", store, testProjector(), push.Options{Events: newEventSink(), Retry: push.RetryPolicy{Delay: time.Minute, MaxDelay: time.Second}}},
		{"negative concurrency", store, testProjector(), push.Options{Events: newEventSink(), Concurrency: -1}},
		{"negative lease", store, testProjector(), push.Options{Events: newEventSink(), LeaseTTL: -time.Second}},
		{"negative poll", store, testProjector(), push.Options{Events: newEventSink(), OutboxPoll: -time.Second}},
	}
	for _, c := range cases {
		if s, err := New(c.store, c.project, c.o); err == nil || s != nil {
			t.Errorf("%s: accepted", c.name)
		}
	}
}

// TestLostSecretNeverSendsUnauthenticated: a config registered with a
// secret is never pushed without it; its pushes are dropped and the config
// finished.
func TestLostSecretNeverSendsUnauthenticated(t *testing.T) {
	rc := newReceiver(t, nil)
	e := newPushEnv(t, withAllow(rc.origin()))
	run := e.suspended(t, e.alice, 0)
	cfg := e.register(t, e.alice, run, Spec{URL: rc.origin(), Token: secretToken})
	rec, err := e.configs.Get(context.Background(), run.ID, cfg.ID)
	if err != nil {
		t.Fatal(err)
	}
	_ = e.vault.Discard(context.Background(), rec.SecretRef) // the host's vault lost it
	e.accept(t, e.alice, run)
	waitFor(t, "the config finished", func() bool {
		r, err := e.configs.Get(context.Background(), run.ID, cfg.ID)
		return err == nil && r.Done
	})
	rc.none(t, 50*time.Millisecond)
	if !strings.Contains(e.logs.String(), "secret is gone") {
		t.Fatal("the dropped push was not logged")
	}
}
