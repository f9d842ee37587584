package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/wopinterop/wopinterop/internal/processcpu"
)

// receiver is the loopback push receiver: it takes every push, checks it
// is an A2A StreamResponse sent with the server's Content-Type and the
// config's credentials, and counts the artifact updates of the task it
// expects.
type receiver struct {
	origin, url string
	stop        func()

	mu sync.Mutex
	// conns counts the connections each pusher (by the Content-Type of
	// its pushes) sent on: one that keeps its connection alive uses one
	// for all its rounds.
	conns map[string]int
	task  string
	ctype string
	count int
	want  int // await's target: count reaching it signals moved
	bad   error
	// moved is signalled (not queued) when count reaches want or bad is
	// set: not at every push, so the receiver wakes no second goroutine
	// per delivery and answers as fast as a bare handler.
	moved chan struct{}
}

const pushToken = "loadbench-push-token"

func startReceiver() (*receiver, error) {
	rc := &receiver{moved: make(chan struct{}, 1), conns: map[string]int{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: http.HandlerFunc(rc.take), ConnContext: func(ctx context.Context, _ net.Conn) context.Context {
		return context.WithValue(ctx, connKey{}, &pushConn{})
	}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	rc.origin = "http://" + ln.Addr().String()
	rc.url, rc.stop = rc.origin+"/push", func() {
		_ = srv.Close()
		<-done
	}
	return rc, nil
}

func (rc *receiver) take(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	var ev streamEvent
	if err == nil {
		err = json.Unmarshal(body, &ev)
	}
	rc.mu.Lock()
	if c, _ := r.Context().Value(connKey{}).(*pushConn); c != nil && !c.seen {
		c.seen = true
		rc.conns[r.Header.Get("Content-Type")]++
	}
	switch {
	case err != nil:
	case rc.task == "" || ev.taskID() != rc.task:
		// a late push of a lane already measured
	case r.Header.Get("Content-Type") != rc.ctype:
		err = fmt.Errorf("push: Content-Type %q, want %q", r.Header.Get("Content-Type"), rc.ctype)
	case r.Header.Get("Authorization") != "Bearer "+pushToken:
		err = fmt.Errorf("push: Authorization is not the config's credentials")
	case ev.ArtifactUpdate != nil:
		rc.count++
		if rc.count >= rc.want {
			rc.signal()
		}
	}
	if err != nil && rc.bad == nil {
		rc.bad = err
		rc.signal()
	}
	rc.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// connKey carries a connection's pushConn in its requests' contexts.
type connKey struct{}

// pushConn is one connection to the receiver; seen once it was counted.
// Its requests come one after another, under receiver.mu.
type pushConn struct{ seen bool }

// connections is how many connections pushes sent as ctype came on.
func (rc *receiver) connections(ctype string) int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.conns[ctype]
}

// signal wakes await; it does not queue.
func (rc *receiver) signal() {
	select {
	case rc.moved <- struct{}{}:
	default:
	}
}

// expect makes task the counted one, its pushes sent as ctype, resets
// the count and awaits n.
func (rc *receiver) expect(task, ctype string, n int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.task, rc.ctype, rc.count, rc.want, rc.bad = task, ctype, 0, n, nil
	select { // a signal of the previous lane
	case <-rc.moved:
	default:
	}
}

// await waits until the n artifact updates of the task expect named
// have arrived.
func (rc *receiver) await(n int) error {
	for {
		rc.mu.Lock()
		count, bad := rc.count, rc.bad
		rc.mu.Unlock()
		switch {
		case bad != nil:
			return bad
		case count > n:
			return fmt.Errorf("push: %d deliveries where %d were sent", count, n)
		case count == n:
			return nil
		}
		select {
		case <-rc.moved:
		case <-time.After(patience):
			return fmt.Errorf("push: %d of %d deliveries: %w", count, n, errTimeout)
		}
	}
}

// benchPush measures push delivery on one lane (one task, one config) of
// every server that pushes: each round the held task publishes a burst of
// artifacts, each becoming one push, timed until the receiver has them
// all, the servers' order rotating from round to round. Rate is
// deliveries per second.
func benchPush(_ context.Context, cfg config, s *servers, progress io.Writer) ([]row, error) {
	client := newClient(1)
	defer client.CloseIdleConnections()
	var lanes []*pushLane
	defer func() {
		for _, l := range lanes {
			_ = l.srv.release()
		}
	}()
	for _, x := range s.all() {
		if x.pushType == "" {
			continue
		}
		l, err := openPushLane(client, x, s.receiver)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", x.name, err)
		}
		lanes = append(lanes, l)
	}
	per := max(1, cfg.requests/cfg.rounds)
	for r := range cfg.rounds {
		for i := range lanes {
			l := lanes[(i+r)%len(lanes)]
			s.receiver.expect(l.task, l.srv.pushType, per)
			cpu0, err := l.srv.cpu()
			if err != nil {
				return nil, err
			}
			mine := processcpu.Used()
			start := time.Now()
			if err := l.srv.update(per); err != nil {
				return nil, err
			}
			if err := s.receiver.await(per); err != nil {
				return nil, fmt.Errorf("%s: %w", l.srv.name, err)
			}
			wall, clientCPU := time.Since(start), processcpu.Used()-mine
			cpu1, err := l.srv.cpu()
			if err != nil {
				return nil, err
			}
			l.got.add(sample{n: per, wall: wall, cpu: cpu1 - cpu0, clientCPU: clientCPU})
		}
	}
	rows := make([]row, 0, len(lanes))
	for _, l := range lanes {
		fmt.Fprintf(progress, "loadbench: push: %s sent its %d deliveries (and the task's first pushes) on %d connection(s)\n",
			l.srv.name, l.got.n, s.receiver.connections(l.srv.pushType))
		rows = append(rows, newRow(l.srv.name, l.got))
	}
	return rows, nil
}

// pushLane is a server's held task with one push config to the receiver.
type pushLane struct {
	srv  *server
	task string
	got  sample
}

func openPushLane(client *http.Client, s *server, rc *receiver) (*pushLane, error) {
	task, err := startHeld(client, s, 1)
	if err != nil {
		return nil, err
	}
	var conf struct {
		ID     string `json:"id"`
		TaskID string `json:"taskId"`
	}
	body := []byte(`{"jsonrpc":"2.0","id":0,"method":"CreateTaskPushNotificationConfig","params":{"taskId":"` + task +
		`","url":"` + rc.url + `","authentication":{"scheme":"Bearer","credentials":"` + pushToken + `"}}}`)
	if err := call(client, request{s.a2aURL, a2aHeader(s.auth), body}, &conf); err != nil {
		_ = s.release()
		return nil, fmt.Errorf("register the push config: %w", err)
	}
	if conf.ID == "" || conf.TaskID != task {
		_ = s.release()
		return nil, fmt.Errorf("the push config answered is not the task's: %+v", conf)
	}
	return &pushLane{srv: s, task: task}, nil
}
