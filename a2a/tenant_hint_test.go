package a2a

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/isolation"
)

// The tenant member (params.tenant, the /{tenant} path segment) is a
// routing hint: it selects the agent of a new task and of
// GetExtendedAgentCard, narrows ListTasks to one of the caller's agents,
// and is otherwise ignored. These tests run every case on both bindings
// of one server.

// hintBinding is one of the two interfaces.
type hintBinding string

const (
	viaJSONRPC  hintBinding = "JSON-RPC"
	viaHTTPJSON hintBinding = "HTTP+JSON"
)

var hintBindings = []hintBinding{viaJSONRPC, viaHTTPJSON}

// hintOp is one operation in both spellings.
type hintOp struct {
	method string         // JSON-RPC method
	params map[string]any // JSON-RPC params, without tenant
	verb   string         // HTTP+JSON verb
	path   string         // HTTP+JSON path below the /{tenant} segment
	body   string         // HTTP+JSON body
}

// hintReply is an answer on either binding.
type hintReply struct {
	status int
	header http.Header
	body   []byte
}

// ok reports a success: 200 and, on JSON-RPC, a result.
func (r hintReply) ok(b hintBinding) bool {
	if r.status != http.StatusOK {
		return false
	}
	if b == viaHTTPJSON {
		return true
	}
	var out rpcResponse
	return json.Unmarshal(r.body, &out) == nil && out.Error == nil && out.Result != nil
}

// result is the JSON-RPC result, or the HTTP+JSON body.
func (r hintReply) result(t testing.TB, b hintBinding) json.RawMessage {
	t.Helper()
	if !r.ok(b) {
		t.Fatalf("%s: HTTP %d %s", b, r.status, r.body)
	}
	if b == viaHTTPJSON {
		return r.body
	}
	var out rpcResponse
	_ = json.Unmarshal(r.body, &out)
	return out.Result
}

// hinted sends op on binding b as key, with tenant ("" for none).
func (e *restEnv) hinted(t testing.TB, ctx context.Context, b hintBinding, key, tenant string, op hintOp) hintReply {
	t.Helper()
	if b == viaHTTPJSON {
		path := op.path
		if tenant != "" {
			path = "/" + url.PathEscape(tenant) + path
		}
		res := e.doCtx(t, ctx, restCall{method: op.verb, path: path, key: key, body: op.body})
		return hintReply{status: res.status, header: res.header, body: res.body}
	}
	params := maps.Clone(op.params)
	if params == nil {
		params = map[string]any{}
	}
	if tenant != "" {
		params["tenant"] = tenant
	}
	return e.rawRPC(t, ctx, key, "1.0", rpcBody(1, op.method, params))
}

// rawRPC posts body to the server's JSON-RPC handler as key, with
// A2A-Version version ("" sends none).
func (e *restEnv) rawRPC(t testing.TB, ctx context.Context, key, version, body string) hintReply {
	t.Helper()
	r := httptest.NewRequestWithContext(ctx, http.MethodPost, "http://internal.invalid:8080/a2a/rpc", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	if version != "" {
		r.Header.Set("A2A-Version", version)
	}
	if key != "" {
		r.Header.Set("Authorization", "Bearer "+key)
	}
	w := httptest.NewRecorder()
	e.srv.JSONRPC().ServeHTTP(w, r)
	res := w.Result()
	out, _ := io.ReadAll(res.Body)
	return hintReply{status: res.StatusCode, header: res.Header, body: out}
}

// notRoutingValues are tenant values that are none of acme's routing
// values, by what they are.
func notRoutingValues(e *restEnv) map[string]string {
	other, err := isolation.NewRoutingKeys(bytes.Repeat([]byte("x"), 32), "host-test-1")
	if err != nil {
		panic(err)
	}
	return map[string]string{
		"never minted":                   "AAAAAAAAAAAAAAAAAAAAAAAA",
		"another tenant's agent":         e.routing.Derive("agent-gina"),
		"another tenant's name":          "globex",
		"the caller's own tenant name":   "acme",
		"an agent without workflows":     e.routing.Derive("agent-idle"),
		"minted under another secret":    other.Derive("agent-ada"),
		"malformed":                      "not a value",
		"the suite's foreign-looking id": "zz-conformance-foreign",
	}
}

func listOp(query string) hintOp {
	params := map[string]any{}
	path := "/tasks"
	if query != "" {
		q, _ := url.ParseQuery(query)
		for k := range q {
			params[k] = q.Get(k)
			if n, err := strconv.Atoi(q.Get(k)); err == nil {
				params[k] = n
			}
		}
		path += "?" + query
	}
	return hintOp{method: methodListTasks, params: params, verb: http.MethodGet, path: path}
}

func listedIDs(t testing.TB, b hintBinding, res hintReply) []string {
	t.Helper()
	var page wire.ListTasksResponse
	if err := json.Unmarshal(res.result(t, b), &page); err != nil || page.Tasks == nil {
		t.Fatalf("%s: not a ListTasksResponse: %s", b, res.body)
	}
	var ids []string
	for _, task := range page.Tasks {
		ids = append(ids, string(task.ID))
	}
	slices.Sort(ids)
	if page.TotalSize != len(ids) {
		t.Fatalf("%s: totalSize %d for %d tasks", b, page.TotalSize, len(ids))
	}
	return ids
}

// ListTasks with a tenant that is not one of the caller's routing values
// answers exactly what it answers without one (OpenWOP interop.md
// §Isolation: tenant never selects a tenant); one of the caller's agents
// narrows the list to the runs of that agent's workflows.
func TestTenantHintListTasks(t *testing.T) {
	e := newRESTEnv(t)
	ctx := t.Context()
	ada, bo := e.routing.Derive("agent-ada"), e.routing.Derive("agent-bo")
	approval, _ := e.sendTask(t, "key-acme", restSendBody("m-host", "wait"))
	noop, res := e.sendTask(t, "key-acme", `{"tenant":"`+ada+`","message":{"messageId":"m-ada","role":"ROLE_USER","parts":[{"text":"go"}],"metadata":{"skillId":"`+memstore.FixtureNoop+`"}}}`)
	delay, _ := e.sendTask(t, "key-acme", `{"tenant":"`+bo+`",`+restSendBody("m-bo", "go")[1:])
	if noop.Status.State != wire.TaskStateCompleted || delay.Status.State != wire.TaskStateCompleted {
		t.Fatalf("setup: %s", res.body)
	}
	globexTask, _ := e.sendTask(t, "key-globex", restSendBody("m-globex", "mine"))
	all := []string{string(approval.ID), string(noop.ID), string(delay.ID)}
	slices.Sort(all)

	for _, b := range hintBindings {
		t.Run(string(b), func(t *testing.T) {
			for _, query := range []string{"", "contextId=" + url.QueryEscape(approval.ContextID), "pageSize=2"} {
				plain := e.hinted(t, ctx, b, "key-acme", "", listOp(query))
				if query == "" && !slices.Equal(listedIDs(t, b, plain), all) {
					t.Fatalf("acme's plain list: %s", plain.body)
				}
				for what, tenant := range notRoutingValues(e) {
					got := e.hinted(t, ctx, b, "key-acme", tenant, listOp(query))
					if got.status != plain.status || !bytes.Equal(got.body, plain.body) {
						t.Errorf("%s, %q: HTTP %d %s\nwant what no tenant answers: HTTP %d %s", what, query, got.status, got.body, plain.status, plain.body)
					}
				}
			}
			// globex naming acme's agent, acme's tenant and acme's context
			// sees what it sees without the hint: its own task only, none
			// of acme's (OpenWOP interop.md §Isolation).
			for _, tenant := range []string{ada, "acme"} {
				for _, query := range []string{"", "contextId=" + url.QueryEscape(approval.ContextID)} {
					plain := e.hinted(t, ctx, b, "key-globex", "", listOp(query))
					got := e.hinted(t, ctx, b, "key-globex", tenant, listOp(query))
					if !bytes.Equal(got.body, plain.body) || bytes.Contains(got.body, []byte("acme/")) {
						t.Errorf("globex with %q, %q: %s\nwant %s", tenant, query, got.body, plain.body)
					}
				}
			}
			if ids := listedIDs(t, b, e.hinted(t, ctx, b, "key-globex", ada, listOp(""))); !slices.Equal(ids, []string{string(globexTask.ID)}) {
				t.Errorf("globex's list: %v", ids)
			}
			// The caller's own agents narrow: Ada routes two workflows
			// (approval and noop), Bo one (delay).
			for _, tc := range []struct {
				tenant string
				want   []string
			}{
				{ada, []string{string(approval.ID), string(noop.ID)}},
				{bo, []string{string(delay.ID)}},
			} {
				slices.Sort(tc.want)
				if got := listedIDs(t, b, e.hinted(t, ctx, b, "key-acme", tc.tenant, listOp(""))); !slices.Equal(got, tc.want) {
					t.Errorf("through the agent: %v, want %v", got, tc.want)
				}
			}
			// Narrowed and filtered by a state only the projection can
			// decide (INPUT_REQUIRED), then paged one by one.
			if got := listedIDs(t, b, e.hinted(t, ctx, b, "key-acme", ada, listOp("status=TASK_STATE_INPUT_REQUIRED"))); !slices.Equal(got, []string{string(approval.ID)}) {
				t.Errorf("through Ada, INPUT_REQUIRED: %v", got)
			}
			first := e.hinted(t, ctx, b, "key-acme", ada, listOp("pageSize=1"))
			var page wire.ListTasksResponse
			if err := json.Unmarshal(first.result(t, b), &page); err != nil || len(page.Tasks) != 1 || page.TotalSize != 2 || page.NextPageToken == "" {
				t.Fatalf("through Ada, pageSize 1: %s", first.body)
			}
			second := e.hinted(t, ctx, b, "key-acme", ada, listOp("pageSize=1&pageToken="+url.QueryEscape(page.NextPageToken)))
			var rest wire.ListTasksResponse
			if err := json.Unmarshal(second.result(t, b), &rest); err != nil || len(rest.Tasks) != 1 || rest.NextPageToken != "" || rest.Tasks[0].ID == page.Tasks[0].ID {
				t.Fatalf("through Ada, second page: %s", second.body)
			}
		})
	}
}

// Every operation on an existing task ignores tenant: the caller's own
// task answers as it does without one, whatever the value (OpenWOP
// interop.md §Isolation; A2A 1.0.1 AgentInterface.tenant).
func TestTenantHintOnExistingTasks(t *testing.T) {
	e := newRESTEnv(t, restEnvOption(withPush(t, newPushSetup())))
	ctx := t.Context()
	tenants := notRoutingValues(e)
	tenants["the caller's own agent"] = e.routing.Derive("agent-ada")
	tenants["another of the caller's agents"] = e.routing.Derive("agent-bo")

	waiting := func() *wire.Task {
		task, _ := e.sendTask(t, "key-acme", restSendBody("m-"+isolation.NewOpaque(), "wait"))
		return task
	}
	taskPath := func(task *wire.Task) string { return "/tasks/" + isolation.Project(string(task.ID)) }
	pushBody := func(id string) string { return `{"id":"` + id + `","url":"https://hooks.partner.net/a2a/` + id + `"}` }

	for _, b := range hintBindings {
		t.Run(string(b), func(t *testing.T) {
			task := waiting()
			if res := e.hinted(t, ctx, b, "key-acme", "", hintOp{
				method: methodCreatePushConfig, params: map[string]any{"taskId": task.ID, "id": "cfg-base", "url": "https://hooks.partner.net/a2a/base"},
				verb: http.MethodPost, path: taskPath(task) + "/pushNotificationConfigs", body: pushBody("cfg-base"),
			}); !res.ok(b) {
				t.Fatalf("create the base config: %s", res.body)
			}
			reads := map[string]hintOp{
				"GetTask": {method: methodGetTask, params: map[string]any{"id": task.ID, "historyLength": 1},
					verb: http.MethodGet, path: taskPath(task) + "?historyLength=1"},
				"GetTaskPushNotificationConfig": {method: methodGetPushConfig, params: map[string]any{"taskId": task.ID, "id": "cfg-base"},
					verb: http.MethodGet, path: taskPath(task) + "/pushNotificationConfigs/cfg-base"},
				"ListTaskPushNotificationConfigs": {method: methodListPushConfigs, params: map[string]any{"taskId": task.ID},
					verb: http.MethodGet, path: taskPath(task) + "/pushNotificationConfigs"},
			}
			for name, op := range reads {
				plain := e.hinted(t, ctx, b, "key-acme", "", op)
				if !plain.ok(b) {
					t.Fatalf("%s without tenant: %s", name, plain.body)
				}
				for what, tenant := range tenants {
					if got := e.hinted(t, ctx, b, "key-acme", tenant, op); got.status != plain.status || !bytes.Equal(got.body, plain.body) {
						t.Errorf("%s, tenant %s: HTTP %d %s\nwant HTTP %d %s", name, what, got.status, got.body, plain.status, plain.body)
					}
				}
			}
			for what, tenant := range tenants {
				// The writes, each on a task of its own.
				cfg := "cfg-" + isolation.NewOpaque()[:8]
				if res := e.hinted(t, ctx, b, "key-acme", tenant, hintOp{
					method: methodCreatePushConfig, params: map[string]any{"taskId": task.ID, "id": cfg, "url": "https://hooks.partner.net/a2a/" + cfg},
					verb: http.MethodPost, path: taskPath(task) + "/pushNotificationConfigs", body: pushBody(cfg),
				}); !res.ok(b) {
					t.Errorf("create push config, tenant %s: %s", what, res.body)
				}
				if res := e.hinted(t, ctx, b, "key-acme", tenant, hintOp{
					method: methodDeletePushConfig, params: map[string]any{"taskId": task.ID, "id": cfg},
					verb: http.MethodDelete, path: taskPath(task) + "/pushNotificationConfigs/" + cfg,
				}); !res.ok(b) {
					t.Errorf("delete push config, tenant %s: %s", what, res.body)
				}
				if res := e.hinted(t, ctx, b, "key-acme", "", reads["GetTaskPushNotificationConfig"]); !res.ok(b) {
					t.Fatalf("the base config went away: %s", res.body)
				}

				answered := waiting()
				reply := restReplyBody("m-"+isolation.NewOpaque(), answered.ID, "", "accept")
				var msg map[string]any
				_ = json.Unmarshal([]byte(reply), &msg)
				res := e.hinted(t, ctx, b, "key-acme", tenant, hintOp{method: methodSendMessage, params: msg, verb: http.MethodPost, path: "/message:send", body: reply})
				var sent struct{ Task wire.Task }
				if err := json.Unmarshal(res.result(t, b), &sent); err != nil || sent.Task.ID != answered.ID || sent.Task.Status.State != wire.TaskStateCompleted {
					t.Errorf("SendMessage to the task, tenant %s: %s", what, res.body)
				}

				canceled := waiting()
				res = e.hinted(t, ctx, b, "key-acme", tenant, hintOp{method: methodCancelTask, params: map[string]any{"id": canceled.ID},
					verb: http.MethodPost, path: taskPath(canceled) + ":cancel"})
				var got wire.Task
				if err := json.Unmarshal(res.result(t, b), &got); err != nil || got.ID != canceled.ID ||
					(got.Status.State != wire.TaskStateCanceled && got.Status.State != wire.TaskStateWorking) {
					t.Errorf("CancelTask, tenant %s: %s", what, res.body)
				}
			}
			// SubscribeToTask: the stream opens with the task. It stays
			// open (the task waits), so the request's context ends it.
			for _, what := range []string{"never minted", "another tenant's agent", "the caller's own agent"} {
				sctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
				res := e.hinted(t, sctx, b, "key-acme", tenants[what], hintOp{method: methodSubscribeToTask, params: map[string]any{"id": task.ID},
					verb: http.MethodGet, path: taskPath(task) + ":subscribe"})
				cancel()
				if res.status != http.StatusOK || res.header.Get("Content-Type") != "text/event-stream" ||
					!bytes.Contains(res.body, []byte(`"task":{"id":"`+string(task.ID)+`"`)) {
					t.Errorf("SubscribeToTask, tenant %s: HTTP %d %s", what, res.status, res.body)
				}
			}
		})
	}
}

// A message to an existing task over HTTP+JSON may carry one tenant in the
// path and another in the body: neither is read.
func TestTenantHintPathAndBodyDisagreeOnExistingTask(t *testing.T) {
	e := newRESTEnv(t)
	task, _ := e.sendTask(t, "key-acme", restSendBody("m-1", "wait"))
	body := `{"tenant":"globex",` + restReplyBody("m-2", task.ID, "", "accept")[1:]
	res := e.do(t, restCall{method: http.MethodPost, path: "/AAAAAAAAAAAAAAAAAAAAAAAA/message:send", key: "key-acme", body: body})
	var out struct{ Task wire.Task }
	if res.status != http.StatusOK || json.Unmarshal(res.body, &out) != nil || out.Task.Status.State != wire.TaskStateCompleted {
		t.Fatalf("HTTP %d %s", res.status, res.body)
	}
}

// Where tenant selects what the request acts on — a new task and
// GetExtendedAgentCard — a value outside the caller's inventory is still
// answered exactly like a never-minted one, on both bindings (OpenWOP
// interop.md §Non-disclosure).
func TestTenantStillSelectsNewTasksAndCards(t *testing.T) {
	e := newRESTEnv(t)
	ctx := t.Context()
	ops := map[string]hintOp{
		"SendMessage": {method: methodSendMessage, params: map[string]any{"message": map[string]any{"messageId": "m-new", "role": "ROLE_USER", "parts": []any{map[string]any{"text": "hi"}}}},
			verb: http.MethodPost, path: "/message:send", body: restSendBody("m-new", "hi")},
		"SendStreamingMessage": {method: methodSendStreamingMessage, params: map[string]any{"message": map[string]any{"messageId": "m-new", "role": "ROLE_USER", "parts": []any{map[string]any{"text": "hi"}}}},
			verb: http.MethodPost, path: "/message:stream", body: restSendBody("m-new", "hi")},
		"GetExtendedAgentCard": {method: methodGetExtendedAgentCard, verb: http.MethodGet, path: "/extendedAgentCard"},
	}
	for _, b := range hintBindings {
		for name, op := range ops {
			never := e.hinted(t, ctx, b, "key-globex", "AAAAAAAAAAAAAAAAAAAAAAAA", op)
			if never.ok(b) {
				t.Fatalf("%s %s with a never-minted value: %s", b, name, never.body)
			}
			for _, tenant := range []string{e.routing.Derive("agent-ada"), "acme", "globex"} {
				got := e.hinted(t, ctx, b, "key-globex", tenant, op)
				if got.status != never.status || !bytes.Equal(got.body, never.body) {
					t.Errorf("%s %s, tenant %q: HTTP %d %s\nwant HTTP %d %s", b, name, tenant, got.status, got.body, never.status, never.body)
				}
			}
		}
	}
	// Nothing was started for globex.
	if ids := listedIDs(t, viaJSONRPC, e.hinted(t, ctx, viaJSONRPC, "key-globex", "", listOp(""))); len(ids) != 0 {
		t.Fatalf("refused sends started %v", ids)
	}
}
