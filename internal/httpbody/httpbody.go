// Package httpbody reads the request body of a protocol surface within a
// byte limit and a time limit, with memory that grows with the bytes that
// actually arrive — never with the length a client merely declares — so
// that hostile or slow clients cannot make the server reserve memory or
// hold a connection open at will.
//
// The A2A bindings and the MCP mount read every body through [Read]; each
// turns its errors into its own protocol's shape.
package httpbody

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"os"
	"time"
)

// Errors of [Read]. A caller answers them in its protocol's shape: too
// large is HTTP 413, too slow 408 where the protocol has a code for it
// (the OpenWOP REST registry has none: the example host answers 400).
var (
	// ErrTooLarge reports a body, declared or received, over the limit.
	ErrTooLarge = errors.New("httpbody: request body too large")
	// ErrTooSlow reports a body that did not arrive within the time limit.
	ErrTooSlow = errors.New("httpbody: request body not received in time")
	// ErrIncomplete reports a body the client stopped sending.
	ErrIncomplete = errors.New("httpbody: request body incomplete")
)

// initialGrowth is what a declared Content-Length may reserve up front: a
// body that small is read in one step, while a larger declaration reserves
// nothing more until its bytes arrive (bytes.Buffer then doubles as they
// do, so memory stays within twice the bytes received).
const initialGrowth = 4 << 10

// MaxPooled is the largest buffer a caller should put back into a pool:
// one large body must not pin its memory after the request.
const MaxPooled = 64 << 10

// Read appends r's body to dst, reading at most limit bytes within
// timeout. A Content-Length over limit is refused before a byte is read.
//
// The time limit is a read deadline on the connection
// (http.ResponseController), which also cuts a body trickling in one byte
// at a time. A server whose own ReadTimeout is shorter keeps its deadline:
// Read never extends what the host configured. Either deadline is lifted
// once the body is read, so that it never bounds the response (an SSE
// stream, a call that waits for its run); net/http lifts it too when a
// body reaches its end, and Read does not depend on that. A ResponseWriter
// that cannot take a read deadline (a middleware that wraps it without an
// Unwrap method) leaves the body bounded in size only. timeout <= 0 means
// no time limit of Read's own.
//
// A body Read could not read whole leaves the rest unread on an HTTP/1.x
// connection, which then cannot carry another request: Read marks the
// response "Connection: close" and leaves the read deadline expired, so
// that net/http answers and closes the connection instead of first
// reading — for a client that trickles, waiting for — what is left of the
// body.
func Read(w http.ResponseWriter, r *http.Request, dst *bytes.Buffer, limit int64, timeout time.Duration) error {
	if r.ContentLength > limit {
		Abandon(w, r)
		return ErrTooLarge
	}
	if r.ContentLength > 0 {
		// bytes.Buffer.ReadFrom wants MinRead bytes free before every
		// read, the last one (which sees EOF) included: reserving them too
		// reads a small body into one allocation.
		dst.Grow(int(min(r.ContentLength, initialGrowth)) + bytes.MinRead)
	}
	rc := http.NewResponseController(w)
	deadlines := true // unless the writer turns the first one down
	if timeout > 0 && !serverBoundsSooner(r, timeout) {
		deadlines = rc.SetReadDeadline(time.Now().Add(timeout)) == nil
	}
	err := readUpTo(dst, r.Body, limit)
	switch {
	case int64(dst.Len()) > limit:
		err = ErrTooLarge
	case errors.Is(err, os.ErrDeadlineExceeded):
		err = ErrTooSlow
	case err != nil:
		err = ErrIncomplete
	}
	if err != nil {
		Abandon(w, r)
		return err
	}
	if deadlines {
		_ = rc.SetReadDeadline(time.Time{}) // the response is not the body's to bound
	}
	return nil
}

// serverBoundsSooner reports whether the http.Server serving r has a
// ReadTimeout of its own no longer than timeout: its deadline, set when the
// request began, then already ends the body sooner.
func serverBoundsSooner(r *http.Request, timeout time.Duration) bool {
	srv, ok := r.Context().Value(http.ServerContextKey).(*http.Server)
	return ok && srv.ReadTimeout > 0 && srv.ReadTimeout <= timeout
}

// Abandon gives up the rest of r's body: a handler that refuses a request
// before reading its body (authentication, method, origin) calls it before
// writing the refusal, and Read calls it on every error. On HTTP/1.x the
// connection is closed after the response; HTTP/2 needs no "Connection:
// close" (an unread stream is reset on its own), which there would shut
// the whole connection down. Without it net/http, to keep the connection,
// reads what is left of a body of up to 256 KiB before it even sends the
// response — for a client that trickles, a wait of its choosing; an
// expired read deadline makes it give up at once. A request without a
// body is left alone.
func Abandon(w http.ResponseWriter, r *http.Request) {
	if r.Body == nil || r.Body == http.NoBody {
		return
	}
	if r.ProtoMajor == 1 {
		w.Header().Set("Connection", "close")
	}
	_ = http.NewResponseController(w).SetReadDeadline(time.Now())
}

// minRead is the least free space a read is given, as in
// bytes.Buffer.ReadFrom: dst doubles when it runs out, so its memory stays
// within twice the bytes received.
const minRead = 512

// readUpTo appends r to dst until io.EOF, or until dst holds more than
// limit bytes — one byte more than the limit tells a body at the limit
// from one over it. It is bytes.Buffer.ReadFrom over a limited reader,
// without the reader: that one would escape to the heap on every request.
func readUpTo(dst *bytes.Buffer, r io.Reader, limit int64) error {
	for int64(dst.Len()) <= limit {
		if dst.Available() < minRead {
			dst.Grow(minRead)
		}
		free := dst.AvailableBuffer()
		free = free[:min(int64(cap(free)), limit+1-int64(dst.Len()))]
		n, err := r.Read(free)
		dst.Write(free[:n])
		switch {
		case err == io.EOF:
			return nil
		case err != nil:
			return err
		}
	}
	return nil
}
