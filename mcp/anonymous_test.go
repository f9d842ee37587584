package mcp

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
)

// TestAnonymousCallersCannotCancelEachOther: anonymous callers share one
// Subject, so a notifications/cancelled is tied to the connection of the
// call it names: another anonymous client cannot cancel a call by its
// request id, while the caller can, beside the call on its own HTTP/2
// connection.
func TestAnonymousCallersCannotCancelEachOther(t *testing.T) {
	e := newEnv(t, func(c *testConfig) { c.AllowAnonymous = true })
	ts := e.serveWith(true, 0, 0)
	caller := ts.Client()
	other := &http.Client{Transport: caller.Transport.(*http.Transport).Clone()} // its own connection
	anonymous := interop.Subject{Tenant: tenantA}

	answered := make(chan response, 1)
	go func() {
		resp, err := caller.Do(clientRequest(t, context.Background(), ts.URL, rpc{method: "tools/call", id: `"call-1"`, as: "anon-acme", params: map[string]any{"name": "waits"}}))
		if err != nil {
			answered <- response{}
			return
		}
		defer resp.Body.Close()
		var r response
		_ = json.NewDecoder(resp.Body).Decode(&r)
		answered <- r
	}()
	run := e.waitRuns(anonymous, 1)[0]

	cancelled := func(c *http.Client) {
		t.Helper()
		note := rpc{method: "notifications/cancelled", as: "anon-acme", body: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"call-1"}}`}
		resp, err := c.Do(clientRequest(t, testCtx(t), ts.URL, note))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("notification answered %d", resp.StatusCode)
		}
	}
	cancelled(other)
	if got, err := e.store.GetRun(testCtx(t), anonymous, run.ID); err != nil || got.Status != interop.StatusRunning || got.CancelReason != "" {
		t.Fatalf("another anonymous client's notification touched the run: %s %q %v", got.Status, got.CancelReason, err)
	}
	cancelled(caller)
	r := <-answered
	var res map[string]any
	if r.Error != nil || json.Unmarshal(r.Result, &res) != nil {
		t.Fatalf("the call ended with %+v", r)
	}
	if text, isError := toolResult(t, res); !isError || text != "The tool call was cancelled." {
		t.Fatalf("call ended with %q isError=%v", text, isError)
	}
	if got := e.waitStatus(anonymous, run.ID, interop.StatusCancelled); got.CancelReason != ReasonRequestCancelled {
		t.Fatalf("cancel reason %q", got.CancelReason)
	}
}

// callerStore answers ListWorkflows with one workflow named after the
// caller its request context carries: what a store may do from the
// request beside the Subject (a session, a network), which two anonymous
// callers with one Subject do not share.
type callerStore struct {
	*memstore.Store
	lists atomic.Int32
}

type callerKey struct{}

func (cs *callerStore) ListWorkflows(ctx context.Context, _ interop.Subject) ([]interop.Workflow, error) {
	cs.lists.Add(1)
	caller, _ := ctx.Value(callerKey{}).(string)
	return []interop.Workflow{{ID: "for-" + caller, Name: "For " + caller}}, nil
}

// TestAnonymousToolListsNotShared: anonymous callers' tool lists are never
// served from one another's cache entry: each is read from the store.
func TestAnonymousToolListsNotShared(t *testing.T) {
	cs := &callerStore{}
	e := newEnv(t, func(c *testConfig) {
		c.AllowAnonymous = true
		cs.Store = c.Store.(*memstore.Store)
		c.Store = cs
	})
	h := e.h
	e.h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callerKey{}, r.Header.Get("X-Caller"))))
	})
	list := func(caller string) string {
		t.Helper()
		tools := result(t, e.do(rpc{method: "tools/list", as: "anon-acme", hdr: map[string]string{"X-Caller": caller}}))["tools"].([]any)
		if len(tools) != 1 {
			t.Fatalf("%s: %v", caller, tools)
		}
		return tools[0].(map[string]any)["name"].(string)
	}
	for i, caller := range []string{"one", "two", "one"} {
		if got := list(caller); got != "for-"+caller {
			t.Fatalf("anonymous caller %s was served %s's list", caller, got)
		}
		if n := cs.lists.Load(); n != int32(i+1) {
			t.Fatalf("%d store reads for %d anonymous lists", n, i+1)
		}
	}
	// An authenticated caller's list is still cached.
	for range 2 {
		result(t, e.do(rpc{method: "tools/list", hdr: map[string]string{"X-Caller": "alice"}}))
	}
	if n := cs.lists.Load(); n != 4 {
		t.Fatalf("%d store reads, want 4: the authenticated list was not cached", n)
	}
}

// TestFlightKey: an authenticated request is keyed by its Subject, an
// anonymous one by its Subject and its connection; no two differ only in
// where a field ends.
func TestFlightKey(t *testing.T) {
	req := func(remote, local string) *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		r.RemoteAddr = remote
		addr, _ := net.ResolveTCPAddr("tcp", local)
		return r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, addr))
	}
	id := []byte(`"1"`)
	conn1, conn2, conn3 := req("10.0.0.1:5000", "10.0.0.9:443"), req("10.0.0.1:5001", "10.0.0.9:443"), req("10.0.0.1:5000", "10.0.0.8:443")
	anon := interop.Subject{Tenant: tenantA}
	if flightKey(conn1, alice, id) != flightKey(conn2, alice, id) {
		t.Error("an authenticated caller's key depends on its connection")
	}
	if flightKey(conn1, anon, id) != flightKey(req("10.0.0.1:5000", "10.0.0.9:443"), anon, id) {
		t.Error("one connection, two anonymous keys")
	}
	if flightKey(conn1, anon, id) == flightKey(conn2, anon, id) || flightKey(conn1, anon, id) == flightKey(conn3, anon, id) {
		t.Error("two connections share an anonymous key")
	}
	unauthenticatedAlice := alice
	unauthenticatedAlice.Authenticated = false
	if flightKey(conn1, alice, id) == flightKey(conn1, unauthenticatedAlice, id) {
		t.Error("an anonymous Subject shares an authenticated one's key")
	}
	if flightKey(conn1, subject("a", "bc"), id) == flightKey(conn1, subject("ab", "c"), id) {
		t.Error("field boundaries are ambiguous")
	}
}
