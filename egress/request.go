package egress

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"slices"
	"strconv"
	"strings"
)

// Writing a push. Request.Write is general: it formats through fmt,
// sorts the header through a pooled sorter, and frames the body through
// a transfer writer. A push is always the same simple shape — a method,
// a path, a handful of plain header fields, a body of known length — so
// writeRequest writes that shape by appending, the same bytes
// Request.Write writes (FuzzWriteRequest holds it to them), and hands
// every other request to Request.Write.

// writeRequest writes r to w as r.Write(w) does, and closes its body.
func writeRequest(w *bufio.Writer, r *http.Request) error {
	if !simpleRequest(r) {
		return r.Write(w)
	}
	defer func() { _ = r.Body.Close() }()
	host := r.Host
	if host == "" {
		host = r.URL.Host
	}
	b := w.AvailableBuffer()
	b = append(b, r.Method...)
	b = append(b, ' ')
	b = append(b, r.URL.RequestURI()...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, host...)
	b = append(b, "\r\nUser-Agent: "...)
	b = append(b, r.Header["User-Agent"][0]...)
	b = append(b, "\r\nContent-Length: "...)
	b = strconv.AppendInt(b, r.ContentLength, 10)
	b = append(b, "\r\n"...)
	keys := make([]string, 0, 8) // on the stack for a push's few fields
	for k := range r.Header {
		if k != "User-Agent" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, v := range r.Header[k] {
			b = append(b, k...)
			b = append(b, ": "...)
			b = append(b, v...)
			b = append(b, "\r\n"...)
		}
	}
	b = append(b, "\r\n"...)
	if _, err := w.Write(b); err != nil {
		return err
	}
	// The body is read into the writer's own buffer, ContentLength bytes
	// at most.
	var n int64
	for n < r.ContentLength {
		if w.Available() == 0 {
			if err := w.Flush(); err != nil {
				return err
			}
		}
		buf := w.AvailableBuffer()
		buf = buf[:min(int64(cap(buf)), r.ContentLength-n)]
		m, err := r.Body.Read(buf)
		if _, werr := w.Write(buf[:m]); werr != nil {
			return werr
		}
		n += int64(m)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	// A body longer than announced is an error too, as Request.Write
	// finds it: by reading the rest.
	extra, err := io.Copy(io.Discard, r.Body)
	if err != nil {
		return err
	}
	n += extra
	if n != r.ContentLength {
		return fmt.Errorf("http: ContentLength=%d with Body length %d", r.ContentLength, n)
	}
	return nil
}

// simpleRequest reports whether r is the shape writeRequest writes: a
// token method other than CONNECT, a plain host and request target, one
// plain User-Agent, fields that are tokens with plain values and none
// that framing or Request.Write itself writes, a body of a known,
// positive length, and no trailer, close or client trace.
func simpleRequest(r *http.Request) bool {
	if r.URL == nil || r.Body == nil || r.Body == http.NoBody || r.ContentLength <= 0 ||
		r.Close || r.TransferEncoding != nil || r.Trailer != nil ||
		!token(r.Method) || r.Method == http.MethodConnect {
		return false
	}
	host := r.Host
	if host == "" {
		host = r.URL.Host
	}
	if !plainHost(host) || !plainValue(r.URL.RequestURI()) || strings.ContainsAny(r.URL.RequestURI(), " \t") {
		return false
	}
	if ua := r.Header["User-Agent"]; len(ua) != 1 || ua[0] == "" || !plainValue(ua[0]) {
		return false
	}
	for k, vs := range r.Header {
		switch k {
		case "Host", "Content-Length", "Transfer-Encoding", "Trailer":
			return false
		}
		if !token(k) {
			return false
		}
		for _, v := range vs {
			if !plainValue(v) {
				return false
			}
		}
	}
	return httptrace.ContextClientTrace(r.Context()) == nil
}

// plainHost reports whether h is a host[:port] Request.Write sends as
// it is: letters, digits, '.', '-', ':' and IPv6 brackets, no zone.
func plainHost(h string) bool {
	for i := 0; i < len(h); i++ {
		switch c := h[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '.', c == '-', c == ':', c == '[', c == ']':
		default:
			return false
		}
	}
	return h != ""
}

// plainValue reports whether v is written as it is: visible ASCII and
// inner spaces or tabs, nothing to trim at either end.
func plainValue(v string) bool {
	if v != "" && (v[0] == ' ' || v[0] == '\t' || v[len(v)-1] == ' ' || v[len(v)-1] == '\t') {
		return false
	}
	return visible(v)
}
