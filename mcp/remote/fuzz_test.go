package remote

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/wopinterop/wopinterop/internal/sseread"

	"github.com/wopinterop/wopinterop/egress"
	"github.com/wopinterop/wopinterop/internal/version"
)

// FuzzSupportedFromData: whatever a server puts in a -32022's data, what
// is read is at most maxSupported well-formed revisions.
func FuzzSupportedFromData(f *testing.F) {
	for _, s := range []string{
		`{"supported":["2026-07-28","2025-11-25"],"requested":"2026-07-28"}`,
		`{"supported":["2026-02-30",7,null,"2025-06-18\n"]}`,
		`{"supported":"2026-07-28"}`, `[]`, `null`, ``, `{"supported":[` + strings.Repeat(`"2026-07-28",`, 40) + `"2026-07-28"]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got := supportedFromData(data)
		if len(got) > maxSupported {
			t.Fatalf("%d revisions read", len(got))
		}
		for _, v := range got {
			if !version.Date(v) {
				t.Fatalf("%q read as a revision", v)
			}
		}
	})
}

// FuzzTransportResponse: whatever a server answers, the transport either
// hands go-sdk a body of at most MaxResultBytes whose non-2xx form carries
// a JSON-RPC error, or fails with a typed error.
func FuzzTransportResponse(f *testing.F) {
	f.Add(200, "application/json", []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	f.Add(400, "application/json", []byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"x","data":{"supported":[]}}}`))
	f.Add(401, "text/plain", []byte("no"))
	f.Add(200, "text/event-stream; charset=utf-8", []byte("event: message\ndata: {}\n\n"))
	f.Add(500, "application/json", []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	const limit = 256
	f.Fuzz(func(t *testing.T, status int, contentType string, body []byte) {
		if status < 100 || status > 599 {
			return
		}
		tr := &transport{revision: Revision, maxBytes: limit, next: roundTripFunc(func(*http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {contentType}}, Body: io.NopCloser(strings.NewReader(string(body)))}, nil
		})}
		r, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, "https://mcp.example/mcp", nil)
		r.Header.Set("MCP-Protocol-Version", Revision)
		resp, err := tr.RoundTrip(r)
		if err != nil {
			var se *StatusError
			if !errors.Is(err, egress.ErrTooLarge) && !errors.As(err, &se) {
				t.Fatalf("untyped error %v", err)
			}
			if len(body) <= limit && errors.Is(err, egress.ErrTooLarge) {
				t.Fatalf("%d bytes refused as too large", len(body))
			}
			return
		}
		got, err := io.ReadAll(resp.Body)
		if len(got) > limit || (err != nil && !errors.Is(err, egress.ErrTooLarge)) {
			t.Fatalf("%d bytes passed, %v", len(got), err)
		}
		if (status < 200 || status > 299) && !carriesRPCError(got) {
			t.Fatalf("a %d without a JSON-RPC error passed", status)
		}
	})
}

// FuzzSSEData: whatever a listen stream carries, every event yielded came
// whole from at most the limit's bytes, and an error ends the iteration.
func FuzzSSEData(f *testing.F) {
	for _, s := range []string{
		"data: {\"a\":1}\n\n", "data:x\r\ndata: y\r\n\r\n", ": c\nevent: e\nid: 1\nretry: 5\n\n",
		"data: cut", "data: " + strings.Repeat("z", 300) + "\n\n", "\n\n\n", "data\n\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		const limit = 256
		stopped := false
		for data, err := range sseread.Data(bytes.NewReader(body), limit) {
			if stopped {
				t.Fatal("an event after an error")
			}
			if err != nil {
				var tl *egress.TooLargeError
				if !errors.As(err, &tl) || tl.Limit != limit {
					t.Fatalf("error %v", err)
				}
				stopped = true
				continue
			}
			if len(data) > limit {
				t.Fatalf("an event of %d bytes", len(data))
			}
		}
	})
}
