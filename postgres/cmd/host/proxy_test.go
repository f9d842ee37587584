package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"sync"
	"testing"
)

// roundRobin is the load balancer in front of the replicas: each request
// goes to the next replica in turn, whatever it is, so a client's calls
// on one task alternate between replicas. It records which replica served
// every request, and the request itself, so a test can say where each
// step ran and replay what a client sent.
type roundRobin struct {
	url string

	mu       sync.Mutex
	backends []*httputil.ReverseProxy
	next     int
	served   []served
}

// served is one request the balancer forwarded.
type served struct {
	Replica int
	Method  string // HTTP method
	Path    string
	RPC     string // the JSON-RPC method, "" for other requests
	Header  http.Header
	Body    []byte
}

// params decodes the JSON-RPC params of the request.
func (s served) params() map[string]any {
	var env struct {
		Params map[string]any `json:"params"`
	}
	_ = json.Unmarshal(s.Body, &env)
	return env.Params
}

// newRoundRobin listens on a loopback port; the replicas are attached with
// attach once they run, since they need the balancer's origin as their
// public URL first.
func newRoundRobin(t *testing.T) *roundRobin {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rr := &roundRobin{url: "http://" + ln.Addr().String()}
	srv := &http.Server{Handler: rr}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return rr
}

func (rr *roundRobin) attach(origins ...string) {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	for _, o := range origins {
		u, _ := url.Parse(o)
		p := httputil.NewSingleHostReverseProxy(u)
		p.FlushInterval = -1 // event streams pass through as they are written
		rr.backends = append(rr.backends, p)
	}
}

// upcoming is the replica the next request goes to.
func (rr *roundRobin) upcoming() int {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	return rr.next
}

// log returns what was served so far.
func (rr *roundRobin) log() []served {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	return slices.Clone(rr.served)
}

func (rr *roundRobin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var env struct {
		Method string `json:"method"`
	}
	_ = json.Unmarshal(body, &env)

	rr.mu.Lock()
	i := rr.next
	rr.next = (rr.next + 1) % len(rr.backends)
	rr.served = append(rr.served, served{Replica: i, Method: r.Method, Path: r.URL.Path, RPC: env.Method, Header: r.Header.Clone(), Body: body})
	p := rr.backends[i]
	rr.mu.Unlock()
	p.ServeHTTP(w, r)
}
