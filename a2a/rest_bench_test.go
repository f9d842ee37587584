package a2a

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/wopinterop/wopinterop/isolation"
)

// BenchmarkHTTPJSONGetTask is GetTask through the whole HTTP+JSON handler:
// routing, authentication, negotiation (recorded synchronously into
// memstore), the read and the projection of a task with history.
func BenchmarkHTTPJSONGetTask(b *testing.B) {
	e := newRESTEnv(b)
	task, _ := e.sendTask(b, "key-acme", restSendBody("m-bench", "bench"))
	h := e.srv.HTTPJSON()
	r := httptest.NewRequest(http.MethodGet, "http://internal.invalid/tasks/"+isolation.Project(string(task.ID)), nil)
	r.Header.Set("A2A-Version", "1.0")
	r.Header.Set("Authorization", "Bearer key-acme")
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			b.Fatalf("HTTP %d %s", w.Code, w.Body)
		}
	}
}

// BenchmarkHTTPJSONTaskNotFound is the error path: the one google.rpc.Status
// writer.
func BenchmarkHTTPJSONTaskNotFound(b *testing.B) {
	e := newRESTEnv(b)
	h := e.srv.HTTPJSON()
	r := httptest.NewRequest(http.MethodGet, "http://internal.invalid/tasks/"+isolation.Project(restUnknownAcmeID), nil)
	r.Header.Set("A2A-Version", "1.0")
	r.Header.Set("Authorization", "Bearer key-acme")
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusNotFound {
			b.Fatalf("HTTP %d", w.Code)
		}
	}
}

// BenchmarkAgentCard serves the pre-encoded public card, with the
// negotiation record of every fetch.
func BenchmarkAgentCard(b *testing.B) {
	e := newRESTEnv(b)
	h := e.srv.AgentCard()
	r := httptest.NewRequest(http.MethodGet, "http://internal.invalid"+restEnvCardPath, nil)
	r.Header.Set("A2A-Version", "1.0")
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			b.Fatalf("HTTP %d", w.Code)
		}
	}
}

// BenchmarkAgentCardNotModified is a revalidation with the card's ETag.
func BenchmarkAgentCardNotModified(b *testing.B) {
	e := newRESTEnv(b)
	h := e.srv.AgentCard()
	first := httptest.NewRecorder()
	h.ServeHTTP(first, httptest.NewRequest(http.MethodGet, "http://internal.invalid"+restEnvCardPath, nil))
	r := httptest.NewRequest(http.MethodGet, "http://internal.invalid"+restEnvCardPath, nil)
	r.Header.Set("If-None-Match", first.Header().Get("ETag"))
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusNotModified {
			b.Fatalf("HTTP %d", w.Code)
		}
	}
}

// BenchmarkMatchREST is the router alone.
func BenchmarkMatchREST(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, refusal := matchREST(http.MethodDelete, "/AbCdEfGhIjKlMnOpQrStUvWx/tasks/acme/R2D2C3POR2D2C3POR2D2C3PO/pushNotificationConfigs/c-1"); refusal != nil {
			b.Fatal(refusal.err)
		}
	}
}
