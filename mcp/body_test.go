package mcp

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// countingBody counts the bodies a handler began to read.
type countingBody struct {
	io.ReadCloser
	once    bool
	reading *atomic.Int32
}

func (b *countingBody) Read(p []byte) (int, error) {
	if !b.once {
		b.once = true
		b.reading.Add(1)
	}
	return b.ReadCloser.Read(p)
}

// heapInUse is the live heap after a full collection.
func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// waitFor polls cond until it holds or d passes.
func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestDeclaredBodyLengthReservesNoMemory: 100 authenticated connections
// each declaring a 4 MiB body and sending a few bytes make the mount hold
// memory for the bytes that arrived, not for what was declared, and it is
// all given back once they close.
func TestDeclaredBodyLengthReservesNoMemory(t *testing.T) {
	const (
		conns    = 100
		declared = 4 << 20
	)
	e := newEnv(t)
	var reading, done atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer done.Add(1)
		r.Body = &countingBody{ReadCloser: r.Body, reading: &reading}
		e.h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	addr := ts.Listener.Addr().String()

	before := heapInUse()
	clients := make([]net.Conn, 0, conns)
	for range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
		head := "POST /mcp HTTP/1.1\r\nHost: " + addr + "\r\nAuthorization: Bearer acme:alice\r\nContent-Type: application/json\r\n" +
			"Content-Length: " + strconv.Itoa(declared) + "\r\n\r\n" + `{"jsonrpc":"2.0",`
		if _, err := io.WriteString(c, head); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 10*time.Second, "every body being read", func() bool { return reading.Load() == conns })
	during := heapInUse()
	for _, c := range clients {
		c.Close()
	}
	waitFor(t, 10*time.Second, "every handler done", func() bool { return done.Load() == conns })
	after := heapInUse()

	const MiB = 1 << 20
	t.Logf("heap: %.1f MiB before, %.1f MiB with %d bodies of %d MiB declared open (%+.1f MiB), %.1f MiB after they closed (%+.1f MiB)",
		float64(before)/MiB, float64(during)/MiB, conns, declared/MiB, float64(during-before)/MiB, float64(after)/MiB, float64(after-before)/MiB)
	if during-before >= 64*MiB {
		t.Errorf("%d open bodies grew the heap by %.1f MiB, want less than 64 MiB", conns, float64(during-before)/MiB)
	}
	if after-before >= 4*MiB {
		t.Errorf("the heap stayed %.1f MiB above where it was once the connections closed", float64(after-before)/MiB)
	}
}

// TestSlowBodyTimesOut: a body trickling in at one byte per 50 ms is cut
// at BodyTimeout with HTTP 408, a JSON-RPC -32600 in MCP's shape, and the
// connection closed; no run is created.
func TestSlowBodyTimesOut(t *testing.T) {
	const timeout = 300 * time.Millisecond
	e := newEnv(t, func(c *testConfig) { c.BodyTimeout = timeout })
	ts := e.serve()
	c, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	head := "POST /mcp HTTP/1.1\r\nHost: " + ts.Listener.Addr().String() + "\r\nAuthorization: Bearer acme:alice\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
	if _, err := io.WriteString(c, head); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
				if _, err := c.Write([]byte(" ")); err != nil {
					return
				}
			}
		}
	}()
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second)) // the whole body would take 50s
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer to a trickling body within 20s: %v", err)
	}
	took := time.Since(start)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestTimeout || resp.Header.Get("Content-Type") != "application/json" || !resp.Close {
		t.Fatalf("answer %d %q (Connection: close %v) %s", resp.StatusCode, resp.Header.Get("Content-Type"), resp.Close, body)
	}
	checkGolden(t, "error_body_timeout", body)
	if took < timeout || took > timeout+10*time.Second { // late on a loaded machine, never early
		t.Errorf("answered after %v, want about %v", took, timeout)
	}
	// EOF, or a reset as the server closed with trickled bytes unread.
	if _, err := br.ReadByte(); err != io.EOF && !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("the connection stayed open: %v", err)
	}
	if page := e.runsOf(alice); len(page.Runs) != 0 {
		t.Errorf("a refused body created %d runs", len(page.Runs))
	}
}

// TestReadBodyKeepsTheBodyAtItsSize: a body is kept at its own size (not
// with the read's spare room), in bytes of its own that reading the next
// body into the recycled buffer leaves alone; a body too large to recycle
// a buffer for is returned as read.
func TestReadBodyKeepsTheBodyAtItsSize(t *testing.T) {
	e := newEnv(t)
	read := func(body string) []byte {
		t.Helper()
		got, err := e.srv.readBody(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body)))
		if err != nil || string(got) != body {
			t.Fatalf("readBody = %.40q…, %v", got, err)
		}
		return got
	}
	first := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"noop","arguments":{}}}` + strings.Repeat(" ", 100)
	got := read(first)
	if cap(got) > len(first)+32 {
		t.Errorf("a %d-byte body is kept in %d bytes", len(first), cap(got))
	}
	read(strings.Repeat("x", len(first)))
	if string(got) != first {
		t.Fatalf("the first body changed to %.40q… when the next was read", got)
	}
	large := strings.Repeat("y", maxRecycledBody+1)
	read(large)
	read(first)
}
