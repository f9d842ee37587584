package egress

import (
	"bytes"
	"errors"
	"io"
	"strconv"
)

// ErrTooLarge is wrapped by every [*TooLargeError].
var ErrTooLarge = errors.New("egress: response too large")

// TooLargeError is a body that went past the limit its reader was given.
type TooLargeError struct {
	Limit int64
}

func (e *TooLargeError) Error() string {
	return "egress: response larger than " + strconv.FormatInt(e.Limit, 10) + " bytes"
}

// Unwrap makes errors.Is(err, ErrTooLarge) true.
func (e *TooLargeError) Unwrap() error { return ErrTooLarge }

// LimitReader returns a reader of r that fails with a [*TooLargeError]
// once more than limit bytes were read, instead of ending quietly as
// io.LimitReader does: a peer's document cut at the limit must never be
// read as a whole one.
func LimitReader(r io.Reader, limit int64) io.Reader {
	return &limitedReader{r: r, left: limit, limit: limit}
}

type limitedReader struct {
	r           io.Reader
	left, limit int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.left < 0 {
		return 0, &TooLargeError{Limit: l.limit}
	}
	// Read one byte past the limit, so that a body of exactly limit bytes
	// ends cleanly and one byte more is an error.
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	if l.left < 0 {
		return n + int(l.left), &TooLargeError{Limit: l.limit}
	}
	return n, err
}

// initialRead is the first buffer ReadAll grows; it doubles from there, so
// memory follows the bytes received.
const initialRead = 512

// ReadAll reads r to its end, at most limit bytes; more is a
// [*TooLargeError]. It never sizes its buffer from what a peer announced
// (a Content-Length), only from what arrived.
func ReadAll(r io.Reader, limit int64) ([]byte, error) {
	var buf bytes.Buffer
	lr := LimitReader(r, limit)
	for {
		if buf.Available() == 0 {
			buf.Grow(max(initialRead, buf.Len()))
		}
		b := buf.AvailableBuffer()
		n, err := lr.Read(b[:cap(b)])
		buf.Write(b[:n])
		if err == io.EOF {
			return buf.Bytes(), nil
		}
		if err != nil {
			return nil, err
		}
	}
}
