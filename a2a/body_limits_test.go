package a2a

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
)

// heapInUse is the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestDeclaredLengthReservesNoMemory: 100 connections that each declare
// a 4 MiB body (the default MaxBodyBytes) and send a few bytes make the
// heap grow by far less than the 400 MiB they declare — unauthenticated
// (refused before a byte is read) and authenticated (read into memory that
// follows the bytes received) alike, on both bindings — and the heap
// drops back once they close.
func TestDeclaredLengthReservesNoMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 800 connections")
	}
	const (
		conns    = 100
		declared = 4 << 20
		maxGrow  = 64 << 20
	)
	for _, binding := range []struct{ name, path string }{
		{"JSON-RPC", rpcPath},
		{"HTTP+JSON", restEnvPrefix + "/message:send"},
	} {
		for _, key := range []string{"", "key-acme"} {
			name := binding.name + "/unauthenticated"
			if key != "" {
				name = binding.name + "/authenticated"
			}
			t.Run(name, func(t *testing.T) {
				e := newHardEnv(t)
				var entered atomic.Int64
				hs := e.serve(t, nil, func(h http.Handler) http.Handler {
					return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						entered.Add(1)
						h.ServeHTTP(w, r)
					})
				}, nil)
				auth := ""
				if key != "" {
					auth = "Authorization: Bearer " + key + "\r\n"
				}
				head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: x\r\n%sA2A-Version: 1.0\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{\"jsonrpc\"", binding.path, auth, declared)

				base := heapInUse()
				open := make([]net.Conn, 0, conns)
				defer func() {
					for _, c := range open {
						c.Close()
					}
				}()
				for range conns {
					c, err := net.Dial("tcp", hs.Listener.Addr().String())
					if err != nil {
						t.Fatal(err)
					}
					open = append(open, c)
					if _, err := io.WriteString(c, head); err != nil {
						t.Fatal(err)
					}
				}
				deadline := time.Now().Add(10 * time.Second)
				for entered.Load() < conns {
					if time.Now().After(deadline) {
						t.Fatalf("%d of %d requests reached the handler", entered.Load(), conns)
					}
					time.Sleep(5 * time.Millisecond)
				}
				// The handlers have the requests; whatever they reserve,
				// they reserve now.
				var peak uint64
				for range 5 {
					time.Sleep(40 * time.Millisecond)
					peak = max(peak, heapInUse())
				}
				grew := int64(peak) - int64(base)
				t.Logf("%d connections declaring %d bytes each: heap %d MiB before, %d MiB at most while open (%+.1f MiB)",
					conns, declared, base>>20, peak>>20, float64(grew)/(1<<20))
				if grew >= maxGrow {
					t.Fatalf("the heap grew by %d MiB, want less than %d MiB", grew>>20, maxGrow>>20)
				}
				if key == "" {
					// Refused before the body: each gets its 401 now.
					for _, c := range open {
						_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
						res, err := http.ReadResponse(bufio.NewReader(c), nil)
						if err != nil {
							t.Fatalf("no answer: %v", err)
						}
						res.Body.Close()
						if res.StatusCode != http.StatusUnauthorized {
							t.Fatalf("HTTP %d, want 401", res.StatusCode)
						}
					}
				}
				for _, c := range open {
					c.Close()
				}
				open = open[:0]
				var after uint64
				for deadline := time.Now().Add(10 * time.Second); ; {
					after = heapInUse()
					if after < base+8<<20 || time.Now().After(deadline) {
						break
					}
					time.Sleep(50 * time.Millisecond)
				}
				t.Logf("after they closed: heap %d MiB", after>>20)
				if after >= base+8<<20 {
					t.Fatalf("the heap stayed at %d MiB after the connections closed (%d MiB before)", after>>20, base>>20)
				}
			})
		}
	}
}

// slowBody sends the head of a request declaring a body of 1000 bytes,
// then one byte every 50 ms, and returns the response the server answers
// before the body is complete (the test fails when it waits for the whole
// body).
func slowBody(t *testing.T, addr, path string) (*http.Response, []byte, time.Duration) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	head := "POST " + path + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer key-acme\r\nA2A-Version: 1.0\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"
	start := time.Now()
	if _, err := io.WriteString(c, head); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	trickled := make(chan struct{})
	go func() {
		defer close(trickled)
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
	defer func() { close(stop); <-trickled }()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer to a body trickling in for 5 s: %v", err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, body, time.Since(start)
}

// TestSlowBodyIsCut: a body trickling in at a byte per 50 ms is cut at
// Config.BodyTimeout with HTTP 408 in the binding's shape.
func TestSlowBodyIsCut(t *testing.T) {
	const limit = 300 * time.Millisecond
	e := newHardEnv(t, func(c *testConfig) { c.BodyTimeout = limit })
	hs := e.serve(t, nil, nil, nil)
	for _, tc := range []struct {
		name, path string
		golden     func(t testing.TB, got []byte)
	}{
		{"JSON-RPC", rpcPath, func(t testing.TB, got []byte) { rpcGolden(t, "error_body_too_slow", got) }},
		{"HTTP+JSON", restEnvPrefix + "/message:send", func(t testing.TB, got []byte) { restGolden(t, "rest", "error-body-too-slow", got) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, body, took := slowBody(t, hs.Listener.Addr().String(), tc.path)
			if took < limit || took > limit+2*time.Second {
				t.Errorf("answered after %v, want about %v", took, limit)
			}
			sent := "POST " + tc.path + " (Authorization: Bearer key-acme), Content-Length: 1000, one byte per 50 ms"
			tc.golden(t, hardReply{status: res.StatusCode, header: res.Header, body: body}.transcript(sent))
		})
	}
	if n := e.runsOf(t, "key-acme"); n != 0 {
		t.Fatalf("%d runs after refused bodies", n)
	}
}

// TestDefaultBodyTimeout: without a configured limit a body has
// defaultBodyTimeout to arrive, and a negative one means none.
func TestDefaultBodyTimeout(t *testing.T) {
	e := newHardEnv(t)
	if e.srv.cfg.BodyTimeout != defaultBodyTimeout || e.srv.cfg.StreamWriteTimeout != defaultStreamWriteTimeout ||
		e.srv.cfg.MaxBatch != defaultMaxBatch || e.srv.cfg.BatchConcurrency != defaultBatchConcurrency {
		t.Fatalf("defaults: %+v", e.srv.cfg)
	}
	off := newHardEnv(t, func(c *testConfig) { c.BodyTimeout, c.StreamWriteTimeout = -1, -1 })
	if off.srv.cfg.BodyTimeout != 0 || off.srv.cfg.StreamWriteTimeout != 0 {
		t.Fatalf("negative limits: %v %v", off.srv.cfg.BodyTimeout, off.srv.cfg.StreamWriteTimeout)
	}
}

// TestStreamsOutliveServerTimeouts: an http.Server's ReadTimeout and
// WriteTimeout, shorter than a stream, end neither SendStreamingMessage
// nor SubscribeToTask on either binding: each write of a stream has a
// deadline of its own (and net/http clears the read deadline once the body
// is read).
func TestStreamsOutliveServerTimeouts(t *testing.T) {
	const serverTimeout = 300 * time.Millisecond
	e := newHardEnv(t)
	hs := e.serve(t, func(s *http.Server) { s.ReadTimeout, s.WriteTimeout = serverTimeout, serverTimeout }, nil, nil)
	held := e.rpcSend(t, hs, "m-held", probeHold)

	streams := []hardCall{
		{path: rpcPath, key: "key-acme", body: rpcBody(1, methodSendStreamingMessage, hardSend("m-stream", probeHold))},
		{path: rpcPath, key: "key-acme", body: rpcBody(2, methodSubscribeToTask, map[string]any{"id": string(held.ID)})},
		{path: restEnvPrefix + "/message:stream", key: "key-acme", body: restHardSend("m-rest-stream", probeHold)},
		{method: http.MethodGet, path: restEnvPrefix + "/tasks/" + urlPathEscape(string(held.ID)) + ":subscribe", key: "key-acme"},
	}
	replies := make(chan hardReply, len(streams))
	for _, c := range streams {
		go func() { replies <- c.do(t, hs) }()
	}
	time.Sleep(3 * serverTimeout) // every stream is older than the server's timeouts
	e.releaseHold()
	for range streams {
		r := <-replies
		if r.err != nil || r.status != http.StatusOK {
			t.Fatalf("stream: HTTP %d, %v", r.status, r.err)
		}
		frames := sseData(r.body)
		if len(frames) < 2 {
			t.Fatalf("stream cut after %d events: %s", len(frames), r.body)
		}
		last := frames[len(frames)-1]
		if !bytes.Contains(last, []byte(`"TASK_STATE_COMPLETED"`)) {
			t.Fatalf("the stream ended before the task did; last event %s", last)
		}
	}
}

// rpcSend starts a task of skill with a SendMessage that returns at once.
func (e *hardEnv) rpcSend(t testing.TB, hs *httptest.Server, msgID, skill string) *wire.Task {
	t.Helper()
	params := hardSend(msgID, skill)
	params["configuration"] = map[string]any{"returnImmediately": true}
	r := hardCall{path: rpcPath, key: "key-acme", body: rpcBody(1, methodSendMessage, params)}.do(t, hs)
	return rpcTask(t, r.rpc(t), true)
}

// TestStreamCutWhenClientStopsReading: a client that stops reading a
// stream is cut after Config.StreamWriteTimeout: the handler returns and
// the run's watch is released, on both bindings.
func TestStreamCutWhenClientStopsReading(t *testing.T) {
	const writeTimeout = 200 * time.Millisecond
	e := newHardEnv(t, func(c *testConfig) { c.StreamWriteTimeout = writeTimeout })
	done := make(chan string, 4)
	hs := e.serve(t, nil, handlerDone(done), smallBuffers)
	for _, tc := range []struct{ name, path, body string }{
		{"JSON-RPC", rpcPath, rpcBody(1, methodSendStreamingMessage, hardSend("m-flood-1", probeFlood))},
		{"HTTP+JSON", restEnvPrefix + "/message:stream", restHardSend("m-flood-2", probeFlood)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.Dial("tcp", hs.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_ = c.(*net.TCPConn).SetReadBuffer(4 << 10)
			req := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer key-acme\r\nA2A-Version: 1.0\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", tc.path, len(tc.body), tc.body)
			if _, err := io.WriteString(c, req); err != nil {
				t.Fatal(err)
			}
			// Read the head and the first event, then stop reading.
			br := bufio.NewReaderSize(c, 1024)
			if line, err := br.ReadString('\n'); err != nil || !strings.Contains(line, "200") {
				t.Fatalf("status line %q, %v", line, err)
			}
			select {
			case <-done:
			case <-time.After(writeTimeout + 5*time.Second):
				t.Fatalf("the handler still writes to a client that stopped reading %v ago", writeTimeout+5*time.Second)
			}
		})
	}
}
