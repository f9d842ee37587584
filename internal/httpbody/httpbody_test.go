package httpbody

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"
)

// result is what the handler saw.
type result struct {
	err  error
	body string
	cap  int
	took time.Duration
}

// serve runs Read in a real server's handler and reports each call.
func serve(t *testing.T, limit int64, timeout time.Duration, after func(w http.ResponseWriter)) (string, <-chan result) {
	t.Helper()
	out := make(chan result, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var buf bytes.Buffer
		start := time.Now()
		err := Read(w, r, &buf, limit, timeout)
		out <- result{err: err, body: buf.String(), cap: buf.Cap(), took: time.Since(start)}
		if after != nil {
			after(w)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String(), out
}

// raw sends a request head (and an optional partial body) on a fresh
// connection and returns it, left open.
func raw(t *testing.T, addr, head string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := io.WriteString(c, head); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestReadWithinLimits(t *testing.T) {
	addr, got := serve(t, 10, time.Second, nil)
	for _, tc := range []struct {
		name, body string
		chunked    bool
		want       error
	}{
		{"empty", "", false, nil},
		{"at the limit", "0123456789", false, nil},
		{"at the limit, chunked", "0123456789", true, nil},
		{"one over, chunked", "0123456789x", true, ErrTooLarge},
		{"declared over", "0123456789x", false, ErrTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var rd io.Reader = strings.NewReader(tc.body)
			if tc.chunked {
				rd = io.MultiReader(rd) // hides the length: sent chunked
			}
			req, _ := http.NewRequest("POST", "http://"+addr, rd)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			r := <-got
			if !errors.Is(r.err, tc.want) {
				t.Fatalf("err = %v, want %v", r.err, tc.want)
			}
			if tc.want == nil && r.body != tc.body {
				t.Fatalf("body %q, want %q", r.body, tc.body)
			}
		})
	}
}

// A declared length reserves nothing beyond the first few KiB: memory
// follows the bytes that arrive.
func TestDeclaredLengthReservesNothing(t *testing.T) {
	addr, got := serve(t, 4<<20, 30*time.Second, nil)
	c := raw(t, addr, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4194304\r\n\r\n0123456789")
	time.Sleep(50 * time.Millisecond)
	c.Close() // the client gives up after 10 bytes
	r := <-got
	if !errors.Is(r.err, ErrIncomplete) {
		t.Fatalf("err = %v, want ErrIncomplete", r.err)
	}
	if r.cap > 2*initialGrowth {
		t.Fatalf("a body declaring 4 MiB and sending 10 bytes grew the buffer to %d bytes", r.cap)
	}
}

// A body trickling in is cut at the time limit, and the deadline is lifted
// for the response, which may take longer.
func TestSlowBodyIsCut(t *testing.T) {
	const timeout = 200 * time.Millisecond
	addr, got := serve(t, 1<<20, timeout, nil)
	c := raw(t, addr, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n")
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
				if _, err := c.Write([]byte("x")); err != nil {
					return
				}
			}
		}
	}()
	select {
	case r := <-got:
		if !errors.Is(r.err, ErrTooSlow) {
			t.Fatalf("err = %v, want ErrTooSlow", r.err)
		}
		// A loaded machine may run the handler late, never early.
		if r.took < timeout || r.took > timeout+5*time.Second {
			t.Fatalf("cut after %v, want about %v", r.took, timeout)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("a trickling body was never cut")
	}
}

func TestDeadlineLiftedForTheResponse(t *testing.T) {
	const timeout = 100 * time.Millisecond
	addr, got := serve(t, 1<<20, timeout, func(w http.ResponseWriter) {
		time.Sleep(3 * timeout) // a response that outlives the body's deadline
		fmt.Fprint(w, "late but whole")
	})
	c := raw(t, addr, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nok")
	if r := <-got; r.err != nil || r.body != "ok" {
		t.Fatalf("read %q, %v", r.body, r.err)
	}
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	if string(b) != "late but whole" {
		t.Fatalf("response %q", b)
	}
	// The connection still serves a next request.
	if _, err := io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nnew"); err != nil {
		t.Fatal(err)
	}
	if r := <-got; r.err != nil || r.body != "new" {
		t.Fatalf("second request read %q, %v", r.body, r.err)
	}
}

// Without a deadline-capable writer the body is still bounded in size.
func TestWriterWithoutDeadlines(t *testing.T) {
	var buf bytes.Buffer
	r := httptest.NewRequest("POST", "/", strings.NewReader(strings.Repeat("a", 20)))
	if err := Read(httptest.NewRecorder(), r, &buf, 10, time.Second); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v", err)
	}
}

// A refused body is abandoned: the refusal goes out at once and the
// connection closes, although the client keeps trickling the rest (net/http
// would otherwise read up to 256 KiB more of it first).
func TestRefusedBodyIsAbandoned(t *testing.T) {
	const timeout = 200 * time.Millisecond
	addr, got := serve(t, 1<<20, timeout, func(w http.ResponseWriter) {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, "refused")
	})
	start := time.Now()
	c := raw(t, addr, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n")
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
				if _, err := c.Write([]byte("x")); err != nil {
					return
				}
			}
		}
	}()
	if r := <-got; !errors.Is(r.err, ErrTooSlow) {
		t.Fatalf("err = %v", r.err)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	br := bufio.NewReader(c)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no refusal: %v", err)
	}
	b, _ := io.ReadAll(res.Body)
	if took := time.Since(start); string(b) != "refused" || !res.Close || took > timeout+time.Second {
		t.Fatalf("refusal %q after %v, close %v", b, took, res.Close)
	}
	if _, err := br.ReadByte(); err == nil {
		t.Fatal("the connection stayed open for the rest of the body")
	}
}

// trickle writes one byte to c every interval until stop is closed or a
// write fails.
func trickle(c net.Conn, interval time.Duration, stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case <-time.After(interval):
			if _, err := c.Write([]byte("x")); err != nil {
				return
			}
		}
	}
}

// A body cut for being slow is answered at once and its connection closed:
// net/http does not first wait for the rest of a trickling body.
func TestSlowBodyAnsweredAtOnce(t *testing.T) {
	const timeout = 200 * time.Millisecond
	addr, got := serve(t, 1<<20, timeout, func(w http.ResponseWriter) {
		w.WriteHeader(http.StatusRequestTimeout)
		fmt.Fprint(w, "too slow")
	})
	c := raw(t, addr, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n")
	stop := make(chan struct{})
	defer close(stop)
	go trickle(c, 20*time.Millisecond, stop)
	start := time.Now()
	if r := <-got; !errors.Is(r.err, ErrTooSlow) {
		t.Fatalf("err = %v, want ErrTooSlow", r.err)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second)) // the whole body would take 20s
	br := bufio.NewReader(c)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer within 10s of the cut: %v", err)
	}
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusRequestTimeout || string(b) != "too slow" || !res.Close {
		t.Fatalf("answer %d %q, Connection close %v", res.StatusCode, b, res.Close)
	}
	if took := time.Since(start); took > timeout+5*time.Second {
		t.Fatalf("answered %v after the request began, want about %v", took, timeout)
	}
	if _, err := br.ReadByte(); !closed(err) {
		t.Fatalf("the connection stayed open after the answer: %v", err)
	}
}

// A server's own ReadTimeout, when shorter, still bounds the body: Read
// does not extend it. Once the body is read it no longer applies, so the
// request's context lives on while a response outlasts it.
func TestServerReadTimeoutKept(t *testing.T) {
	const readTimeout = 150 * time.Millisecond
	type outcome struct {
		result
		ctxErr error
	}
	out := make(chan outcome, 4)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var buf bytes.Buffer
		start := time.Now()
		err := Read(w, r, &buf, 1<<20, time.Minute)
		o := outcome{result: result{err: err, body: buf.String(), took: time.Since(start)}}
		if err == nil {
			time.Sleep(4 * readTimeout) // a response that outlives the server's deadline
			o.ctxErr = r.Context().Err()
			fmt.Fprint(w, "late but whole")
		}
		out <- o
	}))
	srv.Config.ReadTimeout = readTimeout
	srv.Start()
	t.Cleanup(srv.Close)
	addr := srv.Listener.Addr().String()

	c := raw(t, addr, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n")
	stop := make(chan struct{})
	defer close(stop)
	go trickle(c, 20*time.Millisecond, stop)
	select {
	case o := <-out:
		// Far below Read's minute, however late a loaded machine runs it.
		if !errors.Is(o.err, ErrTooSlow) || o.took > 10*time.Second {
			t.Fatalf("err = %v after %v, want ErrTooSlow after about %v", o.err, o.took, readTimeout)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the server's ReadTimeout was extended to Read's minute")
	}

	c2 := raw(t, addr, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nok")
	if o := <-out; o.err != nil || o.ctxErr != nil {
		t.Fatalf("read %v; the request's context ended during the response: %v", o.err, o.ctxErr)
	}
	res, err := http.ReadResponse(bufio.NewReader(c2), nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(res.Body); string(b) != "late but whole" {
		t.Fatalf("response %q", b)
	}
}

// deadlineRecorder is a recorder that takes deadlines, as a connection
// does (a plain recorder's refusal is an allocation of its own).
type deadlineRecorder struct{ *httptest.ResponseRecorder }

func (deadlineRecorder) SetReadDeadline(time.Time) error { return nil }

// A small body is read into the one buffer its declared length reserves:
// no more allocations than an empty body, which ReadFrom reads into one
// MinRead buffer.
func TestSmallBodyReadInOneStep(t *testing.T) {
	allocs := func(n int) float64 {
		src := strings.NewReader("")
		r := httptest.NewRequest("POST", "/", nil)
		r.Body = io.NopCloser(src)
		r.ContentLength = int64(n)
		w := deadlineRecorder{httptest.NewRecorder()}
		body := strings.Repeat("a", n)
		return testing.AllocsPerRun(50, func() {
			src.Reset(body)
			var buf bytes.Buffer
			if err := Read(w, r, &buf, 1<<20, time.Second); err != nil || buf.Len() != n {
				t.Fatalf("read %d bytes, %v", buf.Len(), err)
			}
		})
	}
	empty := allocs(0)
	for _, n := range []int{1, 100, initialGrowth} {
		if got := allocs(n); got != empty {
			t.Errorf("a %d-byte body took %v allocations, an empty one %v", n, got, empty)
		}
	}
}

// A body declared over the limit is refused before it is read, and the
// connection is closed right after the answer, not once the client has
// sent what it declared.
func TestDeclaredTooLargeClosesAtOnce(t *testing.T) {
	addr, got := serve(t, 10, time.Minute, func(w http.ResponseWriter) {
		w.WriteHeader(http.StatusRequestEntityTooLarge)
	})
	c := raw(t, addr, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n")
	stop := make(chan struct{})
	defer close(stop)
	go trickle(c, 20*time.Millisecond, stop) // the whole body would take 20s
	if r := <-got; !errors.Is(r.err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", r.err)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(c)
	res, err := http.ReadResponse(br, nil)
	if err != nil || res.StatusCode != http.StatusRequestEntityTooLarge || !res.Close {
		t.Fatalf("answer %v, %v", res, err)
	}
	if _, err := br.ReadByte(); !closed(err) {
		t.Fatalf("the connection stayed open while the client trickled: %v", err)
	}
}

// closed reports whether a read error says the server closed the
// connection: EOF, or a reset when it closed with the client's bytes
// still unread (the client kept trickling).
func closed(err error) bool {
	return err == io.EOF || errors.Is(err, syscall.ECONNRESET)
}

// A handler that refuses before reading the body calls Abandon: the
// refusal goes out at once and the connection closes, although the client
// keeps trickling the body it declared. Without it net/http would first
// wait for up to 256 KiB more of that body.
func TestAbandonBeforeReading(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		Abandon(w, r)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	t.Cleanup(srv.Close)
	c := raw(t, srv.Listener.Addr().String(), "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n")
	stop := make(chan struct{})
	defer close(stop)
	go trickle(c, 20*time.Millisecond, stop)
	start := time.Now()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(c)
	res, err := http.ReadResponse(br, nil)
	if err != nil || res.StatusCode != http.StatusUnauthorized || !res.Close {
		t.Fatalf("answer %v, %v", res, err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("answered after %v", took)
	}
	if _, err := br.ReadByte(); !closed(err) {
		t.Fatalf("the connection stayed open: %v", err)
	}
	// A request without a body is left alone: its connection is kept.
	w := httptest.NewRecorder()
	Abandon(w, httptest.NewRequest("GET", "/", nil))
	if w.Header().Get("Connection") != "" {
		t.Fatal("Abandon closed the connection of a request without a body")
	}
}
