package a2a

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/egress"
	"github.com/wopinterop/wopinterop/internal/golden"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/push"
)

// Secrets the push tests register; they may reach a receiver's
// Authorization header and nothing else.
const (
	pushSecretCred  = "sentinel-cred-4c1d2e9f"
	pushSecretToken = "sentinel-token-8a7b6c5d"
)

// pushDNS answers the push tests' names. hooks.partner.net is public and
// is never dialled: pushDialer refuses anything off loopback.
type pushDNS struct {
	mu      sync.Mutex
	answers map[string]string
}

func (d *pushDNS) set(name, addr string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.answers[name+"."] = addr
}

func (d *pushDNS) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	a, ok := d.answers[host]
	if !ok {
		return nil, errors.New("no such host")
	}
	return []netip.Addr{netip.MustParseAddr(a)}, nil
}

// pushDialer connects to 127.0.0.1 only and fails the test otherwise.
func pushDialer(t testing.TB) func(ctx context.Context, network, address string) (net.Conn, error) {
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		if host, _, _ := net.SplitHostPort(address); host != "127.0.0.1" {
			t.Errorf("dial of %q: tests only ever dial 127.0.0.1", address)
			return nil, errors.New("off-machine dial refused")
		}
		var d net.Dialer
		return d.DialContext(ctx, network, address)
	}
}

// pushLogs captures the server's log lines.
type pushLogs struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *pushLogs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *pushLogs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// pushSetup is what withPush wires into a JSON-RPC test host.
type pushSetup struct {
	dns  *pushDNS
	logs *pushLogs
}

// withPush turns a2a.pushNotifications on with a guard that allowlists
// the given origins, the test DNS and the loopback-only dialer; retries
// are quick (3 attempts, no backoff).
func withPush(t testing.TB, ps *pushSetup, allow ...string) rpcOption {
	return func(cfg *testConfig) {
		guard, err := egress.NewGuard(egress.GuardOptions{Resolver: ps.dns, AllowOrigins: allow, Dial: pushDialer(t)})
		if err != nil {
			t.Fatal(err)
		}
		cfg.Push = &push.Options{
			Events: cfg.Store.(interop.EventSink),
			Guard:  guard,
			Retry:  push.RetryPolicy{MaxAttempts: 3, Backoff: push.BackoffNone, AttemptTimeout: 2 * time.Second},
		}
		cfg.Logger = slog.New(slog.NewJSONHandler(ps.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
}

func newPushSetup() *pushSetup {
	ps := &pushSetup{dns: &pushDNS{answers: map[string]string{}}, logs: &pushLogs{}}
	ps.dns.set("hooks.partner.net", "93.184.216.34")
	return ps
}

// startPush starts delivery; the server is closed before the store (the
// cleanups run in reverse order).
func startPush(t testing.TB, e *rpcEnv) {
	t.Helper()
	if err := e.srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = e.srv.Close(ctx)
	})
}

// pushCreate registers a config through JSON-RPC for key and returns the
// raw reply.
func pushCreate(t testing.TB, e *rpcEnv, key string, params map[string]any) rpcReply {
	t.Helper()
	return e.do(t, rpcCall{key: key, body: rpcBody(1, methodCreatePushConfig, params)})
}

func pushSecretParams(task, id, url string) map[string]any {
	p := map[string]any{
		"taskId": task, "url": url, "token": pushSecretToken,
		"authentication": map[string]any{"scheme": "Bearer", "credentials": pushSecretCred},
	}
	if id != "" {
		p["id"] = id
	}
	return p
}

func TestRPCGoldenPushConfigs(t *testing.T) {
	ps := newPushSetup()
	on := withPush(t, ps)
	withConfigs := func(ids ...string) func(t *testing.T, e *rpcEnv) map[string]string {
		return func(t *testing.T, e *rpcEnv) map[string]string {
			v := setupApproval(t, e)
			for _, id := range ids {
				res := pushCreate(t, e, rpcKeyAcme, pushSecretParams(v["task"], id, "https://hooks.partner.net/a2a/"+id))
				if out := decodeRPC(t, res); out.Error != nil {
					t.Fatalf("create %s: %s", id, res.body)
				}
			}
			return v
		}
	}
	runRPCGolden(t, []rpcGoldenCase{
		{name: "push_create", opts: []rpcOption{on}, setup: setupApproval, call: func(v map[string]string) rpcCall {
			return acme(rpcBody(1, methodCreatePushConfig, pushSecretParams(v["task"], "cfg-1", "https://hooks.partner.net/a2a")))
		}, check: wantNoSecrets},
		{name: "push_create_token_only", opts: []rpcOption{on}, setup: setupApproval, call: func(v map[string]string) rpcCall {
			return acme(rpcBody(1, methodCreatePushConfig, map[string]any{"taskId": v["task"], "id": "cfg-t", "url": "https://hooks.partner.net/t", "token": pushSecretToken}))
		}, check: wantNoSecrets},
		{name: "push_get", opts: []rpcOption{on}, setup: withConfigs("cfg-1"), call: func(v map[string]string) rpcCall {
			return acme(rpcBody(2, methodGetPushConfig, map[string]any{"taskId": v["task"], "id": "cfg-1"}))
		}, check: wantNoSecrets},
		{name: "push_list", opts: []rpcOption{on}, setup: withConfigs("cfg-1", "cfg-2"), call: func(v map[string]string) rpcCall {
			return acme(rpcBody(3, methodListPushConfigs, map[string]any{"taskId": v["task"]}))
		}, check: wantNoSecrets},
		{name: "push_list_paged", opts: []rpcOption{on}, setup: withConfigs("cfg-1", "cfg-2"), call: func(v map[string]string) rpcCall {
			return acme(rpcBody(3, methodListPushConfigs, map[string]any{"taskId": v["task"], "pageSize": 1}))
		}, check: wantNoSecrets},
		{name: "push_list_empty", opts: []rpcOption{on}, setup: setupApproval, call: func(v map[string]string) rpcCall {
			return acme(rpcBody(3, methodListPushConfigs, map[string]any{"taskId": v["task"]}))
		}},
		{name: "push_delete", opts: []rpcOption{on}, setup: withConfigs("cfg-1"), call: func(v map[string]string) rpcCall {
			return acme(rpcBody(4, methodDeletePushConfig, map[string]any{"taskId": v["task"], "id": "cfg-1"}))
		}},
		{name: "push_delete_absent", opts: []rpcOption{on}, setup: setupApproval, call: func(v map[string]string) rpcCall {
			return acme(rpcBody(4, methodDeletePushConfig, map[string]any{"taskId": v["task"], "id": "never-registered"}))
		}},
		{name: "error_push_create_private_url", opts: []rpcOption{on}, setup: setupApproval, call: func(v map[string]string) rpcCall {
			return acme(rpcBody(1, methodCreatePushConfig, pushSecretParams(v["task"], "", "https://10.0.0.1/a2a")))
		}, check: wantURLRefused},
		{name: "error_push_get_unknown_config", opts: []rpcOption{on}, setup: setupApproval, call: func(v map[string]string) rpcCall {
			return acme(rpcBody(2, methodGetPushConfig, map[string]any{"taskId": v["task"], "id": "never-registered"}))
		}, check: wantErr(200, -32001, "TASK_NOT_FOUND")},
		{name: "error_push_list_foreign_task", opts: []rpcOption{on}, setup: setupGlobexTask, call: func(v map[string]string) rpcCall {
			return acme(rpcBody(3, methodListPushConfigs, map[string]any{"taskId": v["task"]}))
		}, check: wantErr(200, -32001, "TASK_NOT_FOUND")},
	})
}

func wantNoSecrets(t *testing.T, res rpcReply) {
	t.Helper()
	if out := decodeRPC(t, res); out.Error != nil {
		t.Fatalf("error: %s", res.body)
	}
	for _, s := range []string{pushSecretCred, pushSecretToken, `"token"`, `"credentials"`} {
		if bytes.Contains(res.body, []byte(s)) {
			t.Fatalf("response carries %s: %s", s, res.body)
		}
	}
}

// wantURLRefused: -32602 naming "url", no result, and a message that
// repeats nothing of the URL.
func wantURLRefused(t *testing.T, res rpcReply) {
	t.Helper()
	out := wantRPCError(t, res, 200, codeInvalidParams, "")
	if out.Result != nil {
		t.Fatalf("a refused registration has a result: %s", res.body)
	}
	if !bytes.Contains(res.body, []byte(`"field":"url"`)) {
		t.Fatalf("the refusal does not name the url field: %s", res.body)
	}
	for _, s := range []string{"10.0.0.1", "127.0.0.1", "169.254", "localhost", "hooks"} {
		if strings.Contains(out.Error.Message, s) {
			t.Fatalf("message %q repeats the URL", out.Error.Message)
		}
	}
}

// TestPushCreateRefusesDestinations: http, private, loopback and metadata
// URLs (the suite's register legs) and the other guard arms.
func TestPushCreateRefusesDestinations(t *testing.T) {
	ps := newPushSetup()
	ps.dns.set("rebind.partner.net", "10.1.2.3")
	e := newRPCEnv(t, withPush(t, ps))
	v := setupApproval(t, e)
	for _, u := range []string{
		"http://hooks.partner.net/a2a", "https://127.0.0.1/a2a", "https://localhost/a2a", "https://[::1]/a2a",
		"https://169.254.169.254/latest/meta-data/", "https://metadata.google.internal/", "https://192.168.0.10/",
		"https://10.0.0.1/", "https://[::ffff:127.0.0.1]/", "https://0x7f.1/", "https://2130706433/",
		"https://user:pw@hooks.partner.net/", "https://rebind.partner.net/", "ftp://hooks.partner.net/",
	} {
		res := pushCreate(t, e, rpcKeyAcme, pushSecretParams(v["task"], "", u))
		t.Run(u, func(t *testing.T) { wantURLRefused(t, res) })
	}
	list := e.do(t, acme(rpcBody(3, methodListPushConfigs, map[string]any{"taskId": v["task"]})))
	if !bytes.Contains(list.body, []byte(`"configs":[]`)) {
		t.Fatalf("refused registrations left configs: %s", list.body)
	}
}

func TestPushCreateRefusesBadAuthentication(t *testing.T) {
	e := newRPCEnv(t, withPush(t, newPushSetup()))
	v := setupApproval(t, e)
	cases := []struct {
		params map[string]any
		field  string
	}{
		{map[string]any{"taskId": v["task"], "url": "https://hooks.partner.net/", "authentication": map[string]any{"scheme": "Bearer", "credentials": "a\r\nX-Evil: 1"}}, "authentication.credentials"},
		{map[string]any{"taskId": v["task"], "url": "https://hooks.partner.net/", "authentication": map[string]any{"scheme": "Bad Scheme", "credentials": "c"}}, "authentication.scheme"},
		{map[string]any{"taskId": v["task"], "url": "https://hooks.partner.net/", "token": "t\nx"}, "token"},
		{map[string]any{"taskId": v["task"], "url": "https://hooks.partner.net/", "id": "a/b"}, "id"},
	}
	for _, c := range cases {
		res := pushCreate(t, e, rpcKeyAcme, c.params)
		wantRPCError(t, res, 200, codeInvalidParams, "")
		if !bytes.Contains(res.body, []byte(`"field":"`+c.field+`"`)) {
			t.Errorf("%v: %s, want field %s", c.params, res.body, c.field)
		}
		if bytes.Contains(res.body, []byte("X-Evil")) {
			t.Errorf("the refusal repeats the value: %s", res.body)
		}
	}
}

// TestPushConfigIsolation: another tenant's task, an unknown task and a
// config id of another task all answer byte for byte alike, and a foreign
// delete deletes nothing (OpenWOP RFC 0214 §E).
func TestPushConfigIsolation(t *testing.T) {
	e := newRPCEnv(t, withPush(t, newPushSetup()))
	a := setupApproval(t, e)
	other := e.sendNew(t, rpcKeyAcme, "m-other", memstore.FixtureApproval)
	for _, task := range []string{a["task"], string(other.ID)} {
		if out := decodeRPC(t, pushCreate(t, e, rpcKeyAcme, pushSecretParams(task, "cfg-"+task[len(task)-4:], "https://hooks.partner.net/a2a"))); out.Error != nil {
			t.Fatalf("create: %+v", out.Error)
		}
	}
	aCfg := "cfg-" + a["task"][len(a["task"])-4:]
	unknownTask := "acme/AAAAAAAAAAAAAAAAAAAAAAAAAA"
	for _, m := range []string{methodGetPushConfig, methodDeletePushConfig, methodListPushConfigs, methodCreatePushConfig} {
		params := func(task, id string) map[string]any {
			if m == methodCreatePushConfig {
				return map[string]any{"taskId": task, "url": "https://hooks.partner.net/b"}
			}
			return map[string]any{"taskId": task, "id": id}
		}
		foreign := e.do(t, rpcCall{key: rpcKeyGlobex, body: rpcBody(7, m, params(a["task"], aCfg))})
		unknown := e.do(t, rpcCall{key: rpcKeyAcme, body: rpcBody(7, m, params(unknownTask, aCfg))})
		malformed := e.do(t, rpcCall{key: rpcKeyAcme, body: rpcBody(7, m, params("not-an-id", aCfg))})
		wantRPCError(t, foreign, 200, -32001, "TASK_NOT_FOUND")
		if !bytes.Equal(foreign.body, unknown.body) || !bytes.Equal(foreign.body, malformed.body) {
			t.Errorf("%s: foreign %s / unknown %s / malformed %s differ", m, foreign.body, unknown.body, malformed.body)
		}
	}
	// A config id of another task on a readable task: exactly "unknown".
	cross := e.do(t, acme(rpcBody(7, methodGetPushConfig, map[string]any{"taskId": string(other.ID), "id": aCfg})))
	never := e.do(t, acme(rpcBody(7, methodGetPushConfig, map[string]any{"taskId": string(other.ID), "id": "never"})))
	unknown := e.do(t, acme(rpcBody(7, methodGetPushConfig, map[string]any{"taskId": unknownTask, "id": aCfg})))
	if !bytes.Equal(cross.body, never.body) || !bytes.Equal(cross.body, unknown.body) {
		t.Errorf("another task's config id: %s / %s / %s differ", cross.body, never.body, unknown.body)
	}
	// globex deleting through A's id and through its own task touched nothing.
	g := setupGlobexTask(t, e)
	e.do(t, rpcCall{key: rpcKeyGlobex, body: rpcBody(8, methodDeletePushConfig, map[string]any{"taskId": g["task"], "id": aCfg})})
	if got := e.do(t, acme(rpcBody(9, methodGetPushConfig, map[string]any{"taskId": a["task"], "id": aCfg}))); decodeRPC(t, got).Error != nil {
		t.Fatalf("A's config is gone after foreign deletes: %s", got.body)
	}
}

// TestPushUnadvertisedMethods: without the facet all four methods answer
// -32003 on both bindings, never method-not-found (OpenWOP interop map, a2a.operations).
func TestPushUnadvertisedMethods(t *testing.T) {
	e := newRPCEnv(t)
	v := setupApproval(t, e)
	for _, m := range []string{methodCreatePushConfig, methodGetPushConfig, methodListPushConfigs, methodDeletePushConfig} {
		res := e.do(t, acme(rpcBody(1, m, map[string]any{"taskId": v["task"], "id": "c", "url": "https://hooks.partner.net/"})))
		wantRPCError(t, res, 200, -32003, "PUSH_NOTIFICATION_NOT_SUPPORTED")
	}
	// An inline config is refused, never dropped.
	res := e.do(t, acme(rpcBody(1, methodSendMessage, map[string]any{
		"message":       rpcMessage("m-inline", memstore.FixtureNoop, "x"),
		"configuration": map[string]any{"taskPushNotificationConfig": map[string]any{"url": "https://hooks.partner.net/"}},
	})))
	wantRPCError(t, res, 200, -32003, "PUSH_NOTIFICATION_NOT_SUPPORTED")

	r := newRESTEnv(t)
	task := restSendNew(t, r)
	id := urlPathEscape(task)
	for _, c := range []restCall{
		{method: http.MethodPost, path: "/tasks/" + id + "/pushNotificationConfigs", key: "key-acme", body: `{"url":"https://hooks.partner.net/"}`},
		{method: http.MethodGet, path: "/tasks/" + id + "/pushNotificationConfigs", key: "key-acme"},
		{method: http.MethodGet, path: "/tasks/" + id + "/pushNotificationConfigs/c", key: "key-acme"},
		{method: http.MethodDelete, path: "/tasks/" + id + "/pushNotificationConfigs/c", key: "key-acme"},
	} {
		got := r.do(t, c)
		_, info := restMustStatus(t, got)
		if info == nil || info.Reason != "PUSH_NOTIFICATION_NOT_SUPPORTED" {
			t.Errorf("%s %s: %s", c.method, c.path, got.body)
		}
	}
}

// restSendNew starts an approval task on the HTTP+JSON test host.
func restSendNew(t testing.TB, r *restEnv) string {
	t.Helper()
	res := r.do(t, restCall{method: http.MethodPost, path: "/message:send", key: "key-acme",
		body: `{"message":{"messageId":"m-rest-push","role":"ROLE_USER","parts":[{"text":"x"}]}}`})
	var out struct {
		Task wire.Task `json:"task"`
	}
	if err := json.Unmarshal(res.body, &out); err != nil || out.Task.ID == "" {
		t.Fatalf("send: %d %s", res.status, res.body)
	}
	return string(out.Task.ID)
}

func urlPathEscape(id string) string { return strings.ReplaceAll(id, "/", "%2F") }

// TestPushOverHTTPJSON: the four rows on the HTTP+JSON binding.
func TestPushOverHTTPJSON(t *testing.T) {
	ps := newPushSetup()
	r := newRESTEnv(t, func(cfg *testConfig) { withPush(t, ps)(cfg) })
	task := restSendNew(t, r)
	base := "/tasks/" + urlPathEscape(task) + "/pushNotificationConfigs"
	created := r.do(t, restCall{method: http.MethodPost, path: base, key: "key-acme",
		body: `{"id":"cfg-r","url":"https://hooks.partner.net/r","token":"` + pushSecretToken + `","authentication":{"scheme":"Bearer","credentials":"` + pushSecretCred + `"}}`})
	want := `{"taskId":"` + task + `","id":"cfg-r","authentication":{"scheme":"Bearer"},"url":"https://hooks.partner.net/r"}`
	if created.status != http.StatusOK || strings.TrimSpace(string(created.body)) != want {
		t.Fatalf("create: %d %s, want %s", created.status, created.body, want)
	}
	if got := r.do(t, restCall{method: http.MethodGet, path: base + "/cfg-r", key: "key-acme"}); strings.TrimSpace(string(got.body)) != want {
		t.Fatalf("get: %s", got.body)
	}
	if got := r.do(t, restCall{method: http.MethodGet, path: base, key: "key-acme"}); strings.TrimSpace(string(got.body)) != `{"configs":[`+want+`]}` {
		t.Fatalf("list: %s", got.body)
	}
	for range 2 {
		if got := r.do(t, restCall{method: http.MethodDelete, path: base + "/cfg-r", key: "key-acme"}); got.status != http.StatusOK || strings.TrimSpace(string(got.body)) != `{}` {
			t.Fatalf("delete: %d %s", got.status, got.body)
		}
	}
	got := r.do(t, restCall{method: http.MethodGet, path: base + "/cfg-r", key: "key-acme"})
	restWantStatus(t, got, http.StatusNotFound, "NOT_FOUND", "TASK_NOT_FOUND")
	refused := r.do(t, restCall{method: http.MethodPost, path: base, key: "key-acme", body: `{"url":"http://127.0.0.1:9/"}`})
	restWantStatus(t, refused, http.StatusBadRequest, "INVALID_ARGUMENT", "")
}

// pushReceiver records pushes on loopback.
type pushReceiver struct {
	srv  *httptest.Server
	reqs chan *http.Request
	body chan []byte
}

func newPushReceiver(t testing.TB) *pushReceiver {
	p := &pushReceiver{reqs: make(chan *http.Request, 64), body: make(chan []byte, 64)}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		p.reqs <- r
		p.body <- b
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *pushReceiver) next(t testing.TB) (*http.Request, []byte) {
	t.Helper()
	select {
	case r := <-p.reqs:
		return r, <-p.body
	case <-time.After(10 * time.Second):
		t.Fatal("no push within 10s")
		return nil, nil
	}
}

// TestPushDeliveredEndToEnd: a config registered over JSON-RPC on a task
// waiting for approval receives the task's next status changes as
// application/a2a+json StreamResponses with the registered authorization
// and no signature; the bodies are the stream's (golden), and the
// secrets appear nowhere but in that header.
func TestPushDeliveredEndToEnd(t *testing.T) {
	rc := newPushReceiver(t)
	ps := newPushSetup()
	e := newRPCEnv(t, withPush(t, ps, rc.srv.URL))
	startPush(t, e)
	v := setupApproval(t, e)
	var transcript bytes.Buffer
	var replies [][]byte
	created := pushCreate(t, e, rpcKeyAcme, map[string]any{
		"taskId": v["task"], "id": "cfg-e2e", "url": rc.srv.URL + "/hook", "token": pushSecretToken,
		"authentication": map[string]any{"scheme": "Custom", "credentials": pushSecretCred},
	})
	replies = append(replies, created.body)
	if out := decodeRPC(t, created); out.Error != nil {
		t.Fatalf("create: %s", created.body)
	}
	resolved := e.do(t, acme(rpcBody(2, methodSendMessage, map[string]any{"message": acceptMessage("m-accept", v["task"])})))
	replies = append(replies, resolved.body)
	for {
		r, body := rc.next(t)
		if r.Method != http.MethodPost || r.URL.Path != "/hook" {
			t.Fatalf("%s %s", r.Method, r.URL.Path)
		}
		if a := r.Header.Get("Authorization"); a != "Custom "+pushSecretCred {
			t.Fatalf("Authorization %q", a)
		}
		for name := range r.Header {
			if strings.Contains(strings.ToLower(name), "signature") {
				t.Fatalf("a push carries %s", name)
			}
		}
		fmt.Fprintf(&transcript, "POST /hook\nContent-Type: %s\n\n%s\n", r.Header.Get("Content-Type"), body)
		var sr wire.StreamResponse
		if err := json.Unmarshal(body, &sr); err != nil {
			t.Fatal(err)
		}
		if u, ok := sr.Event.(*wire.TaskStatusUpdateEvent); ok && u.Status.State == wire.TaskStateCompleted {
			break
		}
	}
	pushes := newRPCNormalizer(e.agentR).apply(transcript.Bytes())
	golden.Check(t, "push/delivered_approval.txt", pushes)

	// Every A2A answer, the task itself, the run, the tenant's host events
	// and every log line are free of the secrets.
	for _, m := range []string{methodGetPushConfig, methodListPushConfigs} {
		replies = append(replies, e.do(t, acme(rpcBody(3, m, map[string]any{"taskId": v["task"], "id": "cfg-e2e"}))).body)
	}
	replies = append(replies, e.do(t, acme(rpcBody(4, methodGetTask, map[string]any{"id": v["task"]}))).body)
	replies = append(replies, e.do(t, acme(rpcBody(5, methodListTasks, map[string]any{}))).body)
	run, err := e.store.GetRun(context.Background(), rpcSubjects()[rpcKeyAcme], v["task"])
	if err != nil {
		t.Fatal(err)
	}
	var all bytes.Buffer
	for _, b := range replies {
		all.Write(b)
	}
	fmt.Fprintf(&all, "%#v", run)
	for _, ev := range e.store.DurableHostEvents("acme") {
		b, _ := json.Marshal(ev)
		all.Write(b)
	}
	all.WriteString(ps.logs.String())
	for _, s := range []string{pushSecretCred, pushSecretToken} {
		if bytes.Contains(all.Bytes(), []byte(s)) {
			t.Fatalf("the secret %q leaked into a response, the run, an event or a log line", s)
		}
	}
}

// TestPushDeadLetterIsAHostEventOnly: a push nobody accepts is retried,
// then recorded as a content-free durable host event of the task's tenant;
// A2A clients see nothing of it.
func TestPushDeadLetterIsAHostEventOnly(t *testing.T) {
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(down.Close)
	ps := newPushSetup()
	e := newRPCEnv(t, withPush(t, ps, down.URL))
	startPush(t, e)
	v := setupApproval(t, e)
	before := e.do(t, acme(rpcBody(1, methodGetTask, map[string]any{"id": v["task"]})))
	if out := decodeRPC(t, pushCreate(t, e, rpcKeyAcme, pushSecretParams(v["task"], "cfg-dl", down.URL+"/hook?sig="+pushSecretToken))); out.Error != nil {
		t.Fatalf("create: %+v", out.Error)
	}
	cancel := e.do(t, acme(rpcBody(2, methodCancelTask, map[string]any{"id": v["task"]})))
	if decodeRPC(t, cancel).Error != nil {
		t.Fatalf("cancel: %s", cancel.body)
	}
	var letters []interop.HostEvent
	deadline := time.Now().Add(10 * time.Second)
	for len(letters) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no dead letter")
		}
		time.Sleep(5 * time.Millisecond)
		for _, ev := range e.store.DurableHostEvents("acme") {
			if ev.Type == push.DeadLetterEventType {
				letters = append(letters, ev)
			}
		}
	}
	var p map[string]any
	if err := json.Unmarshal(letters[0].Payload, &p); err != nil {
		t.Fatal(err)
	}
	if len(p) != 4 || p["taskId"] != v["task"] || p["configId"] != "cfg-dl" || p["attempts"] != float64(3) || p["lastStatus"] != "5xx" {
		t.Fatalf("dead letter payload %s", letters[0].Payload)
	}
	if bytes.Contains(letters[0].Payload, []byte("127.0.0.1")) || bytes.Contains(letters[0].Payload, []byte(pushSecretToken)) {
		t.Fatalf("the dead letter names the destination: %s", letters[0].Payload)
	}
	for _, ev := range e.store.DurableHostEvents("globex") {
		if ev.Type == push.DeadLetterEventType {
			t.Fatal("a dead letter reached another tenant")
		}
	}
	// The task reads the same apart from its state: no trace of push.
	after := e.do(t, acme(rpcBody(1, methodGetTask, map[string]any{"id": v["task"]})))
	if bytes.Contains(after.body, []byte("push")) || bytes.Contains(before.body, []byte("push")) {
		t.Fatalf("the task shows push state: %s", after.body)
	}
}

// TestPushInlineConfig: a config sent with SendMessage is judged before the
// task starts and registered on it once it exists.
func TestPushInlineConfig(t *testing.T) {
	rc := newPushReceiver(t)
	e := newRPCEnv(t, withPush(t, newPushSetup(), rc.srv.URL))
	startPush(t, e)
	send := func(msgID, url string) rpcReply {
		return e.do(t, acme(rpcBody(1, methodSendMessage, map[string]any{
			"message":       rpcMessage(msgID, memstore.FixtureApproval, "x"),
			"configuration": map[string]any{"taskPushNotificationConfig": map[string]any{"url": url, "token": pushSecretToken}},
		})))
	}
	countTasks := func() int {
		var out struct {
			Result struct {
				TotalSize int `json:"totalSize"`
			} `json:"result"`
		}
		_ = json.Unmarshal(e.do(t, acme(rpcBody(9, methodListTasks, map[string]any{}))).body, &out)
		return out.Result.TotalSize
	}
	n := countTasks()
	refused := send("m-inline-bad", "https://169.254.169.254/")
	wantRPCError(t, refused, 200, codeInvalidParams, "")
	if !bytes.Contains(refused.body, []byte(`"field":"configuration.taskPushNotificationConfig.url"`)) {
		t.Fatalf("refusal %s", refused.body)
	}
	if countTasks() != n {
		t.Fatal("a refused inline config started a task")
	}
	task := rpcTask(t, send("m-inline", rc.srv.URL+"/inline"), true)
	again := rpcTask(t, send("m-inline", rc.srv.URL+"/inline"), true) // idempotent repeat
	if again.ID != task.ID {
		t.Fatalf("repeat answered %s, want %s", again.ID, task.ID)
	}
	list := e.do(t, acme(rpcBody(2, methodListPushConfigs, map[string]any{"taskId": string(task.ID)})))
	var out struct {
		Result wire.ListTaskPushConfigResponse `json:"result"`
	}
	if err := json.Unmarshal(list.body, &out); err != nil || len(out.Result.Configs) != 1 || out.Result.Configs[0].URL != rc.srv.URL+"/inline" {
		t.Fatalf("configs after an inline registration and its repeat: %s", list.body)
	}
	e.do(t, acme(rpcBody(3, methodSendMessage, map[string]any{"message": acceptMessage("m-acc", string(task.ID))})))
	r, body := rc.next(t)
	if r.Header.Get("Authorization") != "Bearer "+pushSecretToken || !bytes.Contains(body, []byte(`"statusUpdate"`)) {
		t.Fatalf("inline push: %q %s", r.Header.Get("Authorization"), body)
	}
}

// TestPushDeleteStopsDeliveryEndToEnd: after DeleteTaskPushNotificationConfig
// the task's later changes reach nobody.
func TestPushDeleteStopsDeliveryEndToEnd(t *testing.T) {
	rc := newPushReceiver(t)
	e := newRPCEnv(t, withPush(t, newPushSetup(), rc.srv.URL))
	startPush(t, e)
	v := setupApproval(t, e)
	pushCreate(t, e, rpcKeyAcme, map[string]any{"taskId": v["task"], "id": "gone", "url": rc.srv.URL})
	if got := e.do(t, acme(rpcBody(2, methodDeletePushConfig, map[string]any{"taskId": v["task"], "id": "gone"}))); !bytes.Contains(got.body, []byte(`"result":{}`)) {
		t.Fatalf("delete: %s", got.body)
	}
	e.do(t, acme(rpcBody(3, methodSendMessage, map[string]any{"message": acceptMessage("m-acc", v["task"])})))
	select {
	case r := <-rc.reqs:
		t.Fatalf("a push after delete: %s %s", r.Method, r.URL)
	case <-time.After(100 * time.Millisecond):
	}
}

// Push on is Options.Push set: the card, the gate and Served follow it,
// and a Push without its Events is refused.
func TestNewPushFollowsOptions(t *testing.T) {
	cfg := testConfigOf(newRPCEnv(t).srv)
	cfg.Push = &push.Options{}
	if _, err := New(cfg.Deps, cfg.Options); err == nil || !strings.Contains(err.Error(), "Events is required") {
		t.Fatalf("Push without Events: %v", err)
	}
	cfg.Push = &push.Options{Events: cfg.Store.(interop.EventSink)}
	on, err := New(cfg.Deps, cfg.Options)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Push = nil
	off, err := New(cfg.Deps, cfg.Options)
	if err != nil {
		t.Fatal(err)
	}
	if !on.Served().PushNotifications || !on.capabilities().PushNotifications || on.gate(methodGetPushConfig) != nil {
		t.Error("Push set, but push is not served")
	}
	if off.Served().PushNotifications || off.capabilities().PushNotifications || off.gate(methodGetPushConfig) == nil {
		t.Error("Push nil, but push is served")
	}
}
