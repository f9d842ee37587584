package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/wopinterop/wopinterop/internal/sseread"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopinterop/wopinterop/internal/recovery"
	"github.com/wopinterop/wopinterop/internal/tracecontext"
)

// A session hears that a server's lists changed on a subscriptions/listen
// stream (MCP 2026-07-28 basic/patterns/subscriptions): a POST answered
// with an event stream that lives as long as the session. Each
// notifications/{tools,prompts,resources}/list_changed drops the cached
// lists of that method of the server, under every authorization key (the
// server's list changed for every caller), so the next list is fetched
// and projected through the admission afresh.
//
// A session listens once it relies on a cached list of its server (put
// or served): with nothing cached there is nothing a change would stale,
// so a session of a server whose lists are uncacheable (ttlMs 0) opens no
// stream.
//
// The stream is the session's own, not go-sdk's: go-sdk's Connect opens
// its listen under a context no deadline bounds (a server slow to answer
// it would hold Connect), never reopens one the server or a proxy closed,
// and a fault on it fails the connection the calls use. Here the stream
// is opened after Connect on a goroutine the session owns: it never
// blocks or fails Connect, a server that refuses it is left alone, one
// that ends it is asked again with a growing delay, and Session.Close
// ends it (on streamable HTTP closing the stream is the cancellation; MCP
// 2026-07-28 basic/patterns/cancellation).

// The methods of a listen stream.
const (
	methodListen           = "subscriptions/listen"
	notifyAcknowledged     = "notifications/subscriptions/acknowledged"
	notifyToolsChanged     = "notifications/tools/list_changed"
	notifyPromptsChanged   = "notifications/prompts/list_changed"
	notifyResourcesChanged = "notifications/resources/list_changed"
)

// changedList is the list each list-changed notification stales.
var changedList = map[string]string{
	notifyToolsChanged:     methodListTools,
	notifyPromptsChanged:   methodListPrompts,
	notifyResourcesChanged: methodListResources,
}

const (
	// maxListenEvent bounds one event of a listen stream, not the stream:
	// a list-changed notification is a few hundred bytes, and the stream
	// lives as long as the session.
	maxListenEvent = 64 << 10
	// listenRetryMin and listenRetryMax bound the delay before a stream
	// the server ended is opened again; it doubles at each reopening and
	// starts over after a stream that lasted listenRetryMax.
	listenRetryMin = time.Second
	listenRetryMax = time.Minute
)

// errListenRefused marks a listen the server refused (an HTTP 4xx, a
// JSON-RPC error before the acknowledgment, an answer that is not a
// stream): it is not asked again in this session.
var errListenRefused = errors.New("remote: the server refused subscriptions/listen")

// listenPlan is what a session's listen asks for.
type listenPlan struct {
	alias    string
	revision string
	want     mcp.NotificationSubscriptions
}

// listener is a session's subscriptions/listen stream.
type listener struct {
	listenPlan
	link *link
	// openTimeout bounds the wait for the stream's response headers;
	// retryMin and retryMax the delay before reopening (listenRetryMin,
	// listenRetryMax).
	openTimeout, retryMin, retryMax time.Duration

	cancel context.CancelFunc
	done   chan struct{}
	id     int64
	// acked counts the streams the server acknowledged; heard the
	// list-changed notifications acted on.
	acked, heard atomic.Int64
}

// watch makes the session listen for changes of the lists its server
// advertises listChanged for in caps (its discover result), once it
// caches one; none advertised, it never listens.
func (l *link) watch(alias, revision string, caps *mcp.ServerCapabilities) {
	var want mcp.NotificationSubscriptions
	if caps != nil {
		want.ToolsListChanged = caps.Tools != nil && caps.Tools.ListChanged
		want.PromptsListChanged = caps.Prompts != nil && caps.Prompts.ListChanged
		want.ResourcesListChanged = caps.Resources != nil && caps.Resources.ListChanged
	}
	if want.ToolsListChanged || want.PromptsListChanged || want.ResourcesListChanged {
		l.plan = &listenPlan{alias: alias, revision: revision, want: want}
	}
}

// listening opens the session's stream, unless it is open, the session
// closed, or it does not listen. It is called whenever the session put a
// list in the cache or was served one. The stream carries the run's trace
// context of ctx, and lives until the session closes.
func (l *link) listening(ctx context.Context) {
	if l.plan == nil || l.opened.Load() {
		return // the common case, without the lock
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.plan == nil || l.closed || l.listener != nil {
		return
	}
	c := l.client
	base := context.Background()
	if tc, ok := tracecontext.FromContext(ctx); ok {
		base = tracecontext.NewContext(base, tc)
	}
	lctx, cancel := context.WithCancel(base)
	l.listener = &listener{
		listenPlan: *l.plan, link: l,
		openTimeout: c.opts.ConnectTimeout, retryMin: c.listenRetry[0], retryMax: c.listenRetry[1],
		cancel: cancel, done: make(chan struct{}),
	}
	l.opened.Store(true)
	go l.listener.run(lctx)
}

// current is the session's stream, nil when none was opened.
func (l *link) current() *listener {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.listener
}

// stop ends the stream and waits for the listener's goroutine to return;
// safe on a nil listener and more than once.
func (ln *listener) stop() {
	if ln == nil {
		return
	}
	ln.cancel()
	<-ln.done
}

func (ln *listener) log() *slog.Logger { return ln.link.client.log }

// run keeps the stream open until ctx ends or the server refuses it.
func (ln *listener) run(ctx context.Context) {
	defer close(ln.done)
	defer func() {
		if v := recover(); v != nil {
			p := recovery.Contain(v)
			ln.log().LogAttrs(ctx, slog.LevelError, "remote: list-change listener panicked",
				slog.String("server", ln.alias), slog.String("panic", p.Value), slog.String("stack", string(p.Stack)))
		}
	}()
	delay := ln.retryMin
	for reopen := false; ; reopen = true {
		began := time.Now()
		err := ln.stream(ctx, reopen)
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, errListenRefused) {
			// The lists of this server then expire by their ttlMs alone.
			ln.log().LogAttrs(ctx, slog.LevelInfo, "remote: no list-change stream",
				slog.String("server", ln.alias), slog.String("error", err.Error()))
			return
		}
		ln.log().LogAttrs(ctx, slog.LevelInfo, "remote: list-change stream ended; reopening",
			slog.String("server", ln.alias), slog.String("error", err.Error()), slog.Duration("after", delay))
		if time.Since(began) >= ln.retryMax {
			delay = ln.retryMin
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		delay = min(2*delay, ln.retryMax)
	}
}

// stream opens one listen stream and reads it until it ends. A reopened
// stream may have missed notifications — they are not replayed — so its
// acknowledgment drops every list it watches.
func (ln *listener) stream(ctx context.Context, reopened bool) error {
	ln.id++
	body, err := ln.request(ctx, ln.id)
	if err != nil {
		return fmt.Errorf("%w: %w", errListenRefused, err)
	}
	sctx, cancel := context.WithCancel(withListenStream(ctx))
	defer cancel()
	req, err := http.NewRequestWithContext(sctx, http.MethodPost, ln.link.endpoint, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%w: %w", errListenRefused, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(headerProtocolVersion, ln.revision)
	req.Header.Set("Mcp-Method", methodListen)
	// The response headers come within the connect timeout; the stream
	// then lives until the session ends.
	late := time.AfterFunc(ln.openTimeout, cancel)
	resp, err := ln.link.hc.Do(req)
	if !late.Stop() {
		if err == nil {
			_ = resp.Body.Close()
		}
		return errors.New("remote: subscriptions/listen: no response within the connect timeout")
	}
	if err != nil {
		return listenFailure(ln.alias, err)
	}
	defer resp.Body.Close()
	if mediaType(resp.Header.Get("Content-Type")) != "text/event-stream" {
		// A JSON answer to a listen is an error, or a result ending the
		// subscription at once: either way there is nothing to listen to.
		return fmt.Errorf("%w: answered %d without a stream", errListenRefused, resp.StatusCode)
	}
	acked := false
	for data, err := range sseread.Data(resp.Body, maxListenEvent) {
		if err != nil {
			return fmt.Errorf("remote: subscriptions/listen: %w", err)
		}
		msg, err := jsonrpc.DecodeMessage(data)
		if err != nil {
			return errors.New("remote: subscriptions/listen: an event is not a JSON-RPC message")
		}
		switch m := msg.(type) {
		case *jsonrpc.Response:
			if m.Error != nil && !acked {
				return fmt.Errorf("%w: %w", errListenRefused, exchangeError(ln.alias, methodListen, m.Error))
			}
			return errors.New("remote: subscriptions/listen: the server ended the subscription")
		case *jsonrpc.Request:
			switch {
			case m.Method == notifyAcknowledged:
				acked = true
				ln.acked.Add(1)
				if reopened {
					ln.drop(ctx, "")
				}
			case changedList[m.Method] != "":
				ln.drop(ctx, changedList[m.Method])
				ln.heard.Add(1)
			}
		}
	}
	return errors.New("remote: subscriptions/listen: the stream ended")
}

// request is the listen request: the notifications wanted, and the _meta
// every 2026-07-28 request carries (a listen asks nothing of the client,
// so it declares no capability).
func (ln *listener) request(ctx context.Context, id int64) ([]byte, error) {
	want := ln.want
	p := &mcp.SubscriptionsListenParams{
		Meta: mcp.Meta{
			mcp.MetaKeyProtocolVersion:    ln.revision,
			mcp.MetaKeyClientInfo:         ln.link.client.info,
			mcp.MetaKeyClientCapabilities: map[string]any{},
		},
		Notifications: &want,
	}
	setTraceMeta(ctx, p)
	params, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	rid, err := jsonrpc.MakeID(float64(id))
	if err != nil {
		return nil, err
	}
	return jsonrpc.EncodeMessage(&jsonrpc.Request{ID: rid, Method: methodListen, Params: params})
}

// drop drops the server's cached lists of method ("" for every list the
// stream watches).
func (ln *listener) drop(ctx context.Context, method string) {
	cache := ln.link.client.cache
	if method != "" {
		cache.dropServer(ln.link.endpoint, ln.revision, method)
		ln.log().LogAttrs(ctx, slog.LevelDebug, "remote: list changed", slog.String("server", ln.alias), slog.String("list", method))
		return
	}
	for notify, list := range changedList {
		if ln.watches(notify) {
			cache.dropServer(ln.link.endpoint, ln.revision, list)
		}
	}
}

func (ln *listener) watches(notify string) bool {
	switch notify {
	case notifyToolsChanged:
		return ln.want.ToolsListChanged
	case notifyPromptsChanged:
		return ln.want.PromptsListChanged
	case notifyResourcesChanged:
		return ln.want.ResourcesListChanged
	}
	return false
}

// listenFailure classifies a failed listen request: an HTTP 4xx or a
// JSON-RPC error is the server's refusal; anything else (the network, a
// 5xx, the egress guard) may pass.
func listenFailure(alias string, err error) error {
	var se *StatusError
	if errors.As(err, &se) && se.StatusCode >= 400 && se.StatusCode < 500 && se.StatusCode != http.StatusTooManyRequests {
		return fmt.Errorf("%w: HTTP %d", errListenRefused, se.StatusCode)
	}
	return fmt.Errorf("remote: subscriptions/listen: %w", exchangeError(alias, methodListen, err))
}

// listenStreamKey marks the context of a listen request: its event stream
// is bounded event by event (maxListenEvent), not as a whole.
type listenStreamKey struct{}

func withListenStream(ctx context.Context) context.Context {
	return context.WithValue(ctx, listenStreamKey{}, true)
}

func isListenStream(ctx context.Context) bool {
	v, _ := ctx.Value(listenStreamKey{}).(bool)
	return v
}
