package wopinterop_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
)

// slowGetRuns counts the GetRun calls in flight, each of which takes a
// while.
type slowGetRuns struct {
	interop.RunStore
	mu           sync.Mutex
	now, highest int
}

func (s *slowGetRuns) GetRun(ctx context.Context, sub interop.Subject, id string) (interop.Run, error) {
	s.mu.Lock()
	s.now++
	s.highest = max(s.highest, s.now)
	s.mu.Unlock()
	time.Sleep(20 * time.Millisecond)
	s.mu.Lock()
	s.now--
	s.mu.Unlock()
	return s.RunStore.GetRun(ctx, sub, id)
}

// TestA2ALimitsReachTheServer: A2AConfig's BodyTimeout, MaxBatch and
// BatchConcurrency are the A2A server's.
func TestA2ALimitsReachTheServer(t *testing.T) {
	store := newStore(t)
	counting := &slowGetRuns{RunStore: store}
	cfg := validConfig(store)
	cfg.Store = counting
	cfg.A2A.BodyTimeout = 200 * time.Millisecond
	cfg.A2A.MaxBatch = 3
	cfg.A2A.BatchConcurrency = 2
	srv := server(t, newHost(t, cfg))

	// MaxBatch: four requests are refused whole, naming the limit.
	get := `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"acme/AAAAAAAAAAAAAAAAAAAAAAAAAA"}}`
	res := send(t, "POST", srv.URL+"/a2a", acmeKey, "["+strings.Repeat(get+",", 3)+get+"]")
	if !strings.Contains(string(res.body), `"code":-32600`) || !strings.Contains(string(res.body), `"maxBatchSize":"3"`) {
		t.Fatalf("a batch over MaxBatch: %s", res.body)
	}
	// BatchConcurrency: three requests, two at a time.
	res = send(t, "POST", srv.URL+"/a2a", acmeKey, "["+strings.Repeat(get+",", 2)+get+"]")
	var answers []json.RawMessage
	if json.Unmarshal(res.body, &answers) != nil || len(answers) != 3 {
		t.Fatalf("a batch at MaxBatch: %s", res.body)
	}
	if counting.highest != 2 {
		t.Fatalf("%d requests of the batch ran at once, want BatchConcurrency 2", counting.highest)
	}

	// BodyTimeout: a body trickling in is cut with 408.
	c, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, "POST /a2a HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+acmeKey+"\r\nContent-Length: 100\r\n\r\n{"); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer to a body that stopped: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Fatalf("HTTP %d, want 408", resp.StatusCode)
	}
}

// TestA2AStreamWriteTimeoutReachesTheServer: A2AConfig.StreamWriteTimeout
// cuts a stream whose client stopped reading.
func TestA2AStreamWriteTimeoutReachesTheServer(t *testing.T) {
	store := newStore(t)
	chunk := strings.Repeat("x", 8<<10)
	flood := memstore.WorkflowDef{Workflow: interop.Workflow{ID: "flood"}, Run: func(_ context.Context, rc *memstore.RunContext) (json.RawMessage, error) {
		for i := range 400 {
			if err := rc.PublishArtifact(interop.Artifact{ID: "flood", Parts: []interop.Part{interop.TextPart(chunk)}}, i > 0, i == 399); err != nil {
				return nil, err
			}
		}
		return json.RawMessage(`{}`), nil
	}}
	if err := store.Register("acme", flood); err != nil {
		t.Fatal(err)
	}
	cfg := validConfig(store)
	cfg.A2A.Routed = []interop.Workflow{{ID: "flood", Name: "flood"}}
	cfg.A2A.StreamWriteTimeout = 200 * time.Millisecond
	h := newHost(t, cfg)
	mux := http.NewServeMux()
	h.Mount(mux)
	done := make(chan struct{}, 1)
	hs := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() { done <- struct{}{} }()
		mux.ServeHTTP(w, r)
	}))
	hs.Listener = smallSendBuffers{hs.Listener}
	hs.Start()
	t.Cleanup(hs.Close)

	c, err := net.Dial("tcp", hs.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.(*net.TCPConn).SetReadBuffer(4 << 10)
	body := `{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"m-flood","role":"ROLE_USER","parts":[{"text":"go"}]}}}`
	if _, err := fmt.Fprintf(c, "POST /a2a HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nA2A-Version: 1.0\r\nContent-Length: %d\r\n\r\n%s", acmeKey, len(body), body); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReaderSize(c, 1024).ReadString('\n'); err != nil || !strings.Contains(line, "200") {
		t.Fatalf("status line %q, %v", line, err)
	}
	select { // the client reads nothing more
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the stream still writes to a client that stopped reading 5s ago")
	}
}

// smallSendBuffers gives every accepted connection a small send buffer,
// so a client that stops reading blocks the server's writes at once.
type smallSendBuffers struct{ net.Listener }

func (l smallSendBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(4 << 10)
	}
	return c, err
}
