package egress

import (
	"bufio"
	"bytes"
	"context"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"testing"
)

// pushLike is a request of the push shape with the given parts.
func pushLike(method, target, ua string, header http.Header, body []byte, length int64) *http.Request {
	u, err := url.Parse(target)
	if err != nil {
		u = &url.URL{Scheme: "http", Host: "receiver:8080", Path: "/hook"}
	}
	r, _ := http.NewRequest(http.MethodPost, "http://x/", bytes.NewReader(body))
	r.Method, r.URL, r.Host, r.ContentLength = method, u, u.Host, length
	r.Header = header
	if ua != "\x00" {
		r.Header["User-Agent"] = []string{ua}
	}
	return r
}

// checkWritesAsNetHTTP fails unless writeRequest writes what Request.Write
// writes for the same request, or both fail.
func checkWritesAsNetHTTP(t *testing.T, mk func() *http.Request) {
	t.Helper()
	var want, got bytes.Buffer
	ww, gw := bufio.NewWriter(&want), bufio.NewWriter(&got)
	wantErr := mk().Write(ww)
	err := writeRequest(gw, mk())
	_, _ = ww.Flush(), gw.Flush()
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("error %v, Request.Write's %v", err, wantErr)
	}
	if err == nil && !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatalf("writeRequest:\n%q\nRequest.Write:\n%q", got.Bytes(), want.Bytes())
	}
}

func TestWriteRequestMatchesNetHTTP(t *testing.T) {
	body := []byte(`{"statusUpdate":{}}`)
	push := func() http.Header {
		return http.Header{"Content-Type": {"application/a2a+json"}, "Idempotency-Key": {"k"}, "Authorization": {"Bearer t"}}
	}
	cases := map[string]func() *http.Request{
		"push": func() *http.Request {
			return pushLike("POST", "https://r.example:8443/h?a=1", "wopinterop-push", push(), body, int64(len(body)))
		},
		"default port": func() *http.Request {
			return pushLike("POST", "http://127.0.0.1/", "ua", push(), body, int64(len(body)))
		},
		"many values": func() *http.Request {
			return pushLike("PUT", "http://[::1]:9/p", "ua", http.Header{"X": {"1", "2"}, "A": {""}}, body, 3)
		},
		"large body": func() *http.Request {
			large := bytes.Repeat([]byte("0123456789"), 1000)
			return pushLike("POST", "http://h/", "ua", push(), large, int64(len(large)))
		},
		"short body":   func() *http.Request { return pushLike("POST", "http://h/", "ua", push(), body, 100) },
		"no agent":     func() *http.Request { return pushLike("POST", "http://h/", "\x00", push(), body, int64(len(body))) },
		"empty agent":  func() *http.Request { return pushLike("POST", "http://h/", "", push(), body, int64(len(body))) },
		"spaced value": func() *http.Request { return pushLike("POST", "http://h/", "ua", http.Header{"X": {" v "}}, body, 2) },
		"unicode":      func() *http.Request { return pushLike("POST", "http://h/", "ua", http.Header{"X": {"é"}}, body, 2) },
		"framing field": func() *http.Request {
			return pushLike("POST", "http://h/", "ua", http.Header{"Content-Length": {"9"}}, body, 2)
		},
		"zone": func() *http.Request { return pushLike("POST", "http://[fe80::1%25eth0]:1/", "ua", push(), body, 2) },
		"no body": func() *http.Request {
			r := pushLike("POST", "http://h/", "ua", push(), nil, 0)
			r.Body = nil
			return r
		},
		"close": func() *http.Request {
			r := pushLike("POST", "http://h/", "ua", push(), body, 2)
			r.Close = true
			return r
		},
		"traced": func() *http.Request {
			r := pushLike("POST", "http://h/", "ua", push(), body, 2)
			return r.WithContext(httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{}))
		},
	}
	for name, mk := range cases {
		t.Run(name, func(t *testing.T) { checkWritesAsNetHTTP(t, mk) })
	}
	if !simpleRequest(cases["push"]()) {
		t.Fatal("a push is not written by appending")
	}
}

// FuzzWriteRequest holds writeRequest to Request.Write byte for byte (the
// differential check of the appending writer).
func FuzzWriteRequest(f *testing.F) {
	f.Add("POST", "https://r.example:8443/h?a=1", "wopinterop-push", "Idempotency-Key", "k", "Content-Type", "application/a2a+json", []byte(`{}`), int64(2))
	f.Add("GET", "http://[::1]/", "", "x y", " v", "A", "", []byte(nil), int64(0))
	f.Fuzz(func(t *testing.T, method, target, ua, k1, v1, k2, v2 string, body []byte, length int64) {
		checkWritesAsNetHTTP(t, func() *http.Request {
			h := http.Header{k1: {v1}}
			h[k2] = append(h[k2], v2)
			return pushLike(method, target, ua, h, body, length)
		})
	})
}
