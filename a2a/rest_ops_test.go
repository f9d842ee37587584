package a2a

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/isolation"
)

// restUnknownAcmeID is a well-formed acme id no run has.
const restUnknownAcmeID = "acme/ZZZZZZZZZZZZZZZZZZZZZZZZZZ"

func restSendBody(messageID, text string) string {
	return `{"message":{"messageId":"` + messageID + `","role":"ROLE_USER","parts":[{"text":"` + text + `"}]}}`
}

func restReplyBody(messageID string, taskID wire.TaskID, contextID, action string) string {
	ctx := ""
	if contextID != "" {
		ctx = `"contextId":"` + contextID + `",`
	}
	return `{"message":{"messageId":"` + messageID + `","taskId":"` + string(taskID) + `",` + ctx +
		`"role":"ROLE_USER","parts":[{"data":{"action":"` + action + `"}}],"metadata":{"openwop":{"interrupt":{"action":"` + action + `"}}}}}`
}

// sendTask posts a SendMessage and returns the task of a 200 answer.
func (e *restEnv) sendTask(t testing.TB, key, body string) (*wire.Task, restResult) {
	t.Helper()
	res := e.do(t, restCall{method: http.MethodPost, path: "/message:send", key: key, body: body})
	if res.status != http.StatusOK {
		t.Fatalf("SendMessage: HTTP %d %s", res.status, res.body)
	}
	var out struct {
		Task *wire.Task `json:"task"`
	}
	if err := json.Unmarshal(res.body, &out); err != nil || out.Task == nil {
		t.Fatalf("not a SendMessageResponse: %s", res.body)
	}
	return out.Task, res
}

func restTaskOf(t testing.TB, res restResult) *wire.Task {
	t.Helper()
	if res.status != http.StatusOK || res.header.Get("Content-Type") != "application/json" {
		t.Fatalf("HTTP %d %q: %s", res.status, res.header.Get("Content-Type"), res.body)
	}
	task := new(wire.Task)
	if err := json.Unmarshal(res.body, task); err != nil {
		t.Fatal(err)
	}
	return task
}

// The error rows of the binding, each a golden transcript, and the shape
// every client relies on (OpenWOP interop map, a2a.errors; RFC 0211 §B, §C).
func TestRESTErrorRows(t *testing.T) {
	e := newRESTEnv(t)
	off := newRESTEnv(t, func(c *testConfig) { c.setCaps(caps{}) })
	forbidding := newRESTEnv(t, func(c *testConfig) {
		c.Subjects = interop.SubjectResolverFunc(func(*http.Request) (interop.Subject, error) {
			return interop.Subject{}, fmt.Errorf("host policy: %w", interop.ErrForbidden)
		})
	})
	draining := newRESTEnv(t)
	draining.srv.Drain()
	never := "AAAAAAAAAAAAAAAAAAAAAAAA"
	ada := e.routing.Derive("agent-ada")
	projected := isolation.Project(restUnknownAcmeID)
	huge := `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"` + strings.Repeat("x", 70<<10) + `"}]}}`
	cases := []struct {
		name   string
		env    *restEnv
		call   restCall
		http   int
		grpc   string
		reason string
		field  string // google.rpc.BadRequest field, when one is expected
	}{
		{"unknown-path", e, restCall{method: "GET", path: "/agents", key: "key-acme"}, 404, "NOT_FOUND", "METHOD_NOT_FOUND", ""},
		{"unknown-path-under-tenant", e, restCall{method: "GET", path: "/" + never + "/jobs", key: "key-acme"}, 404, "NOT_FOUND", "METHOD_NOT_FOUND", ""},
		{"unknown-path-unauthenticated", e, restCall{method: "GET", path: "/agents"}, 404, "NOT_FOUND", "METHOD_NOT_FOUND", ""},
		{"wrong-verb", e, restCall{method: "DELETE", path: "/message:send", key: "key-acme"}, 405, "UNIMPLEMENTED", "METHOD_NOT_FOUND", ""},
		{"oversize", e, restCall{method: "POST", path: "/message:send", key: "key-acme", body: huge}, 413, "INVALID_ARGUMENT", "INVALID_REQUEST", ""},
		{"malformed-json", e, restCall{method: "POST", path: "/message:send", key: "key-acme", body: `{"message":`}, 400, "INVALID_ARGUMENT", "PARSE_ERROR", ""},
		{"body-not-object", e, restCall{method: "POST", path: "/message:send", key: "key-acme", body: `[1]`}, 400, "INVALID_ARGUMENT", "", ""},
		{"member-case", e, restCall{method: "POST", path: "/message:send", key: "key-acme", body: `{"Message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]}}`}, 400, "INVALID_ARGUMENT", "", "message"},
		{"nested-member-case", e, restCall{method: "POST", path: "/message:send", key: "key-acme", body: `{"message":{"messageID":"m","role":"ROLE_USER","parts":[{"text":"x"}]}}`}, 400, "INVALID_ARGUMENT", "", "message.messageId"},
		{"wrong-type", e, restCall{method: "POST", path: "/message:send", key: "key-acme", body: `{"message":{"messageId":7,"role":"ROLE_USER","parts":[{"text":"x"}]}}`}, 400, "INVALID_ARGUMENT", "", "message.messageId"},
		{"missing-message", e, restCall{method: "POST", path: "/message:send", key: "key-acme", body: `{}`}, 400, "INVALID_ARGUMENT", "", "message"},
		{"unauthenticated", e, restCall{method: "GET", path: "/tasks"}, 401, "UNAUTHENTICATED", "UNAUTHENTICATED", ""},
		{"unknown-credential", e, restCall{method: "GET", path: "/tasks", key: "key-nobody"}, 401, "UNAUTHENTICATED", "UNAUTHENTICATED", ""},
		{"forbidden", forbidding, restCall{method: "GET", path: "/tasks", key: "key-acme"}, 403, "PERMISSION_DENIED", "PERMISSION_DENIED", ""},
		{"draining", draining, restCall{method: "GET", path: "/tasks", key: "key-acme"}, 503, "UNAVAILABLE", "SERVER_ERROR", ""},
		{"version-9.9", e, restCall{method: "GET", path: "/tasks/" + projected, key: "key-acme", noVersion: true, header: map[string]string{"A2A-Version": "9.9"}}, 400, "FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED", ""},
		{"version-99.0-query", e, restCall{method: "GET", path: "/tasks/" + projected + "?A2A-Version=99.0", key: "key-acme", noVersion: true}, 400, "FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED", ""},
		{"task-not-found", e, restCall{method: "GET", path: "/tasks/" + projected, key: "key-acme"}, 404, "NOT_FOUND", "TASK_NOT_FOUND", ""},
		{"conformance-probe", e, restCall{method: "GET", path: "/tasks/" + url.PathEscape("zz-conformance/0123456789abcdef0123456789abcdef"), key: "key-acme"}, 404, "NOT_FOUND", "TASK_NOT_FOUND", ""},
		{"history-not-integer", e, restCall{method: "GET", path: "/tasks/" + projected + "?historyLength=all", key: "key-acme"}, 400, "INVALID_ARGUMENT", "", "historyLength"},
		{"list-bad-timestamp", e, restCall{method: "GET", path: "/tasks?statusTimestampAfter=yesterday", key: "key-acme"}, 400, "INVALID_ARGUMENT", "", "statusTimestampAfter"},
		{"list-bad-page-size", e, restCall{method: "GET", path: "/tasks?pageSize=ten", key: "key-acme"}, 400, "INVALID_ARGUMENT", "", "pageSize"},
		{"list-bad-include-artifacts", e, restCall{method: "GET", path: "/tasks?includeArtifacts=sometimes", key: "key-acme"}, 400, "INVALID_ARGUMENT", "", "includeArtifacts"},
		{"send-unknown-tenant", e, restCall{method: "POST", path: "/" + never + "/message:send", key: "key-acme", body: restSendBody("m-x", "hi")}, 400, "INVALID_ARGUMENT", "", "tenant"},
		{"send-tenant-mismatch", e, restCall{method: "POST", path: "/" + ada + "/message:send", key: "key-acme", body: `{"tenant":"` + never + `",` + restSendBody("m-y", "hi")[1:]}, 400, "INVALID_ARGUMENT", "", "tenant"},
		{"send-to-unknown-task", e, restCall{method: "POST", path: "/message:send", key: "key-acme", body: restReplyBody("m-z", restUnknownAcmeID, "", "accept")}, 404, "NOT_FOUND", "TASK_NOT_FOUND", ""},
		{"cancel-unknown-task", e, restCall{method: "POST", path: "/tasks/" + projected + ":cancel", key: "key-acme"}, 404, "NOT_FOUND", "TASK_NOT_FOUND", ""},
		{"cancel-body-not-json", e, restCall{method: "POST", path: "/tasks/" + projected + ":cancel", key: "key-acme", body: "metadata"}, 400, "INVALID_ARGUMENT", "PARSE_ERROR", ""},
		{"subscribe-unknown-task", e, restCall{method: "GET", path: "/tasks/" + projected + ":subscribe", key: "key-acme"}, 404, "NOT_FOUND", "TASK_NOT_FOUND", ""},
		{"subscribe-streaming-off", off, restCall{method: "POST", path: "/tasks/" + projected + ":subscribe", key: "key-acme"}, 400, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION", ""},
		{"stream-streaming-off", off, restCall{method: "POST", path: "/message:stream", key: "key-acme", body: restSendBody("m-s", "hi")}, 400, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION", ""},
		{"push-create", e, restCall{method: "POST", path: "/tasks/" + projected + "/pushNotificationConfigs", key: "key-acme", body: `{"url":"https://hook.example/x"}`}, 400, "FAILED_PRECONDITION", "PUSH_NOTIFICATION_NOT_SUPPORTED", ""},
		{"push-list", e, restCall{method: "GET", path: "/tasks/" + projected + "/pushNotificationConfigs", key: "key-acme"}, 400, "FAILED_PRECONDITION", "PUSH_NOTIFICATION_NOT_SUPPORTED", ""},
		{"push-get", e, restCall{method: "GET", path: "/tasks/" + projected + "/pushNotificationConfigs/cfg-1", key: "key-acme"}, 400, "FAILED_PRECONDITION", "PUSH_NOTIFICATION_NOT_SUPPORTED", ""},
		{"push-delete", e, restCall{method: "DELETE", path: "/tasks/" + projected + "/pushNotificationConfigs/cfg-1", key: "key-acme"}, 400, "FAILED_PRECONDITION", "PUSH_NOTIFICATION_NOT_SUPPORTED", ""},
		{"push-malformed-body-still-gated", e, restCall{method: "POST", path: "/tasks/x/pushNotificationConfigs", key: "key-acme", body: "{"}, 400, "FAILED_PRECONDITION", "PUSH_NOTIFICATION_NOT_SUPPORTED", ""},
		{"extended-card-unknown-tenant", e, restCall{method: "GET", path: "/" + never + "/extendedAgentCard", key: "key-acme"}, 400, "FAILED_PRECONDITION", "EXTENDED_AGENT_CARD_NOT_CONFIGURED", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := tc.env.do(t, tc.call)
			st := restWantStatus(t, res, tc.http, tc.grpc, tc.reason)
			var field string
			for _, d := range st.Error.Details {
				var br struct {
					Type            string `json:"@type"`
					FieldViolations []struct {
						Field       string `json:"field"`
						Description string `json:"description"`
					} `json:"fieldViolations"`
				}
				if json.Unmarshal(d, &br) == nil && br.Type == badRequestType {
					if len(br.FieldViolations) != 1 || br.FieldViolations[0].Description == "" {
						t.Fatalf("BadRequest %s", d)
					}
					field = br.FieldViolations[0].Field
				}
			}
			if field != tc.field {
				t.Errorf("BadRequest field %q, want %q", field, tc.field)
			}
			switch tc.http {
			case 401:
				if res.header.Get("WWW-Authenticate") != "Bearer" {
					t.Errorf("WWW-Authenticate %q", res.header.Get("WWW-Authenticate"))
				}
			case 405:
				if res.header.Get("Allow") == "" {
					t.Error("405 without Allow")
				}
			}
			if tc.reason == "VERSION_NOT_SUPPORTED" {
				var info restErrorInfoJSON
				_ = json.Unmarshal(st.Error.Details[0], &info)
				if info.Metadata["supportedVersions"] != "1.0" {
					t.Errorf("supportedVersions %v", info.Metadata)
				}
			}
			c := tc.call
			if len(c.body) > 200 {
				c.body = c.body[:60] + "…(" + fmt.Sprint(len(c.body)) + " bytes)"
			}
			restGolden(t, "rest", "error-"+tc.name, restTranscript(c, res))
		})
	}
}

// A refused request changes nothing and records one negotiation decision
// as a host event; a refused version is recorded as refused.
func TestRESTRecordsNegotiation(t *testing.T) {
	e := newRESTEnv(t)
	before := len(e.store.DurableHostEvents("acme"))
	e.do(t, restCall{method: "GET", path: "/tasks/" + isolation.Project(restUnknownAcmeID), key: "key-acme", noVersion: true, header: map[string]string{"A2A-Version": "9.9"}})
	e.do(t, restCall{method: "GET", path: "/tasks", key: "key-acme"})
	evs := e.store.DurableHostEvents("acme")
	if len(evs) != before+2 {
		t.Fatalf("%d records, want %d", len(evs), before+2)
	}
	var refused, accepted cardDecision
	_ = json.Unmarshal(evs[len(evs)-2].Payload, &refused)
	_ = json.Unmarshal(evs[len(evs)-1].Payload, &accepted)
	if refused.Outcome != "refused" || refused.Requested != "9.9" || accepted.Outcome != "accepted" || accepted.Version != "1.0" {
		t.Errorf("records %+v %+v", refused, accepted)
	}
}

// The operations' success answers, as golden transcripts, through one
// task's life: SendMessage to input-required, GetTask in every id
// spelling, ListTasks, the accepting reply, the terminal refusals, and
// CancelTask on a second task.
func TestRESTOperationsGolden(t *testing.T) {
	e := newRESTEnv(t)
	transcripts := map[string][]byte{}
	record := func(name string, c restCall) restResult {
		t.Helper()
		res := e.do(t, c)
		transcripts[name] = restTranscript(c, res)
		return res
	}

	send := restCall{method: "POST", path: "/message:send", key: "key-acme", body: restSendBody("m-1", "please approve")}
	task, _ := e.sendTask(t, send.key, send.body)
	// Replay the same messageId: the same task, not a second run (OpenWOP interop map, a2a.operations).
	again := record("send-message", send)
	var replay struct{ Task wire.Task }
	_ = json.Unmarshal(again.body, &replay)
	if replay.Task.ID != task.ID || task.Status.State != wire.TaskStateInputRequired || !strings.Contains(string(task.ID), "/") {
		t.Fatalf("task %s %s, replay %s", task.ID, task.Status.State, replay.Task.ID)
	}

	// GetTask: projected, percent-encoded and raw two-segment ids agree.
	get := record("get-task", restCall{method: "GET", path: "/tasks/" + isolation.Project(string(task.ID)), key: "key-acme"})
	for _, p := range []string{url.PathEscape(string(task.ID)), string(task.ID)} {
		other := e.do(t, restCall{method: "GET", path: "/tasks/" + p, key: "key-acme"})
		if other.status != get.status || !bytes.Equal(other.body, get.body) {
			t.Errorf("GET /tasks/%s differs: %s", p, other.body)
		}
	}
	if got := restTaskOf(t, get); got.ID != task.ID || got.ContextID != task.ContextID {
		t.Errorf("GetTask %s/%s", got.ID, got.ContextID)
	}
	h0 := record("get-task-history-0", restCall{method: "GET", path: "/tasks/" + isolation.Project(string(task.ID)) + "?historyLength=0", key: "key-acme"})
	if len(restTaskOf(t, h0).History) != 0 {
		t.Error("historyLength=0 returned history")
	}

	list := record("list-tasks", restCall{method: "GET", path: "/tasks?contextId=" + url.QueryEscape(task.ContextID) + "&pageSize=10", key: "key-acme"})
	var page wire.ListTasksResponse
	if err := json.Unmarshal(list.body, &page); err != nil || len(page.Tasks) != 1 || page.Tasks[0].ID != task.ID {
		t.Fatalf("ListTasks: %s", list.body)
	}
	record("list-tasks-empty", restCall{method: "GET", path: "/tasks?contextId=nothing-here", key: "key-acme"})

	// The mismatching contextId changes nothing (OpenWOP interop.md §A2A multi-turn).
	mismatch := record("send-context-mismatch", restCall{method: "POST", path: "/message:send", key: "key-acme", body: restReplyBody("m-2", task.ID, "ctx-other", "accept")})
	restWantStatus(t, mismatch, 400, "INVALID_ARGUMENT", "")
	if st := restTaskOf(t, e.do(t, restCall{method: "GET", path: "/tasks/" + isolation.Project(string(task.ID)), key: "key-acme"})).Status.State; st != wire.TaskStateInputRequired {
		t.Fatalf("after a refused reply the task is %s", st)
	}

	accept := record("send-accept", restCall{method: "POST", path: "/message:send", key: "key-acme", body: restReplyBody("m-3", task.ID, "", "accept")})
	var done struct{ Task wire.Task }
	_ = json.Unmarshal(accept.body, &done)
	if done.Task.Status.State != wire.TaskStateCompleted || done.Task.ContextID != task.ContextID {
		t.Fatalf("reply answered %s in %q: %s", done.Task.Status.State, done.Task.ContextID, accept.body)
	}
	restWantStatus(t, record("send-to-terminal", restCall{method: "POST", path: "/message:send", key: "key-acme", body: restReplyBody("m-4", task.ID, "", "accept")}),
		400, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION")
	restWantStatus(t, record("cancel-terminal", restCall{method: "POST", path: "/tasks/" + isolation.Project(string(task.ID)) + ":cancel", key: "key-acme"}),
		400, "FAILED_PRECONDITION", "TASK_NOT_CANCELABLE")
	restWantStatus(t, record("subscribe-terminal", restCall{method: "POST", path: "/tasks/" + isolation.Project(string(task.ID)) + ":subscribe", key: "key-acme"}),
		400, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION")

	second, _ := e.sendTask(t, "key-acme", restSendBody("m-5", "another"))
	cancel := record("cancel-task", restCall{method: "POST", path: "/tasks/" + isolation.Project(string(second.ID)) + ":cancel", key: "key-acme", body: `{"metadata":{"why":"test"}}`})
	if st := restTaskOf(t, cancel).Status.State; st != wire.TaskStateWorking && st != wire.TaskStateCanceled {
		t.Errorf("CancelTask answered %s", st)
	}

	for name, got := range transcripts {
		restGolden(t, "rest", name, got)
	}
}

// Streams: message:stream and subscribe answer text/event-stream with one
// StreamResponse per data line, the task first.
func TestRESTStreamsGolden(t *testing.T) {
	e := newRESTEnv(t)
	stream := restCall{method: "POST", path: "/message:stream", key: "key-acme", body: restSendBody("m-stream", "stream it")}
	res := e.do(t, stream)
	if res.status != http.StatusOK || res.header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("HTTP %d %q: %s", res.status, res.header.Get("Content-Type"), res.body)
	}
	events := restSSEEvents(t, res.body)
	if len(events) < 2 || events[0].Task == nil {
		t.Fatalf("events %s", res.body)
	}
	last := events[len(events)-1]
	if last.StatusUpdate == nil || last.StatusUpdate.Status.State != wire.TaskStateInputRequired {
		t.Fatalf("the stream does not end at the interrupt: %s", res.body)
	}
	restGolden(t, "rest", "stream-message", restTranscript(stream, res))

	// Subscribe to the waiting task: the task first, and the stream stays
	// open until the client leaves.
	id := isolation.Project(string(events[0].Task.ID))
	for _, verb := range []string{"GET", "POST"} {
		ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
		sub := restCall{method: verb, path: "/tasks/" + id + ":subscribe", key: "key-acme"}
		res = e.doCtx(t, ctx, sub)
		cancel()
		evs := restSSEEvents(t, res.body)
		if res.status != http.StatusOK || len(evs) != 1 || evs[0].Task == nil || evs[0].Task.Status.State != wire.TaskStateInputRequired {
			t.Fatalf("%s subscribe: HTTP %d %s", verb, res.status, res.body)
		}
		if verb == "GET" {
			restGolden(t, "rest", "subscribe", restTranscript(sub, res))
		}
	}
}

// restStreamEvent is one StreamResponse as a client reads it.
type restStreamEvent struct {
	Task           *wire.Task                    `json:"task"`
	StatusUpdate   *wire.TaskStatusUpdateEvent   `json:"statusUpdate"`
	ArtifactUpdate *wire.TaskArtifactUpdateEvent `json:"artifactUpdate"`
	Message        *wire.Message                 `json:"message"`
	Error          json.RawMessage               `json:"error"`
}

// restSSEEvents parses an event stream whose every event is one data line of
// one StreamResponse with exactly one member.
func restSSEEvents(t testing.TB, body []byte) []restStreamEvent {
	t.Helper()
	var out []restStreamEvent
	for _, block := range strings.Split(strings.TrimSpace(string(body)), "\n\n") {
		if block == "" || strings.HasPrefix(block, ":") {
			continue
		}
		data, ok := strings.CutPrefix(block, "data: ")
		if !ok || strings.Contains(data, "\n") {
			t.Fatalf("not one data line: %q", block)
		}
		var raw map[string]json.RawMessage
		if err := json.Unmarshal([]byte(data), &raw); err != nil || len(raw) != 1 {
			t.Fatalf("not a StreamResponse with one member: %s", data)
		}
		var ev restStreamEvent
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatal(err)
		}
		out = append(out, ev)
	}
	return out
}

// Tenant B can neither see nor touch tenant A's task through any route,
// and every refusal is byte-identical to the one for an id that never
// existed (OpenWOP interop.md §Per-agent cards, §Isolation; RFC 0211 §D).
func TestRESTIsolation(t *testing.T) {
	e := newRESTEnv(t)
	task, _ := e.sendTask(t, "key-acme", restSendBody("m-iso", "mine"))
	foreignID := string(task.ID)
	ghostID := "globex/" + strings.Repeat("Q", 26) // in B's own tenant, never minted
	gina := e.routing.Derive("agent-gina")
	ada := e.routing.Derive("agent-ada")

	type probe struct {
		name string
		call func(id string) restCall
	}
	probes := []probe{
		{"get projected", func(id string) restCall {
			return restCall{method: "GET", path: "/tasks/" + isolation.Project(id)}
		}},
		{"get percent", func(id string) restCall { return restCall{method: "GET", path: "/tasks/" + url.PathEscape(id)} }},
		{"get raw", func(id string) restCall { return restCall{method: "GET", path: "/tasks/" + id + "?historyLength=5"} }},
		{"get via own agent", func(id string) restCall {
			return restCall{method: "GET", path: "/" + gina + "/tasks/" + isolation.Project(id)}
		}},
		{"get via A's agent", func(id string) restCall {
			return restCall{method: "GET", path: "/" + ada + "/tasks/" + isolation.Project(id)}
		}},
		{"cancel", func(id string) restCall {
			return restCall{method: "POST", path: "/tasks/" + isolation.Project(id) + ":cancel"}
		}},
		{"subscribe get", func(id string) restCall {
			return restCall{method: "GET", path: "/tasks/" + isolation.Project(id) + ":subscribe"}
		}},
		{"subscribe post", func(id string) restCall {
			return restCall{method: "POST", path: "/tasks/" + url.PathEscape(id) + ":subscribe"}
		}},
		{"continue", func(id string) restCall {
			return restCall{method: "POST", path: "/message:send", body: restReplyBody("m-b", wire.TaskID(id), "", "accept")}
		}},
		{"continue streaming", func(id string) restCall {
			return restCall{method: "POST", path: "/message:stream", body: restReplyBody("m-c", wire.TaskID(id), "", "accept")}
		}},
		{"push list (gated)", func(id string) restCall {
			return restCall{method: "GET", path: "/tasks/" + isolation.Project(id) + "/pushNotificationConfigs"}
		}},
	}
	for _, p := range probes {
		t.Run(p.name, func(t *testing.T) {
			foreign := p.call(foreignID)
			foreign.key = "key-globex"
			ghost := p.call(ghostID)
			ghost.key = "key-globex"
			a, b := e.do(t, foreign), e.do(t, ghost)
			if a.status == http.StatusOK || a.status != b.status || !bytes.Equal(a.body, b.body) {
				t.Errorf("foreign: HTTP %d %s\nunknown: HTTP %d %s", a.status, a.body, b.status, b.body)
			}
		})
	}

	// ListTasks: B never sees A's task, also when it names A's contextId and
	// A's agent (OpenWOP interop.md §Isolation).
	for _, path := range []string{
		"/tasks", "/tasks?contextId=" + url.QueryEscape(task.ContextID),
		"/" + gina + "/tasks?contextId=" + url.QueryEscape(task.ContextID),
	} {
		res := e.do(t, restCall{method: "GET", path: path, key: "key-globex"})
		if bytes.Contains(res.body, []byte(foreignID)) || bytes.Contains(res.body, []byte(task.ContextID)) {
			t.Errorf("B's ListTasks %s shows A's task: %s", path, res.body)
		}
		var page wire.ListTasksResponse
		if res.status != 200 || json.Unmarshal(res.body, &page) != nil || len(page.Tasks) != 0 || page.Tasks == nil {
			t.Errorf("B's ListTasks %s: HTTP %d %s", path, res.status, res.body)
		}
	}
	// A's agent value is not B's: SendMessage and the agent's card through
	// it are refused like a never-minted value; ListTasks ignores it
	// (TestTenantHintListTasks).
	for _, route := range []struct{ method, path, body string }{
		{"POST", "/message:send", restSendBody("m-r", "hi")},
		{"POST", "/message:stream", restSendBody("m-s", "hi")},
		{"GET", "/extendedAgentCard", ""},
	} {
		a := e.do(t, restCall{method: route.method, path: "/" + ada + route.path, key: "key-globex", body: route.body})
		b := e.do(t, restCall{method: route.method, path: "/AAAAAAAAAAAAAAAAAAAAAAAA" + route.path, key: "key-globex", body: route.body})
		if a.status != 400 || !bytes.Equal(a.body, b.body) {
			t.Errorf("%s %s via A's R: %d %s; never-minted: %d %s", route.method, route.path, a.status, a.body, b.status, b.body)
		}
	}

	// And A's task is untouched.
	if st := restTaskOf(t, e.do(t, restCall{method: "GET", path: "/tasks/" + isolation.Project(foreignID), key: "key-acme"})).Status.State; st != wire.TaskStateInputRequired {
		t.Errorf("A's task is %s after B's attempts", st)
	}
}

// A task started through a routing value is a run of the caller's tenant
// (OpenWOP RFC 0202 §D.9), and of the agent's workflow.
func TestRESTSendThroughRoutingValue(t *testing.T) {
	e := newRESTEnv(t)
	bo := e.routing.Derive("agent-bo") // routes conformance-delay only
	res := e.do(t, restCall{method: "POST", path: "/" + bo + "/message:send", key: "key-acme", body: restSendBody("m-bo", "wait")})
	var out struct{ Task wire.Task }
	if res.status != 200 || json.Unmarshal(res.body, &out) != nil {
		t.Fatalf("HTTP %d %s", res.status, res.body)
	}
	if isolation.TenantOf(string(out.Task.ID)) != "acme" || out.Task.Status.State != wire.TaskStateCompleted {
		t.Errorf("task %s at %s", out.Task.ID, out.Task.Status.State)
	}
	run, err := e.store.GetRun(t.Context(), restKeys["key-acme"], string(out.Task.ID))
	if err != nil || run.WorkflowID != "conformance-delay" {
		t.Errorf("run %+v %v", run.WorkflowID, err)
	}
	// The body may carry the same routing value.
	res = e.do(t, restCall{method: "POST", path: "/message:send", key: "key-acme", body: `{"tenant":"` + bo + `",` + restSendBody("m-bo-2", "wait")[1:]})
	if res.status != 200 {
		t.Errorf("tenant in the body: HTTP %d %s", res.status, res.body)
	}
}

// ListTasks reads its query parameters, including a2a-go's name for the
// timestamp filter.
func TestRESTListTasksQuery(t *testing.T) {
	e := newRESTEnv(t)
	q := url.Values{
		"contextId": {"c-1"}, "status": {"TASK_STATE_WORKING"}, "pageSize": {"7"}, "pageToken": {"tok"},
		"historyLength": {"2"}, "lastUpdatedAfter": {"2026-01-02T03:04:05Z"}, "includeArtifacts": {"true"},
	}
	req := new(wire.ListTasksRequest)
	if err := e.srv.listTasksQuery(q, req); err != nil {
		t.Fatal(err)
	}
	if req.ContextID != "c-1" || req.Status != wire.TaskStateWorking || req.PageSize != 7 || req.PageToken != "tok" ||
		req.HistoryLength == nil || *req.HistoryLength != 2 || req.StatusTimestampAfter == nil ||
		!req.StatusTimestampAfter.Equal(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) || !req.IncludeArtifacts {
		t.Errorf("%+v", req)
	}
	q.Set("statusTimestampAfter", "2027-01-01T00:00:00.5Z")
	_ = e.srv.listTasksQuery(q, req)
	if !req.StatusTimestampAfter.Equal(time.Date(2027, 1, 1, 0, 0, 0, 5e8, time.UTC)) {
		t.Errorf("statusTimestampAfter does not win over lastUpdatedAfter: %v", req.StatusTimestampAfter)
	}
}

// Host middleware refuses in the binding's shape.
func TestWriteHTTPJSONError(t *testing.T) {
	cases := []struct {
		name   string
		err    error
		preset string
		http   int
		grpc   string
		reason string
		auth   string
	}{
		{"unauthenticated", fmt.Errorf("no key: %w", interop.ErrUnauthenticated), "", 401, "UNAUTHENTICATED", "UNAUTHENTICATED", "Bearer"},
		{"own challenge", interop.ErrUnauthenticated, `Basic realm="x"`, 401, "UNAUTHENTICATED", "UNAUTHENTICATED", `Basic realm="x"`},
		{"forbidden", interop.ErrForbidden, "", 403, "PERMISSION_DENIED", "PERMISSION_DENIED", ""},
		{"too large", &http.MaxBytesError{Limit: 10}, "", 413, "INVALID_ARGUMENT", "INVALID_REQUEST", ""},
		{"rate limit", &Error{HTTP: 429, GRPC: "RESOURCE_EXHAUSTED", Reason: "RATE_LIMITED", Message: "slow down"}, "", 429, "RESOURCE_EXHAUSTED", "RATE_LIMITED", ""},
		{"anything else", errors.New("db password=hunter2 rejected"), "", 500, "INTERNAL", "INTERNAL_ERROR", ""},
		{"bad host error", &Error{HTTP: 200}, "", 500, "UNKNOWN", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			if tc.preset != "" {
				w.Header().Set("WWW-Authenticate", tc.preset)
			}
			WriteHTTPJSONError(w, tc.err)
			res := restResult{status: w.Code, header: w.Header(), body: w.Body.Bytes()}
			restWantStatus(t, res, tc.http, tc.grpc, tc.reason)
			if got := w.Header().Get("WWW-Authenticate"); got != tc.auth {
				t.Errorf("WWW-Authenticate %q, want %q", got, tc.auth)
			}
			if bytes.Contains(res.body, []byte("hunter2")) {
				t.Error("the error text reached the wire")
			}
		})
	}
}

// The 401 challenge follows the card's security schemes.
func TestRESTAuthChallenge(t *testing.T) {
	cases := []struct {
		schemes wire.NamedSecuritySchemes
		want    string
	}{
		{nil, "Bearer"},
		{wire.NamedSecuritySchemes{"k": wire.APIKeySecurityScheme{Name: "X-Key", Location: "header"}}, "Bearer"},
		{wire.NamedSecuritySchemes{"b": wire.HTTPAuthSecurityScheme{Scheme: "Basic"}, "a": wire.OAuth2SecurityScheme{}}, "Bearer, Basic"},
		{wire.NamedSecuritySchemes{"x": wire.HTTPAuthSecurityScheme{Scheme: "bearer"}, "y": wire.OpenIDConnectSecurityScheme{}}, "bearer"},
	}
	for _, tc := range cases {
		s := &Server{cfg: config{Options: Options{Card: CardConfig{SecuritySchemes: tc.schemes}}}}
		if got := s.authChallenge(); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.schemes, got, tc.want)
		}
	}
}
