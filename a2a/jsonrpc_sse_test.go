package a2a

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestSSEWriterFrames(t *testing.T) {
	rec := httptest.NewRecorder()
	sw, ok := newSSE(rec, 0)
	if !ok {
		t.Fatal("a recorder can flush")
	}
	if !rec.Flushed || rec.Code != http.StatusOK {
		t.Fatalf("newSSE did not commit the response: flushed %v code %d", rec.Flushed, rec.Code)
	}
	for _, b := range []string{`{"a":1}`, "line1\nline2\r\nline3\rline4", ""} {
		if err := sw.data([]byte(b)); err != nil {
			t.Fatal(err)
		}
	}
	if err := sw.comment(); err != nil {
		t.Fatal(err)
	}
	want := "data: {\"a\":1}\n\n" +
		"data: line1\ndata: line2\ndata: line3\ndata: line4\n\n" +
		"data: \n\n" +
		":\n\n"
	if got := rec.Body.String(); got != want {
		t.Fatalf("frames %q, want %q", got, want)
	}
	h := rec.Header()
	if h.Get("Content-Type") != "text/event-stream" || h.Get("Cache-Control") != "no-cache" || h.Get("X-Accel-Buffering") != "no" {
		t.Fatalf("headers %v", h)
	}
}

func TestSSEWriterWithoutFlusher(t *testing.T) {
	rec := httptest.NewRecorder()
	rec.Header().Set("X-Keep", "1")
	if sw, ok := newSSE(noFlushWriter{rec}, 0); ok || sw != nil {
		t.Fatal("newSSE accepted a writer that cannot flush")
	}
	if rec.Code != http.StatusOK || rec.Body.Len() != 0 || rec.Flushed {
		t.Fatal("newSSE wrote to a writer it refused")
	}
	if got := rec.Header(); len(got) != 1 || got.Get("X-Keep") != "1" {
		t.Fatalf("headers after refusal %v, want only the caller's", got)
	}
}

// failingWriter fails every write after the first n.
type failingWriter struct {
	*httptest.ResponseRecorder
	n int
}

func (f *failingWriter) Write(b []byte) (int, error) {
	if f.n == 0 {
		return 0, errors.New("client gone")
	}
	f.n--
	return f.ResponseRecorder.Write(b)
}

func TestSSEWriterStickyError(t *testing.T) {
	fw := &failingWriter{ResponseRecorder: httptest.NewRecorder(), n: 1}
	sw, ok := newSSE(fw, 0)
	if !ok {
		t.Fatal("cannot flush")
	}
	if err := sw.data([]byte("one")); err != nil {
		t.Fatal(err)
	}
	first := sw.data([]byte("two"))
	if first == nil {
		t.Fatal("a failed write was not reported")
	}
	fw.n = 10 // even if the writer recovered, the stream is over
	if err := sw.data([]byte("three")); !errors.Is(err, first) {
		t.Fatalf("later write: %v, want the first error", err)
	}
	if err := sw.comment(); !errors.Is(err, first) {
		t.Fatalf("later comment: %v, want the first error", err)
	}
	if got := fw.Body.String(); got != "data: one\n\n" {
		t.Fatalf("body %q", got)
	}
}

// lockedRecorder lets the test read the body while the heartbeat writes.
type lockedRecorder struct {
	mu  sync.Mutex
	rec *httptest.ResponseRecorder
}

func (l *lockedRecorder) Header() http.Header { return l.rec.Header() }
func (l *lockedRecorder) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rec.Write(b)
}
func (l *lockedRecorder) WriteHeader(c int) { l.rec.WriteHeader(c) }
func (l *lockedRecorder) Flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rec.Flush()
}
func (l *lockedRecorder) body() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rec.Body.String()
}

func TestSSEHeartbeat(t *testing.T) {
	lr := &lockedRecorder{rec: httptest.NewRecorder()}
	sw, ok := newSSE(lr, 0)
	if !ok {
		t.Fatal("cannot flush")
	}
	stop := sw.heartbeat(time.Millisecond, func(p any) { t.Errorf("heartbeat panicked: %v", p) })
	deadline := time.Now().Add(5 * time.Second)
	for strings.Count(lr.body(), ":\n\n") < 2 {
		if time.Now().After(deadline) {
			t.Fatal("no heartbeats")
		}
		time.Sleep(time.Millisecond)
	}
	if err := sw.data([]byte("x")); err != nil {
		t.Fatal(err)
	}
	stop()
	stop() // idempotent
	after := lr.body()
	time.Sleep(10 * time.Millisecond)
	if lr.body() != after {
		t.Fatal("a heartbeat was written after stop returned")
	}
	if !strings.Contains(after, "data: x\n\n") {
		t.Fatalf("event lost among heartbeats: %q", after)
	}
	// Frames never interleave: every event and comment is whole.
	for _, chunk := range strings.Split(strings.TrimSuffix(after, "\n\n"), "\n\n") {
		if chunk != ":" && chunk != "data: x" {
			t.Fatalf("torn frame %q in %q", chunk, after)
		}
	}
}
