package egress

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/textproto"
	"strings"
)

// Reading a push's answer. A receiver answers a push with a few short
// header lines and most often no body, all in one segment; net/http's
// ReadResponse spends more on its general reader (textproto's line
// reader, header validation, transfer decoding) than the exchange costs.
// readResponse parses the common shape in place — an HTTP/1.1 status
// line and header block already whole in the reader's buffer, a body
// framed by Content-Length or none by its status (RFC 9112 §6.3) — and
// hands everything else to http.ReadResponse unread: chunked or
// close-delimited bodies, Connection, Trailer, Transfer-Encoding or
// Pragma fields, obsolete line folding, bare LFs, anything unusual.
// FuzzReadResponse holds it to http.ReadResponse for every input.

// readResponse reads a response to req from br, as http.ReadResponse does.
func readResponse(br *bufio.Reader, req *http.Request) (*http.Response, error) {
	if _, err := br.Peek(1); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF // as http.ReadResponse reports it
		}
		return nil, err
	}
	head, _ := br.Peek(br.Buffered())
	if resp, n, ok := parseSimpleResponse(head, req); ok {
		_, _ = br.Discard(n)
		if resp.ContentLength > 0 {
			resp.Body = &lengthBody{r: br, left: resp.ContentLength}
		}
		return resp, nil
	}
	return http.ReadResponse(br, req)
}

// parseSimpleResponse parses the head of a simple response at the start
// of buf and reports its length; ok is false for anything it leaves to
// http.ReadResponse. The body is http.NoBody; the caller frames a
// Content-Length one.
func parseSimpleResponse(buf []byte, req *http.Request) (resp *http.Response, n int, ok bool) {
	end := bytes.Index(buf, []byte("\r\n\r\n"))
	if end < 0 || req == nil || req.Method == http.MethodHead {
		return nil, 0, false
	}
	// One string for the whole head: the status and every key and value
	// are slices of it, as textproto's reader shares one allocation.
	head := string(buf[:end+2]) // each line with its CRLF
	status, rest, _ := strings.Cut(head, "\r\n")
	// "HTTP/1.1 " status-code [ " " reason-phrase ] (RFC 9112 §4).
	if len(status) < 12 || status[:9] != "HTTP/1.1 " || (len(status) > 12 && status[12] != ' ') || !visible(status[12:]) {
		return nil, 0, false
	}
	code := 0
	for _, c := range []byte(status[9:12]) {
		if c < '0' || c > '9' {
			return nil, 0, false
		}
		code = code*10 + int(c-'0')
	}
	lines := strings.Count(rest, "\r\n")
	header := make(http.Header, lines)
	values := make([]string, lines) // one backing array for the usual one value per key
	contentLength, haveLength := int64(0), false
	for i := 0; len(rest) > 0; i++ {
		var line string
		line, rest, _ = strings.Cut(rest, "\r\n")
		key, value, colon := strings.Cut(line, ":")
		if !colon || !token(key) || !visible(value) {
			return nil, 0, false
		}
		if !canonical(key) {
			key = textproto.CanonicalMIMEHeaderKey(key)
		}
		switch key {
		case "Connection", "Trailer", "Transfer-Encoding", "Pragma":
			return nil, 0, false
		}
		value = strings.Trim(value, " \t")
		if key == "Content-Length" {
			if haveLength {
				return nil, 0, false
			}
			var digits bool
			if contentLength, digits = decimal(value); !digits {
				return nil, 0, false
			}
			haveLength = true
		}
		if vs, seen := header[key]; seen {
			header[key] = append(vs, value)
		} else {
			values[i] = value
			header[key] = values[i : i+1 : i+1]
		}
	}
	switch {
	case code < 100:
		return nil, 0, false
	case code < 200, code == http.StatusNoContent, code == http.StatusNotModified:
		// No body whatever the header says (RFC 9112 §6.3); a length
		// given anyway is left to net/http.
		if haveLength || code == http.StatusSwitchingProtocols {
			return nil, 0, false
		}
	case !haveLength:
		return nil, 0, false // delimited by the connection's close
	}
	resp = &http.Response{
		Status:        status[9:],
		StatusCode:    code,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        header,
		Body:          http.NoBody,
		ContentLength: contentLength,
		Request:       req,
	}
	return resp, end + 4, true
}

// canonical reports whether the field name k is in canonical form
// already (textproto.CanonicalMIMEHeaderKey's): upper case first and
// after each hyphen, lower case elsewhere.
func canonical(k string) bool {
	upper := true
	for i := 0; i < len(k); i++ {
		c := k[i]
		if upper && 'a' <= c && c <= 'z' || !upper && 'A' <= c && c <= 'Z' {
			return false
		}
		upper = c == '-'
	}
	return true
}

// token reports whether b is a non-empty field name (RFC 9110 §5.1).
func token(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return len(s) > 0
}

// visible reports whether b holds only visible ASCII, spaces and tabs:
// a field value or reason phrase with nothing net/http would judge.
func visible(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < ' ' && c != '\t') || c > '~' {
			return false
		}
	}
	return true
}

// decimal parses a Content-Length of at most 18 digits.
func decimal(s string) (int64, bool) {
	if s == "" || len(s) > 18 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int64(s[i]-'0')
	}
	return n, true
}

// lengthBody is a body of a known length: its end is io.EOF, a
// connection that ends before it io.ErrUnexpectedEOF, as net/http's.
type lengthBody struct {
	r    *bufio.Reader
	left int64
}

func (b *lengthBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	switch {
	case b.left == 0:
		return n, io.EOF
	case err == io.EOF:
		return n, io.ErrUnexpectedEOF
	}
	return n, err
}

func (b *lengthBody) Close() error { return nil }
