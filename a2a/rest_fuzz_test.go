package a2a

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
)

// FuzzHTTPJSONRequest drives the whole HTTP+JSON handler over memstore with
// arbitrary verbs, paths, versions, credentials and bodies. Whatever the
// client sends, the handler must not panic, must not answer 5xx, and must
// answer either a success (JSON, or an event stream of StreamResponse
// objects) or a well-formed google.rpc.Status (OpenWOP RFC 0211 §B, §C).
func FuzzHTTPJSONRequest(f *testing.F) {
	const id = "acme%2FZZZZZZZZZZZZZZZZZZZZZZZZZZ"
	send := `{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hi"}]}}`
	seeds := []struct {
		verb, path, body, version string
		key                       uint8
	}{
		{"POST", "/message:send", send, "1.0", 1},
		{"POST", "/message:send", `{"message":{"messageId":"m-2","taskId":"acme/ZZZZZZZZZZZZZZZZZZZZZZZZZZ","role":"ROLE_USER","parts":[{"data":{"action":"accept"}}]}}`, "1.0", 1},
		{"POST", "/message:send", `{"Message":{}}`, "1.0", 1},
		{"POST", "/message:send", `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"a","data":{}}]},"configuration":{"historyLength":-1,"returnImmediately":true}}`, "1.0", 1},
		{"POST", "/message:stream", send, "1.0", 2},
		{"POST", "/message:send", `{"message":{"messageId":"m-d","role":"ROLE_USER","parts":[{"data":{"z":12345678901234567890,"a":[1.0,1e2,-0]}}],"referenceTaskIds":["acme/x"],"extensions":["urn:x"]}}`, "1.0", 1},
		{"POST", "/message:send", `{"message":`, "1.0", 1},
		{"GET", "/tasks/" + id, "", "1.0", 1},
		{"GET", "/tasks/acme~2FZZZZZZZZZZZZZZZZZZZZZZZZZZ?historyLength=3", "", "1.0", 1},
		{"GET", "/tasks/acme/ZZZZZZZZZZZZZZZZZZZZZZZZZZ", "", "", 0},
		{"GET", "/tasks?contextId=c&status=TASK_STATE_WORKING&pageSize=101&pageToken=x&statusTimestampAfter=2026-01-01T00:00:00Z&includeArtifacts=1", "", "1.0", 1},
		{"POST", "/tasks/" + id + ":cancel", `{"metadata":{"a":1}}`, "1.0", 1},
		{"GET", "/tasks/" + id + ":subscribe", "", "1.0", 1},
		{"POST", "/tasks/" + id + "/pushNotificationConfigs", `{"url":"https://x.example"}`, "1.0", 1},
		{"DELETE", "/tasks/" + id + "/pushNotificationConfigs/c", "", "1.0", 1},
		{"GET", "/extendedAgentCard", "", "9.9", 1},
		{"GET", "/AAAAAAAAAAAAAAAAAAAAAAAA/extendedAgentCard", "", "1.0", 2},
		{"PATCH", "/tasks", "", "1.0", 1},
		{"GET", "/%41/tasks/a%2F:cancel", "[]", "0.3", 1},
	}
	for _, s := range seeds {
		f.Add(s.verb, s.path, s.body, s.version, s.key)
	}
	var (
		mu    sync.Mutex
		env   *restEnv
		calls int
	)
	// The host is replaced every few thousand requests so that the runs
	// the fuzzer creates do not accumulate for the whole run.
	host := func(t *testing.T) *restEnv {
		calls++
		if env == nil || calls%2000 == 0 {
			if env != nil {
				_ = env.store.Close()
			}
			env = buildRESTEnv(t, func(c *testConfig) {
				c.Routed = []interop.Workflow{{ID: memstore.FixtureNoop, Name: "noop"}}
				c.BlockTimeout = 50 * time.Millisecond
				c.MaxBodyBytes = 4 << 10
				c.ExtendedCard = true
			})
		}
		return env
	}
	f.Cleanup(func() {
		if env != nil {
			_ = env.store.Close()
		}
	})
	keys := []string{"", "key-acme", "key-globex", "key-initech"}

	f.Fuzz(func(t *testing.T, verb, path, body, version string, key uint8) {
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		r, err := http.NewRequestWithContext(ctx, verb, "http://internal.invalid"+path, strings.NewReader(body))
		if err != nil {
			return // not a request a server could receive
		}
		r.Header.Set("A2A-Version", version)
		if k := keys[int(key)%len(keys)]; k != "" {
			r.Header.Set("Authorization", "Bearer "+k)
		}
		mu.Lock()
		h := host(t).srv.HTTPJSON()
		mu.Unlock()
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		res := w.Result()
		out, _ := io.ReadAll(res.Body)
		result := restResult{status: res.StatusCode, header: res.Header, body: out}
		if res.StatusCode >= 500 {
			t.Fatalf("%s %s: HTTP %d for client input: %s", verb, path, res.StatusCode, out)
		}
		if res.StatusCode != http.StatusOK {
			restMustStatus(t, result)
			return
		}
		switch ct := res.Header.Get("Content-Type"); ct {
		case "application/json":
			if !json.Valid(out) {
				t.Fatalf("invalid JSON success: %s", out)
			}
		case "text/event-stream":
			restSSEEvents(t, out)
		default:
			t.Fatalf("success with Content-Type %q", ct)
		}
	})
}
