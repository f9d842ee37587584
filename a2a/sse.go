package a2a

// A small Server-Sent Events writer shared by both bindings (A2A 1.0.1 §9.4.2:
// streaming replies are text/event-stream). It writes only `data:` events
// and comments: A2A streams need no event names and no ids, since a client
// re-attaches with SubscribeToTask rather than Last-Event-ID.
//
// Usage, from a handler goroutine:
//
//	sw, ok := newSSE(w, writeTimeout) // commits 200 + text/event-stream, or reports that w cannot flush
//	if !ok { /* answer a plain error instead */ }
//	stop := sw.heartbeat(sseHeartbeat, logPanic) // keep-alive comments
//	defer stop()
//	for ... { if err := sw.data(frame); err != nil { return } } // client gone
//
// Every event is flushed as soon as it is written. The writer is safe for
// the heartbeat goroutine and the handler to use together; stop must be
// called before the handler returns.
//
// A stream outlives the deadlines an http.Server puts on a request. Its
// WriteTimeout would end every stream at that age: instead every write (an
// event, a heartbeat) gets a deadline of its own, so a client that stops
// reading is cut after writeTimeout while one that reads keeps its stream
// as long as the task runs. (ReadTimeout needs nothing: net/http clears
// the read deadline itself once the body is read, when it starts watching
// the connection for the client going away.) A ResponseWriter that cannot
// take deadlines streams without them.

import (
	"bytes"
	"errors"
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
	// writeTimeout bounds each write; 0 means none.
	writeTimeout time.Duration
}

// newSSE sets the event-stream headers and commits the 200 response by
// flushing it. It reports false,
// having written nothing (and removed the headers it set), when w cannot
// be flushed: the caller can then still answer with a plain error body.
func newSSE(w http.ResponseWriter, writeTimeout time.Duration) (*sseWriter, bool) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	// Ask buffering reverse proxies (nginx) to pass events through.
	h.Set("X-Accel-Buffering", "no")
	rc := http.NewResponseController(w)
	sw := &sseWriter{w: w, rc: rc, writeTimeout: writeTimeout}
	sw.deadline()
	if err := rc.Flush(); err != nil {
		h.Del("Content-Type")
		h.Del("Cache-Control")
		h.Del("X-Accel-Buffering")
		return nil, false
	}
	return sw, true
}

// deadline sets the deadline of the next write.
func (sw *sseWriter) deadline() {
	if sw.writeTimeout > 0 {
		_ = sw.rc.SetWriteDeadline(time.Now().Add(sw.writeTimeout))
	}
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
	sw.deadline()
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
// waits for the goroutine to exit, so nothing is written after it returns,
// then lifts the write deadline unless a write failed: the connection
// may serve another request, which must not inherit it, while a failed
// one keeps its expired deadline so that nothing blocks on it again. The
// goroutine also ends by itself once a write fails; a panic in it (a
// ResponseWriter of the host's) is handed to onPanic and fails the
// stream's later writes.
func (sw *sseWriter) heartbeat(every time.Duration, onPanic func(p any)) (stop func()) {
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		defer func() {
			if p := recover(); p != nil {
				onPanic(p)
				sw.mu.Lock()
				sw.err = errHeartbeatPanicked
				sw.mu.Unlock()
			}
		}()
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
		once.Do(func() {
			close(done)
			<-exited
			sw.mu.Lock()
			defer sw.mu.Unlock()
			if sw.err == nil && sw.writeTimeout > 0 {
				_ = sw.rc.SetWriteDeadline(time.Time{})
			}
		})
	}
}

// errHeartbeatPanicked fails the writes of a stream whose heartbeat
// panicked.
var errHeartbeatPanicked = errors.New("a2a: the stream's heartbeat panicked")
