package egress

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// The push client's transport ([Guard.Client]). Push delivery sends one
// request at a time per lane and waits for its answer (a lane's order
// forbids pipelining), so what bounds a lane is the round trip. An
// http.Transport hands every request to a writer goroutine and every
// answer back from a reader goroutine: two goroutine wake-ups per push,
// which on a loaded machine cost more than the request itself. The
// serial transport writes the request and reads the answer on the
// caller's goroutine over a kept-alive HTTP/1.1 connection (RFC 9112
// §9.3), so a push costs one wake-up: the answer's arrival. It keeps the
// guard's rules of [Guard.NewClient]'s transport: every request checked,
// connections only to validated addresses, no proxy of the environment,
// no header value with CR, LF or NUL, TLS verified against the URL's
// host name.

// Connection reuse. Many lanes often push to one receiver: a host's one
// webhook endpoint. Keeping as many idle connections to it as push
// attempts may be in flight by default (push.Options.Concurrency, 32)
// spares those lanes a dial per push.
const (
	serialMaxIdle        = 64
	serialMaxIdlePerHost = 32
	serialIdleTimeout    = 90 * time.Second
	serialHandshake      = 10 * time.Second
	// serialMaxHeader bounds a response's header block.
	serialMaxHeader = 32 << 10
	// serialMax1xx bounds the interim (1xx) responses skipped before the
	// final one (RFC 9110 §15.2), as http.Transport does.
	serialMax1xx = 5
)

// errHeaderTooLarge reports a response whose header block passed
// serialMaxHeader.
var errHeaderTooLarge = fmt.Errorf("egress: response header larger than %d bytes", serialMaxHeader)

// serialTransport is an http.RoundTripper over HTTP/1.1 connections, each
// used by one request at a time on the caller's goroutine.
type serialTransport struct {
	g   *Guard
	tls *tls.Config // cloned; nil means the system roots

	mu    sync.Mutex
	idle  map[serialKey][]*serialConn // the latest last
	nIdle int
}

func newSerialTransport(g *Guard, tlsConfig *tls.Config) *serialTransport {
	return &serialTransport{g: g, tls: tlsConfig.Clone(), idle: map[serialKey][]*serialConn{}}
}

// serialKey is a destination's scheme and host:port: its connections
// are interchangeable.
type serialKey struct{ scheme, addr string }

// serialConn is one connection and its buffers.
type serialConn struct {
	key    serialKey
	conn   net.Conn
	in     *headerLimit
	br     *bufio.Reader
	bw     *bufio.Writer
	tls    *tls.ConnectionState // nil for http
	reused bool
	idleAt time.Time
}

// headerLimit counts what is read from the connection and fails once a
// header block passes its limit; the body is read without one.
type headerLimit struct {
	r    io.Reader
	read int64 // since the request was written
	left int64 // < 0: no limit
}

func (h *headerLimit) Read(p []byte) (int, error) {
	if h.left == 0 {
		return 0, errHeaderTooLarge
	}
	if h.left > 0 && int64(len(p)) > h.left {
		p = p[:h.left]
	}
	n, err := h.r.Read(p)
	h.read += int64(n)
	if h.left > 0 {
		h.left -= int64(n)
	}
	return n, err
}

// RoundTrip implements http.RoundTripper. The request must be checked
// already: the guardedTransport in front of it does that.
func (t *serialTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	ctx := r.Context()
	d := destinationFrom(ctx)
	if d == nil {
		if r.Body != nil {
			_ = r.Body.Close()
		}
		return nil, errUnchecked
	}
	addr := r.URL.Host // host:port, brackets and all, when it names a port
	if r.URL.Port() == "" {
		port := "80"
		if r.URL.Scheme == "https" {
			port = "443"
		}
		addr = net.JoinHostPort(r.URL.Hostname(), port)
	}
	key := serialKey{scheme: r.URL.Scheme, addr: addr}
	for {
		c := t.take(key)
		if c == nil {
			var err error
			if c, err = t.dial(ctx, r, key, addr); err != nil {
				if r.Body != nil {
					_ = r.Body.Close()
				}
				return nil, err
			}
		}
		resp, err := t.exchange(ctx, c, r)
		if err == nil {
			return resp, nil
		}
		_ = c.conn.Close()
		// A kept-alive connection the server closed meanwhile fails before
		// any byte of an answer: the request is sent again on a fresh one
		// when it may be (RFC 9110 §9.2.2), as http.Transport does.
		if !c.reused || c.in.read > 0 || ctx.Err() != nil || !replayable(r) {
			return nil, err
		}
		body, gerr := r.GetBody()
		if gerr != nil {
			return nil, err
		}
		r = r.Clone(ctx)
		r.Body = body
	}
}

// replayable reports whether r may be sent again after a failure before
// any answer: an idempotent method or an Idempotency-Key, and a body
// that can be read again (http.Transport's rule).
func replayable(r *http.Request) bool {
	if r.Body != nil && r.Body != http.NoBody && r.GetBody == nil {
		return false
	}
	switch r.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	_, key := r.Header["Idempotency-Key"]
	_, xkey := r.Header["X-Idempotency-Key"]
	return key || xkey
}

// exchange writes r on c and reads the answer's header. The response
// body's Close gives c back (or closes it). An error leaves c to the
// caller, which closes it.
func (t *serialTransport) exchange(ctx context.Context, c *serialConn, r *http.Request) (*http.Response, error) {
	// The context's end, by its deadline or a cancellation, unblocks a
	// read or write in progress: a deadline in the past. (No deadline of
	// the connection's own: a failure then always comes with ctx.Err(),
	// so the caller tells a timeout from a network failure.)
	stop := context.AfterFunc(ctx, func() { _ = c.conn.SetDeadline(time.Unix(1, 0)) })
	fail := func(err error) (*http.Response, error) {
		stop()
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, fmt.Errorf("egress: %w", ctxErr)
		}
		return nil, err
	}
	c.in.read, c.in.left = 0, serialMaxHeader
	if err := writeRequest(c.bw, r); err != nil {
		return fail(err)
	}
	if err := c.bw.Flush(); err != nil {
		return fail(err)
	}
	var resp *http.Response
	for n := 0; ; n++ {
		var err error
		if resp, err = readResponse(c.br, r); err != nil {
			return fail(err)
		}
		code := resp.StatusCode
		if code < 100 || code > 199 || code == http.StatusSwitchingProtocols {
			break
		}
		// An interim answer: the final one follows (RFC 9110 §15.2).
		if n == serialMax1xx {
			return fail(errors.New("egress: too many interim (1xx) responses"))
		}
		c.in.left = serialMaxHeader
	}
	c.in.left = -1
	resp.TLS = c.tls
	b := &serialBody{t: t, c: c, r: resp.Body, stop: stop,
		keep: !resp.Close && !r.Close && resp.StatusCode != http.StatusSwitchingProtocols}
	if resp.Body == http.NoBody {
		b.eof.Store(true)
	}
	resp.Body = b
	return resp, nil
}

// serialBody is a response body; closing it gives its connection back
// when the body was read to its end and the connection may be kept.
// Close may come while a Read is blocked (it closes the connection, which
// ends the Read).
type serialBody struct {
	t    *serialTransport
	c    *serialConn
	r    io.ReadCloser
	stop func() bool
	keep bool

	eof    atomic.Bool
	closed atomic.Bool
}

func (b *serialBody) Read(p []byte) (int, error) {
	if b.closed.Load() {
		return 0, http.ErrBodyReadAfterClose
	}
	n, err := b.r.Read(p)
	if err == io.EOF {
		b.eof.Store(true)
	}
	return n, err
}

func (b *serialBody) Close() error {
	if b.closed.Swap(true) {
		return nil
	}
	// stop reports false once the context's end has broken the
	// connection's deadline.
	if b.stop() && b.eof.Load() && b.keep && b.c.br.Buffered() == 0 {
		_ = b.r.Close() // read to its end: nothing left to read
		b.t.put(b.c)
		return nil
	}
	// The connection goes first: net/http's body would otherwise read an
	// unread rest to its end, however long, before it let go.
	_ = b.c.conn.Close()
	_ = b.r.Close()
	return nil
}

// dial connects to a validated address of the request's destination (the
// guard's dial) and, for https, verifies the server against the URL's
// host name, offering HTTP/1.1 only.
func (t *serialTransport) dial(ctx context.Context, r *http.Request, key serialKey, addr string) (*serialConn, error) {
	conn, err := t.g.dialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if r.URL.Scheme == "https" {
		cfg := t.tls.Clone()
		if cfg == nil {
			cfg = &tls.Config{}
		}
		if cfg.ServerName == "" {
			cfg.ServerName = r.URL.Hostname()
		}
		cfg.NextProtos = []string{"http/1.1"}
		tc := tls.Client(conn, cfg)
		hctx, cancel := context.WithTimeout(ctx, serialHandshake)
		err := tc.HandshakeContext(hctx)
		cancel()
		if err != nil {
			_ = conn.Close()
			return nil, err
		}
		conn = tc
	}
	in := &headerLimit{r: conn, left: -1}
	c := &serialConn{key: key, conn: conn, in: in, br: bufio.NewReader(in), bw: bufio.NewWriter(conn)}
	if tc, ok := conn.(*tls.Conn); ok {
		st := tc.ConnectionState()
		c.tls = &st
	}
	return c, nil
}

// take returns the latest idle connection for key, closing the ones idle
// too long; nil when there is none.
func (t *serialTransport) take(key serialKey) *serialConn {
	t.mu.Lock()
	defer t.mu.Unlock()
	cs := t.idle[key]
	for len(cs) > 0 {
		c := cs[len(cs)-1]
		cs[len(cs)-1] = nil
		cs = cs[:len(cs)-1]
		t.nIdle--
		if time.Since(c.idleAt) < serialIdleTimeout {
			t.setIdle(key, cs)
			c.reused = true
			return c
		}
		_ = c.conn.Close()
	}
	t.setIdle(key, cs)
	return nil
}

// put keeps c for the next request to its destination, within the
// idle bounds. Its deadline was never set: the context's end did not
// come.
func (t *serialTransport) put(c *serialConn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	cs := t.idle[c.key]
	if len(cs) >= serialMaxIdlePerHost || t.nIdle >= serialMaxIdle {
		_ = c.conn.Close()
		return
	}
	c.idleAt = time.Now()
	t.idle[c.key] = append(cs, c)
	t.nIdle++
}

func (t *serialTransport) setIdle(key serialKey, cs []*serialConn) {
	if len(cs) == 0 {
		delete(t.idle, key)
		return
	}
	t.idle[key] = cs
}

// CloseIdleConnections closes every idle connection.
func (t *serialTransport) CloseIdleConnections() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for key, cs := range t.idle {
		for _, c := range cs {
			_ = c.conn.Close()
		}
		delete(t.idle, key)
	}
	t.nIdle = 0
}

// idleCount is the number of idle connections kept (tests).
func (t *serialTransport) idleCount() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.nIdle
}
