package egress

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// rawServer accepts loopback connections and runs script on each, for
// answers net/http's server would not give. It returns the origin and the
// count of connections accepted.
func rawServer(t *testing.T, script func(n int, c net.Conn, br *bufio.Reader)) (string, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	var conns atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n := int(conns.Add(1))
			go func() {
				defer c.Close()
				script(n, c, bufio.NewReader(c))
			}()
		}
	}()
	return "http://" + ln.Addr().String(), &conns
}

// readRequest reads one request and its body off a raw connection.
func readRequest(br *bufio.Reader) (*http.Request, error) {
	req, err := http.ReadRequest(br)
	if err != nil {
		return nil, err
	}
	_, err = io.Copy(io.Discard, req.Body)
	return req, err
}

func post(t *testing.T, c *http.Client, url string, header http.Header) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"n":1}`))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	return c.Do(req)
}

func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
}

// TestClientKeepsOneConnectionAlive: a lane's requests, one after the
// other, go over one HTTP/1.1 connection, dialled once.
func TestClientKeepsOneConnectionAlive(t *testing.T) {
	rc := newReceiver(t, nil)
	dials := newDialLog(t)
	g := newTestGuard(t, dials, newResolver(nil), rc.origin())
	client := g.Client(nil)
	for range 5 {
		resp, err := post(t, client, rc.origin()+"/hook", nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusNoContent || resp.ProtoMajor != 1 || resp.ProtoMinor != 1 {
			t.Fatalf("%s %d, want HTTP/1.1 204", resp.Proto, resp.StatusCode)
		}
		drain(resp)
		got := rc.next(t)
		if string(got.body) != `{"n":1}` || got.header.Get("Content-Length") != "7" || got.header.Get("Accept-Encoding") != "" {
			t.Fatalf("received %q with %v", got.body, got.header)
		}
	}
	if n := len(dials.dialled()); n != 1 {
		t.Fatalf("%d dials for 5 requests in a row, want 1", n)
	}
}

// TestClientSendsAgainOnAClosedIdleConnection: a kept-alive connection
// the receiver closed while idle fails before any answer; a request that
// may be repeated (an Idempotency-Key, a body that can be read again) is
// sent again on a fresh connection, one that may not is a failure.
func TestClientSendsAgainOnAClosedIdleConnection(t *testing.T) {
	origin, conns := rawServer(t, func(_ int, c net.Conn, br *bufio.Reader) {
		if _, err := readRequest(br); err != nil {
			return
		}
		// Keep-alive is announced, and the connection closed all the same.
		_, _ = io.WriteString(c, "HTTP/1.1 204 No Content\r\n\r\n")
	})
	g := newTestGuard(t, newDialLog(t), newResolver(nil), origin)
	client := g.Client(nil)
	keyed := http.Header{"Idempotency-Key": {`"dl-1"`}}
	for i := range 3 {
		resp, err := post(t, client, origin+"/hook", keyed)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		drain(resp)
		time.Sleep(10 * time.Millisecond) // let the close arrive
	}
	if n := conns.Load(); n != 3 {
		t.Fatalf("%d connections, want one per request", n)
	}
	if _, err := post(t, client, origin+"/hook", nil); err == nil {
		t.Fatal("a POST without Idempotency-Key was sent again after its connection failed")
	}
}

// TestClientSkipsInterimAnswers: 1xx answers before the final one are
// read past (RFC 9110 §15.2), up to a bound.
func TestClientSkipsInterimAnswers(t *testing.T) {
	origin, _ := rawServer(t, func(n int, c net.Conn, br *bufio.Reader) {
		for {
			req, err := readRequest(br)
			if err != nil {
				return
			}
			interim := 1
			if req.URL.Path == "/many" {
				interim = serialMax1xx + 1
			}
			for range interim {
				_, _ = io.WriteString(c, "HTTP/1.1 103 Early Hints\r\nLink: </a>; rel=preload\r\n\r\n")
			}
			_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		}
	})
	g := newTestGuard(t, newDialLog(t), newResolver(nil), origin)
	client := g.Client(nil)
	resp, err := post(t, client, origin+"/one", nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("%v %v, want the final 200", resp, err)
	}
	drain(resp)
	if resp, err := post(t, client, origin+"/many", nil); err == nil {
		drain(resp)
		t.Fatalf("%d interim answers were read past: %d", serialMax1xx+1, resp.StatusCode)
	}
}

// TestClientBoundsTheResponseHeader: a header block beyond 32 KiB is a
// failure, not memory.
func TestClientBoundsTheResponseHeader(t *testing.T) {
	origin, _ := rawServer(t, func(_ int, c net.Conn, br *bufio.Reader) {
		if _, err := readRequest(br); err != nil {
			return
		}
		_, _ = io.WriteString(c, "HTTP/1.1 204 No Content\r\nX-Big: "+strings.Repeat("a", serialMaxHeader)+"\r\n\r\n")
	})
	g := newTestGuard(t, newDialLog(t), newResolver(nil), origin)
	resp, err := post(t, g.Client(nil), origin+"/hook", nil)
	if !errors.Is(err, errHeaderTooLarge) {
		if resp != nil {
			drain(resp)
		}
		t.Fatalf("%v, want the header refused as too large", err)
	}
}

// TestClientEndsWithTheContext: a receiver that never answers holds the
// request only until its context ends.
func TestClientEndsWithTheContext(t *testing.T) {
	origin, _ := rawServer(t, func(_ int, c net.Conn, br *bufio.Reader) {
		_, _ = readRequest(br)
		_, _ = io.Copy(io.Discard, br) // until the client hangs up
	})
	g := newTestGuard(t, newDialLog(t), newResolver(nil), origin)
	for _, cancelled := range []bool{false, true} {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		if cancelled {
			cancel()
			ctx, cancel = context.WithCancel(context.Background())
			time.AfterFunc(50*time.Millisecond, cancel)
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, origin+"/hook", strings.NewReader(`{}`))
		start := time.Now()
		resp, err := g.Client(nil).Do(req)
		cancel()
		if resp != nil {
			drain(resp)
		}
		want := context.DeadlineExceeded
		if cancelled {
			want = context.Canceled
		}
		if !errors.Is(err, want) || time.Since(start) > 5*time.Second {
			t.Fatalf("after %v: %v, want %v", time.Since(start), err, want)
		}
	}
}

// TestClientKeepsOnlyFinishedConnections: a connection is kept for the
// next request only when its answer was read to the end and neither side
// asked to close it.
func TestClientKeepsOnlyFinishedConnections(t *testing.T) {
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/close" {
			w.Header().Set("Connection", "close")
		}
		_, _ = io.WriteString(w, strings.Repeat("b", 100<<10))
	})
	dials := newDialLog(t)
	g := newTestGuard(t, dials, newResolver(nil), rc.origin())
	client := g.Client(nil)
	st := client.Transport.(*guardedTransport).next.(*serialTransport)
	for _, step := range []struct {
		path  string
		read  bool
		kept  int
		dials int
	}{
		{"/hook", true, 1, 1},  // read to the end: kept
		{"/hook", false, 0, 1}, // closed unread: not kept
		{"/close", true, 0, 2}, // Connection: close
		{"/hook", true, 1, 3},  // a fresh one, kept
		{"/hook", true, 1, 3},  // reused
	} {
		resp, err := post(t, client, rc.origin()+step.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if step.read {
			_, _ = io.Copy(io.Discard, resp.Body)
		}
		_ = resp.Body.Close()
		rc.next(t)
		if st.idleCount() != step.kept || len(dials.dialled()) != step.dials {
			t.Fatalf("%+v: %d kept, %d dials", step, st.idleCount(), len(dials.dialled()))
		}
	}
	client.CloseIdleConnections()
	if st.idleCount() != 0 {
		t.Fatalf("%d kept after CloseIdleConnections", st.idleCount())
	}
}

// TestClientSpeaksHTTP11OverTLS: over https too, pushes are HTTP/1.1 on
// one kept-alive connection, even to a receiver that offers HTTP/2.
func TestClientSpeaksHTTP11OverTLS(t *testing.T) {
	rc := &receiver{reqs: make(chan received, 16)}
	rc.srv = httptest.NewUnstartedServer(http.HandlerFunc(rc.serve))
	rc.srv.EnableHTTP2 = true
	rc.srv.StartTLS()
	t.Cleanup(rc.srv.Close)
	r := newResolver(map[string][]string{"hooks.example.com": {"127.0.0.1"}})
	origin := "https://hooks.example.com:" + rc.port()
	dials := newDialLog(t)
	g := newTestGuard(t, dials, r, origin)
	pool := rc.srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	client := g.Client(&tls.Config{RootCAs: pool})
	for range 2 {
		resp, err := post(t, client, origin+"/hook", nil)
		if err != nil {
			t.Fatal(err)
		}
		drain(resp)
		if resp.ProtoMajor != 1 || resp.ProtoMinor != 1 || resp.TLS == nil || resp.TLS.NegotiatedProtocol == "h2" {
			t.Fatalf("%s, want HTTP/1.1 over TLS", resp.Proto)
		}
		rc.next(t)
	}
	if n := len(dials.dialled()); n != 1 {
		t.Fatalf("%d dials, want the connection kept", n)
	}
}

// TestClientCloseDoesNotReadTheRest: closing a body read in part hangs up
// at once, however much the receiver still sends.
func TestClientCloseDoesNotReadTheRest(t *testing.T) {
	origin, _ := rawServer(t, func(_ int, c net.Conn, br *bufio.Reader) {
		if _, err := readRequest(br); err != nil {
			return
		}
		_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
		chunk := "400\r\n" + strings.Repeat("z", 0x400) + "\r\n"
		for {
			if _, err := io.WriteString(c, chunk); err != nil {
				return // the client hung up
			}
		}
	})
	g := newTestGuard(t, newDialLog(t), newResolver(nil), origin)
	resp, err := post(t, g.Client(nil), origin+"/hook", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(resp.Body, make([]byte, 10)); err != nil {
		t.Fatal(err)
	}
	closed := make(chan struct{})
	go func() {
		_ = resp.Body.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close read the endless rest of the body")
	}
}

// TestClientKeepsAConnectionPerLane: lanes that push to one receiver in
// bursts (every lane pushes, then all pause) keep a connection each from
// one burst to the next, instead of dialling again.
func TestClientKeepsAConnectionPerLane(t *testing.T) {
	rc := newReceiver(t, nil)
	dials := newDialLog(t)
	g := newTestGuard(t, dials, newResolver(nil), rc.origin())
	client := g.Client(nil)
	const lanes, bursts = 16, 5
	for range bursts {
		errs := make(chan error, lanes)
		for range lanes {
			go func() {
				resp, err := post(t, client, rc.origin()+"/hook", nil)
				if err == nil {
					drain(resp)
				}
				errs <- err
			}()
		}
		for range lanes {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
			rc.next(t)
		}
	}
	if n := len(dials.dialled()); n > lanes {
		t.Fatalf("%d dials for %d bursts of %d lanes, want at most one per lane", n, bursts, lanes)
	}
}
