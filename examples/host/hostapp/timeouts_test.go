package hostapp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/interop"
)

// trickle opens a raw connection to the host, sends head (a request line
// and headers announcing a body) and then one byte of body every 50 ms
// until the connection breaks or the test ends. It returns the connection.
func trickle(t *testing.T, h *testHost, head string) net.Conn {
	t.Helper()
	u, err := url.Parse(h.url)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := io.WriteString(c, head); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	go func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if _, err := c.Write([]byte(" ")); err != nil {
					return
				}
			}
		}
	}()
	return c
}

// readResponse reads one response from c within 5 s and reports how long
// after start it arrived and whether the server then closed c (an end of
// stream, or a reset when it closed with the trickle still arriving).
// r.Header has Connection: close when the response said so (ReadResponse
// itself removes the header).
func readResponse(t *testing.T, c net.Conn, start time.Time) (r response, took time.Duration, closed bool) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no response within 5 s: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	took = time.Since(start)
	if resp.Close {
		resp.Header.Set("Connection", "close")
	}
	_, err = br.ReadByte()
	return response{Status: resp.StatusCode, Header: resp.Header, Body: body}, took, err != nil && !os.IsTimeout(err)
}

// withTimeouts is a test host with main's connection timeouts, scaled
// down: header within header, body within body.
func withTimeouts(t *testing.T, header, body time.Duration) *testHost {
	t.Helper()
	return newTestHostOn(t, func(s *http.Server) { setServerTimeouts(s, header, body) },
		func(c *config) { c.BodyTimeout = body })
}

// A REST body trickling in at 1 byte per 50 ms is cut at BodyTimeout with
// the OpenWOP envelope (400 validation_error: the registry has no 408
// code), nothing is created, and the connection is closed rather than
// read further.
func TestSlowRESTBodyIsCut(t *testing.T) {
	const timeout = 300 * time.Millisecond
	h := withTimeouts(t, 5*time.Second, timeout)
	before := decode[map[string]any](t, h.get("/runs", acmeKey))["runs"]
	start := time.Now()
	c := trickle(t, h, "POST /runs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+acmeKey+
		"\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"workflowId\":\"conformance-noop\"")
	r, took, closed := readResponse(t, c, start)
	if took < timeout || took > timeout+2*time.Second {
		t.Errorf("answered after %v, want about %v", took, timeout)
	}
	wantError(t, r, http.StatusBadRequest, codeValidation)
	if string(r.Body) != `{"error":"validation_error","message":"the request is not valid","details":{"field":"body","reason":"the body did not arrive within 300ms"}}`+"\n" {
		t.Errorf("body = %s", r.Body)
	}
	if r.Header.Get("Connection") != "close" || !closed {
		t.Errorf("Connection %q, closed %v: the rest of the body must not be read", r.Header.Get("Connection"), closed)
	}
	after := decode[map[string]any](t, h.get("/runs", acmeKey))["runs"]
	if b, a := len(before.([]any)), len(after.([]any)); a != b {
		t.Errorf("%d runs before, %d after a refused body", b, a)
	}
}

// On a route that does not read its body through the host's REST reader
// (an unknown route, the A2A and MCP surfaces) a trickled body is cut by
// the server's ReadTimeout: the host never holds the connection longer
// than header + body time for it.
func TestSlowBodyOnAnyRouteIsCut(t *testing.T) {
	const header, body = time.Second, 300 * time.Millisecond
	h := withTimeouts(t, header, body)
	for _, path := range []string{"/no-such-route", a2aPath, mcpPath} {
		t.Run(path, func(t *testing.T) {
			start := time.Now()
			c := trickle(t, h, "POST "+path+" HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+acmeKey+
				"\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nMCP-Protocol-Version: 2026-07-28\r\nContent-Length: 100000\r\n\r\n{")
			r, took, closed := readResponse(t, c, start)
			if took > header+body+2*time.Second || !closed {
				t.Errorf("status %d after %v, closed %v: want an answer and a closed connection within %v", r.Status, took, closed, header+body)
			}
		})
	}
}

// The host's event stream outlives the server's ReadTimeout (net/http
// clears the read deadline of a request without a body), so main may bound
// every request's upload without cutting a stream.
func TestHostEventsOutliveReadTimeout(t *testing.T) {
	const header, body = 100 * time.Millisecond, 100 * time.Millisecond
	h := withTimeouts(t, header, body)
	s := h.openSSE(acmeKey, "")
	time.Sleep(3 * (header + body))
	if err := h.store.PublishHostEvent(context.Background(), "acme", interop.HostEvent{Type: "vendor.late", Delivery: interop.DeliveryDurable}); err != nil {
		t.Fatal(err)
	}
	if f := s.next(); f.Event != "vendor.late" {
		t.Fatalf("frame %+v", f)
	}
}

// A stream answering a request with a body (an A2A SubscribeToTask)
// outlives the server's ReadTimeout too: the deadline is cleared once the
// body has been read.
func TestA2AStreamOutlivesReadTimeout(t *testing.T) {
	const header, body = 100 * time.Millisecond, 100 * time.Millisecond
	h := withTimeouts(t, header, body)
	task := rpcTask(t, h.rpc(acmeKey, "1.0", sendMessage(1, "long-1", "")))
	rq, _ := http.NewRequest("POST", h.url+a2aPath, strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"SubscribeToTask","params":{"id":"`+string(task.ID)+`"}}`))
	rq.Header.Set("Authorization", "Bearer "+acmeKey)
	rq.Header.Set("Content-Type", "application/json")
	rq.Header.Set("A2A-Version", "1.0")
	resp, err := h.client.Do(rq)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("subscribe: %d", resp.StatusCode)
	}
	var stream bytes.Buffer
	ended := make(chan error, 1)
	go func() {
		_, err := io.Copy(&stream, resp.Body)
		ended <- err
	}()
	time.Sleep(3 * (header + body))
	select {
	case err := <-ended:
		t.Fatalf("the stream ended before the run did (%v): %s", err, stream.String())
	default:
	}
	rpcTask(t, h.rpc(acmeKey, "1.0", `{"jsonrpc":"2.0","id":3,"method":"SendMessage","params":{"message":{"messageId":"long-2","taskId":"`+
		string(task.ID)+`","role":"ROLE_USER","parts":[{"data":{"action":"accept"}}]}}}`))
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the stream did not end after the run completed")
	}
	if !strings.Contains(stream.String(), "TASK_STATE_COMPLETED") {
		t.Fatalf("the stream never reported the completion: %s", stream.String())
	}
}

// A client that stops reading its event stream is dropped at the next
// frame that cannot be written within EventWriteTimeout, instead of
// holding the handler.
func TestStalledEventReaderIsDropped(t *testing.T) {
	h := newTestHost(t, func(c *config) { c.EventWriteTimeout = 200 * time.Millisecond })
	u, _ := url.Parse(h.url)
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetReadBuffer(4096) // fill up sooner
	}
	if _, err := io.WriteString(c, "GET /host/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+acmeKey+"\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	// The client reads nothing; the host writes until the socket buffers
	// are full.
	big, _ := json.Marshal(map[string]string{"fill": strings.Repeat("x", 64<<10)})
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; !strings.Contains(h.logs.String(), "path=/host/events"); i++ {
		if time.Now().After(deadline) {
			t.Fatal("the stream to a client that reads nothing was never dropped")
		}
		if i < 400 {
			if err := h.store.PublishHostEvent(context.Background(), "acme", interop.HostEvent{Type: "vendor.fill", Delivery: interop.DeliveryDurable, Payload: big}); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// -body-timeout reaches the A2A and MCP surfaces too: with no server
// ReadTimeout at all, a slow body on /a2a or /mcp is answered 408 in the
// protocol's own shape at the host's body timeout. A request refused
// before its body is read (no credential, a foreign Host) is answered at
// once, not after the body has trickled in.
func TestBodyTimeoutReachesTheLibrary(t *testing.T) {
	const body = 300 * time.Millisecond
	h := newTestHostOn(t, nil, func(c *config) { c.BodyTimeout = body })
	host := strings.TrimPrefix(h.url, "http://")
	head := func(path, host, key string) string {
		auth := ""
		if key != "" {
			auth = "Authorization: Bearer " + key + "\r\n"
		}
		return "POST " + path + " HTTP/1.1\r\nHost: " + host + "\r\n" + auth +
			"Content-Type: application/json\r\nA2A-Version: 1.0\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\nContent-Length: 100000\r\n\r\n{"
	}
	for _, tc := range []struct {
		name, path, host, key string
		status                int
		slow                  bool // answered at the body timeout, else at once
	}{
		{"a2a slow body", a2aPath, host, acmeKey, http.StatusRequestTimeout, true},
		{"mcp slow body", mcpPath, host, acmeKey, http.StatusRequestTimeout, true},
		{"a2a no credential", a2aPath, host, "", http.StatusUnauthorized, false},
		{"mcp no credential", mcpPath, host, "", http.StatusUnauthorized, false},
		{"mcp foreign host", mcpPath, "rebound.example", acmeKey, http.StatusForbidden, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			c := trickle(t, h, head(tc.path, tc.host, tc.key))
			r, took, closed := readResponse(t, c, start)
			if r.Status != tc.status || !strings.Contains(string(r.Body), `"jsonrpc":"2.0"`) {
				t.Errorf("answer %d %s, want %d with a JSON-RPC error", r.Status, r.Body, tc.status)
			}
			if tc.slow && (took < body || took > body+2*time.Second) || !tc.slow && took > body {
				t.Errorf("answered after %v (body timeout %v, slow %v)", took, body, tc.slow)
			}
			if !closed {
				t.Error("the connection stayed open for the rest of the body")
			}
		})
	}
}
