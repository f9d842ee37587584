package main

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/wopinterop/wopinterop/internal/processcpu"
)

// fanout is one server's held task with its subscribers.
type fanout struct {
	srv     *server
	reached chan struct{} // one per subscriber per update
	errs    chan error
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	got     sample
}

// benchFanout measures SubscribeToTask fan-out on every A2A server with a
// held task: cfg.subscribers streams on one task, then updates one at a
// time, each timed until every subscriber has it.
func benchFanout(ctx context.Context, cfg config, s *servers) ([]row, error) {
	var fans []*fanout
	defer func() {
		for _, f := range fans {
			f.close()
		}
	}()
	for _, x := range s.all() {
		if x.a2aURL == "" || !x.held {
			continue
		}
		f, err := openFanout(ctx, x, cfg.subscribers)
		if err != nil {
			return nil, err
		}
		fans = append(fans, f)
	}
	per := max(1, cfg.requests/10/cfg.rounds)
	for r := range cfg.rounds {
		for i := range fans {
			f := fans[(i+r)%len(fans)]
			got, err := f.round(per, cfg.subscribers)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f.srv.name, err)
			}
			f.got.add(got)
		}
	}
	rows := make([]row, 0, len(fans))
	for _, f := range fans {
		rows = append(rows, newRow(f.srv.name, f.got))
	}
	return rows, nil
}

// openFanout starts a held task on s and k subscribers on it, and returns
// once every subscriber has the task's first event.
func openFanout(ctx context.Context, s *server, k int) (*fanout, error) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: k, DisableCompression: true}}
	task, err := startHeld(client, s, 0)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	f := &fanout{srv: s, reached: make(chan struct{}, k), errs: make(chan error, k), cancel: cancel}
	ready := make(chan struct{}, k)
	for range k {
		f.wg.Go(func() {
			n := 0
			err := subscribe(ctx, client, s, task, func(ev streamEvent) bool {
				switch {
				case ev.Task != nil:
					if ev.Task.ID != task || n > 0 {
						f.errs <- fmt.Errorf("%s: a task event that is not the first for %s", s.name, task)
						return false
					}
					n++
					ready <- struct{}{}
				case ev.ArtifactUpdate != nil:
					if n == 0 || ev.ArtifactUpdate.TaskID != task || len(ev.ArtifactUpdate.Artifact.Parts) != 1 {
						f.errs <- fmt.Errorf("%s: an artifact update out of place or not of %s", s.name, task)
						return false
					}
					f.reached <- struct{}{}
				}
				return true
			})
			if err != nil {
				f.errs <- fmt.Errorf("%s: %w", s.name, err)
			}
		})
	}
	for range k {
		select {
		case <-ready:
		case err := <-f.errs:
			f.close()
			return nil, err
		case <-time.After(patience):
			f.close()
			return nil, fmt.Errorf("%s: subscribers not attached: %w", s.name, errTimeout)
		}
	}
	return f, nil
}

// round sends n updates, one at a time, each timed until all k
// subscribers have it (the time includes the update's request to the
// server's control endpoint, alike for every server).
func (f *fanout) round(n, k int) (sample, error) {
	out := sample{n: n, lat: make([]time.Duration, 0, n)}
	cpu0, err := f.srv.cpu()
	if err != nil {
		return out, err
	}
	mine := processcpu.Used()
	start := time.Now()
	for range n {
		t0 := time.Now()
		if err := f.srv.update(1); err != nil {
			return out, err
		}
		for range k {
			select {
			case <-f.reached:
			case err := <-f.errs:
				return out, err
			case <-time.After(patience):
				return out, fmt.Errorf("an update did not reach every subscriber: %w", errTimeout)
			}
		}
		out.lat = append(out.lat, time.Since(t0))
	}
	out.wall = time.Since(start)
	out.clientCPU = processcpu.Used() - mine
	cpu1, err := f.srv.cpu()
	out.cpu = cpu1 - cpu0
	return out, err
}

// close lets the held task complete and ends the subscriptions.
func (f *fanout) close() {
	_ = f.srv.release()
	f.cancel()
	f.wg.Wait()
}
