package mcp

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/mcp/internal/mount"
)

// streamTools is an extension whose native tools answer as SSE streams:
// "slow-progress" reports progress, waits pause, reports again and
// answers; "flood" reports 64 KiB of progress after 64 KiB until its
// context ends, then says why on ended.
func streamTools(pause time.Duration, ended chan error) *fakeExtension {
	return &fakeExtension{
		tools: []mount.Tool{{Name: "slow-progress"}, {Name: "flood"}},
		call: func(ctx context.Context, tc *mount.ToolCall) (mount.ToolOutcome, error) {
			switch tc.Name {
			case "slow-progress":
				notifyProgress(tc, 1, "first")
				select {
				case <-time.After(pause):
				case <-ctx.Done():
					return mount.ToolOutcome{}, ctx.Err()
				}
				notifyProgress(tc, 2, "second")
				return textResult("done"), nil
			case "flood":
				msg := strings.Repeat("x", 64<<10)
				for i := 0; ctx.Err() == nil; i++ {
					notifyProgress(tc, float64(i), msg)
				}
				ended <- ctx.Err()
				return mount.ToolOutcome{}, ctx.Err()
			}
			return mount.ToolOutcome{}, interop.ErrNotFound
		},
	}
}

// progressCall is a tools/call of name asking for progress.
func progressCall(name string) rpc {
	return rpc{method: "tools/call", params: map[string]any{"name": name},
		meta: `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":"p-1"}`}
}

// serveWith starts a real server for e, over HTTP/2 (TLS) when h2, with
// the given http.Server timeouts.
func (e *env) serveWith(h2 bool, read, write time.Duration) *httptest.Server {
	ts := httptest.NewUnstartedServer(e.h)
	ts.Config.ReadTimeout, ts.Config.WriteTimeout = read, write
	if h2 {
		ts.EnableHTTP2 = true
		ts.StartTLS()
	} else {
		ts.Start()
	}
	e.t.Cleanup(ts.Close)
	return ts
}

// openStream posts q and returns its SSE answer.
func openStream(t testing.TB, ts *httptest.Server, q rpc) *sse {
	t.Helper()
	resp, err := ts.Client().Do(clientRequest(t, testCtx(t), ts.URL, q))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("answered %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return &sse{t: t, sc: bufio.NewScanner(resp.Body)}
}

// TestStreamsOutliveServerTimeouts: an http.Server ReadTimeout and
// WriteTimeout shorter than a stream do not end it — neither a
// subscriptions/listen stream nor a native tool call's progress stream,
// over HTTP/1.1 or HTTP/2: the body was read, so no read deadline
// applies, and each message gets its own write deadline, which bounds the
// writing of that message, not the idle time after it.
func TestStreamsOutliveServerTimeouts(t *testing.T) {
	const (
		serverTimeout = 200 * time.Millisecond // the http.Server's ReadTimeout and WriteTimeout
		writeTimeout  = 500 * time.Millisecond // StreamWriteTimeout: one message's write
		outlive       = 3 * writeTimeout       // the stream idles longer than either
	)
	for _, h2 := range []bool{false, true} {
		proto := map[bool]string{false: "HTTP/1.1", true: "HTTP/2"}[h2]
		t.Run(proto+"/progress", func(t *testing.T) {
			e := newEnv(t, withExtension(streamTools(outlive, nil)), func(c *testConfig) {
				c.StreamWriteTimeout = writeTimeout
			})
			ts := e.serveWith(h2, serverTimeout, serverTimeout)
			stream := openStream(t, ts, progressCall("slow-progress"))
			for _, want := range []string{"first", "second"} {
				if m := stream.next(); m["method"] != "notifications/progress" || m["params"].(map[string]any)["message"] != want {
					t.Fatalf("want progress %q, got %v", want, m)
				}
			}
			if text, isError := toolResult(t, stream.next()["result"].(map[string]any)); text != "done" || isError {
				t.Fatalf("result %q isError=%v", text, isError)
			}
		})
		t.Run(proto+"/listen", func(t *testing.T) {
			e := newEnv(t, withTasks, func(c *testConfig) { c.StreamWriteTimeout = writeTimeout })
			ts := e.serveWith(h2, serverTimeout, serverTimeout)
			taskID, _ := e.startTask("waits")
			stream := openStream(t, ts, rpc{method: "subscriptions/listen", id: `"sub-1"`, caps: tasksCaps,
				params: map[string]any{"notifications": map[string]any{"taskIds": []string{taskID}}}})
			if m := stream.next(); m["method"] != "notifications/subscriptions/acknowledged" {
				t.Fatalf("first message %v", m)
			}
			if m := stream.next(); m["params"].(map[string]any)["status"] != "working" {
				t.Fatalf("want the working task, got %v", m)
			}
			time.Sleep(outlive)
			result(t, e.do(taskReq("tasks/cancel", taskID, nil)))
			for {
				m := stream.next()
				if m["method"] == "notifications/tasks" && m["params"].(map[string]any)["status"] == "cancelled" {
					break
				}
			}
			if m := stream.next(); m["method"] != "notifications/cancelled" {
				t.Fatalf("stream end %v", m)
			}
		})
	}
}

// TestStreamWriteTimeoutCutsStalledClient: a client that stops reading a
// stream is cut off after StreamWriteTimeout, which ends the call as a
// disconnect does — over HTTP/1.1 (a socket nobody reads) and HTTP/2 (a
// stream whose flow-control window nobody opens).
func TestStreamWriteTimeoutCutsStalledClient(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		t.Run(map[bool]string{false: "HTTP/1.1", true: "HTTP/2"}[h2], func(t *testing.T) {
			ended := make(chan error, 1)
			e := newEnv(t, withExtension(streamTools(0, ended)), func(c *testConfig) {
				c.StreamWriteTimeout = 200 * time.Millisecond
			})
			ts := e.serveWith(h2, 0, 0)
			if h2 {
				// The request's own context outlives the wait below: only the
				// server may end the call.
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				resp, err := ts.Client().Do(clientRequest(t, ctx, ts.URL, progressCall("flood")))
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
			} else {
				c, err := net.Dial("tcp", ts.Listener.Addr().String())
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				if _, err := c.Write(rawRequest(progressCall("flood"), ts.Listener.Addr().String())); err != nil {
					t.Fatal(err)
				}
			}
			// The client reads nothing.
			select {
			case err := <-ended:
				if err == nil {
					t.Fatal("the flood ended without its context ending")
				}
			case <-time.After(15 * time.Second):
				t.Fatal("a stream nobody reads was not cut within 15s")
			}
		})
	}
}
