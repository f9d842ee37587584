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
	addr, got := serve(t, 4<<20, time.Second, nil)
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
		if r.took < timeout || r.took > timeout+time.Second {
			t.Fatalf("cut after %v, want about %v", r.took, timeout)
		}
	case <-time.After(5 * time.Second):
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

// A server whose ReadTimeout is shorter than Read's timeout keeps it: the
// body is cut at ReadTimeout, never later.
func TestShorterReadTimeoutKept(t *testing.T) {
	const readTimeout = 200 * time.Millisecond
	got := make(chan result, 1)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var buf bytes.Buffer
		start := time.Now()
		err := Read(w, r, &buf, 1<<20, time.Minute)
		got <- result{err: err, took: time.Since(start)}
	}))
	srv.Config.ReadTimeout = readTimeout
	srv.Start()
	t.Cleanup(srv.Close)
	raw(t, srv.Listener.Addr().String(), "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n1")
	select {
	case r := <-got:
		if !errors.Is(r.err, ErrTooSlow) || r.took > readTimeout+time.Second {
			t.Fatalf("err %v after %v, want ErrTooSlow at about %v", r.err, r.took, readTimeout)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a one-minute limit replaced the server's shorter ReadTimeout")
	}
}
