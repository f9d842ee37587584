package a2a

// A small Server-Sent Events writer shared by both bindings (A2A 1.0.1 §9.4.2:
// streaming replies are text/event-stream). It writes only `data:` events
// and comments: A2A streams need no event names and no ids, since a client
// re-attaches with SubscribeToTask rather than Last-Event-ID.
//
// Usage, from a handler goroutine:
//
//	sw, ok := newSSE(w) // commits 200 + text/event-stream, or reports that w cannot flush
//	if !ok { /* answer a plain error instead */ }
//	stop := sw.heartbeat(sseHeartbeat) // optional keep-alive comments
//	defer stop()
//	for ... { if err := sw.data(frame); err != nil { return } } // client gone
//
// Every event is flushed as soon as it is written. The writer is safe for
// the heartbeat goroutine and the handler to use together; stop must be
// called before the handler returns.

import (
	"bytes"
	"net/http"
	"sync"
	"time"
)

// sseHeartbeat is the default interval between keep-alive comments: short
// enough for common proxy idle timeouts (30–60 s), long enough to cost
// nothing.
const sseHeartbeat = 15 * time.Second

// sseWriter writes one event stream.
type sseWriter struct {
	mu    sync.Mutex // serialises events and heartbeats
	w     http.ResponseWriter
	rc    *http.ResponseController
	frame []byte // reused to write each event with a single Write
	err   error  // the first write error; every later write returns it
}

// newSSE sets the event-stream headers and commits the 200 response by
// flushing it. It reports false, having written nothing (and removed the
// headers it set), when w cannot be flushed: the caller can then still
// answer with a plain error body.
func newSSE(w http.ResponseWriter) (*sseWriter, bool) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	// Ask buffering reverse proxies (nginx) to pass events through.
	h.Set("X-Accel-Buffering", "no")
	rc := http.NewResponseController(w)
	if err := rc.Flush(); err != nil {
		h.Del("Content-Type")
		h.Del("Cache-Control")
		h.Del("X-Accel-Buffering")
		return nil, false
	}
	return &sseWriter{w: w, rc: rc}, true
}

// data writes b as one event and flushes it. A line break inside b (JSON
// from encoding/json has none) starts another data line of the same event,
// so b always arrives whole. It returns the write error once the client has
// gone away, and the same error for every later call.
func (sw *sseWriter) data(b []byte) error {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if sw.err != nil {
		return sw.err
	}
	f := append(sw.frame[:0], "data: "...)
	if bytes.IndexAny(b, "\r\n") < 0 {
		f = append(f, b...)
		b = nil
	}
	for i := 0; i < len(b); i++ {
		switch c := b[i]; c {
		case '\r':
			if i+1 < len(b) && b[i+1] == '\n' {
				i++
			}
			f = append(f, "\ndata: "...)
		case '\n':
			f = append(f, "\ndata: "...)
		default:
			f = append(f, c)
		}
	}
	f = append(f, '\n', '\n')
	sw.frame = f
	return sw.writeLocked(f)
}

// comment writes an SSE comment line, which clients ignore; it keeps idle
// connections open through proxies.
func (sw *sseWriter) comment() error {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if sw.err != nil {
		return sw.err
	}
	return sw.writeLocked([]byte(":\n\n"))
}

func (sw *sseWriter) writeLocked(b []byte) error {
	if _, err := sw.w.Write(b); err != nil {
		sw.err = err
		return err
	}
	if err := sw.rc.Flush(); err != nil {
		sw.err = err
		return err
	}
	return nil
}

// heartbeat writes a comment every interval until stop is called; stop
// waits for the goroutine to exit, so nothing is written after it returns.
// The goroutine also ends by itself once a write fails.
func (sw *sseWriter) heartbeat(every time.Duration) (stop func()) {
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if sw.comment() != nil {
					return
				}
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(done) })
		<-exited
	}
}
