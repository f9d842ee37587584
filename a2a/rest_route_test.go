package a2a

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// The router: every path of A2A 1.0.1 §11, with and without a tenant
// segment, the task id in each accepted spelling, and what is not a route.
func TestMatchREST(t *testing.T) {
	const (
		id    = "acme%2FR2D2C3POR2D2C3POR2D2C3PO"
		rawID = "acme/R2D2C3POR2D2C3POR2D2C3PO"
		R     = "AbCdEfGhIjKlMnOpQrStUvWx"
	)
	type want struct {
		method, tenant, task, config string
		code                         int    // 0: matched
		allow                        string // on 405
	}
	cases := []struct {
		verb, path string
		want       want
	}{
		{"POST", "/message:send", want{method: methodSendMessage}},
		{"POST", "/message:stream", want{method: methodSendStreamingMessage}},
		{"GET", "/extendedAgentCard", want{method: methodGetExtendedAgentCard}},
		{"GET", "/tasks", want{method: methodListTasks}},
		{"GET", "/tasks/" + id, want{method: methodGetTask, task: id}},
		{"GET", "/tasks/acme~2FR2D2C3POR2D2C3POR2D2C3PO", want{method: methodGetTask, task: "acme~2FR2D2C3POR2D2C3POR2D2C3PO"}},
		{"GET", "/tasks/" + rawID, want{method: methodGetTask, task: rawID}},
		{"GET", "/tasks/anon%3Ax/R2D2C3POR2D2C3POR2D2C3PO", want{method: methodGetTask, task: "anon:x/R2D2C3POR2D2C3POR2D2C3PO"}},
		{"GET", "/tasks/anon:x%2FR2D2C3POR2D2C3POR2D2C3PO", want{method: methodGetTask, task: "anon:x%2FR2D2C3POR2D2C3POR2D2C3PO"}},
		{"POST", "/tasks/" + id + ":cancel", want{method: methodCancelTask, task: id}},
		{"POST", "/tasks/" + rawID + ":cancel", want{method: methodCancelTask, task: rawID}},
		{"POST", "/tasks/" + id + ":subscribe", want{method: methodSubscribeToTask, task: id}},
		{"GET", "/tasks/" + id + ":subscribe", want{method: methodSubscribeToTask, task: id}},
		{"GET", "/tasks/" + rawID + ":subscribe", want{method: methodSubscribeToTask, task: rawID}},
		{"GET", "/tasks/" + id + ":other", want{method: methodGetTask, task: id + ":other"}},
		{"POST", "/tasks/" + id + "/pushNotificationConfigs", want{method: methodCreatePushConfig, task: id}},
		{"GET", "/tasks/" + id + "/pushNotificationConfigs", want{method: methodListPushConfigs, task: id}},
		{"GET", "/tasks/" + rawID + "/pushNotificationConfigs", want{method: methodListPushConfigs, task: rawID}},
		{"GET", "/tasks/" + id + "/pushNotificationConfigs/cfg%201", want{method: methodGetPushConfig, task: id, config: "cfg 1"}},
		{"DELETE", "/tasks/" + rawID + "/pushNotificationConfigs/cfg-1", want{method: methodDeletePushConfig, task: rawID, config: "cfg-1"}},
		// The tenant segment.
		{"POST", "/" + R + "/message:send", want{method: methodSendMessage, tenant: R}},
		{"GET", "/" + R + "/extendedAgentCard", want{method: methodGetExtendedAgentCard, tenant: R}},
		{"GET", "/" + R + "/tasks", want{method: methodListTasks, tenant: R}},
		{"GET", "/" + R + "/tasks/" + rawID, want{method: methodGetTask, tenant: R, task: rawID}},
		{"DELETE", "/" + R + "/tasks/" + id + "/pushNotificationConfigs/c", want{method: methodDeletePushConfig, tenant: R, task: id, config: "c"}},
		{"GET", "/a%20b/tasks", want{method: methodListTasks, tenant: "a b"}},
		{"GET", "/%zz/tasks", want{method: methodListTasks, tenant: "%zz"}},
		// Not routes.
		{"GET", "/", want{code: 404}},
		{"GET", "", want{code: 404}},
		{"GET", "/message:send/x", want{code: 404}},
		{"GET", "/nothing", want{code: 404}},
		{"GET", "/" + R, want{code: 404}},
		{"GET", "/" + R + "/", want{code: 404}},
		{"GET", "/" + R + "/" + R + "/tasks", want{code: 404}},
		{"GET", "/tasks/", want{code: 404}},
		{"GET", "/tasks//x", want{code: 404}},
		{"GET", "/tasks/a/b/c", want{code: 404}},
		{"GET", "/tasks/a/b/c/pushNotificationConfigs", want{code: 404}},
		{"GET", "/tasks/" + id + "/pushNotificationConfigs/c/d", want{code: 404}},
		{"GET", "/tasks/a/b/c/d/e/f", want{code: 404}},
		{"GET", "/message%3Asend", want{code: 404}},
		// Wrong verbs.
		{"GET", "/message:send", want{code: 405, allow: "POST"}},
		{"PUT", "/message:stream", want{code: 405, allow: "POST"}},
		{"POST", "/tasks", want{code: 405, allow: "GET"}},
		{"DELETE", "/tasks/" + id, want{code: 405, allow: "GET"}},
		{"GET", "/tasks/" + id + ":cancel", want{code: 405, allow: "POST"}},
		{"DELETE", "/tasks/" + id + ":subscribe", want{code: 405, allow: "GET, POST"}},
		{"PUT", "/tasks/" + id + "/pushNotificationConfigs", want{code: 405, allow: "GET, POST"}},
		{"POST", "/tasks/" + id + "/pushNotificationConfigs/c", want{code: 405, allow: "GET, DELETE"}},
		{"POST", "/extendedAgentCard", want{code: 405, allow: "GET"}},
		{"HEAD", "/" + R + "/tasks", want{code: 405, allow: "GET"}},
	}
	for _, tc := range cases {
		rt, refusal := matchREST(tc.verb, tc.path)
		var got want
		if refusal != nil {
			got = want{code: refusal.err.HTTP, allow: refusal.allow}
		} else {
			got = want{method: rt.op.method, tenant: rt.tenant, task: rt.task, config: rt.config}
		}
		if got != tc.want {
			t.Errorf("%s %s:\n got %+v\nwant %+v", tc.verb, tc.path, got, tc.want)
		}
	}
}

// The handler routes on the escaped path relative to its mount, wherever it
// is mounted: http.StripPrefix keeps the raw path, so %2F survives.
func TestHTTPJSONIsPrefixAgnostic(t *testing.T) {
	e := newRESTEnv(t)
	for _, prefix := range []string{"", "/deep/mount/point"} {
		mux := http.NewServeMux()
		if prefix == "" {
			mux.Handle("/", e.srv.HTTPJSON())
		} else {
			mux.Handle(prefix+"/", http.StripPrefix(prefix, e.srv.HTTPJSON()))
		}
		for path, want := range map[string]string{
			"/tasks/zz-conformance%2F0123456789abcdef0123": "TASK_NOT_FOUND",
			"/no-such-route": "METHOD_NOT_FOUND",
		} {
			r := httptest.NewRequest(http.MethodGet, "http://internal.invalid"+prefix+path, nil)
			r.Header.Set("Authorization", "Bearer key-acme")
			w := httptest.NewRecorder()
			mux.ServeHTTP(w, r)
			res := restResult{status: w.Code, header: w.Header(), body: w.Body.Bytes()}
			_, info := restMustStatus(t, res)
			if info == nil || info.Reason != want {
				t.Errorf("mounted at %q, %s: %s", prefix, path, res.body)
			}
		}
	}
}
