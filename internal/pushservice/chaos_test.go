package pushservice

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/push"
)

// chaosReceiver is a push receiver on a fixed loopback address that the
// test takes down and brings back. It records the pushes it accepted, in
// arrival order, with the clock time of each.
type chaosReceiver struct {
	t     testing.TB
	addr  string
	clock push.Clock
	// cut, when set, is asked before each push whether to cut the
	// connection while reading the body (the receiver restarting).
	cut func(n int) bool

	mu      sync.Mutex
	srv     *http.Server
	ln      net.Listener
	refuse  bool // accept and drop every connection (a listener up, nothing behind it)
	got     []string
	at      []time.Time
	served  sync.WaitGroup
	changed chan struct{}
}

func newChaosReceiver(t testing.TB, clock push.Clock) *chaosReceiver {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &chaosReceiver{t: t, addr: ln.Addr().String(), clock: clock, changed: make(chan struct{}, 1)}
	r.serve(ln)
	t.Cleanup(r.stop)
	return r
}

func (r *chaosReceiver) origin() string { return "http://" + r.addr }

// serve starts a fresh server on ln. r.mu is not held.
func (r *chaosReceiver) serve(ln net.Listener) {
	srv := &http.Server{Handler: http.HandlerFunc(r.handle)}
	r.mu.Lock()
	r.srv, r.ln = srv, ln
	r.mu.Unlock()
	r.served.Add(1)
	go func() {
		defer r.served.Done()
		_ = srv.Serve(refusingListener{Listener: ln, r: r})
	}()
}

// refusingListener drops connections while the receiver refuses them.
type refusingListener struct {
	net.Listener
	r *chaosReceiver
}

func (l refusingListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		l.r.mu.Lock()
		refuse := l.r.refuse
		l.r.mu.Unlock()
		if !refuse {
			return c, nil
		}
		_ = c.Close()
	}
}

func (r *chaosReceiver) handle(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	n := len(r.got)
	r.mu.Unlock()
	if r.cut != nil && r.cut(n) {
		// Read a little of the body, then go down as a restart does: the
		// listener and every connection close under the sender.
		_, _ = io.ReadFull(req.Body, make([]byte, 16))
		r.down()
		return
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return
	}
	r.mu.Lock()
	r.got = append(r.got, label(r.t, body))
	r.at = append(r.at, r.clock.Now())
	r.mu.Unlock()
	select {
	case r.changed <- struct{}{}:
	default:
	}
	w.WriteHeader(http.StatusNoContent)
}

// refuseFor keeps the listener up but drops every connection.
func (r *chaosReceiver) setRefusing(on bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refuse = on
}

// down closes the server: connections are refused until up.
func (r *chaosReceiver) down() {
	r.mu.Lock()
	srv := r.srv
	r.srv = nil
	r.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
}

// up serves again on the same address.
func (r *chaosReceiver) up() {
	ln, err := net.Listen("tcp", r.addr)
	if err != nil {
		r.t.Errorf("the receiver could not come back on %s: %v", r.addr, err)
		return
	}
	r.serve(ln)
}

func (r *chaosReceiver) stop() {
	r.down()
	r.served.Wait()
}

// pushes returns what the receiver accepted so far and when.
func (r *chaosReceiver) pushes() ([]string, []time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.got...), append([]time.Time(nil), r.at...)
}

// TestChaosLosesNothing runs the default retry policy on a clock 100
// times faster than real time against three receivers: one that drops
// every connection for 10s, one whose port refuses connections for 60s,
// and one that restarts (down for 5s) while reading the body of its 10th
// push. Each gets a task of 40 pushes. None is lost, none is reordered,
// none is dead-lettered. Only the clock differs from production.
func TestChaosLosesNothing(t *testing.T) {
	const factor = 100
	const chunks = 38 // + WORKING and COMPLETED: 40 pushes per task
	clock := newScaledClock(factor)
	flaky := newChaosReceiver(t, clock)
	refused := newChaosReceiver(t, clock)
	restarted := newChaosReceiver(t, clock)
	cutAt := make(chan struct{})
	var once sync.Once
	restarted.cut = func(n int) bool {
		cut := false
		if n == 9 {
			once.Do(func() { cut = true; close(cutAt) })
		}
		return cut
	}
	e := newPushEnv(t, withAllow(flaky.origin(), refused.origin(), restarted.origin()), withRetry(push.RetryPolicy{}), withClock(clock))

	scenarios := []struct {
		name string
		rc   *chaosReceiver
		down time.Duration // clock time the receiver is away
	}{
		{"down 10s, connections dropped", flaky, 10 * time.Second},
		{"down 60s, connections refused", refused, 60 * time.Second},
		{"restarted mid-body, down 5s", restarted, 5 * time.Second},
	}
	runs := make([]interop.Run, len(scenarios))
	for i, sc := range scenarios {
		runs[i] = e.suspended(t, e.alice, chunks)
		e.register(t, e.alice, runs[i], Spec{ID: "chaos", URL: sc.rc.origin() + "/hook", Token: secretToken})
	}

	// The outages: each receiver comes back after its downtime, on the
	// clock; ups records when.
	var bg sync.WaitGroup
	ctx, cancel := context.WithCancel(context.Background())
	defer func() { cancel(); bg.Wait() }()
	var upMu sync.Mutex
	ups := map[*chaosReceiver]time.Time{}
	comeBack := func(rc *chaosReceiver, after <-chan struct{}, d time.Duration, up func()) {
		bg.Add(1)
		go func() {
			defer bg.Done()
			select {
			case <-after:
			case <-ctx.Done():
				return
			}
			select {
			case <-clock.After(d):
				up()
				upMu.Lock()
				ups[rc] = clock.Now()
				upMu.Unlock()
			case <-ctx.Done():
			}
		}()
	}
	now := make(chan struct{})
	close(now)
	flaky.setRefusing(true)
	refused.down()
	start := clock.Now()
	comeBack(flaky, now, scenarios[0].down, func() { flaky.setRefusing(false) })
	comeBack(refused, now, scenarios[1].down, refused.up)
	comeBack(restarted, cutAt, scenarios[2].down, restarted.up)
	for _, run := range runs {
		e.accept(t, e.alice, run)
	}

	want := wantLabels(chunks)
	deadline := time.Now().Add(30 * time.Second)
	for _, sc := range scenarios {
		for {
			if got, _ := sc.rc.pushes(); len(got) >= len(want) {
				break
			}
			if n := len(e.events.all()); n > 0 || time.Now().After(deadline) {
				got, _ := sc.rc.pushes()
				t.Fatalf("%s: %d of %d pushes; %d dead letters", sc.name, len(got), len(want), n)
			}
			select {
			case <-sc.rc.changed:
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	waitFor(t, "the outbox drained", func() bool { return e.outbox.Len() == 0 })
	if n := len(e.events.all()); n != 0 {
		t.Fatalf("%d pushes dead-lettered", n)
	}
	select {
	case <-cutAt:
	default:
		t.Fatal("the restarting receiver never cut a connection")
	}
	logs := e.logs.String()
	upMu.Lock()
	defer upMu.Unlock()
	for i, sc := range scenarios {
		got, at := sc.rc.pushes()
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: pushes (-want +got):\n%s", sc.name, diff)
			continue
		}
		failed := strings.Count(logs, `"msg":"push: delivery attempt failed","task":"`+runs[i].ID+`"`)
		up := ups[sc.rc]
		t.Logf("%s: %d pushes in order, %d attempts (%d failed), 0 dead letters; first push %v after the receiver was back; max push delay %v",
			sc.name, len(got), len(got)+failed, failed, firstAfter(at, up).Round(time.Millisecond), at[len(at)-1].Sub(start).Round(time.Millisecond))
	}
	mustNotContain(t, "logs", logs, secretToken)
}

// firstAfter is the clock time from up to the first push accepted after it.
func firstAfter(at []time.Time, up time.Time) time.Duration {
	for _, a := range at {
		if !a.Before(up) {
			return a.Sub(up)
		}
	}
	return -1
}
