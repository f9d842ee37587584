package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/postgres/internal/pgtest"
)

// processReplica runs the host as a process of its own, built from this
// package, so that the test can kill it: no drain, no deferred call, its
// connections cut mid-write. It returns the origin and the kill.
func processReplica(t *testing.T, dsn string, extra ...string) (url string, kill func()) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "host")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, replicaArgs(dsn, extra...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	kill = func() {
		once.Do(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
	}
	t.Cleanup(kill)
	return origin(t, stdout, func() string { kill(); return stderr.String() }), kill
}

// pushReceiver is two push endpoints: /held holds its first request until
// the request's connection is cut, /free answers at once. It records
// every attempt and every acknowledged push, per path.
type pushReceiver struct {
	held     chan struct{} // closed when /held's first request arrived
	heldGone chan struct{} // closed when that request's connection was cut

	mu       sync.Mutex
	holding  bool
	attempts map[string][]string // per path: Idempotency-Key of every request
	acked    map[string][]ack    // per path: the pushes answered 204
}

type ack struct {
	key   string
	state string // the statusUpdate's state, "" for other bodies
	body  string
}

func newPushReceiver() *pushReceiver {
	return &pushReceiver{held: make(chan struct{}), heldGone: make(chan struct{}),
		attempts: map[string][]string{}, acked: map[string][]ack{}}
}

func (p *pushReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	key := r.Header.Get("Idempotency-Key")
	p.mu.Lock()
	p.attempts[r.URL.Path] = append(p.attempts[r.URL.Path], key)
	hold := r.URL.Path == "/held" && !p.holding
	p.holding = p.holding || hold
	p.mu.Unlock()
	if hold {
		close(p.held)
		<-r.Context().Done() // until the replica sending it dies
		close(p.heldGone)
		return
	}
	var doc struct {
		StatusUpdate *struct {
			Status struct {
				State string `json:"state"`
			} `json:"status"`
		} `json:"statusUpdate"`
	}
	_ = json.Unmarshal(body, &doc)
	a := ack{key: key, body: string(body)}
	if doc.StatusUpdate != nil {
		a.state = doc.StatusUpdate.Status.State
	}
	p.mu.Lock()
	p.acked[r.URL.Path] = append(p.acked[r.URL.Path], a)
	p.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// snapshot returns the acknowledged pushes of path and the attempts.
func (p *pushReceiver) snapshot(path string) ([]ack, []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.acked[path]), slices.Clone(p.attempts[path])
}

// rpc posts one A2A JSON-RPC request as acme and returns the result.
func rpc(t *testing.T, origin, body string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, origin+"/a2a", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+acmeKey)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var env struct {
		Result map[string]any `json:"result"`
	}
	if err := json.Unmarshal(raw, &env); err != nil || env.Result == nil {
		t.Fatalf("%s: %d %s", body, resp.StatusCode, raw)
	}
	return env.Result
}

// TestPushSurvivesAKilledReplica: a task's pushes are queued by the
// replica that registered its configs; that replica is killed while it
// is delivering one of them. The other replica takes the dead replica's
// lease over once it expires, follows the run the task then continues on
// it, and delivers the rest: every push reaches the receiver, in run
// order, and none is acknowledged twice (the Idempotency-Key a receiver
// dedupes on is the delivery's id; A2A 1.0 §9 push notifications,
// OpenWOP RFC 0214 §C).
func TestPushSurvivesAKilledReplica(t *testing.T) {
	recv := newPushReceiver()
	srv := httptest.NewServer(recv)
	t.Cleanup(srv.Close)
	dsn := pgtest.NewDSN(t)
	flags := []string{"-push-allow", srv.URL, "-lease-ttl", "2s"}
	a, kill := processReplica(t, dsn, flags...)
	b := startReplica(t, dsn, flags...)

	// The task starts on a with /held as its config, so its first pushes
	// are a's to deliver; /free is registered after, and receives what
	// the run does from then on.
	task := rpc(t, a, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"please approve"}]},`+
		`"configuration":{"taskPushNotificationConfig":{"id":"held","url":"`+srv.URL+`/held"}}}}`)
	inner, _ := task["task"].(map[string]any)
	id, _ := inner["id"].(string)
	rpc(t, a, `{"jsonrpc":"2.0","id":2,"method":"CreateTaskPushNotificationConfig","params":{"taskId":"`+id+`","id":"free","url":"`+srv.URL+`/free"}}`)
	// Kill a while its first push to /held is in flight, then continue
	// the task on b.
	select {
	case <-recv.held:
	case <-time.After(20 * time.Second):
		t.Fatal("no push reached /held")
	}
	kill()
	select {
	case <-recv.heldGone:
	case <-time.After(10 * time.Second):
		t.Fatal("the held push's connection outlived the replica that sent it")
	}
	rpc(t, b, `{"jsonrpc":"2.0","id":3,"method":"SendMessage","params":{"message":{"messageId":"m2","taskId":"`+id+`","role":"ROLE_USER","parts":[{"data":{"action":"accept"}}]}}}`)

	// Both configs' pushes end at COMPLETED; /free's are the tail of /held's.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var held, free []ack
	for {
		held, _ = recv.snapshot("/held")
		free, _ = recv.snapshot("/free")
		if ended(held) && ended(free) {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("pushes never completed: /held %v, /free %v", states(held), states(free))
		case <-time.After(50 * time.Millisecond):
		}
	}
	_, heldAttempts := recv.snapshot("/held")
	for path, acks := range map[string][]ack{"/held": held, "/free": free} {
		seen := map[string]bool{}
		for _, a := range acks {
			if seen[a.key] {
				t.Errorf("%s acknowledged %s twice", path, a.key)
			}
			seen[a.key] = true
		}
	}
	tail := held[max(len(held)-len(free), 0):]
	if len(free) == 0 || len(free) >= len(held) || !slices.EqualFunc(tail, free, func(x, y ack) bool { return x.body == y.body }) {
		t.Fatalf("/free's pushes are not the tail of /held's:\n/held %v\n/free %v", states(held), states(free))
	}
	if !slices.Contains(states(held[:len(held)-len(free)]), "TASK_STATE_INPUT_REQUIRED") {
		t.Errorf("/held's pushes before /free was registered: %v", states(held[:len(held)-len(free)]))
	}
	t.Logf("/held: %d pushes in %d attempts (one cut by the kill, taken over by the other replica); /free: %d, the same bodies as /held's last %d; 0 lost, 0 acknowledged twice: %v",
		len(held), len(heldAttempts), len(free), len(free), states(held))
}

func ended(acks []ack) bool {
	return len(acks) > 0 && acks[len(acks)-1].state == "TASK_STATE_COMPLETED"
}

func states(acks []ack) []string {
	out := make([]string, len(acks))
	for i, a := range acks {
		out[i] = a.state
		if out[i] == "" {
			out[i] = "artifact"
		}
	}
	return out
}
