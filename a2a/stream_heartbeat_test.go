package a2a

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"
)

// An idle stream is kept alive: once it has been idle for the heartbeat,
// a comment line follows its events (WHATWG HTML §9.2.6), and the stream
// stays open.
func TestRPCStreamHeartbeatWhileIdle(t *testing.T) {
	e := newRPCEnv(t)
	e.srv.heartbeat = 20 * time.Millisecond
	v := setupApproval(t, e)
	srv := httptest.NewServer(e.mux)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st := e.openStream(t, ctx, srv, acme(rpcBody(1, methodSubscribeToTask, map[string]any{"id": v["task"]})))
	if _, err := st.next(); err != nil {
		t.Fatal(err)
	}
	// The task waits for an answer: nothing but heartbeats follows.
	for beats := 0; beats < 2; {
		line, err := st.r.ReadString('\n')
		if err != nil {
			t.Fatalf("the idle stream ended: %v (%q)", err, line)
		}
		switch line {
		case ":\n":
			beats++
		case "\n":
		default:
			t.Fatalf("an idle stream sent %q", line)
		}
	}
}
