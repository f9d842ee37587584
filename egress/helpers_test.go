package egress

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"testing"
	"time"
)

// errNXDomain is the fake resolver's answer for a name it does not know.
var errNXDomain = errors.New("no such host")

// fakeResolver answers from a table keyed by absolute name ("name.") and
// records every lookup, so tests control DNS completely.
type fakeResolver struct {
	mu      sync.Mutex
	answers map[string][]netip.Addr
	calls   []string
	// next, when set, answers instead of the table (and may change it).
	next func(host string) ([]netip.Addr, error)
}

func newResolver(table map[string][]string) *fakeResolver {
	r := &fakeResolver{answers: map[string][]netip.Addr{}}
	for name, addrs := range table {
		r.set(name, addrs...)
	}
	return r
}

func (r *fakeResolver) set(name string, addrs ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var as []netip.Addr
	for _, a := range addrs {
		as = append(as, netip.MustParseAddr(a))
	}
	r.answers[name+"."] = as
}

func (r *fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	r.calls = append(r.calls, host)
	next := r.next
	as, ok := r.answers[host]
	r.mu.Unlock()
	if next != nil {
		return next(host)
	}
	if !ok {
		return nil, errNXDomain
	}
	return as, nil
}

func (r *fakeResolver) lookups() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.calls...)
}

// dialLog records every address a guard dialled. Its dial function
// connects only to 127.0.0.1 and fails the test on anything else, so no
// test can send a packet off the machine whatever the guard decides.
type dialLog struct {
	t     testing.TB
	mu    sync.Mutex
	addrs []string
}

func newDialLog(t testing.TB) *dialLog { return &dialLog{t: t} }

func (l *dialLog) dial(ctx context.Context, network, address string) (net.Conn, error) {
	l.mu.Lock()
	l.addrs = append(l.addrs, address)
	l.mu.Unlock()
	host, _, err := net.SplitHostPort(address)
	if err != nil || host != "127.0.0.1" {
		l.t.Errorf("dial of %q: only 127.0.0.1 may ever be dialled in tests", address)
		return nil, errors.New("test dialer: off-machine address")
	}
	var d net.Dialer
	return d.DialContext(ctx, network, address)
}

func (l *dialLog) dialled() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.addrs...)
}

// received is one request a receiver saw.
type received struct {
	method     string
	path       string
	header     http.Header
	body       []byte
	serverName string // TLS SNI, when served over TLS
}

// receiver is a loopback push receiver that records every request and
// answers with its handler (204 when nil).
type receiver struct {
	srv  *httptest.Server
	reqs chan received
	mu   sync.Mutex
	h    http.HandlerFunc
}

func newReceiver(t testing.TB, h http.HandlerFunc) *receiver {
	rc := &receiver{reqs: make(chan received, 1024), h: h}
	rc.srv = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.srv.Close)
	return rc
}

func newTLSReceiver(t testing.TB, h http.HandlerFunc) *receiver {
	rc := &receiver{reqs: make(chan received, 1024), h: h}
	rc.srv = httptest.NewUnstartedServer(http.HandlerFunc(rc.serve))
	// A test that checks verification provokes handshake errors.
	rc.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	rc.srv.StartTLS()
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	got := received{method: r.Method, path: r.URL.Path, header: r.Header.Clone(), body: body}
	if r.TLS != nil {
		got.serverName = r.TLS.ServerName
	}
	rc.reqs <- got
	rc.mu.Lock()
	h := rc.h
	rc.mu.Unlock()
	if h == nil {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	h(w, r)
}

func (rc *receiver) setHandler(h http.HandlerFunc) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.h = h
}

// origin is "http://127.0.0.1:port".
func (rc *receiver) origin() string { return rc.srv.URL }

func (rc *receiver) port() string {
	_, p, _ := net.SplitHostPort(rc.srv.Listener.Addr().String())
	return p
}

// next waits for the next request.
func (rc *receiver) next(t testing.TB) received {
	t.Helper()
	select {
	case r := <-rc.reqs:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("no push arrived within 10s")
		return received{}
	}
}

// none checks that no request arrives within d.
func (rc *receiver) none(t testing.TB, d time.Duration) {
	t.Helper()
	select {
	case r := <-rc.reqs:
		t.Fatalf("unexpected push %s %s: %s", r.method, r.path, r.body)
	case <-time.After(d):
	}
}

// contentType is what a push is sent as (OpenWOP RFC 0214 §C).
const contentType = "application/a2a+json"
