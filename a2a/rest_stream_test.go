package a2a

import (
	"errors"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
)

// The HTTP+JSON stream's three endings: a refusal before the first event is a
// plain status with its own HTTP code; an error after it is a final
// {"error":{…}} event in google.rpc.Status shape; a sequence that yields
// nothing is a server fault, never an empty 200.
func TestRESTStreamEndings(t *testing.T) {
	e := newRESTEnv(t)
	task := &wire.Task{ID: "acme/ZZZZZZZZZZZZZZZZZZZZZZZZZZ", ContextID: "ctx-1", Status: wire.TaskStatus{State: wire.TaskStateWorking}}
	seq := func(events ...any) iter.Seq2[wire.Event, error] {
		return func(yield func(wire.Event, error) bool) {
			for _, ev := range events {
				var ok bool
				switch v := ev.(type) {
				case error:
					ok = yield(nil, v)
				case wire.Event:
					ok = yield(v, nil)
				}
				if !ok {
					return
				}
			}
		}
	}
	run := func(s iter.Seq2[wire.Event, error]) restResult {
		w := httptest.NewRecorder()
		e.srv.writeEvents(httptest.NewRequest(http.MethodGet, "/", nil).Context(), w, "HTTP+JSON stream", methodSubscribeToTask, s, restFrames{e.srv})
		return restResult{status: w.Code, header: w.Header(), body: w.Body.Bytes()}
	}

	res := run(seq(e.srv.errs.taskNotFound()))
	restWantStatus(t, res, http.StatusNotFound, "NOT_FOUND", "TASK_NOT_FOUND")

	res = run(seq(task, e.srv.errs.unsupported("gone"), task))
	if res.status != http.StatusOK || res.header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("HTTP %d %q", res.status, res.header.Get("Content-Type"))
	}
	evs := restSSEEvents(t, res.body)
	if len(evs) != 2 || evs[0].Task == nil || evs[1].Error == nil {
		t.Fatalf("events: %s", res.body)
	}
	frame := restResult{status: 400, header: http.Header{"Content-Type": {"application/json"}}, body: []byte(`{"error":` + string(evs[1].Error) + `}`)}
	restWantStatus(t, frame, 400, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION")

	res = run(seq(task, errors.New("store exploded: secret=xyz")))
	if strings.Contains(string(res.body), "secret") || !strings.Contains(string(res.body), `"status":"INTERNAL"`) {
		t.Errorf("a fault mid-stream: %s", res.body)
	}

	res = run(seq())
	restWantStatus(t, res, http.StatusInternalServerError, "INTERNAL", "INTERNAL_ERROR")
}
