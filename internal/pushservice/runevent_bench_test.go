package pushservice

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/internal/processcpu"
)

// BenchmarkDeliverFromRunEvents measures what a host pays per push on one
// lane from the run's event to the receiver's answer, where
// BenchmarkDeliver starts from a rendered body: a run publishes b.N
// artifact chunks, and the watcher reads each event, renders it, queues
// it, and the lane delivers it over loopback HTTP to a receiver in the
// same process (its CPU counts too). Every push is checked to be the
// run's.
func BenchmarkDeliverFromRunEvents(b *testing.B) {
	var got, wrong atomic.Int64
	var want atomic.Int64
	done := make(chan struct{})
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !bytes.Contains(body, []byte(`"taskId":"acme/`)) {
			wrong.Add(1)
		}
		w.WriteHeader(http.StatusNoContent)
		if got.Add(1) == want.Load() {
			close(done)
		}
	}))
	b.Cleanup(rcv.Close)
	e := newPushEnv(b, withAllow(rcv.URL))
	run := e.suspended(b, e.alice, b.N)
	e.register(b, e.alice, run, Spec{URL: rcv.URL + "/hook"})
	// The run's pushes: WORKING once resumed, one per chunk, COMPLETED.
	want.Store(int64(b.N) + 2)
	b.ResetTimer()
	start, cpu := time.Now(), processcpu.Used()
	e.accept(b, e.alice, run)
	select {
	case <-done:
	case <-time.After(5 * time.Minute):
		b.Fatalf("%d of %d pushes arrived", got.Load(), want.Load())
	}
	elapsed, used := time.Since(start), processcpu.Used()-cpu
	b.StopTimer()
	if n := wrong.Load(); n > 0 {
		b.Fatalf("%d pushes did not name the run's task", n)
	}
	b.ReportMetric(float64(want.Load())/elapsed.Seconds(), "deliveries/s")
	b.ReportMetric(float64(used)/float64(want.Load()), "cpu-ns/delivery")
}
