package egress

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wopinterop/wopinterop/internal/fixture"
)

// destinationCorpus is the shared fixture testdata/egress/destinations.json:
// the push-destination forms every guard must refuse (OpenWOP interop.md
// §A2A push delivery; RFC 0214), with the DNS the names in it resolve
// through and the one allowlisted origin beside which some of them sit.
// Another package's tests (the A2A push-config operations) refuse the same
// forms by reading the same file.
type destinationCorpus struct {
	AllowOrigin string              `json:"allowOrigin"`
	DNS         map[string][]string `json:"dns"`
	Refused     []struct {
		Form   string `json:"form"`
		URL    string `json:"url"`
		Reason Reason `json:"reason"`
		Note   string `json:"note"`
	} `json:"refused"`
}

func destinations(t testing.TB) destinationCorpus {
	t.Helper()
	var c destinationCorpus
	fixture.JSON(t, "egress/destinations.json", &c)
	if c.AllowOrigin != guardAllow {
		t.Fatalf("destinations.json allows %q, the tests %q", c.AllowOrigin, guardAllow)
	}
	return c
}

// guardDNS is the DNS of the guard tests. Every public answer is a
// documentation-free public address that is never dialled: the tests'
// dialer refuses anything but 127.0.0.1.
func guardDNS(t testing.TB) *fakeResolver {
	t.Helper()
	return newResolver(destinations(t).DNS)
}

// guardAllow is the allowlisted origin of the guard tests.
const guardAllow = "http://127.0.0.1:8080"

// refusedDestinations: every form must be refused at registration (Check)
// and at delivery, with the reason given.
func refusedDestinations(t testing.TB) []struct {
	url    string
	reason Reason
} {
	t.Helper()
	known := []Reason{ReasonScheme, ReasonURL, ReasonUserinfo, ReasonPort, ReasonHost, ReasonResolve, ReasonAddress}
	var out []struct {
		url    string
		reason Reason
	}
	for _, r := range destinations(t).Refused {
		if !slices.Contains(known, r.Reason) {
			t.Fatalf("destinations.json: %q refused for unknown reason %q", r.URL, r.Reason)
		}
		out = append(out, struct {
			url    string
			reason Reason
		}{r.URL, r.Reason})
	}
	// A URL one byte over the length limit is built, not stored.
	return append(out, struct {
		url    string
		reason Reason
	}{"https://hooks.partner.net/" + strings.Repeat("a", maxURLLength), ReasonURL})
}

func newTestGuard(t *testing.T, dials *dialLog, r Resolver, allow ...string) *Guard {
	t.Helper()
	g, err := NewGuard(GuardOptions{Resolver: r, AllowOrigins: allow, Dial: dials.dial})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestGuardRefusesAtRegistration(t *testing.T) {
	cases := refusedDestinations(t)
	if len(cases) < 40 {
		t.Fatalf("%d destination forms, want at least 40", len(cases))
	}
	dials := newDialLog(t)
	g := newTestGuard(t, dials, guardDNS(t), guardAllow)
	for _, c := range cases {
		d, err := g.Check(context.Background(), c.url)
		var re *RefusedError
		switch {
		case d != nil || err == nil:
			t.Errorf("%q: accepted (%v), want refused: %s", c.url, d.Addrs, c.reason)
		case !errors.As(err, &re) || !errors.Is(err, ErrRefused):
			t.Errorf("%q: error %v is not a *RefusedError", c.url, err)
		case re.Reason != c.reason:
			t.Errorf("%q: refused for %q, want %q", c.url, re.Reason, c.reason)
		}
	}
	if got := dials.dialled(); len(got) != 0 {
		t.Fatalf("a check dialled %v", got)
	}
}

func TestGuardAccepts(t *testing.T) {
	dials := newDialLog(t)
	g := newTestGuard(t, dials, guardDNS(t), guardAllow)
	cases := []struct {
		url         string
		origin      string
		addrs       []string
		allowlisted bool
	}{
		{"https://hooks.partner.net/a2a?x=1", "https://hooks.partner.net:443", []string{"93.184.216.34:443"}, false},
		{"https://HOOKS.Partner.NET./a2a", "https://hooks.partner.net:443", []string{"93.184.216.34:443"}, false},
		{"https://v6.partner.net:8443/", "https://v6.partner.net:8443", []string{"[2606:4700:4700::1111]:8443"}, false},
		{"https://93.184.216.34/", "https://93.184.216.34:443", []string{"93.184.216.34:443"}, false},
		{"https://[2606:4700:4700::1111]/", "https://[2606:4700:4700::1111]:443", []string{"[2606:4700:4700::1111]:443"}, false},
		// embedded forms of public addresses are judged, not denied wholesale
		{"https://[::ffff:93.184.216.34]/", "https://[::ffff:93.184.216.34]:443", []string{"93.184.216.34:443"}, false},
		{"https://[64:ff9b::5db8:d822]/", "https://[64:ff9b::5db8:d822]:443", []string{"[64:ff9b::5db8:d822]:443"}, false},
		{"https://[2002:5db8:d822::1]/", "https://[2002:5db8:d822::1]:443", []string{"[2002:5db8:d822::1]:443"}, false},
		{"https://[2001:0:4136:e378:8000:63bf:a247:2bdd]/", "https://[2001:0:4136:e378:8000:63bf:a247:2bdd]:443", []string{"[2001:0:4136:e378:8000:63bf:a247:2bdd]:443"}, false},
		// the allowlisted origin, exactly
		{"http://127.0.0.1:8080/hook", guardAllow, []string{"127.0.0.1:8080"}, true},
		{"http://127.0.0.1:8080", guardAllow, []string{"127.0.0.1:8080"}, true},
	}
	for _, c := range cases {
		d, err := g.Check(context.Background(), c.url)
		if err != nil {
			t.Errorf("%q: %v", c.url, err)
			continue
		}
		var addrs []string
		for _, a := range d.Addrs {
			addrs = append(addrs, a.String())
		}
		if d.Origin != c.origin || d.Allowlisted != c.allowlisted || !slices.Equal(addrs, c.addrs) {
			t.Errorf("%q: origin %q allowlisted %v addrs %v, want %q %v %v", c.url, d.Origin, d.Allowlisted, addrs, c.origin, c.allowlisted, c.addrs)
		}
	}
	if got := dials.dialled(); len(got) != 0 {
		t.Fatalf("a check dialled %v", got)
	}
}

func TestGuardResolvesAbsoluteNamesOnEveryCheck(t *testing.T) {
	r := guardDNS(t)
	g := newTestGuard(t, newDialLog(t), r)
	for range 2 {
		if _, err := g.Check(context.Background(), "https://Hooks.Partner.net/"); err != nil {
			t.Fatal(err)
		}
	}
	// Absolute (no search domains), lower case, and once per check: the
	// answer is never cached between a registration and a delivery.
	if diff := cmp.Diff([]string{"hooks.partner.net.", "hooks.partner.net."}, r.lookups()); diff != "" {
		t.Fatalf("lookups (-want +got):\n%s", diff)
	}
}

func TestGuardDenyAddsHostBlocks(t *testing.T) {
	g, err := NewGuard(GuardOptions{
		Resolver: guardDNS(t),
		Deny:     []netip.Prefix{netip.MustParsePrefix("93.184.0.0/16"), netip.MustParsePrefix("2606:4700::/32")},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{
		"https://hooks.partner.net/",         // resolves into the denied IPv4 block
		"https://[::ffff:93.184.216.34]/",    // mapped form of it
		"https://[2002:5db8:d822::1]/",       // 6to4 form of it
		"https://[2606:4700:4700::1111]/",    // the denied IPv6 block
		"https://[64:ff9b::5db8:d822]:8443/", // NAT64 form of it
	} {
		var re *RefusedError
		if _, err := g.Check(context.Background(), u); !errors.As(err, &re) || re.Reason != ReasonAddress {
			t.Errorf("%q: %v, want refused by the host's denylist", u, err)
		}
	}
	if _, err := g.Check(context.Background(), "https://[2620:4f:8000::1]/"); err != nil {
		t.Errorf("an address outside the host's blocks: %v", err)
	}
}

func TestNewGuardRefusesBadOptions(t *testing.T) {
	cases := []struct {
		name string
		o    GuardOptions
	}{
		{"allow with path", GuardOptions{AllowOrigins: []string{"http://127.0.0.1:8080/hook"}}},
		{"allow with query", GuardOptions{AllowOrigins: []string{"http://127.0.0.1:8080?x"}}},
		{"allow with userinfo", GuardOptions{AllowOrigins: []string{"http://u@127.0.0.1:8080"}}},
		{"allow not a URL", GuardOptions{AllowOrigins: []string{"127.0.0.1:8080"}}},
		{"allow ftp", GuardOptions{AllowOrigins: []string{"ftp://127.0.0.1"}}},
		{"invalid deny prefix", GuardOptions{Deny: []netip.Prefix{{}}}},
		{"https proxy", GuardOptions{Proxy: &url.URL{Scheme: "https", Host: "proxy.partner.net:443"}}},
		{"proxy without port", GuardOptions{Proxy: &url.URL{Scheme: "http", Host: "proxy.partner.net"}}},
	}
	for _, c := range cases {
		if g, err := NewGuard(c.o); err == nil || g != nil {
			t.Errorf("%s: accepted", c.name)
		}
	}
}

func TestGuardAllowlistNormalisesOrigins(t *testing.T) {
	g := newTestGuard(t, newDialLog(t), newResolver(map[string][]string{"receiver.test.lan": {"127.0.0.1"}}),
		"HTTP://127.0.0.1:8080/", "http://receiver.test.lan.:80", "https://[::1]")
	for _, u := range []string{"http://127.0.0.1:8080/x", "http://RECEIVER.test.lan/x", "https://[0:0::1]:443/"} {
		d, err := g.Check(context.Background(), u)
		if err != nil || !d.Allowlisted {
			t.Errorf("%q: %v, want the allowlisted origin", u, err)
		}
	}
}

func TestClientNeverFollowsRedirects(t *testing.T) {
	final := newReceiver(t, nil)
	hop := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, final.origin()+"/final", http.StatusTemporaryRedirect)
	})
	dials := newDialLog(t)
	g := newTestGuard(t, dials, newResolver(nil), hop.origin(), final.origin())
	resp, err := g.Client(nil).Post(hop.origin()+"/hook", contentType, strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusTemporaryRedirect {
		t.Fatalf("status %d, want the 307 itself", resp.StatusCode)
	}
	hop.next(t)
	final.none(t, 50*time.Millisecond)
}

func TestClientRefusesHeaderLineBreaks(t *testing.T) {
	rc := newReceiver(t, nil)
	g := newTestGuard(t, newDialLog(t), newResolver(nil), rc.origin())
	for _, v := range []string{"Bearer a\r\nX-Injected: 1", "Bearer a\nb", "Bearer a\rb", "Bearer a\x00"} {
		req, _ := http.NewRequest(http.MethodPost, rc.origin(), strings.NewReader(`{}`))
		req.Header["Authorization"] = []string{v}
		resp, err := g.Client(nil).Do(req)
		if resp != nil {
			_ = resp.Body.Close()
		}
		if !errors.Is(err, errHeaderValue) {
			t.Errorf("%q: %v, want the header refused", v, err)
		}
	}
	rc.none(t, 20*time.Millisecond)
}

func TestClientDialsOnlyTheValidatedAddress(t *testing.T) {
	rc := newReceiver(t, nil)
	r := newResolver(map[string][]string{"receiver.partner.net": {"127.0.0.1"}})
	dials := newDialLog(t)
	allowed := "http://receiver.partner.net:" + rc.port()
	g := newTestGuard(t, dials, r, allowed)
	client := g.Client(nil)
	for range 2 {
		resp, err := client.Post(allowed+"/hook", contentType, strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		rc.next(t)
	}
	// The name is resolved once per request (by the check) and never by
	// the dial, which went to the validated address.
	if n := len(r.lookups()); n != 2 {
		t.Fatalf("%d lookups, want one per request", n)
	}
	for _, a := range dials.dialled() {
		if a != "127.0.0.1:"+rc.port() {
			t.Fatalf("dialled %q", a)
		}
	}
}

// TestRequestChecksOnceAndDialsTheChecked: a request built by Guard.Request
// is judged as given, and the client sends it to the address that check
// validated without a second lookup; a refused URL builds no request.
func TestRequestChecksOnceAndDialsTheChecked(t *testing.T) {
	rc := newReceiver(t, nil)
	r := newResolver(map[string][]string{"receiver.partner.net": {"127.0.0.1"}, "private.partner.net": {"10.0.0.1"}})
	dials := newDialLog(t)
	allowed := "http://receiver.partner.net:" + rc.port()
	g := newTestGuard(t, dials, r, allowed)
	req, err := g.Request(context.Background(), http.MethodPost, allowed+"/hook", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := g.Client(nil).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	rc.next(t)
	if n := len(r.lookups()); n != 1 {
		t.Fatalf("%d lookups, want the one of Request", n)
	}
	if got := dials.dialled(); len(got) != 1 || got[0] != "127.0.0.1:"+rc.port() {
		t.Fatalf("dialled %v", got)
	}

	var re *RefusedError
	for url, reason := range map[string]Reason{
		"https://private.partner.net/hook": ReasonAddress,
		"ftp://receiver.partner.net/hook":  ReasonScheme,
	} {
		req, err := g.Request(context.Background(), http.MethodPost, url, nil)
		if req != nil || !errors.As(err, &re) || re.Reason != reason {
			t.Errorf("Request(%q) = %v, %v; want refused for %q", url, req, err, reason)
		}
	}
	if len(dials.dialled()) != 1 {
		t.Fatalf("a refused request dialled %v", dials.dialled())
	}
}

func TestDialWithoutCheckedDestinationFails(t *testing.T) {
	dials := newDialLog(t)
	g := newTestGuard(t, dials, newResolver(nil))
	if _, err := g.dialContext(context.Background(), "tcp", "127.0.0.1:9"); !errors.Is(err, errUnchecked) {
		t.Fatalf("%v, want errUnchecked", err)
	}
	// A destination for another host does not open this one.
	d := &Destination{hostPort: "hooks.partner.net:443", Addrs: []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:9")}}
	if _, err := g.dialContext(withDestination(context.Background(), d), "tcp", "other.partner.net:443"); !errors.Is(err, errUnchecked) {
		t.Fatalf("%v, want errUnchecked", err)
	}
	// A destination that is not allowlisted never dials a private address,
	// even if one got into it.
	d = &Destination{hostPort: "hooks.partner.net:443", Addrs: []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:9")}}
	var re *RefusedError
	if _, err := g.dialContext(withDestination(context.Background(), d), "tcp", "hooks.partner.net:443"); !errors.As(err, &re) {
		t.Fatalf("%v, want a refusal", err)
	}
	if got := dials.dialled(); len(got) != 0 {
		t.Fatalf("dialled %v", got)
	}
}

// TestClientTLSVerifiesTheURLHost: the connection goes to the validated
// address, but TLS names (SNI) and verifies the URL's host.
func TestClientTLSVerifiesTheURLHost(t *testing.T) {
	rc := newTLSReceiver(t, nil)
	r := newResolver(map[string][]string{"hooks.example.com": {"127.0.0.1"}})
	origin := "https://hooks.example.com:" + rc.port()
	g := newTestGuard(t, newDialLog(t), r, origin)
	pool := rc.srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	resp, err := g.Client(&tls.Config{RootCAs: pool}).Post(origin+"/hook", contentType, strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if got := rc.next(t); got.serverName != "hooks.example.com" {
		t.Fatalf("SNI %q, want the URL's host", got.serverName)
	}
	// Without the test CA the certificate is not trusted: verification is on.
	if resp, err := g.Client(nil).Post(origin+"/hook", contentType, strings.NewReader(`{}`)); err == nil {
		_ = resp.Body.Close()
		t.Fatal("an untrusted certificate was accepted")
	}
}

// connectProxy is a minimal CONNECT proxy on loopback that records the
// tunnel targets and relays bytes.
type connectProxy struct {
	ln      net.Listener
	targets chan string
}

func newConnectProxy(t *testing.T) *connectProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &connectProxy{ln: ln, targets: make(chan string, 16)}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.serve(c)
		}
	}()
	return p
}

func (p *connectProxy) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil || req.Method != http.MethodConnect {
		return
	}
	p.targets <- req.Host
	host, _, _ := net.SplitHostPort(req.Host)
	if host != "127.0.0.1" {
		_, _ = io.WriteString(c, "HTTP/1.1 403 Forbidden\r\n\r\n")
		return
	}
	up, err := net.Dial("tcp", req.Host)
	if err != nil {
		_, _ = io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\n\r\n")
		return
	}
	defer up.Close()
	_, _ = io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n")
	go func() { _, _ = io.Copy(up, br) }()
	_, _ = io.Copy(c, up)
}

func TestProxyTunnelsToTheValidatedAddress(t *testing.T) {
	rc := newReceiver(t, nil)
	proxy := newConnectProxy(t)
	r := newResolver(map[string][]string{
		"receiver.partner.net": {"127.0.0.1"},
		"private.partner.net":  {"10.9.9.9"},
	})
	dials := newDialLog(t)
	allowed := "http://receiver.partner.net:" + rc.port()
	g, err := NewGuard(GuardOptions{
		Resolver: r, AllowOrigins: []string{allowed}, Dial: dials.dial,
		Proxy: &url.URL{Scheme: "http", Host: proxy.ln.Addr().String()},
	})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := g.Client(nil).Post(allowed+"/hook", contentType, strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	rc.next(t)
	// The proxy was asked for the validated address, never the name.
	if got := <-proxy.targets; got != "127.0.0.1:"+rc.port() {
		t.Fatalf("CONNECT %q, want the validated address", got)
	}
	// A private target is refused before the proxy is contacted: the proxy
	// (on loopback itself) is never judged in the target's place.
	var re *RefusedError
	if _, err := g.Client(nil).Post("https://private.partner.net/hook", contentType, strings.NewReader(`{}`)); !errors.As(err, &re) || re.Reason != ReasonAddress {
		t.Fatalf("%v, want the private target refused", err)
	}
	select {
	case got := <-proxy.targets:
		t.Fatalf("the proxy was asked for %q", got)
	default:
	}
}
