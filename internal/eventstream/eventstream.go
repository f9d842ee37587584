// Package eventstream is the one Server-Sent Events writer of the module
// (WHATWG HTML §9.2 Server-sent events): the A2A streaming methods (A2A
// 1.0.1 §9.4.2), MCP's SSE answers (MCP 2026-07-28 streamable HTTP
// transport) and the example host's GET /host/events (OpenWOP events.md
// §Host events) all write through it. It owns framing, flushing, the
// write deadline of each event and the heartbeat; what an event says is
// the caller's.
//
// A stream outlives the deadlines an http.Server puts on a request. Its
// WriteTimeout would end every stream at that age: instead every write (an
// event, a heartbeat) gets a deadline of its own, so a client that stops
// reading is cut after WriteTimeout while one that reads keeps its stream
// as long as the caller has events. After a write the deadline is lifted
// again: an HTTP/2 deadline resets the stream when it passes, even an idle
// one, and on HTTP/1.x the connection may carry another request after the
// stream, which must not inherit it. A failed write leaves its expired
// deadline, so that nothing blocks on that connection again. A read
// deadline is lifted when the stream opens (net/http lifts it too once the
// body is read). A ResponseWriter that cannot take deadlines streams
// without them.
//
// The heartbeat is a comment written once the stream has been idle for
// Heartbeat, so that proxies do not close it (their idle timeouts are
// commonly 30–60 s). It needs no goroutine of the stream's own: a timer,
// re-armed by every write, writes it from the timer's goroutine under the
// writer's lock, so events and heartbeats never interleave.
package eventstream

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"sync"
	"time"
)

// Options configure one stream.
type Options struct {
	// WriteTimeout bounds each write (an event, a heartbeat); 0 means none.
	WriteTimeout time.Duration
	// Heartbeat is how long the stream may be idle before a comment is
	// written; 0 means no heartbeat.
	Heartbeat time.Duration
	// Comment is the heartbeat's text, after the ':' that starts every
	// comment line ("" writes a bare ":").
	Comment string
	// OnPanic receives a panic of a heartbeat write (a ResponseWriter of
	// the host's); the stream's later writes then fail.
	OnPanic func(p any)
}

// ContentType is the media type of an event stream.
const ContentType = "text/event-stream"

// SetHeaders sets the headers of an event stream on h: the media type, no
// caching, and no buffering by reverse proxies that honour
// X-Accel-Buffering (nginx), so events pass through as they are written.
func SetHeaders(h http.Header) {
	h.Set("Content-Type", ContentType)
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
}

// Writer writes one event stream. Its methods are safe for concurrent
// use; every write is flushed at once. The first failed write ends the
// stream: every later call returns that error.
type Writer struct {
	mu   sync.Mutex
	w    http.ResponseWriter
	rc   *http.ResponseController
	opts Options
	// frame is where an event is framed, so that each is one Write. Only
	// a small one is kept for the next: an idle stream holds no event.
	frame []byte
	err   error
	beat  *time.Timer
	// closed: Close was called; a heartbeat that fires later writes
	// nothing.
	closed bool
}

// ErrClosed is returned by writes after Close.
var ErrClosed = errors.New("eventstream: stream closed")

// errHeartbeatPanicked fails the writes of a stream whose heartbeat
// panicked.
var errHeartbeatPanicked = errors.New("eventstream: the heartbeat panicked")

// Open answers with an event stream: it sets the headers, lifts the read
// deadline, sends 200 through w (so that a ResponseWriter that tracks
// whether its response began sees it) and flushes it. It reports false,
// having written nothing, when w cannot flush — nothing in its Unwrap
// chain is an http.Flusher — so that the caller can still answer with a
// plain error. Close must be called before the handler returns.
func Open(w http.ResponseWriter, opts Options) (*Writer, bool) {
	if !canFlush(w) {
		return nil, false
	}
	SetHeaders(w.Header())
	sw := &Writer{w: w, rc: http.NewResponseController(w), opts: opts}
	_ = sw.rc.SetReadDeadline(time.Time{})
	sw.mu.Lock()
	defer sw.mu.Unlock()
	sw.deadline()
	w.WriteHeader(http.StatusOK)
	if err := sw.rc.Flush(); err != nil {
		sw.err = err
		return sw, true
	}
	sw.lift()
	if opts.Heartbeat > 0 {
		sw.beat = time.AfterFunc(opts.Heartbeat, sw.heartbeat)
	}
	return sw, true
}

// Attach is the writer of an event stream already under way on w (its
// 200 sent by another writer), without a heartbeat: the last event of a
// stream whose own writer is out of reach (a recovered panic).
func Attach(w http.ResponseWriter, opts Options) *Writer {
	opts.Heartbeat = 0
	return &Writer{w: w, rc: http.NewResponseController(w), opts: opts}
}

// canFlush reports whether http.ResponseController can flush w.
func canFlush(w http.ResponseWriter) bool {
	for {
		switch t := w.(type) {
		case interface{ FlushError() error }, http.Flusher:
			return true
		case interface{ Unwrap() http.ResponseWriter }:
			w = t.Unwrap()
		default:
			return false
		}
	}
}

// Data writes b as one unnamed event ("data:" lines). A line break inside
// b (JSON from encoding/json has none) starts another data line of the
// same event, so b always arrives whole.
func (sw *Writer) Data(b []byte) error { return sw.Event("", b) }

// Event writes b as one event named name ("event: <name>", then "data:"
// lines as Data writes them); name "" writes no event line.
func (sw *Writer) Event(name string, b []byte) error {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if err := sw.usable(); err != nil {
		return err
	}
	f := sw.frame[:0]
	if name != "" {
		f = append(f, "event: "...)
		f = append(f, name...)
		f = append(f, '\n')
	}
	f = append(f, "data: "...)
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
	err := sw.writeLocked(f)
	sw.keep(f)
	return err
}

// maxKeptFrame bounds the frame buffer a Writer keeps between writes: a
// heartbeat or a small event reuses it, a larger event's frame is let go.
const maxKeptFrame = 128

// keep keeps f's buffer for the next frame unless it is large.
func (sw *Writer) keep(f []byte) {
	if cap(f) > maxKeptFrame {
		f = nil
	}
	sw.frame = f[:0]
}

// Write writes p, one or more whole events the caller framed itself, and
// flushes it: the Writer as an io.Writer of frames.
func (sw *Writer) Write(p []byte) (int, error) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if err := sw.usable(); err != nil {
		return 0, err
	}
	if err := sw.writeLocked(p); err != nil {
		return 0, err
	}
	return len(p), nil
}

var _ io.Writer = (*Writer)(nil)

// Comment writes the heartbeat's comment now.
func (sw *Writer) Comment() error {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if err := sw.usable(); err != nil {
		return err
	}
	return sw.writeLocked(sw.comment())
}

func (sw *Writer) comment() []byte {
	return append(append(append(sw.frame[:0], ':'), sw.opts.Comment...), '\n', '\n')
}

// Close ends the stream: no heartbeat is written once it returns, and the
// write deadline is lifted unless a write failed. It is idempotent.
func (sw *Writer) Close() {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if sw.closed {
		return
	}
	sw.closed = true
	if sw.beat != nil {
		sw.beat.Stop()
	}
	if sw.err == nil {
		sw.lift()
	}
}

func (sw *Writer) usable() error {
	switch {
	case sw.err != nil:
		return sw.err
	case sw.closed:
		return ErrClosed
	}
	return nil
}

// heartbeat runs on the timer's goroutine once the stream was idle for
// Heartbeat: it writes the comment and re-arms the timer. A timer that
// fired as Close ran finds the stream closed and writes nothing.
func (sw *Writer) heartbeat() {
	defer func() {
		if p := recover(); p != nil {
			// The stream is failed before anyone hears of the panic, so a
			// write that follows the report never reaches the writer again.
			sw.mu.Lock()
			sw.err = errHeartbeatPanicked
			sw.mu.Unlock()
			if sw.opts.OnPanic != nil {
				sw.opts.OnPanic(p)
			}
		}
	}()
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if sw.usable() != nil {
		return
	}
	_ = sw.writeLocked(sw.comment())
}

// writeLocked writes b within the write deadline and flushes it; a
// success re-arms the heartbeat.
func (sw *Writer) writeLocked(b []byte) error {
	sw.deadline()
	if _, err := sw.w.Write(b); err != nil {
		sw.err = err
		return err
	}
	if err := sw.rc.Flush(); err != nil {
		sw.err = err
		return err
	}
	sw.lift()
	if sw.beat != nil {
		sw.beat.Reset(sw.opts.Heartbeat)
	}
	return nil
}

// deadline sets the deadline of the next write.
func (sw *Writer) deadline() {
	if sw.opts.WriteTimeout > 0 {
		_ = sw.rc.SetWriteDeadline(time.Now().Add(sw.opts.WriteTimeout))
	}
}

// lift clears the write deadline between writes.
func (sw *Writer) lift() {
	if sw.opts.WriteTimeout > 0 {
		_ = sw.rc.SetWriteDeadline(time.Time{})
	}
}
