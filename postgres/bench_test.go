package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop"
	"github.com/wopinterop/wopinterop/a2a"
	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/interoptest"
	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/push"
)

// The benchmarks run the PostgreSQL store and the embedded memstore side
// by side in one run, so their ratios compare like with like:
//
//	go test -run '^$' -bench . -benchmem ./
//
// PostgreSQL is the throw-away test cluster (loopback TCP, fsync off).

// BenchmarkKit is the conformance kit's shared RunStore benchmarks on both
// stores.
func BenchmarkKit(b *testing.B) {
	b.Run("memstore", func(b *testing.B) {
		interoptest.RunBenchmarks(b, interoptest.Harness{
			NewStore: func(t testing.TB) interop.RunStore { return newMemstore(t) },
			TenantA:  alice(), Noop: memstore.FixtureNoop,
		})
	})
	b.Run("postgres", func(b *testing.B) {
		interoptest.RunBenchmarks(b, interoptest.Harness{
			NewStore: func(t testing.TB) interop.RunStore { return newStore(t) },
			TenantA:  alice(), Noop: FixtureNoop,
		})
	})
}

func newMemstore(tb testing.TB) *memstore.Store {
	s := memstore.New()
	tb.Cleanup(func() { _ = s.Close() })
	if err := s.RegisterFixtures(tenantA); err != nil {
		tb.Fatal(err)
	}
	return s
}

// seedMemstore creates n conformance-noop runs in s and waits until the
// last one completed (they complete in creation order or close to it).
func seedMemstore(b *testing.B, s *memstore.Store, n int) {
	ctx := context.Background()
	if n == 0 {
		return
	}
	var last string
	for i := range n {
		run, _, err := s.CreateRun(ctx, alice(), interop.CreateRunRequest{WorkflowID: memstore.FixtureNoop, ContextID: fmt.Sprint("seed-", i%100)})
		if err != nil {
			b.Fatal(err)
		}
		last = run.ID
	}
	for {
		p, err := s.ListRuns(ctx, alice(), interop.ListRunsQuery{Statuses: []interop.RunStatus{interop.StatusRunning}, PageSize: 1})
		if err != nil {
			b.Fatal(err)
		}
		if p.Total == 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := s.GetRun(ctx, alice(), last); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkStores measures what a task surface costs per call on each
// store: GetTask (GetRun of a completed run), SendMessage of the no-op
// workflow (CreateRun; the run completes in the background), and a
// ListTasks page of 50 among 1,000 and 100,000 runs of one tenant — the
// first page and one from a cursor halfway down. A keyset page on an index
// with counted totals costs the same at both sizes.
func BenchmarkStores(b *testing.B) {
	ctx := context.Background()
	type store struct {
		name string
		open func(b *testing.B, seed int) interop.RunStore
	}
	stores := []store{
		{"memstore", func(b *testing.B, seed int) interop.RunStore {
			s := newMemstore(b)
			seedMemstore(b, s, seed)
			return s
		}},
		{"postgres", func(b *testing.B, seed int) interop.RunStore {
			s := newStore(b)
			seedRuns(b, s.pool, tenantA, seed)
			return s
		}},
	}
	for _, st := range stores {
		b.Run(st.name, func(b *testing.B) {
			b.Run("GetTask", func(b *testing.B) {
				s := st.open(b, 1000)
				page, err := s.ListRuns(ctx, alice(), interop.ListRunsQuery{PageSize: 1})
				if err != nil || len(page.Runs) != 1 {
					b.Fatal(page, err)
				}
				id := page.Runs[0].ID
				b.ReportAllocs()
				for b.Loop() {
					if _, err := s.GetRun(ctx, alice(), id); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("SendMessageNoop", func(b *testing.B) {
				s := st.open(b, 0)
				req := interop.CreateRunRequest{WorkflowID: FixtureNoop, Transport: interop.TransportA2A, ContextID: "bench"}
				b.ReportAllocs()
				for b.Loop() {
					if _, _, err := s.CreateRun(ctx, alice(), req); err != nil {
						b.Fatal(err)
					}
				}
			})
			for _, n := range []int{1000, 100000} {
				b.Run(fmt.Sprintf("ListTasks50/runs=%d", n), func(b *testing.B) {
					s := st.open(b, n)
					first, err := s.ListRuns(ctx, alice(), interop.ListRunsQuery{PageSize: 50})
					if err != nil || first.Total != n || first.NextCursor == "" {
						b.Fatalf("setup page: %d runs, total %d, %v", len(first.Runs), first.Total, err)
					}
					// A cursor halfway down the list.
					q := interop.ListRunsQuery{PageSize: 50, Cursor: first.NextCursor}
					for range n / 100 {
						p, err := s.ListRuns(ctx, alice(), q)
						if err != nil {
							b.Fatal(err)
						}
						q.Cursor = p.NextCursor
					}
					b.Run("first", func(b *testing.B) {
						b.ReportAllocs()
						for b.Loop() {
							if _, err := s.ListRuns(ctx, alice(), interop.ListRunsQuery{PageSize: 50}); err != nil {
								b.Fatal(err)
							}
						}
					})
					b.Run("middle", func(b *testing.B) {
						b.ReportAllocs()
						for b.Loop() {
							if _, err := s.ListRuns(ctx, alice(), q); err != nil {
								b.Fatal(err)
							}
						}
					})
				})
			}
		})
	}
}

// BenchmarkOutbox measures the push outbox per delivery on both outboxes:
// PostgreSQL (two pools on one database standing for two replicas) and
// push.MemoryOutbox. one-lane and many-lanes are a Put, a Lease of one and
// a Remove per delivery, in a lane that holds a backlog of 100 and among
// 10,000 lanes that hold one each: the head leased is the oldest of all,
// so many-lanes shows what a Lease costs among n lanes. two-replicas is
// two replicas each Putting half the deliveries (over 64 lanes) while
// each drains the outbox, leasing up to 8 at a time. Each reports
// deliveries/s.
func BenchmarkOutbox(b *testing.B) {
	type replicas func(b *testing.B) [2]push.Outbox
	outboxes := []struct {
		name string
		open replicas
	}{
		{"memory", func(*testing.B) [2]push.Outbox {
			o := push.NewMemoryOutbox()
			return [2]push.Outbox{o, o}
		}},
		{"postgres", func(b *testing.B) [2]push.Outbox {
			o := twoOutboxes(b)
			return [2]push.Outbox{o[0], o[1]}
		}},
	}
	ctx := context.Background()
	for _, ob := range outboxes {
		b.Run(ob.name, func(b *testing.B) {
			b.Run("one-lane", func(b *testing.B) {
				benchPutLeaseRemove(b, ob.open(b), 1, 100)
			})
			b.Run("many-lanes", func(b *testing.B) {
				benchPutLeaseRemove(b, ob.open(b), 10000, 1)
			})
			b.Run("two-replicas", func(b *testing.B) {
				o := ob.open(b)
				var removed atomic.Int64
				var wg sync.WaitGroup
				errs := make(chan error, 4)
				b.ResetTimer()
				for r := range 2 {
					wg.Go(func() {
						for i := r; i < b.N; i += 2 {
							if err := o[r].Put(ctx, benchDelivery(i%64, i)); err != nil {
								errs <- err
								return
							}
						}
					})
					wg.Go(func() {
						owner := fmt.Sprint("replica-", r)
						for removed.Load() < int64(b.N) {
							got, err := o[r].Lease(ctx, owner, 8, time.Minute)
							if err != nil {
								errs <- err
								return
							}
							for _, d := range got {
								if err := o[r].Remove(ctx, d.ID); err != nil {
									errs <- err
									return
								}
								removed.Add(1)
							}
							if len(got) == 0 {
								time.Sleep(100 * time.Microsecond)
							}
						}
					})
				}
				wg.Wait()
				close(errs)
				if err := <-errs; err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "deliveries/s")
			})
		})
	}
}

func benchDelivery(lane, i int) push.Delivery {
	return push.Delivery{ID: fmt.Sprint("dl-", i), TaskID: "task", ConfigID: fmt.Sprint("lane-", lane),
		Sequence: int64(i), Body: []byte(`{"statusUpdate":{"taskId":"task","status":{"state":"TASK_STATE_WORKING"}}}`)}
}

// benchPutLeaseRemove fills lanes lanes with backlog deliveries each, then
// per iteration Puts one delivery behind them and leases and removes the
// oldest head, so the outbox keeps its size.
func benchPutLeaseRemove(b *testing.B, o [2]push.Outbox, lanes, backlog int) {
	ctx := context.Background()
	n := 0
	for range backlog {
		for l := range lanes {
			if err := o[n%2].Put(ctx, benchDelivery(l, n)); err != nil {
				b.Fatal(err)
			}
			n++
		}
	}
	b.ResetTimer()
	for i := range b.N {
		if err := o[i%2].Put(ctx, benchDelivery(n%lanes, n)); err != nil {
			b.Fatal(err)
		}
		n++
		got, err := o[i%2].Lease(ctx, "worker", 1, time.Minute)
		if err != nil || len(got) != 1 {
			b.Fatalf("Lease = %v, %v", got, err)
		}
		if err := o[i%2].Remove(ctx, got[0].ID); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "deliveries/s")
}

// BenchmarkA2A is BenchmarkStores through the A2A JSON-RPC binding, as a
// client pays it: the library mounted over each store (wopinterop.New),
// a request body in, the response bytes out, in process. GetTask reads a
// completed task; SendMessageNoop starts a conformance-noop task and
// answers it completed (so it waits for the run, which on PostgreSQL
// executes under a lease and commits its events); ListTasks50 is a page
// of 50 among 1,000 and 100,000 tasks of the tenant.
func BenchmarkA2A(b *testing.B) {
	type store struct {
		name string
		open func(b *testing.B, seed int) (interop.RunStore, interop.EventSink, interop.Workflow)
	}
	stores := []store{
		{"memstore", func(b *testing.B, seed int) (interop.RunStore, interop.EventSink, interop.Workflow) {
			s := newMemstore(b)
			seedMemstore(b, s, seed)
			return s, s, memstore.ConformanceFixtures()[0].Workflow
		}},
		{"postgres", func(b *testing.B, seed int) (interop.RunStore, interop.EventSink, interop.Workflow) {
			s := newStore(b) // with the fixtures
			seedRuns(b, s.pool, tenantA, seed)
			return s, s, ConformanceFixtures()[0].Workflow
		}},
	}
	mount := func(b *testing.B, st store, seed int) http.Handler {
		rs, sink, noop := st.open(b, seed)
		host, err := wopinterop.New(wopinterop.Config{
			Store:    rs,
			Events:   sink,
			Subjects: interop.SubjectResolverFunc(func(*http.Request) (interop.Subject, error) { return alice(), nil }),
			BaseURL:  "https://bench.example",
			A2A: &wopinterop.A2AConfig{
				Path:   "/a2a",
				Record: wopinterop.Record{RefreshedAt: "2026-11-20"},
				Card:   a2a.CardConfig{Name: "bench", Description: "bench", Version: "1.0.0"},
				Routed: []interop.Workflow{noop},
			},
			Now: func() time.Time { return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) },
		})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = host.Close(context.Background()) })
		mux := http.NewServeMux()
		host.Mount(mux)
		return mux
	}
	call := func(b *testing.B, h http.Handler, body string) []byte {
		req := httptest.NewRequest(http.MethodPost, "/a2a", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("A2A-Version", "1.0")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK || bytes.Contains(rec.Body.Bytes(), []byte(`"error"`)) {
			b.Fatalf("%s: %d %s", body, rec.Code, rec.Body)
		}
		return rec.Body.Bytes()
	}
	send := func(i int) string {
		return `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m-` + strconv.Itoa(i) +
			`","role":"ROLE_USER","parts":[{"text":"go"}],"metadata":{"skillId":"` + FixtureNoop + `"}}}}`
	}
	for _, st := range stores {
		b.Run(st.name, func(b *testing.B) {
			b.Run("GetTask", func(b *testing.B) {
				h := mount(b, st, 0)
				var res struct {
					Result struct {
						Task struct {
							ID string `json:"id"`
						} `json:"task"`
					} `json:"result"`
				}
				if err := json.Unmarshal(call(b, h, send(-1)), &res); err != nil || res.Result.Task.ID == "" {
					b.Fatal(err)
				}
				body := `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"` + res.Result.Task.ID + `"}}`
				b.ReportAllocs()
				for b.Loop() {
					call(b, h, body)
				}
			})
			b.Run("SendMessageNoop", func(b *testing.B) {
				h := mount(b, st, 0)
				i := 0
				b.ReportAllocs()
				for b.Loop() {
					i++
					if !bytes.Contains(call(b, h, send(i)), []byte("TASK_STATE_COMPLETED")) {
						b.Fatal("not completed")
					}
				}
			})
			for _, n := range []int{1000, 100000} {
				b.Run(fmt.Sprintf("ListTasks50/runs=%d", n), func(b *testing.B) {
					h := mount(b, st, n)
					body := `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{"pageSize":50}}`
					if !bytes.Contains(call(b, h, body), []byte(`"totalSize":`+strconv.Itoa(n))) {
						b.Fatalf("ListTasks does not count %d tasks", n)
					}
					b.ReportAllocs()
					for b.Loop() {
						call(b, h, body)
					}
				})
			}
		})
	}
}
