package wopinterop_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/isolation"
)

// streamCount is how many SubscribeToTask streams TestStreamFootprint
// holds open at once.
const streamCount = 1000

// Budgets per open stream (issue targets): a stream is the connection's
// own goroutine plus at most one more, and costs at most 32 KiB of heap and
// stacks and 32 KiB of resident memory. Measured: 28.5 KiB heap and
// stacks, 30.5 KiB resident, where net/http alone holding a stream
// (TestStreamFootprintBare) is 27 and 29 KiB — its 4 KiB read and 4+2 KiB
// write buffers and the two goroutines' stacks (8 and 2 KiB).
const (
	maxGoroutinesPerStream = 2
	maxBytesPerStream      = 32 << 10
	maxResidentPerStream   = 32 << 10
)

// rawStream is one SubscribeToTask stream held open by a plain socket: no
// client goroutine, so every goroutine the test counts is the server's.
type rawStream struct {
	conn net.Conn
	r    *bufio.Reader
}

// openStream sends request (rpcSubscribe, restSubscribe) on a new
// connection and reads the response head and the stream's first event.
func openStream(t *testing.T, addr, request string) rawStream {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.WriteString(conn, request)
	s := rawStream{conn: conn, r: bufio.NewReaderSize(conn, 512)}
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	resp, err := http.ReadResponse(s.r, nil)
	if err != nil || resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("SubscribeToTask: %v %+v", err, resp)
	}
	if data := s.next(t); !strings.Contains(data, `"TASK_STATE_INPUT_REQUIRED"`) {
		t.Fatalf("first event %s", data)
	}
	return s
}

// rpcSubscribe is SubscribeToTask for task over JSON-RPC, as HTTP/1.1.
func rpcSubscribe(addr, task string) string {
	body := `{"jsonrpc":"2.0","id":1,"method":"SubscribeToTask","params":{"id":"` + task + `"}}`
	return fmt.Sprintf("POST /a2a HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nA2A-Version: 1.0\r\n"+
		"Content-Type: application/json\r\nAccept: text/event-stream\r\nContent-Length: %d\r\n\r\n%s", addr, acmeKey, len(body), body)
}

// restSubscribe is SubscribeToTask for task over HTTP+JSON, as HTTP/1.1.
func restSubscribe(addr, task string) string {
	return fmt.Sprintf("POST /a2a/rest/tasks/%s:subscribe HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nA2A-Version: 1.0\r\n"+
		"Accept: text/event-stream\r\nContent-Length: 0\r\n\r\n", isolation.Project(task), addr, acmeKey)
}

// next returns the data of the stream's next event (chunked framing
// included: the test only looks for JSON inside), which must arrive within
// 20 seconds: a busy machine under the race detector takes seconds for
// 1,000 streams.
func (s rawStream) next(t *testing.T) string {
	t.Helper()
	_ = s.conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	var event bytes.Buffer
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the stream: %v (so far %q)", err, event.String())
		}
		if strings.HasPrefix(line, "data:") {
			event.WriteString(line)
		}
		if line == "\r\n" && event.Len() > 0 {
			return event.String()
		}
	}
}

// TestStreamFootprint holds 1,000 SubscribeToTask streams open on one
// waiting task and measures what each costs the server: goroutines, and
// memory (heap and stacks in use; the process's resident set when the race
// detector, which shadows every allocation, is off). Then one answer ends
// the task and every stream delivers COMPLETED and closes.
func TestStreamFootprint(t *testing.T) { streamFootprint(t, nil, rpcSubscribe) }

// TestStreamFootprintHTTPJSON is TestStreamFootprint over the HTTP+JSON
// binding.
func TestStreamFootprintHTTPJSON(t *testing.T) { streamFootprint(t, nil, restSubscribe) }

// TestStreamFootprintBehindMiddleware is TestStreamFootprint with host
// middleware in front of the interfaces whose frame holds half a KiB of
// the stack an open stream waits on, as a router, a logger or a tracer's
// would: the library's own waiting frames leave the room for it, so that
// the runtime still shrinks the connection's stack back to 8 KiB (it
// halves a stack only when less than a quarter of it, 800 bytes of
// headroom included, is in use).
func TestStreamFootprintBehindMiddleware(t *testing.T) {
	streamFootprint(t, func(next http.Handler) http.Handler { return &stackMiddleware{next: next} }, rpcSubscribe)
}

// stackMiddleware is host middleware with a frame of over half a KiB,
// live while the request it passes on is served.
type stackMiddleware struct {
	next  http.Handler
	calls atomic.Int64
}

//go:noinline
func (m *stackMiddleware) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var scratch [512]byte
	i := len(r.URL.Path) % len(scratch)
	scratch[i] = 1
	m.next.ServeHTTP(w, r)
	m.calls.Add(int64(scratch[i]))
}

// streamFootprint is TestStreamFootprint, with wrap (when not nil) in
// front of the host's handlers and request opening each stream.
func streamFootprint(t *testing.T, wrap func(http.Handler) http.Handler, request func(addr, task string) string) {
	if testing.Short() {
		t.Skip("opens 1,000 connections")
	}
	// STREAMS_HEAPPROFILE=file writes, with all 1,000 streams open, the
	// heap profile of every allocation (go tool pprof
	// -sample_index=inuse_space -top file) and the goroutine dump
	// (file.goroutines): where an open stream's bytes are.
	if os.Getenv("STREAMS_HEAPPROFILE") != "" {
		runtime.MemProfileRate = 1
	}
	store := newStore(t)
	var srv *httptest.Server
	if wrap == nil {
		srv = server(t, newHost(t, validConfig(store)))
	} else {
		mux := http.NewServeMux()
		newHost(t, validConfig(store)).Mount(mux)
		srv = httptestServer(t, wrap(mux))
	}
	addr := strings.TrimPrefix(srv.URL, "http://")
	var created struct {
		Result struct {
			Task struct {
				ID string `json:"id"`
			} `json:"task"`
		} `json:"result"`
	}
	if r := send(t, http.MethodPost, srv.URL+"/a2a", acmeKey, strings.Replace(sendApproval, "MSG", "streams-1", 1)); json.Unmarshal(r.body, &created) != nil || created.Result.Task.ID == "" {
		t.Fatalf("send: %d %s", r.status, r.body)
	}
	task := created.Result.Task.ID
	openStream(t, addr, request(addr, task)).conn.Close() // warm the paths up

	g0, m0, rss0 := settleMemory(t)
	streams := make([]rawStream, streamCount)
	for i := range streams {
		streams[i] = openStream(t, addr, request(addr, task))
	}
	g1, m1, rss1 := settleMemory(t)
	if f := os.Getenv("STREAMS_HEAPPROFILE"); f != "" {
		out, _ := os.Create(f)
		_ = pprof.WriteHeapProfile(out)
		out.Close()
		g, _ := os.Create(f + ".goroutines")
		_ = pprof.Lookup("goroutine").WriteTo(g, 1)
		g.Close()
	}
	perG := float64(g1-g0) / streamCount
	perM := float64(int64(m1)-int64(m0)) / streamCount
	perRSS := float64(rss1-rss0) / streamCount
	t.Logf("%d open streams: %.2f goroutines, %.1f KiB heap+stacks, %.1f KiB resident each (race detector: %v)",
		streamCount, perG, perM/1024, perRSS/1024, raceEnabled)
	if perG > maxGoroutinesPerStream {
		t.Errorf("%.2f goroutines per stream, budget %d", perG, maxGoroutinesPerStream)
	}
	if !raceEnabled {
		if perM > maxBytesPerStream {
			t.Errorf("%.1f KiB of heap and stacks per stream, budget %d KiB", perM/1024, maxBytesPerStream>>10)
		}
		if perRSS > maxResidentPerStream {
			t.Errorf("%.1f KiB resident per stream, budget %d KiB", perRSS/1024, maxResidentPerStream>>10)
		}
	}

	accept := `{"jsonrpc":"2.0","id":8,"method":"SendMessage","params":{"message":{"messageId":"streams-2","taskId":"` + task +
		`","role":"ROLE_USER","parts":[{"data":{"action":"accept"}}]}}}`
	if r := send(t, http.MethodPost, srv.URL+"/a2a", acmeKey, accept); !bytes.Contains(r.body, []byte("TASK_STATE_COMPLETED")) {
		t.Fatalf("accept: %s", r.body)
	}
	for i, s := range streams {
		for {
			data := s.next(t)
			if strings.Contains(data, `"TASK_STATE_COMPLETED"`) {
				break
			}
			if !strings.Contains(data, `"TASK_STATE_WORKING"`) && !strings.Contains(data, `"artifactUpdate"`) {
				t.Fatalf("stream %d: unexpected event %s", i, data)
			}
		}
		s.conn.Close()
	}
}

// settleMemory collects garbage and returns the goroutines, the heap and
// stacks in use, and the resident set once the free pages went back to
// the system: what the heap freed but the runtime's background scavenger
// has not returned yet is not what the open streams hold.
func settleMemory(t *testing.T) (goroutines int, inUse uint64, rss int64) {
	var ms runtime.MemStats
	for range 3 {
		runtime.GC()
	}
	time.Sleep(50 * time.Millisecond)
	debug.FreeOSMemory()
	runtime.ReadMemStats(&ms)
	t.Logf("heap in use %d KiB, stacks in use %d KiB", ms.HeapInuse>>10, ms.StackInuse>>10)
	return runtime.NumGoroutine(), ms.HeapInuse + ms.StackInuse, residentBytes(t)
}

func httptestServer(t *testing.T, h http.Handler) *httptest.Server {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// residentBytes is the process's anonymous resident memory (RssAnon: the
// heap, the stacks and the runtime's own structures, without the pages of
// the binary, which do not grow with the streams), 0 where /proc is
// missing.
func residentBytes(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "RssAnon:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no RssAnon in /proc/self/status")
	return 0
}

// TestStreamFootprintBare is the reference for TestStreamFootprint: a bare
// net/http handler that answers a SubscribeToTask request with one event
// and holds the stream until released — what net/http itself costs.
func TestStreamFootprintBare(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 1,000 connections")
	}
	release := make(chan struct{})
	event := []byte(`data: {"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t","status":{"state":"TASK_STATE_INPUT_REQUIRED"}}}}` + "\n\n")
	srv := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Method string `json:"method"`
		}
		if json.NewDecoder(r.Body).Decode(&req) != nil || req.Method != "SubscribeToTask" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(event)
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	addr := strings.TrimPrefix(srv.URL, "http://")
	openStream(t, addr, rpcSubscribe(addr, "t")).conn.Close()
	g0, m0, rss0 := settleMemory(t)
	streams := make([]rawStream, streamCount)
	for i := range streams {
		streams[i] = openStream(t, addr, rpcSubscribe(addr, "t"))
	}
	g1, m1, rss1 := settleMemory(t)
	t.Logf("bare net/http, %d open streams: %.2f goroutines, %.1f KiB heap+stacks, %.1f KiB resident each",
		streamCount, float64(g1-g0)/streamCount, float64(int64(m1)-int64(m0))/streamCount/1024, float64(rss1-rss0)/streamCount/1024)
	close(release)
	for _, s := range streams {
		s.conn.Close()
	}
}
