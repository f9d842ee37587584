package a2apeers

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRecordNamesTheCall: what the recorder reads from each A2A 1.0 route
// (§11.3 HTTP+JSON, §9 JSON-RPC), tenant prefixes included.
func TestRecordNamesTheCall(t *testing.T) {
	type named struct{ Binding, Method, Tenant, TaskID, MessageID string }
	cases := []struct {
		httpMethod, path, body string
		want                   named
	}{
		{"POST", "/jsonrpc", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"tenant":"acme","message":{"messageId":"m1","taskId":"t1"}}}`,
			named{BindingJSONRPC, "SendMessage", "acme", "t1", "m1"}},
		{"POST", "/jsonrpc", `{"jsonrpc":"2.0","id":1,"method":"CancelTask","params":{"id":"t9"}}`, named{BindingJSONRPC, "CancelTask", "", "t9", ""}},
		{"POST", "/jsonrpc", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":["t9"]}`, named{BindingJSONRPC, "GetTask", "", "", ""}},
		{"POST", "/jsonrpc", `not json`, named{BindingJSONRPC, "", "", "", ""}},
		{"POST", "/rest/message:send", `{"message":{"messageId":"m2"}}`, named{BindingREST, "SendMessage", "", "", "m2"}},
		{"POST", "/rest/acme/message:stream", `{"message":{"messageId":"m3","taskId":"t3"}}`, named{BindingREST, "SendStreamingMessage", "acme", "t3", "m3"}},
		{"GET", "/rest/tasks", "", named{BindingREST, "ListTasks", "", "", ""}},
		{"GET", "/rest/acme/tasks/t1", "", named{BindingREST, "GetTask", "acme", "t1", ""}},
		{"POST", "/rest/tasks/t1:cancel", "", named{BindingREST, "CancelTask", "", "t1", ""}},
		{"GET", "/rest/tasks/t1:subscribe", "", named{BindingREST, "SubscribeToTask", "", "t1", ""}},
		{"POST", "/rest/tasks/t1/pushNotificationConfigs", "{}", named{BindingREST, "CreateTaskPushNotificationConfig", "", "t1", ""}},
		{"GET", "/rest/tasks/t1/pushNotificationConfigs", "", named{BindingREST, "ListTaskPushNotificationConfigs", "", "t1", ""}},
		{"GET", "/rest/tasks/t1/pushNotificationConfigs/c1", "", named{BindingREST, "GetTaskPushNotificationConfig", "", "t1", ""}},
		{"DELETE", "/rest/tasks/t1/pushNotificationConfigs/c1", "", named{BindingREST, "DeleteTaskPushNotificationConfig", "", "t1", ""}},
		{"GET", "/rest/a/b/extendedAgentCard", "", named{BindingREST, "GetExtendedAgentCard", "a/b", "", ""}},
		{"GET", "/rest/nothing", "", named{BindingREST, "", "", "", ""}},
		{"GET", CardPath, "", named{BindingCard, "", "", "", ""}},
		{"GET", "/elsewhere", "", named{"", "", "", "", ""}},
	}
	rec := &recorder{}
	h := rec.record(http.NotFoundHandler())
	for _, tc := range cases {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(tc.httpMethod, tc.path, strings.NewReader(tc.body)))
	}
	reqs := rec.all(false)
	if len(reqs) != len(cases) {
		t.Fatalf("recorded %d requests, want %d", len(reqs), len(cases))
	}
	for i, tc := range cases {
		q := reqs[i]
		got := named{q.Binding, q.Method, q.Tenant, q.TaskID, q.MessageID}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s %s (-want +got):\n%s", tc.httpMethod, tc.path, diff)
		}
		if string(q.Body) != tc.body || q.HTTPMethod != tc.httpMethod || q.Path != tc.path {
			t.Errorf("%s %s recorded as %s %s %q", tc.httpMethod, tc.path, q.HTTPMethod, q.Path, q.Body)
		}
	}
	if calls := rec.all(true); len(calls) != len(cases)-1 {
		t.Fatalf("Calls kept %d, want all but the card fetch", len(calls))
	}
}

// FuzzRecord: any request is recorded without panicking and reaches the
// peer with its body intact.
func FuzzRecord(f *testing.F) {
	f.Add("/jsonrpc", []byte(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m"}}}`))
	f.Add("/rest/acme/tasks/t1:cancel", []byte(`{"message":null}`))
	f.Add("/rest/tasks/t/pushNotificationConfigs/c", []byte(`[`))
	f.Fuzz(func(t *testing.T, path string, body []byte) {
		req, err := http.NewRequest(http.MethodPost, "http://peer"+path, strings.NewReader(string(body)))
		if err != nil || !strings.HasPrefix(path, "/") {
			return // not a request a client could send
		}
		var seen []byte
		h := (&recorder{}).record(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
			seen, _ = io.ReadAll(r.Body)
		}))
		h.ServeHTTP(httptest.NewRecorder(), req)
		if string(seen) != string(body) {
			t.Fatalf("the peer read %q, want %q", seen, body)
		}
	})
}

// FuzzParseCommand: any text parses without panicking, and a command it
// accepts carries a usable argument or the error that fails the task.
func FuzzParseCommand(f *testing.F) {
	for _, s := range []string{"complete", "artifacts:3", "artifacts:0", "slow:1m30s", "slow", "auth-required", "unknown-state:x", "echo:1", "hello"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, ok := parseCommand(s)
		if !ok || c.err != nil {
			return
		}
		if c.name == Artifacts && c.n < 1 || c.wait < 0 || c.name == Slow && c.wait <= 0 {
			t.Fatalf("%q accepted as %+v", s, c)
		}
	})
}
