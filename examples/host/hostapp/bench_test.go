package hostapp

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/isolation"
)

// benchHandler is the real handler on a seeded store, served in-process.
func benchHandler(b *testing.B) (http.Handler, *memstore.Store) {
	b.Helper()
	store := memstore.New()
	b.Cleanup(func() { store.Close() })
	keys, _ := parseKeys(defaultKeys)
	auth := newBearerKeys(keys)
	if err := seed(store, auth.Tenants(), "http://bench"); err != nil {
		b.Fatal(err)
	}
	h, err := newHandler(config{Store: store, Auth: auth, BaseURL: "http://bench"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = h.Close(context.Background()) }) // before the store's
	return h, store
}

// BenchmarkA2AGetTask is a JSON-RPC GetTask through the whole host mux,
// drain-aware context included; compare a2a's BenchmarkGetTask for the
// binding alone.
func BenchmarkA2AGetTask(b *testing.B) {
	h, store := benchHandler(b)
	sub := interop.Subject{Tenant: "acme", Principal: "key:acme", Authenticated: true}
	run, _, err := store.CreateRun(context.Background(), sub, interop.CreateRunRequest{WorkflowID: memstore.FixtureNoop, Inputs: json.RawMessage(`{}`)})
	if err != nil {
		b.Fatal(err)
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"` + run.ID + `"}}`
	b.ReportAllocs()
	for b.Loop() {
		rq := httptest.NewRequest("POST", a2aPath, strings.NewReader(body))
		rq.Header.Set("Authorization", "Bearer "+acmeKey)
		rq.Header.Set("Content-Type", "application/json")
		rq.Header.Set("A2A-Version", "1.0")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, rq)
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"result"`) {
			b.Fatal(rec.Code, rec.Body.String())
		}
	}
}

func BenchmarkAgentCard(b *testing.B) {
	h, _ := benchHandler(b)
	rq := httptest.NewRequest("GET", a2aCardPath, nil)
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, rq)
		if rec.Code != http.StatusOK {
			b.Fatal(rec.Code)
		}
	}
}

func BenchmarkGetRun(b *testing.B) {
	h, store := benchHandler(b)
	sub := interop.Subject{Tenant: "acme", Principal: "key:acme", Authenticated: true}
	run, _, err := store.CreateRun(context.Background(), sub, interop.CreateRunRequest{WorkflowID: memstore.FixtureNoop, Inputs: json.RawMessage(`{}`)})
	if err != nil {
		b.Fatal(err)
	}
	rq := httptest.NewRequest("GET", "/runs/"+isolation.Project(run.ID), nil)
	rq.Header.Set("Authorization", "Bearer "+acmeKey)
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, rq)
		if rec.Code != http.StatusOK {
			b.Fatal(rec.Code)
		}
	}
}

func BenchmarkDiscovery(b *testing.B) {
	h, _ := benchHandler(b)
	rq := httptest.NewRequest("GET", "/.well-known/openwop", nil)
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, rq)
	}
}

func BenchmarkResolveSubject(b *testing.B) {
	keys, _ := parseKeys(defaultKeys)
	auth := newBearerKeys(keys)
	rq := httptest.NewRequest("GET", "/", nil)
	rq.Header.Set("Authorization", "Bearer "+globexKey)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := auth.ResolveSubject(rq); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWriteError(b *testing.B) {
	s := &server{log: slog.New(slog.DiscardHandler)}
	rq := httptest.NewRequest("GET", "/", nil)
	err := invalid("inputs/delayMs", "must be >= 0")
	b.ReportAllocs()
	for b.Loop() {
		s.writeError(httptest.NewRecorder(), rq, err)
	}
}

func BenchmarkSnapshotEncode(b *testing.B) {
	at := time.Date(2026, 10, 5, 12, 0, 0, 0, time.UTC)
	l := links{base: "http://bench"}
	run := interop.Run{
		ID: "acme/RUN0000000000000000000001", WorkflowID: "conformance-approval", Status: interop.StatusWaitingApproval,
		CreatedAt: at, StatusAt: at,
		Interrupts: []interop.Interrupt{{ID: "acme/INT0000000000000000000001", Kind: interop.InterruptApproval, Key: "approval", Actions: []string{"accept", "reject"}}},
		Artifacts:  []interop.Artifact{{ID: "result", Parts: []interop.Part{interop.TextPart("done")}}},
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := encodeJSON(l.snapshot(run)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeObject(b *testing.B) {
	body := []byte(`{"workflowId":"conformance-delay","inputs":{"delayMs":10,"note":"a b c"}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeObject(body, "workflowId", "inputs"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParsePathID(b *testing.B) {
	sub := interop.Subject{Tenant: "acme", Principal: "key:acme", Authenticated: true}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parsePathID(sub, "acme~2FABCDEFGHIJKLMNOPQRSTUVWXYZ", "runId"); err != nil {
			b.Fatal(err)
		}
	}
}
