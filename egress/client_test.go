package egress

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// TestNewClientRefusesRedirects: with RefuseRedirects a 3xx is an error
// the caller sees as a *RedirectError; the redirect target never hears of
// the request, and the Location never reaches the error text.
func TestNewClientRefusesRedirects(t *testing.T) {
	final := newReceiver(t, nil)
	for _, code := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		hop := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, final.origin()+"/final", code)
		})
		g := newTestGuard(t, newDialLog(t), newResolver(nil), hop.origin(), final.origin())
		resp, err := g.NewClient(ClientOptions{RefuseRedirects: true}).Post(hop.origin()+"/rpc", "application/json", strings.NewReader(`{}`))
		if resp != nil {
			_ = resp.Body.Close()
			t.Fatalf("%d: a response reached the caller", code)
		}
		var re *RedirectError
		if !errors.As(err, &re) || re.StatusCode != code {
			t.Fatalf("%d: %v, want a *RedirectError with the status", code, err)
		}
		if strings.Contains(err.Error(), "/final") || strings.Contains(err.Error(), final.port()) {
			t.Errorf("%d: the error names the redirect target: %v", code, err)
		}
		hop.next(t)
	}
	final.none(t, 50*time.Millisecond)
}

// TestNewClientResponseHeaderTimeout: a peer that never sends its headers
// fails the request after ResponseHeaderTimeout, whatever the context.
func TestNewClientResponseHeaderTimeout(t *testing.T) {
	release := make(chan struct{})
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request) { <-release })
	defer close(release)
	g := newTestGuard(t, newDialLog(t), newResolver(nil), rc.origin())
	start := time.Now()
	resp, err := g.NewClient(ClientOptions{ResponseHeaderTimeout: 50 * time.Millisecond}).Get(rc.origin() + "/card")
	if resp != nil {
		_ = resp.Body.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "timeout awaiting response headers") {
		t.Fatalf("%v, want the header timeout", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("the header timeout did not bound the wait")
	}
}

func TestReadAllLimit(t *testing.T) {
	const limit = 1000
	for _, tc := range []struct {
		size    int
		tooMany bool
	}{{0, false}, {1, false}, {limit, false}, {limit + 1, true}, {10 * limit, true}} {
		body := bytes.Repeat([]byte{'x'}, tc.size)
		// One byte per Read: the limit holds across reads, not only
		// within one.
		got, err := ReadAll(iotest.OneByteReader(bytes.NewReader(body)), limit)
		var tl *TooLargeError
		switch {
		case tc.tooMany && (!errors.As(err, &tl) || tl.Limit != limit || !errors.Is(err, ErrTooLarge)):
			t.Errorf("%d bytes: %v, want a *TooLargeError of limit %d", tc.size, err, limit)
		case tc.tooMany && got != nil:
			t.Errorf("%d bytes: a partial body was returned", tc.size)
		case !tc.tooMany && (err != nil || !bytes.Equal(got, body)):
			t.Errorf("%d bytes: %v, %d bytes read", tc.size, err, len(got))
		}
	}
}

// TestReadAllMemoryFollowsBytes: a small body under a huge limit costs a
// small buffer: ReadAll grows with what arrives, never to the limit.
func TestReadAllMemoryFollowsBytes(t *testing.T) {
	got, err := ReadAll(strings.NewReader("hello"), 1<<30)
	if err != nil || string(got) != "hello" {
		t.Fatalf("%q, %v", got, err)
	}
	if cap(got) > 4<<10 {
		t.Fatalf("a 5-byte body took a %d-byte buffer", cap(got))
	}
	// A body past the limit is refused after limit+1 bytes were read,
	// not after the whole of it.
	src := &countingReader{r: iotest.OneByteReader(strings.NewReader(strings.Repeat("y", 1<<20)))}
	if _, err := ReadAll(src, 100); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("%v, want ErrTooLarge", err)
	}
	if src.n > 101 {
		t.Fatalf("read %d bytes of an over-limit body, want at most 101", src.n)
	}
}

// TestLimitReaderPassesErrors: an error of the underlying reader within
// the limit is returned as it is.
func TestLimitReaderPassesErrors(t *testing.T) {
	boom := errors.New("boom")
	_, err := io.ReadAll(LimitReader(iotest.ErrReader(boom), 10))
	if !errors.Is(err, boom) {
		t.Fatalf("%v, want the reader's own error", err)
	}
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}
