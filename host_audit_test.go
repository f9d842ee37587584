package wopinterop_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/negotiate"
)

// flakySink fails its first `failures` host events, then passes them on.
type flakySink struct {
	interop.EventSink
	failures int64
	calls    atomic.Int64
}

func (s *flakySink) PublishHostEvent(ctx context.Context, tenant string, ev interop.HostEvent) error {
	if s.calls.Add(1) <= s.failures {
		return errors.New("sink down")
	}
	return s.EventSink.PublishHostEvent(ctx, tenant, ev)
}

// TestAuditStatsCountRetriesAndDrops: a request is answered whatever the
// sink does; a sink that recovers loses nothing, one that never does has
// its records counted as dropped once Close gives up.
func TestAuditStatsCountRetriesAndDrops(t *testing.T) {
	listTasks := `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}`
	t.Run("recovers", func(t *testing.T) {
		store := newStore(t)
		cfg := validConfig(store)
		cfg.Events = &flakySink{EventSink: store, failures: 2}
		h, err := wopinterop.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		srv := server(t, h)
		if r := send(t, "POST", srv.URL+"/a2a", acmeKey, listTasks); r.status != 200 {
			t.Fatalf("ListTasks: %d %s", r.status, r.body)
		}
		if err := h.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		if st := h.AuditStats(); st != (negotiate.AuditStats{Delivered: 1, Retried: 2}) {
			t.Fatalf("stats = %+v", st)
		}
		if n := len(store.DurableHostEvents("acme")); n != 1 {
			t.Fatalf("%d host events, want the one record", n)
		}
	})
	t.Run("never recovers", func(t *testing.T) {
		store := newStore(t)
		cfg := validConfig(store)
		cfg.Events = &flakySink{EventSink: store, failures: 1 << 40}
		h, err := wopinterop.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		srv := server(t, h)
		if r := send(t, "POST", srv.URL+"/a2a", acmeKey, listTasks); r.status != 200 {
			t.Fatalf("ListTasks: %d %s", r.status, r.body)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		if err := h.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Close = %v, want it to give up at its context", err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for h.AuditStats().Dropped != 1 {
			if time.Now().After(deadline) {
				t.Fatalf("stats = %+v, want the record counted as dropped", h.AuditStats())
			}
			time.Sleep(time.Millisecond)
		}
	})
}
