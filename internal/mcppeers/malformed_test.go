package mcppeers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wopinterop/wopinterop/internal/golden"
)

// TestMalformedWire: each mode's exact answer to a tools/call, golden
// (testdata/malformed/<Mode>.txt; the Oversized body is summarised).
func TestMalformedWire(t *testing.T) {
	for _, m := range Modes() {
		t.Run(m.String(), func(t *testing.T) {
			s := StartMalformed(t, m)
			res, body := post(t, s.URL, Current, "tools/call", Echo,
				`{"jsonrpc":"2.0","id":"golden-1","method":"tools/call","params":{"name":"echo","_meta":`+meta2026(`{}`)+`}}`)
			if m != Redirect && !strings.Contains(body, BodyMarker) {
				t.Errorf("body lacks BodyMarker: %.300s", body)
			}
			if m == Oversized {
				if len(body) < OversizedBytes {
					t.Fatalf("Oversized body is %d bytes, want more than %d", len(body), OversizedBytes)
				}
				body = fmt.Sprintf("%s…(%d bytes)…%s", body[:200], len(body), body[len(body)-40:])
			}
			got := exchange(s, res, body)
			if m == Redirect {
				if loc := res.Header.Get("Location"); loc != s.RedirectTarget.URL {
					t.Fatalf("Location %q, want the target %q", loc, s.RedirectTarget.URL)
				}
				got = append([]byte("Location: <target>\n"), got...)
			}
			golden.Check(t, "malformed/"+m.String()+".txt", got)
			if calls := s.Calls("tools/call"); len(calls) != 1 {
				t.Fatalf("recorded %+v, want the one call", calls)
			}
		})
	}
}

// TestMalformedCallsDiscover: StartMalformedCalls answers server/discover
// with MalformedDiscover and accepts notifications; StartMalformed
// answers discover with the defect.
func TestMalformedCallsDiscover(t *testing.T) {
	s := StartMalformedCalls(t, InvalidJSON)
	res, body := post(t, s.URL, Current, "server/discover", "", discoverBody(3))
	if res.StatusCode != http.StatusOK || body != `{"jsonrpc":"2.0","id":3,"result":`+MalformedDiscover+`}` {
		t.Fatalf("discover: %d %s", res.StatusCode, body)
	}
	res, body = post(t, s.URL, Current, "notifications/cancelled", "", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`)
	if res.StatusCode != http.StatusAccepted || body != "" {
		t.Fatalf("notification: %d %q", res.StatusCode, body)
	}
	_, body = post(t, StartMalformed(t, InvalidJSON).URL, Current, "server/discover", "", discoverBody(3))
	if !strings.HasSuffix(body, BodyMarker) {
		t.Fatalf("StartMalformed's discover: %s", body)
	}
}

// TestMalformedStockClient documents what go-sdk v1.8.0's stock client
// makes of each mode, at Connect (StartMalformed) and at CallTool
// (StartMalformedCalls): see the package documentation.
func TestMalformedStockClient(t *testing.T) {
	type outcome struct {
		Requests []string // what the client sent, in order
		Err      string   // a substring of the error; "" for none
		Leaks    bool     // the error text quotes the body (carries "peer-priv", BodyMarker's start)
	}
	disc, init, call, cancelled := "server/discover", "initialize", "tools/call", "notifications/cancelled"
	cases := []struct {
		mode             Mode
		connect, callOut outcome
		check            func(t *testing.T, s *Server, res *mcp.CallToolResult)
	}{
		{InvalidJSON, outcome{[]string{disc}, "failed to decode response", false}, outcome{[]string{disc, call}, "failed to decode response", false}, nil},
		{WrongShape, outcome{[]string{disc, init}, "cannot unmarshal", true}, outcome{[]string{disc, call}, "cannot unmarshal", true}, nil},
		{WrongID, outcome{[]string{disc}, "context deadline exceeded", false},
			outcome{[]string{disc, call, cancelled}, "context deadline exceeded", false}, nil},
		{UnknownResultType, outcome{[]string{disc, init}, `unsupported protocol version: ""`, false}, outcome{[]string{disc, call}, "", false},
			func(t *testing.T, _ *Server, res *mcp.CallToolResult) {
				if res.NeedsInput() || text(t, res) != BodyMarker {
					t.Errorf("resultType deferred taken as %+v", res)
				}
			}},
		{Oversized, outcome{[]string{disc, init}, `unsupported protocol version: ""`, false}, outcome{[]string{disc, call}, "", false},
			func(t *testing.T, _ *Server, res *mcp.CallToolResult) {
				if n := len(text(t, res)); n != OversizedBytes {
					t.Errorf("read %d bytes of text, want all %d", n, OversizedBytes)
				}
			}},
		{VersionNotSupported, outcome{[]string{disc, init}, "unsupported protocol version", true}, outcome{[]string{disc, call}, "unsupported protocol version", true}, nil},
		{HTTP500, outcome{[]string{disc, init}, "Internal Server Error", false}, outcome{[]string{disc, call}, "Internal Server Error", false}, nil},
		{MalformedSSE, outcome{[]string{disc}, "failed to decode event", false}, outcome{[]string{disc, call}, "failed to decode event", false}, nil},
		{Redirect, outcome{[]string{disc}, "", false}, outcome{[]string{disc, call}, "", false},
			func(t *testing.T, s *Server, res *mcp.CallToolResult) {
				var got []string
				for _, q := range s.RedirectTarget.Requests() {
					got = append(got, q.Method)
				}
				if diff := cmp.Diff([]string{"tools/call"}, got); diff != "" || text(t, res) != "{}" {
					t.Errorf("the target saw (-want +got):\n%s", diff)
				}
			}},
	}
	// observe is what the client did. A call that timed out is followed by
	// a notifications/cancelled; after a failed Connect the client may
	// close before sending it, so there it is left out (atConnect).
	observe := func(s *Server, err error, atConnect bool) outcome {
		if errors.Is(err, context.DeadlineExceeded) && !atConnect {
			waitFor(func() bool { return len(s.Calls("notifications/cancelled")) > 0 })
		}
		o := outcome{}
		for _, q := range s.Requests() {
			if !atConnect || q.Method != "notifications/cancelled" {
				o.Requests = append(o.Requests, q.Method)
			}
		}
		if err != nil {
			o.Err, o.Leaks = err.Error(), strings.Contains(err.Error(), BodyMarker[:9])
		}
		return o
	}
	matches := func(got, want outcome) bool {
		return cmp.Equal(got.Requests, want.Requests) && got.Leaks == want.Leaks &&
			(want.Err == "" && got.Err == "" || want.Err != "" && strings.Contains(got.Err, want.Err))
	}
	for _, tc := range cases {
		t.Run(tc.mode.String(), func(t *testing.T) {
			// WrongID is never answered: wait a second for it, ten for
			// the rest (Oversized is 9 MiB under the race detector).
			wait := 10 * time.Second
			if tc.mode == WrongID {
				wait = time.Second
			}
			s := StartMalformed(t, tc.mode)
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			defer cancel()
			cs, err := dial(t, ctx, s.URL)
			if got := observe(s, err, true); !matches(got, tc.connect) {
				t.Errorf("Connect: got %+v, want %+v", got, tc.connect)
			}
			if cs != nil {
				_ = cs.Close()
			}

			s = StartMalformedCalls(t, tc.mode)
			cs, err = dial(t, context.Background(), s.URL)
			if err != nil {
				t.Fatalf("Connect to StartMalformedCalls: %v", err)
			}
			defer cs.Close()
			ctx, cancel = context.WithTimeout(context.Background(), wait)
			defer cancel()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: Echo})
			if got := observe(s, err, false); !matches(got, tc.callOut) {
				t.Errorf("CallTool: got %+v, want %+v", got, tc.callOut)
			}
			if tc.check != nil && err == nil {
				tc.check(t, s, res)
			}
			if tc.mode == WrongID && !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("WrongID: %v", err)
			}
		})
	}
}

// dial connects a stock client within ctx; the transport closes with t.
func dial(t *testing.T, ctx context.Context, url string) (*mcp.ClientSession, error) {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return mcp.NewClient(&mcp.Implementation{Name: "mcppeers-test", Version: "1"}, clientOptions()).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: tr}, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
}
