package eventstream

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestFrames(t *testing.T) {
	rec := httptest.NewRecorder()
	sw, ok := Open(rec, Options{})
	if !ok {
		t.Fatal("a recorder can flush")
	}
	if !rec.Flushed || rec.Code != http.StatusOK {
		t.Fatalf("Open did not commit the response: flushed %v code %d", rec.Flushed, rec.Code)
	}
	for _, b := range []string{`{"a":1}`, "line1\nline2\r\nline3\rline4", ""} {
		if err := sw.Data([]byte(b)); err != nil {
			t.Fatal(err)
		}
	}
	if err := sw.Event("message", []byte(`{"jsonrpc":"2.0"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := sw.Write([]byte("event: x\nid: 1\ndata: {}\n\n")); err != nil {
		t.Fatal(err)
	}
	if err := sw.Comment(); err != nil {
		t.Fatal(err)
	}
	sw.Close()
	sw.Close() // idempotent
	if err := sw.Data([]byte("late")); !errors.Is(err, ErrClosed) {
		t.Fatalf("write after Close: %v", err)
	}
	want := "data: {\"a\":1}\n\n" +
		"data: line1\ndata: line2\ndata: line3\ndata: line4\n\n" +
		"data: \n\n" +
		"event: message\ndata: {\"jsonrpc\":\"2.0\"}\n\n" +
		"event: x\nid: 1\ndata: {}\n\n" +
		":\n\n"
	if got := rec.Body.String(); got != want {
		t.Fatalf("frames %q, want %q", got, want)
	}
	h := rec.Header()
	if h.Get("Content-Type") != "text/event-stream" || h.Get("Cache-Control") != "no-cache" || h.Get("X-Accel-Buffering") != "no" {
		t.Fatalf("headers %v", h)
	}
}

// noFlushWriter hides the recorder's Flush.
type noFlushWriter struct{ rec *httptest.ResponseRecorder }

func (w noFlushWriter) Header() http.Header         { return w.rec.Header() }
func (w noFlushWriter) Write(b []byte) (int, error) { return w.rec.Write(b) }
func (w noFlushWriter) WriteHeader(code int)        { w.rec.WriteHeader(code) }

// unwrapper is a middleware's wrapper that lets ResponseController through.
type unwrapper struct{ http.ResponseWriter }

func (u unwrapper) Unwrap() http.ResponseWriter { return u.ResponseWriter }

func TestOpenWithoutFlusher(t *testing.T) {
	rec := httptest.NewRecorder()
	rec.Header().Set("X-Keep", "1")
	if sw, ok := Open(unwrapper{noFlushWriter{rec}}, Options{}); ok || sw != nil {
		t.Fatal("Open accepted a writer that cannot flush")
	}
	if rec.Body.Len() != 0 || rec.Flushed || rec.Result().StatusCode != http.StatusOK {
		t.Fatal("Open wrote to a writer it refused")
	}
	if got := rec.Header(); len(got) != 1 || got.Get("X-Keep") != "1" {
		t.Fatalf("headers after refusal %v, want only the caller's", got)
	}
	// Through an Unwrap chain to a Flusher it opens.
	if _, ok := Open(unwrapper{httptest.NewRecorder()}, Options{}); !ok {
		t.Fatal("Open refused a wrapped recorder")
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

func TestStickyError(t *testing.T) {
	fw := &failingWriter{ResponseRecorder: httptest.NewRecorder(), n: 1}
	sw, ok := Open(fw, Options{})
	if !ok {
		t.Fatal("cannot flush")
	}
	defer sw.Close()
	if err := sw.Data([]byte("one")); err != nil {
		t.Fatal(err)
	}
	first := sw.Data([]byte("two"))
	if first == nil {
		t.Fatal("a failed write was not reported")
	}
	fw.n = 10 // even if the writer recovered, the stream is over
	if err := sw.Data([]byte("three")); !errors.Is(err, first) {
		t.Fatalf("later write: %v, want the first error", err)
	}
	if err := sw.Comment(); !errors.Is(err, first) {
		t.Fatalf("later comment: %v, want the first error", err)
	}
	if got := fw.Body.String(); got != "data: one\n\n" {
		t.Fatalf("body %q", got)
	}
}

// lockedRecorder lets the test read the body while the heartbeat writes,
// and records the write deadlines set through ResponseController.
type lockedRecorder struct {
	mu        sync.Mutex
	rec       *httptest.ResponseRecorder
	deadlines []time.Time
	panicking bool
}

func (l *lockedRecorder) Header() http.Header { return l.rec.Header() }
func (l *lockedRecorder) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.panicking {
		panic("host writer")
	}
	return l.rec.Write(b)
}
func (l *lockedRecorder) WriteHeader(c int) { l.rec.WriteHeader(c) }
func (l *lockedRecorder) Flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rec.Flush()
}
func (l *lockedRecorder) SetWriteDeadline(d time.Time) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.deadlines = append(l.deadlines, d)
	return nil
}
func (l *lockedRecorder) SetReadDeadline(time.Time) error { return nil }
func (l *lockedRecorder) body() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rec.Body.String()
}

// The heartbeat is written once the stream is idle, never inside an
// event, and never after Close returns.
func TestHeartbeat(t *testing.T) {
	lr := &lockedRecorder{rec: httptest.NewRecorder()}
	sw, ok := Open(lr, Options{Heartbeat: time.Millisecond, Comment: " keep-alive", OnPanic: func(p any) { t.Errorf("heartbeat panicked: %v", p) }})
	if !ok {
		t.Fatal("cannot flush")
	}
	deadline := time.Now().Add(5 * time.Second)
	for strings.Count(lr.body(), ": keep-alive\n\n") < 2 {
		if time.Now().After(deadline) {
			t.Fatal("no heartbeats")
		}
		time.Sleep(time.Millisecond)
	}
	if err := sw.Data([]byte("x")); err != nil {
		t.Fatal(err)
	}
	sw.Close()
	after := lr.body()
	time.Sleep(10 * time.Millisecond)
	if lr.body() != after {
		t.Fatal("a heartbeat was written after Close returned")
	}
	if !strings.Contains(after, "data: x\n\n") {
		t.Fatalf("event lost among heartbeats: %q", after)
	}
	for _, chunk := range strings.Split(strings.TrimSuffix(after, "\n\n"), "\n\n") {
		if chunk != ": keep-alive" && chunk != "data: x" {
			t.Fatalf("torn frame %q in %q", chunk, after)
		}
	}
}

// A stream that keeps writing gets no heartbeat: it is written only after
// Heartbeat of idleness.
func TestHeartbeatOnlyWhenIdle(t *testing.T) {
	lr := &lockedRecorder{rec: httptest.NewRecorder()}
	sw, _ := Open(lr, Options{Heartbeat: 500 * time.Millisecond})
	defer sw.Close()
	for end := time.Now().Add(700 * time.Millisecond); time.Now().Before(end); {
		_ = sw.Data([]byte("x"))
		time.Sleep(2 * time.Millisecond)
	}
	if strings.Contains(lr.body(), "\n:") {
		t.Fatalf("heartbeat on a busy stream: %q", lr.body())
	}
}

// A panic of the host's writer in a heartbeat is handed to OnPanic and
// fails the stream's later writes.
func TestHeartbeatPanic(t *testing.T) {
	lr := &lockedRecorder{rec: httptest.NewRecorder()}
	panicked := make(chan any, 1)
	sw, _ := Open(lr, Options{Heartbeat: time.Millisecond, OnPanic: func(p any) { panicked <- p }})
	defer sw.Close()
	lr.mu.Lock()
	lr.panicking = true
	lr.mu.Unlock()
	select {
	case p := <-panicked:
		if p != "host writer" {
			t.Fatalf("OnPanic got %v", p)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the heartbeat's panic was not reported")
	}
	if err := sw.Data([]byte("x")); !errors.Is(err, errHeartbeatPanicked) {
		t.Fatalf("write after the heartbeat panicked: %v", err)
	}
}

// Every write runs under a deadline of its own, lifted after it; a failed
// write keeps its deadline.
func TestWriteDeadlines(t *testing.T) {
	lr := &lockedRecorder{rec: httptest.NewRecorder()}
	sw, _ := Open(lr, Options{WriteTimeout: time.Minute})
	start := time.Now()
	_ = sw.Data([]byte("x"))
	sw.Close()
	lr.mu.Lock()
	got := lr.deadlines
	lr.mu.Unlock()
	// Open: set, lift; Data: set, lift; Close: lift.
	if len(got) != 5 {
		t.Fatalf("deadlines %v", got)
	}
	for i, d := range got {
		set := i == 0 || i == 2
		if set && (d.Before(start.Add(59*time.Second)) || d.After(time.Now().Add(time.Minute))) || !set && !d.IsZero() {
			t.Errorf("deadline %d = %v", i, d)
		}
	}

	fw := &failingWriter{ResponseRecorder: httptest.NewRecorder()}
	dl := &deadlineRecorder{ResponseWriter: fw}
	sw, _ = Open(dl, Options{WriteTimeout: time.Minute})
	_ = sw.Data([]byte("x"))
	sw.Close()
	if last := dl.deadlines[len(dl.deadlines)-1]; last.IsZero() {
		t.Fatal("the deadline of a failed write was lifted")
	}
}

// deadlineRecorder records write deadlines in front of any writer.
type deadlineRecorder struct {
	http.ResponseWriter
	deadlines []time.Time
}

func (d *deadlineRecorder) SetWriteDeadline(t time.Time) error {
	d.deadlines = append(d.deadlines, t)
	return nil
}
func (d *deadlineRecorder) SetReadDeadline(time.Time) error { return nil }
func (d *deadlineRecorder) Unwrap() http.ResponseWriter     { return d.ResponseWriter }

// Attach writes the last event of a stream begun elsewhere.
func TestAttach(t *testing.T) {
	rec := httptest.NewRecorder()
	sw := Attach(rec, Options{Heartbeat: time.Millisecond})
	if err := sw.Event("message", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	sw.Close()
	if rec.Body.String() != "event: message\ndata: {}\n\n" {
		t.Fatalf("body %q", rec.Body)
	}
}
