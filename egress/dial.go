package egress

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/wopinterop/wopinterop/internal/recovery"
)

// Dialling only what the guard validated (OpenWOP RFC 0214 §B; webhooks.md §Egress). A request
// sent through [Guard.Client] is checked by the client's round tripper,
// which resolves the name once and stores the validated destination in
// the request's context; the transport's dial function reads it back and
// connects to those addresses, so no second lookup can answer differently
// (no DNS-rebinding window). A dial without a checked destination fails.

// errUnchecked reports a dial that did not come from a checked request.
var errUnchecked = errors.New("egress: dial of a destination the guard did not check")

// errHeaderValue reports a header value with a line break or NUL.
var errHeaderValue = errors.New("egress: header value contains a control character")

type destinationKey struct{}

func withDestination(ctx context.Context, d *Destination) context.Context {
	return context.WithValue(ctx, destinationKey{}, d)
}

func destinationFrom(ctx context.Context) *Destination {
	d, _ := ctx.Value(destinationKey{}).(*Destination)
	return d
}

// Request checks rawURL now, as [Guard.Check] does (resolving its name, so
// the answer reflects DNS at this moment), and returns a request to it that
// a client of [Guard.Client] sends to the addresses just validated, with
// no second lookup. The URL is judged exactly as given, before net/http
// normalises it. A refusal is a [*RefusedError]; an error of the lookup
// itself is returned as it is.
func (g *Guard) Request(ctx context.Context, method, rawURL string, body io.Reader) (*http.Request, error) {
	d, err := g.Check(ctx, rawURL)
	if err != nil {
		return nil, err
	}
	// The request is built on the URL just checked, not on a second parse
	// of its text: what is sent is exactly what was judged.
	req, err := http.NewRequestWithContext(withDestination(ctx, d), method, "/", body)
	if err != nil {
		return nil, refused(ReasonURL)
	}
	*req.URL = *d.URL // into the URL NewRequest made: one allocation fewer
	req.Host = req.URL.Host
	return req, nil
}

// Client returns the HTTP client push delivery sends with. Every request
// passes the guard: the URL is checked (and its name resolved) when the
// request is sent, the connection goes to a validated address, redirects
// are never followed (the 3xx is returned as it is; OpenWOP RFC 0214 §B),
// the environment's proxy settings are ignored, and header values with
// CR, LF or NUL are refused. TLS verifies the certificate against the URL's
// host name, never the dialled address. tlsConfig may be nil (system
// roots). Unlike [Guard.NewClient]'s, its transport speaks HTTP/1.1 over
// kept-alive connections and writes each request and reads its answer on
// the caller's goroutine (serial.go): a lane of pushes, one request at a
// time, pays no hand-off to the transport's goroutines.
func (g *Guard) Client(tlsConfig *tls.Config) *http.Client {
	return &http.Client{
		Transport: &guardedTransport{g: g, next: newSerialTransport(g, tlsConfig)},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// ClientOptions configure a client of the guard ([Guard.NewClient]).
type ClientOptions struct {
	// TLS configures https requests (e.g. RootCAs of a private CA); nil
	// means the system roots. The certificate is always verified against
	// the URL's host name.
	TLS *tls.Config
	// ResponseHeaderTimeout bounds the wait for a response's headers after
	// the request was written; 0 leaves it to the request's context. A
	// streaming client sets it, since the context must outlive the
	// headers.
	ResponseHeaderTimeout time.Duration
	// RefuseRedirects turns a 3xx response into a [*RedirectError]: the
	// response is closed unread and never reaches the caller, so no
	// caller can follow or parse it by mistake. Without it the 3xx is
	// returned as it is (push delivery counts it as a failed attempt).
	RefuseRedirects bool
}

// NewClient returns an HTTP client every request of which passes the
// guard, as [Guard.Client] describes, configured by o.
func (g *Guard) NewClient(o ClientOptions) *http.Client {
	t := &http.Transport{
		// Never http.ProxyFromEnvironment: the dial would then go to the
		// proxy, and the guard would judge the proxy instead of the target.
		// GuardOptions.Proxy tunnels to the validated address instead.
		Proxy:                  nil,
		DialContext:            g.dialContext,
		TLSClientConfig:        o.TLS.Clone(),
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    10 * time.Second,
		ResponseHeaderTimeout:  o.ResponseHeaderTimeout,
		MaxIdleConns:           64,
		MaxIdleConnsPerHost:    4,
		IdleConnTimeout:        90 * time.Second,
		MaxResponseHeaderBytes: 32 << 10,
	}
	return &http.Client{
		Transport: &guardedTransport{g: g, next: t, refuseRedirects: o.RefuseRedirects},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// RedirectError is a 3xx response a client of [ClientOptions.RefuseRedirects]
// refused. A redirect is never followed (OpenWOP RFC 0214 §B): it would
// send the request, and whatever credential it carries, to a destination
// nobody admitted. The Location is not kept.
type RedirectError struct {
	StatusCode int
}

func (e *RedirectError) Error() string {
	return "egress: the destination answered with a redirect (HTTP " + strconv.Itoa(e.StatusCode) + "), which is never followed"
}

// guardedTransport checks each request before the transport sees it.
type guardedTransport struct {
	g               *Guard
	next            closingTransport
	refuseRedirects bool
}

// closingTransport is the transport behind the guard: an *http.Transport
// or the push client's serialTransport.
type closingTransport interface {
	http.RoundTripper
	CloseIdleConnections()
}

func (t *guardedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.roundTrip(r)
	if err == nil && t.refuseRedirects && resp.StatusCode >= 300 && resp.StatusCode < 400 {
		_ = resp.Body.Close()
		return nil, &RedirectError{StatusCode: resp.StatusCode}
	}
	return resp, err
}

func (t *guardedTransport) roundTrip(r *http.Request) (*http.Response, error) {
	fail := func(err error) (*http.Response, error) {
		if r.Body != nil {
			_ = r.Body.Close()
		}
		return nil, err
	}
	for _, vs := range r.Header {
		for _, v := range vs {
			if strings.ContainsAny(v, "\r\n\x00") {
				return fail(errHeaderValue)
			}
		}
	}
	if d := destinationFrom(r.Context()); d != nil && d.URL.Scheme == r.URL.Scheme && d.URL.Host == r.URL.Host {
		// Checked by Guard.Request (a push attempt checks the URL as
		// registered, before net/http normalises it; a client checks the
		// URL of the admitted agent).
		return t.next.RoundTrip(r)
	}
	d, err := t.g.Check(r.Context(), r.URL.String())
	if err != nil {
		return fail(err)
	}
	return t.next.RoundTrip(r.WithContext(withDestination(r.Context(), d)))
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach the
// transport.
func (t *guardedTransport) CloseIdleConnections() { t.next.CloseIdleConnections() }

// dialContext is the transport's dial: it connects to the addresses of the
// request's checked destination, in order, and to nothing else.
func (g *Guard) dialContext(ctx context.Context, network, addr string) (_ net.Conn, err error) {
	// GuardOptions.Dial is host code, and this runs in the HTTP
	// transport's own goroutine, where a panic would end the process: it
	// becomes a failed dial, which the caller sees as a connection error.
	defer func() {
		if v := recover(); v != nil {
			err = recovery.Contain(v)
		}
	}()
	d := destinationFrom(ctx)
	if d == nil || !sameHostPort(addr, d.hostPort) {
		return nil, errUnchecked
	}
	var last error = errUnchecked
	for _, ap := range d.Addrs {
		conn, err := g.dialAddr(ctx, ap, d.Allowlisted)
		if err == nil {
			return conn, nil
		}
		last = err
		if ctx.Err() != nil {
			break
		}
	}
	return nil, fmt.Errorf("egress: connect: %w", last)
}

// dialAddr connects to one validated address, directly or through the
// proxy's tunnel. The address is judged once more right before the
// connection, so nothing but a public address (or an allowlisted origin's)
// is ever dialled directly.
func (g *Guard) dialAddr(ctx context.Context, ap netip.AddrPort, allowlisted bool) (net.Conn, error) {
	if !allowlisted && !g.policy.publicUnicast(ap.Addr()) {
		return nil, refused(ReasonAddress)
	}
	if g.proxy == nil {
		return g.dial(ctx, "tcp", ap.String())
	}
	return g.tunnel(ctx, ap)
}

// tunnel opens a CONNECT tunnel through the proxy to ap, the validated
// address: the proxy never sees the name, so it cannot resolve it again.
func (g *Guard) tunnel(ctx context.Context, ap netip.AddrPort) (net.Conn, error) {
	conn, err := g.dial(ctx, "tcp", g.proxy.Host)
	if err != nil {
		return nil, err
	}
	// The CONNECT exchange ends with ctx: a deadline in the past unblocks
	// the read or write in progress.
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	target := ap.String()
	req := &http.Request{
		Method: http.MethodConnect,
		URL:    &url.URL{Opaque: target},
		Host:   target,
		Header: http.Header{},
	}
	if u := g.proxy.User; u != nil {
		pw, _ := u.Password()
		req.Header.Set("Proxy-Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(u.Username()+":"+pw)))
	}
	fail := func(err error) (net.Conn, error) {
		stop()
		_ = conn.Close()
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		return nil, err
	}
	if err := req.Write(conn); err != nil {
		return fail(fmt.Errorf("egress: proxy: %w", err))
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		return fail(fmt.Errorf("egress: proxy: %w", err))
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fail(fmt.Errorf("egress: proxy refused the tunnel with HTTP %d", resp.StatusCode))
	}
	if br.Buffered() > 0 {
		// The target speaks first only after our TLS hello; bytes now are
		// the proxy's, and would be lost with the reader.
		return fail(errors.New("egress: proxy sent data before the tunnel opened"))
	}
	if !stop() {
		return fail(ctx.Err())
	}
	return conn, nil
}

// sameHostPort compares two host:port strings as the transport and the
// guard spell them: host names without case or a trailing dot.
func sameHostPort(a, b string) bool {
	ah, ap, err1 := net.SplitHostPort(a)
	bh, bp, err2 := net.SplitHostPort(b)
	if err1 != nil || err2 != nil || ap != bp {
		return false
	}
	return strings.EqualFold(strings.TrimSuffix(ah, "."), strings.TrimSuffix(bh, "."))
}
