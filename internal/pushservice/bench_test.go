package pushservice

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/egress"
	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/push"
)

// benchConns counts the connections the receiver accepted.
var benchConns atomic.Int64

func benchService(b testing.TB, lanes int) (*Service, []push.Record) {
	b.Helper()
	rcv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
	}))
	rcv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			benchConns.Add(1)
		}
	}
	rcv.Start()
	b.Cleanup(rcv.Close)
	g, err := egress.NewGuard(egress.GuardOptions{AllowOrigins: []string{rcv.URL}})
	if err != nil {
		b.Fatal(err)
	}
	store := memstore.New()
	b.Cleanup(func() { _ = store.Close() })
	configs := push.NewMemoryConfigs()
	svc, err := New(store, testProjector(), push.Options{Events: newEventSink(), Guard: g, Configs: configs, Retry: push.RetryPolicy{MaxAttempts: 1}})
	if err != nil {
		b.Fatal(err)
	}
	if err := svc.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = svc.Close(context.Background()) })
	recs := make([]push.Record, lanes)
	for i := range recs {
		recs[i] = push.Record{TaskID: fmt.Sprintf("acme/TASK%022d", i), ID: "c", URL: rcv.URL + "/hook", Tenant: "acme"}
		if _, _, err := configs.Put(context.Background(), recs[i], 0); err != nil {
			b.Fatal(err)
		}
	}
	return svc, recs
}

// benchSeq numbers the benchmark's pushes, so that each has its own id.
var benchSeq atomic.Int64

var benchBody = []byte(`{"statusUpdate":{"contextId":"ctx-1","status":{"state":"TASK_STATE_WORKING","timestamp":"2026-11-30T09:30:00Z"},"taskId":"acme/RUN0000000000000000000000"}}`)

// deliverN queues n deliveries round-robin over recs and waits until the
// outbox is empty.
func deliverN(b testing.TB, svc *Service, recs []push.Record, n int) {
	ctx := context.Background()
	for i := range n {
		r := &recs[i%len(recs)]
		seq := benchSeq.Add(1)
		if err := svc.enqueue(ctx, push.Delivery{ID: deliveryID(r.TaskID, r.ID, seq, 0), TaskID: r.TaskID, ConfigID: r.ID, Sequence: seq, Body: benchBody}); err != nil {
			b.Fatal(err)
		}
	}
	ob := svc.outbox.(*push.MemoryOutbox)
	for ob.Len() > 0 {
		time.Sleep(100 * time.Microsecond)
	}
}

// BenchmarkDeliver measures pushes to a loopback receiver (same process:
// its allocations count too) through the whole path: outbox, lane, guard
// check, guarded dial (connections reused), POST, response drain.
func BenchmarkDeliver(b *testing.B) {
	for _, lanes := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("lanes=%d", lanes), func(b *testing.B) {
			svc, recs := benchService(b, lanes)
			deliverN(b, svc, recs, 100) // warm the connection pool
			b.ReportAllocs()
			b.ResetTimer()
			start, conns := time.Now(), benchConns.Load()
			deliverN(b, svc, recs, b.N)
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "deliveries/s")
			b.ReportMetric(float64(benchConns.Load()-conns)/float64(b.N), "conns/delivery")
		})
	}
}

// BenchmarkDeliverMemory delivers 100k pushes in ten rounds and reports
// the live heap after the first and the last round: flat means the queue,
// lanes and outbox keep nothing per delivered push.
func BenchmarkDeliverMemory(b *testing.B) {
	for b.Loop() {
		svc, recs := benchService(b, 8)
		var heaps []uint64
		for range 10 {
			deliverN(b, svc, recs, 10_000)
			runtime.GC()
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			heaps = append(heaps, m.HeapAlloc)
		}
		b.ReportMetric(float64(heaps[0])/(1<<20), "heapMB@10k")
		b.ReportMetric(float64(heaps[len(heaps)-1])/(1<<20), "heapMB@100k")
	}
}

// TestDeliveryHeapIsFlat delivers 100k pushes and requires the live heap
// after them to be within a small bound of the heap after the first 10k:
// the outbox, the lanes, the leases and their contexts, and the client's
// connections keep nothing per delivered push (issue 15's "heap flat over
// 100k").
func TestDeliveryHeapIsFlat(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector shadows memory: heap budgets are measured without it")
	}
	if testing.Short() {
		t.Skip("100k deliveries")
	}
	svc, recs := benchService(t, 8)
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	// In batches, so the outbox holds at most one batch: its maps keep
	// the room of their largest size, which depends on the queue's depth,
	// not on how many pushes went through.
	deliver := func(n int) {
		for range n / 1000 {
			deliverN(t, svc, recs, 1000)
		}
	}
	deliver(10_000)
	at10k := heap()
	deliver(90_000)
	at100k := heap()
	// 90k more pushes that each kept as little as 24 bytes would add 2 MiB.
	const bound = 1 << 20
	t.Logf("live heap after 10k deliveries %d KiB, after 100k %d KiB", at10k>>10, at100k>>10)
	if at100k > at10k+bound {
		t.Fatalf("the live heap grew by %d KiB from 10k to 100k deliveries (bound %d KiB)", (at100k-at10k)>>10, bound>>10)
	}
}
