package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopinterop/wopinterop/egress"
	"github.com/wopinterop/wopinterop/internal/golden"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/negotiate"
)

// withListChanged makes the server advertise listChanged for tools and
// prompts.
func withListChanged() serverOpt {
	return func(o *mcp.ServerOptions, _ *mcp.StreamableHTTPOptions) {
		o.Capabilities = &mcp.ServerCapabilities{
			Tools:   &mcp.ToolCapabilities{ListChanged: true},
			Prompts: &mcp.PromptCapabilities{ListChanged: true},
		}
	}
}

// listenStub answers subscriptions/listen on a server itself — one event
// stream a request, acknowledged at once and then fed by the test — and
// hands every other request to go-sdk. With answer set, answer serves the
// listen instead.
type listenStub struct {
	streams chan *stubStream
	answer  http.Handler
}

// stubStream is one open listen stream.
type stubStream struct {
	events chan string   // the data of the next event; closed to end the stream
	gone   chan struct{} // closed when the handler returned
}

func stubListen(s *server, answer http.Handler) *listenStub {
	st := &listenStub{streams: make(chan *stubStream, 16), answer: answer}
	s.mu.Lock()
	next := s.handler
	s.mu.Unlock()
	s.setHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal(body, &msg)
		if msg.Method != methodListen {
			next.ServeHTTP(w, r)
			return
		}
		if st.answer != nil {
			st.answer.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"method\":%q,\"params\":{\"_meta\":{\"io.modelcontextprotocol/subscriptionId\":%s},\"notifications\":{\"toolsListChanged\":true,\"promptsListChanged\":true}}}\n\n",
			notifyAcknowledged, msg.ID)
		w.(http.Flusher).Flush()
		ss := &stubStream{events: make(chan string), gone: make(chan struct{})}
		defer close(ss.gone)
		st.streams <- ss
		for {
			select {
			case data, ok := <-ss.events:
				if !ok {
					return
				}
				fmt.Fprintf(w, "data: %s\n\n", data)
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			}
		}
	}))
	return st
}

// next returns the next stream the client opened.
func (st *listenStub) next(t *testing.T) *stubStream {
	t.Helper()
	select {
	case ss := <-st.streams:
		return ss
	case <-time.After(10 * time.Second):
		t.Fatal("no subscriptions/listen stream was opened")
		return nil
	}
}

// notify sends a notification of method on the stream.
func (ss *stubStream) notify(t *testing.T, method string) {
	t.Helper()
	select {
	case ss.events <- `{"jsonrpc":"2.0","method":"` + method + `","params":{}}`:
	case <-ss.gone:
		t.Fatal("the stream is gone")
	}
}

// waitFor polls cond for up to ten seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting: %s", what)
		}
	}
}

// listenerOf is sess's listener, failing t when it has none.
func listenerOf(t *testing.T, sess *Session) *listener {
	t.Helper()
	ln := sess.link.current()
	if ln == nil {
		t.Fatal("the session does not listen")
	}
	return ln
}

// waitListening waits until sess's server has acknowledged n listen
// streams: the server then delivers every change to the session.
func waitListening(t *testing.T, sess *Session, n int64) {
	t.Helper()
	ln := listenerOf(t, sess)
	waitFor(t, fmt.Sprintf("%d acknowledged listen streams", n), func() bool { return ln.acked.Load() >= n })
}

// waitHeard waits until sess has acted on n list-changed notifications.
func waitHeard(t *testing.T, sess *Session, n int64) {
	t.Helper()
	ln := listenerOf(t, sess)
	waitFor(t, fmt.Sprintf("%d list-changed notifications", n), func() bool { return ln.heard.Load() >= n })
}

// listenFixture is a session with a go-sdk server that advertises
// listChanged, lists tools cacheable for a minute, and whose listen
// streams the test feeds. The session has listed once, so it listens.
func listenFixture(t *testing.T, answer http.Handler, opts ...fixtureOpt) (*server, *listenStub, *fixture, *Session) {
	t.Helper()
	s := newServer(t, withListChanged(), withCache(60_000, "private"))
	s.addTool(tool("echo", "text"))
	st := stubListen(s, answer)
	f := newFixture(t, s, admission(s, tool("echo", "text")), opts...)
	f.client.listenRetry = [2]time.Duration{10 * time.Millisecond, 40 * time.Millisecond}
	sess := f.connect(t, context.Background(), runID, "echo")
	if _, err := sess.Tools(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s, st, f, sess
}

// TestListenInvalidates: a list-changed notification drops the server's
// cached list of its method, under every authorization key, and nothing
// else.
func TestListenInvalidates(t *testing.T) {
	s, st, f, sess := listenFixture(t, nil)
	ctx := context.Background()
	ss := st.next(t)
	waitListening(t, sess, 1)
	for range 2 {
		if _, err := sess.Tools(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := sess.Prompts(ctx); err != nil {
		t.Fatal(err)
	}
	if s.count("tools/list") != 1 || s.count("prompts/list") != 1 {
		t.Fatalf("server saw %q; want one list of each (the second tools/list cached)", s.methods())
	}
	// Another principal's list of the same server, and a list of another
	// server.
	key, _ := sess.cacheKey(ctx, methodListTools)
	other, elsewhere := key, key
	other.principal, other.fingerprint = "user-2", "fp"
	elsewhere.server = "https://elsewhere.example/mcp"
	f.client.cache.put(other, nil, 60_000)
	f.client.cache.put(elsewhere, nil, 60_000)

	ss.notify(t, notifyToolsChanged)
	waitHeard(t, sess, 1)
	if _, ok := f.client.cache.get(other); ok {
		t.Error("another principal's list of the server survived tools/list_changed")
	}
	if _, ok := f.client.cache.get(elsewhere); !ok {
		t.Error("another server's list was dropped")
	}
	if _, err := sess.Tools(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := sess.Prompts(ctx); err != nil {
		t.Fatal(err)
	}
	if s.count("tools/list") != 2 || s.count("prompts/list") != 1 {
		t.Fatalf("after tools/list_changed the server saw %q; want tools/list again, prompts/list cached", s.methods())
	}
	ss.notify(t, notifyPromptsChanged)
	ss.notify(t, "notifications/message") // not a list: ignored
	waitHeard(t, sess, 2)
	if _, err := sess.Prompts(ctx); err != nil {
		t.Fatal(err)
	}
	if s.count("prompts/list") != 2 || s.count("subscriptions/listen") != 1 {
		t.Fatalf("server saw %q", s.methods())
	}
}

// TestListenChangeDuringFetch: a list whose fetch a notification
// overtook is used once but not cached: it may predate the change.
func TestListenChangeDuringFetch(t *testing.T) {
	s, st, f, sess := listenFixture(t, nil)
	ss := st.next(t)
	f.client.InvalidateServer("echo") // the next list is fetched
	s.mu.Lock()
	next := s.handler
	s.mu.Unlock()
	arrived, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	s.setHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"tools/list"`)) {
			once.Do(func() {
				close(arrived)
				<-release
			})
		}
		next.ServeHTTP(w, r)
	}))
	done := make(chan error, 1)
	go func() {
		_, err := sess.Tools(context.Background())
		done <- err
	}()
	<-arrived
	ss.notify(t, notifyToolsChanged)
	waitHeard(t, sess, 1)
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := sess.Tools(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := s.count("tools/list"); n != 3 {
		t.Fatalf("%d tools/list, want 3: the list fetched across the change was cached", n)
	}
}

// TestListenRequest: the listen goes through the session's guarded
// transport at the negotiated revision, with the credential and the run's
// trace context, asking for exactly the lists the server advertises.
func TestListenRequest(t *testing.T) {
	s := newServer(t, withListChanged(), withCache(60_000, "private"))
	s.addTool(tool("echo", "text"))
	st := stubListen(s, nil)
	f := newFixture(t, s, admission(s, tool("echo", "text")), withCredential("peer-key", "tok-1"), withOptions(func(o *Options) {
		o.ClientInfo = &mcp.Implementation{Name: "host", Version: "1.2.3"}
	}))
	ctx := WithTraceContext(context.Background(), interop.TraceContext{TraceParent: traceparent, TraceState: "k=v"})
	sess := f.connect(t, ctx, runID, "echo")
	if _, err := sess.Tools(ctx); err != nil {
		t.Fatal(err)
	}
	st.next(t)
	var listen []seen
	for _, q := range s.requests() {
		if q.method == methodListen {
			listen = append(listen, q)
		}
	}
	if len(listen) != 1 {
		t.Fatalf("server saw %q", s.methods())
	}
	q := listen[0]
	h := q.header
	if q.httpMethod != http.MethodPost || q.version != Revision || h.Get("Mcp-Method") != methodListen ||
		h.Get("Authorization") != "Bearer tok-1" || h.Get("Traceparent") != traceparent || h.Get("Tracestate") != "k=v" ||
		h.Get("Content-Type") != "application/json" || h.Get("Accept") != "application/json, text/event-stream" {
		t.Fatalf("listen %s headers %v", q.httpMethod, h)
	}
	golden.Check(t, "listen_request.json", append(q.body, '\n'))
}

// TestListenLongLivedStream: the stream outlives MaxResultBytes, which
// bounds a response, not a session's listen: every notification is heard
// on the one stream.
func TestListenLongLivedStream(t *testing.T) {
	s, st, _, sess := listenFixture(t, nil, withAdmission(func(a *Admission) { a.Limits.MaxResultBytes = 1024 }))
	ss := st.next(t)
	const n = 40 // ~60 bytes each
	for i := range n {
		ss.notify(t, notifyToolsChanged)
		waitHeard(t, sess, int64(i+1))
	}
	if got := s.count(methodListen); got != 1 {
		t.Fatalf("%d listen requests; the stream was cut", got)
	}
}

// TestListenReopens: a stream the server ended is opened again, and its
// acknowledgment drops the lists it watches (notifications are not
// replayed).
func TestListenReopens(t *testing.T) {
	s, st, _, sess := listenFixture(t, nil)
	ctx := context.Background()
	ss := st.next(t)
	waitListening(t, sess, 1)
	if _, err := sess.Tools(ctx); err != nil {
		t.Fatal(err)
	}
	close(ss.events)
	ss = st.next(t)
	waitListening(t, sess, 2)
	if _, err := sess.Tools(ctx); err != nil {
		t.Fatal(err)
	}
	if s.count("tools/list") != 2 || s.count(methodListen) != 2 {
		t.Fatalf("server saw %q", s.methods())
	}
	// The reopened stream is heard as the first was.
	ss.notify(t, notifyToolsChanged)
	waitHeard(t, sess, 1)
}

// TestListenRefused: a server that refuses the listen is not asked again,
// and the session works; the listener's goroutine ends by itself.
func TestListenRefused(t *testing.T) {
	for name, answer := range map[string]http.Handler{
		"404 -32601":       rpcAnswer(http.StatusNotFound, "application/json", `{"jsonrpc":"2.0","id":$ID,"error":{"code":-32601,"message":"Method not found"}}`),
		"405 text":         rpcAnswer(http.StatusMethodNotAllowed, "text/plain", "no"),
		"200 json result":  rpcAnswer(http.StatusOK, "application/json", `{"jsonrpc":"2.0","id":$ID,"result":{}}`),
		"error before ack": rpcAnswer(http.StatusOK, "text/event-stream", "data: {\"jsonrpc\":\"2.0\",\"id\":$ID,\"error\":{\"code\":-32602,\"message\":\"no\"}}\n\n"),
	} {
		t.Run(name, func(t *testing.T) {
			s, _, _, sess := listenFixture(t, answer)
			select {
			case <-listenerOf(t, sess).done:
			case <-time.After(10 * time.Second):
				t.Fatal("the listener kept going")
			}
			if _, err := sess.Call(context.Background(), CallRequest{Tool: "echo", Arguments: json.RawMessage(`{"text":"x"}`)}); err != nil {
				t.Fatal(err)
			}
			if n := s.count(methodListen); n != 1 {
				t.Fatalf("%d listen requests, want 1", n)
			}
		})
	}
}

// TestListenRetriesTransient: a 503 or a stream ended before its
// acknowledgment is asked again.
func TestListenRetriesTransient(t *testing.T) {
	for name, answer := range map[string]http.Handler{
		"503":            rpcAnswer(http.StatusServiceUnavailable, "text/plain", "busy"),
		"empty stream":   rpcAnswer(http.StatusOK, "text/event-stream", ": nothing\n\n"),
		"not JSON":       rpcAnswer(http.StatusOK, "text/event-stream", "data: {\n\n"),
		"event too long": rpcAnswer(http.StatusOK, "text/event-stream", ": "+strings.Repeat("x", maxListenEvent)+"\n\n"),
	} {
		t.Run(name, func(t *testing.T) {
			s, _, _, sess := listenFixture(t, answer)
			waitFor(t, "three listen requests", func() bool { return s.count(methodListen) >= 3 })
			if err := sess.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestListenNeverBlocksConnect: a server that never answers the listen
// holds neither Connect nor Close; the listen is abandoned after the
// connect timeout and asked again.
func TestListenNeverBlocksConnect(t *testing.T) {
	hung := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	s := newServer(t, withListChanged(), withCache(60_000, "private"))
	s.addTool(tool("echo", "text"))
	stubListen(s, hung)
	f := newFixture(t, s, admission(s, tool("echo", "text")), withOptions(func(o *Options) { o.ConnectTimeout = 500 * time.Millisecond }))
	f.client.listenRetry = [2]time.Duration{10 * time.Millisecond, 10 * time.Millisecond}
	began := time.Now()
	sess := f.connect(t, context.Background(), runID, "echo")
	if _, err := sess.Call(context.Background(), CallRequest{Tool: "echo"}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(began); d >= 500*time.Millisecond {
		t.Fatalf("Connect and a call took %v: the listen held them", d)
	}
	waitFor(t, "a second listen", func() bool { return s.count(methodListen) >= 2 })
	began = time.Now()
	if err := sess.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(began); d > 2*time.Second {
		t.Fatalf("Close took %v", d)
	}
}

// TestListenClose: Close ends the stream (the server sees the client go
// away) and returns after the listener's goroutine.
func TestListenClose(t *testing.T) {
	_, st, _, sess := listenFixture(t, nil)
	ss := st.next(t)
	if err := sess.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-listenerOf(t, sess).done:
	default:
		t.Fatal("Close returned before the listener's goroutine")
	}
	select {
	case <-ss.gone:
	case <-time.After(10 * time.Second):
		t.Fatal("the server never saw the stream end")
	}
	if err := sess.Close(); err != nil { // idempotent
		t.Fatal(err)
	}
}

// TestListenOff: NoListChanges opens no stream, and a server that does
// not advertise listChanged gets none either; the cache then serves
// within ttlMs, and InvalidateServer drops it.
func TestListenOff(t *testing.T) {
	for name, c := range map[string]struct {
		opts []serverOpt
		fo   []fixtureOpt
	}{
		"NoListChanges":            {[]serverOpt{withListChanged()}, []fixtureOpt{withOptions(func(o *Options) { o.NoListChanges = true })}},
		"listChanged unadvertised": {nil, nil},
	} {
		t.Run(name, func(t *testing.T) {
			s := newServer(t, append(c.opts, withCache(60_000, "private"))...)
			s.addTool(tool("echo", "text"))
			f := newFixture(t, s, admission(s, tool("echo", "text")), c.fo...)
			sess := f.connect(t, context.Background(), runID, "echo")
			if sess.link.plan != nil {
				t.Fatal("the session would listen")
			}
			ctx := context.Background()
			if _, err := sess.Tools(ctx); err != nil {
				t.Fatal(err)
			}
			s.addTool(tool("added", "text"))
			if _, err := sess.Tools(ctx); err != nil || s.count("tools/list") != 1 {
				t.Fatalf("server saw %q (%v); want the list cached", s.methods(), err)
			}
			f.clock.advance(time.Minute)
			if _, err := sess.Tools(ctx); err != nil || s.count("tools/list") != 2 {
				t.Fatalf("server saw %q (%v); want the list fetched after ttlMs", s.methods(), err)
			}
			f.client.InvalidateServer("nobody")
			if _, err := sess.Tools(ctx); err != nil || s.count("tools/list") != 2 {
				t.Fatalf("server saw %q (%v); an unknown alias dropped the list", s.methods(), err)
			}
			f.client.InvalidateServer("echo")
			if _, err := sess.Tools(ctx); err != nil || s.count("tools/list") != 3 {
				t.Fatalf("server saw %q (%v); want the list fetched after InvalidateServer", s.methods(), err)
			}
			if s.count(methodListen) != 0 {
				t.Fatalf("server saw %q", s.methods())
			}
		})
	}
}

// TestListenPanicRecovered: a panic on the listener's goroutine (here in
// the host's Credentials) is recovered and logged, and the session goes
// on.
func TestListenPanicRecovered(t *testing.T) {
	logs := &logRecorder{}
	s := newServer(t, withListChanged(), withCache(60_000, "private"))
	s.addTool(tool("echo", "text"))
	a := admission(s, tool("echo", "text"))
	a.Credential = CredentialRef{Name: "k"}
	g, err := egress.NewGuard(egress.GuardOptions{AllowOrigins: []string{s.http.URL}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(Deps{Policy: mcpPolicy(t), Events: newSink(), Guard: g, Credentials: panickyCredentials{}, Admissions: []Admission{a}, MaxRounds: 4},
		Options{Logger: slog.New(logs)})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := c.Connect(context.Background(), runID, "echo")
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if _, err := sess.Tools(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-listenerOf(t, sess).done:
	case <-time.After(10 * time.Second):
		t.Fatal("the listener did not stop")
	}
	if _, err := sess.Call(context.Background(), CallRequest{Tool: "echo"}); err != nil {
		t.Fatal(err)
	}
	if !logs.has("remote: list-change listener panicked") || logs.has("secret") {
		t.Fatalf("logs %q", logs.all())
	}
}

// panickyCredentials panics when asked on a listen stream's behalf.
type panickyCredentials struct{}

func (panickyCredentials) Credential(ctx context.Context, _ CredentialRef) (string, string, error) {
	if isListenStream(ctx) {
		panic("secret")
	}
	return "Bearer", "v", nil
}

// logRecorder keeps the messages and attributes logged.
type logRecorder struct {
	mu    sync.Mutex
	lines []string
}

func (l *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecorder) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, b.String())
	return nil
}
func (l *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logRecorder) WithGroup(string) slog.Handler      { return l }

func (l *logRecorder) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.lines)
}

func (l *logRecorder) has(s string) bool {
	return slices.ContainsFunc(l.all(), func(line string) bool { return strings.Contains(line, s) })
}

// TestCacheKeyedByEndpoint: two servers behind one origin keep two
// lists.
func TestCacheKeyedByEndpoint(t *testing.T) {
	alpha, beta := tool("alpha", "a"), tool("beta", "b")
	mux := http.NewServeMux()
	for path, tl := range map[string]*mcp.Tool{"/a/mcp": alpha, "/b/mcp": beta} {
		srv := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, &mcp.ServerOptions{
			Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
			SetCacheable: func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) { c.TTLMs, c.CacheScope = 60_000, "private" },
		})
		srv.AddTool(tl, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
		mux.Handle(path, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true}))
	}
	hs := httptest.NewServer(mux)
	defer hs.Close()
	g, err := egress.NewGuard(egress.GuardOptions{AllowOrigins: []string{hs.URL}})
	if err != nil {
		t.Fatal(err)
	}
	both := []AdmittedTool{{Name: "alpha", Digest: ToolDigest(alpha)}, {Name: "beta", Digest: ToolDigest(beta)}}
	c, err := New(Deps{Policy: mcpPolicy(t), Events: newSink(), Guard: g, MaxRounds: 4, Admissions: []Admission{
		{Alias: "a", Endpoint: hs.URL + "/a/mcp", Tenant: "acme", Principal: "user-1", Tools: both},
		{Alias: "b", Endpoint: hs.URL + "/b/mcp", Tenant: "acme", Principal: "user-1", Tools: both},
	}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for alias, want := range map[string]string{"a": "alpha", "b": "beta"} {
		sess, err := c.Connect(context.Background(), runID, alias)
		if err != nil {
			t.Fatal(err)
		}
		tools, err := sess.Tools(context.Background())
		_ = sess.Close()
		if err != nil || !slices.Equal(toolNames(tools), []string{want}) {
			t.Fatalf("%s lists %q (%v), want [%s]", alias, toolNames(tools), err, want)
		}
	}
}

// TestOneShotSessionsDoNotListen: a ToolCaller call and a Review make a
// session for one exchange and close it: no list-change stream is opened
// for them, while a session from Connect listens.
func TestOneShotSessionsDoNotListen(t *testing.T) {
	s := newServer(t, withListChanged(), withCache(60_000, "private"))
	s.addTool(tool("echo", "text"))
	st := stubListen(s, nil)
	f := newFixture(t, s, admission(s, tool("echo", "text")))
	if _, err := f.client.ToolCaller().CallTool(context.Background(), interop.ToolCall{RunID: runID, Server: "echo", Tool: "echo"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.client.Review(context.Background(), negotiate.Scope{Tenant: "acme"}, admission(s)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // a stray stream would have been asked for by now
	if n := s.count(methodListen); n != 0 {
		t.Fatalf("%d listen requests for one-shot sessions", n)
	}
	sess := f.connect(t, context.Background(), runID, "echo")
	f.client.InvalidateServer("echo")
	if _, err := sess.Tools(context.Background()); err != nil {
		t.Fatal(err)
	}
	st.next(t)
}

// TestListenOnlyWhenCached: a session listens once it relies on a cached
// list — one it put, or one another session put — and not while its
// server's lists are uncacheable: there is nothing a change would stale.
func TestListenOnlyWhenCached(t *testing.T) {
	t.Run("uncacheable", func(t *testing.T) {
		s := newServer(t, withListChanged()) // ttlMs 0
		s.addTool(tool("echo", "text"))
		stubListen(s, nil)
		f := newFixture(t, s, admission(s, tool("echo", "text")))
		sess := f.connect(t, context.Background(), runID, "echo")
		for range 2 {
			if _, err := sess.Call(context.Background(), CallRequest{Tool: "echo"}); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(100 * time.Millisecond) // a stray stream would have been asked for by now
		if sess.link.plan == nil || sess.link.current() != nil || s.count(methodListen) != 0 {
			t.Fatalf("server saw %q", s.methods())
		}
	})
	t.Run("served from the cache", func(t *testing.T) {
		s, st, f, _ := listenFixture(t, nil)
		st.next(t)
		other := f.connect(t, context.Background(), runID, "echo")
		if other.link.current() != nil {
			t.Fatal("listening before relying on the cache")
		}
		if _, err := other.Tools(context.Background()); err != nil || s.count("tools/list") != 1 {
			t.Fatalf("server saw %q (%v)", s.methods(), err)
		}
		st.next(t)
		waitListening(t, other, 1)
	})
}
