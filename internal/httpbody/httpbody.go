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
// The time limit is a read deadline on the connection
// (http.ResponseController), which also cuts a body trickling in one byte
// at a time; it is lifted again once the body is read, so a long response
// (an SSE stream) is not cut. A ResponseWriter that cannot take a read
// deadline (a middleware that wraps it without an Unwrap method) leaves
// the body bounded in size only. timeout <= 0 means no time limit of
// Read's own. The deadline replaces the one http.Server.ReadTimeout put on
// the request, so a shorter ReadTimeout is kept as the limit: a caller's
// default never extends what the host's server allows.
//
// On any error the rest of the body is abandoned: the response gets
// Connection: close and the read deadline is left in the past, because
// net/http would otherwise read up to 256 KiB more of the body, before the
// response and after it, and a client trickling it would hold the
// connection all that time.
func Read(w http.ResponseWriter, r *http.Request, dst *bytes.Buffer, limit int64, timeout time.Duration) (err error) {
	defer func() {
		if err != nil {
			w.Header().Set("Connection", "close")
			_ = http.NewResponseController(w).SetReadDeadline(time.Now())
		}
	}()
	if r.ContentLength > limit {
		return ErrTooLarge
	}
	if r.ContentLength > 0 {
		dst.Grow(int(min(r.ContentLength, initialGrowth)))
	}
	if srv, ok := r.Context().Value(http.ServerContextKey).(*http.Server); ok && srv.ReadTimeout > 0 && timeout > srv.ReadTimeout {
		timeout = srv.ReadTimeout
	}
	if timeout > 0 {
		rc := http.NewResponseController(w)
		if rc.SetReadDeadline(time.Now().Add(timeout)) == nil {
			defer func() {
				if err == nil {
					_ = rc.SetReadDeadline(time.Time{})
				}
			}()
		}
	}
	readErr := readUpTo(dst, r.Body, limit)
	switch {
	case int64(dst.Len()) > limit:
		return ErrTooLarge
	case errors.Is(readErr, os.ErrDeadlineExceeded):
		return ErrTooSlow
	case readErr != nil:
		return ErrIncomplete
	}
	return nil
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
