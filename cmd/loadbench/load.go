package main

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// request is one HTTP POST of a scenario.
type request struct {
	url    string
	header http.Header
	body   []byte
}

// unary is a request-answer scenario against one server: the i-th request
// and the check its answer must pass.
type unary struct {
	build func(i int) request
	check func(i, status int, body []byte) error
}

// sample is what one or more rounds measured.
type sample struct {
	n         int             // requests (or updates, deliveries) done
	errs      int             // of them answered wrongly
	firstErr  error           // the first wrong answer
	wall      time.Duration   // wall time of the rounds
	cpu       time.Duration   // the server process's CPU time in the rounds
	clientCPU time.Duration   // this process's CPU time in the rounds
	lat       []time.Duration // per request; empty when not measured
}

// add folds round r into s.
func (s *sample) add(r sample) {
	s.n += r.n
	s.errs += r.errs
	if s.firstErr == nil {
		s.firstErr = r.firstErr
	}
	s.wall += r.wall
	s.cpu += r.cpu
	s.clientCPU += r.clientCPU
	s.lat = append(s.lat, r.lat...)
}

// fail records one wrong answer.
func (s *sample) fail(err error) {
	s.errs++
	if s.firstErr == nil {
		s.firstErr = err
	}
}

// drive sends n requests of u, numbered from first, with conc closed-loop
// clients (each sends its next request when its last is answered) over
// client's keep-alive connections.
func drive(client *http.Client, u unary, first, n, conc int) sample {
	lat := make([]time.Duration, n)
	var next atomic.Int64
	var mu sync.Mutex
	var out sample
	var wg sync.WaitGroup
	start := time.Now()
	for range min(conc, n) {
		wg.Go(func() {
			var buf bytes.Buffer
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				r := u.build(first + i)
				t0 := time.Now()
				status, err := post(client, r, &buf)
				lat[i] = time.Since(t0)
				if err == nil {
					err = u.check(first+i, status, buf.Bytes())
				}
				if err != nil {
					mu.Lock()
					out.fail(fmt.Errorf("request %d: %w", first+i, err))
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	out.wall = time.Since(start)
	out.n = n
	out.lat = lat
	return out
}

// post sends r and reads the whole answer into buf.
func post(client *http.Client, r request, buf *bytes.Buffer) (int, error) {
	req, err := http.NewRequest(http.MethodPost, r.url, bytes.NewReader(r.body))
	if err != nil {
		return 0, err
	}
	req.Header = r.header
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	buf.Reset()
	_, err = buf.ReadFrom(resp.Body)
	return resp.StatusCode, err
}

// newClient is a keep-alive client with an idle connection for each of
// conc clients.
func newClient(conc int) *http.Client {
	return &http.Client{Transport: &http.Transport{
		MaxIdleConns:        conc + 8,
		MaxIdleConnsPerHost: conc + 8,
		IdleConnTimeout:     time.Minute,
		DisableCompression:  true,
	}}
}

// percentile is the p-th percentile (0 < p ≤ 1) of lat, which it sorts.
func percentile(lat []time.Duration, p float64) time.Duration {
	if len(lat) == 0 {
		return 0
	}
	slices.Sort(lat)
	i := int(float64(len(lat))*p+0.5) - 1
	return lat[max(0, min(i, len(lat)-1))]
}
