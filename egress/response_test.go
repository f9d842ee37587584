package egress

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// answerSamples are responses a push may get: the simple shapes
// readResponse parses itself and the ones it leaves to net/http.
var answerSamples = []string{
	"HTTP/1.1 204 No Content\r\nDate: Tue, 01 Dec 2026 22:00:00 GMT\r\n\r\n",
	"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 204 \r\n\r\n",
	"HTTP/1.1 202\r\ncontent-length: 0\r\nx-a: 1\r\nX-A:  2 \t\r\n\r\n",
	"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
	"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 120\r\nContent-Length: 5\r\n\r\nbusy",
	"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
	"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nrest",
	"HTTP/1.1 200 OK\r\n\r\nuntil close",
	"HTTP/1.1 204 No Content\r\nContent-Length: 7\r\n\r\n",
	"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc",
	"HTTP/1.1 200 OK\r\nContent-Length: +3\r\n\r\nabc",
	"HTTP/1.1 200 OK\r\nPragma: no-cache\r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.1 200 OK\r\nX: a\r\n b\r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.1 200 OK\nContent-Length: 0\n\n",
	"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.1 2000 OK\r\n\r\n",
	"HTTP/1.1 099 x\r\n\r\n",
	"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n",
	"HTTP/1.1 200 OK\r\nBad Name: x\r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.1 200 OK\r\nno colon\r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.1 100 \r\n0\r\n\r\n",
	"HTTP/1.1 200 OK\r\nX: \x7f\r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.1 204 No Content\r\n",
	"",
}

// parsed is what a response read tells its caller, for comparison.
type parsed struct {
	Status        string
	StatusCode    int
	Proto         string
	Major, Minor  int
	Header        http.Header
	ContentLength int64
	Close         bool
	Body          string
	BodyErr       bool
	Rest          string
}

// readAs reads one response of data with read and what follows it.
func readAs(t *testing.T, read func(*bufio.Reader, *http.Request) (*http.Response, error), data []byte) (parsed, error) {
	t.Helper()
	br := bufio.NewReader(bytes.NewReader(data))
	req, _ := http.NewRequest(http.MethodPost, "http://receiver/hook", nil)
	resp, err := read(br, req)
	if err != nil {
		return parsed{}, err
	}
	if resp.Request != req {
		t.Fatal("the response does not name its request")
	}
	body, berr := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	rest, _ := io.ReadAll(br)
	return parsed{resp.Status, resp.StatusCode, resp.Proto, resp.ProtoMajor, resp.ProtoMinor, resp.Header,
		resp.ContentLength, resp.Close, string(body), berr != nil, string(rest)}, nil
}

// checkReadsAsNetHTTP fails unless readResponse reads data exactly as
// http.ReadResponse does: the same fields, body and unread rest, or an
// error both times.
func checkReadsAsNetHTTP(t *testing.T, data []byte) {
	t.Helper()
	want, wantErr := readAs(t, http.ReadResponse, data)
	got, err := readAs(t, readResponse, data)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%q: error %v, net/http's %v", data, err, wantErr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\nread    %+v\nnet/http %+v", data, got, want)
	}
}

func TestReadResponseMatchesNetHTTP(t *testing.T) {
	for _, s := range answerSamples {
		checkReadsAsNetHTTP(t, []byte(s))
	}
}

// TestReadResponseParsesTheSimpleShape: the common answers are parsed in
// place, the others left to net/http (the fast path is taken, not only
// correct when taken).
func TestReadResponseParsesTheSimpleShape(t *testing.T) {
	req, _ := http.NewRequest(http.MethodPost, "http://receiver/hook", nil)
	for i, s := range answerSamples {
		_, _, ok := parseSimpleResponse([]byte(s), req)
		if want := i < 6; ok != want {
			t.Errorf("%q: parsed in place %v, want %v", s, ok, want)
		}
	}
}

// FuzzReadResponse holds readResponse to http.ReadResponse byte for byte
// (the differential check of the in-place parser).
func FuzzReadResponse(f *testing.F) {
	for _, s := range answerSamples {
		f.Add([]byte(s))
	}
	f.Add([]byte(strings.Repeat("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx", 3)))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkReadsAsNetHTTP(t, data)
	})
}
